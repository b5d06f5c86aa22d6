#!/usr/bin/env bash
# test/versions/stage.sh MAJOR: the pg17 and pg18 stages of test/run.sh.
#
# In a Debian chroot of that major (test/versions/chroot.sh makes it, or
# finds it cached), from a copy of this checkout:
#   1. the build with -Werror and assertions (warning-free on that major's
#      compiler), and the clean that follows it
#   2. the Debian package, the Debian way: pg_buildext updatecontrol, then
#      dpkg-buildpackage (which runs the package's installcheck in a
#      throwaway cluster), then lintian (no error), then apt installs the
#      .deb; booking.so must then belong to postgresql-MAJOR-booking
#   3. data crosses versions (test/versions/crossdump.sh): live state made
#      on 15 in the test cluster of test/run.sh (PGHOST/PGPORT), dumped with
#      15's pg_dump and with MAJOR's, restored and checked in MAJOR
#   4. test/run.sh's stages regress isolation pgtap upgrade stress (on 17
#      also citus, with Citus built in the chroot) with BOOKING_SKIP_BUILD=1:
#      against the installed package, not a make install.  Shorter than
#      15's full run, to keep the whole run near 45 minutes: the timed
#      stress tests run half as long (slots 10 + 4 s, room_race 5 s a
#      phase, move_buffers 10 s; series makes 40 attempts a client, not 60),
#      and Citus runs the scripts whose
#      subject differs by version (CITUS_ON_VERSION: distribution and the
#      twins, the regress file, a dead node, routed plans, the amend calls,
#      the outbox's tables, grants, metadata), not the concurrency scripts,
#      whose races the same C decides on either major and 15 runs in full
# Prints "ok - " / "not ok - " per step, the inner run's output, and ends
# with "N passed, N failed" (the steps plus the inner run's counts).  The
# chroot's mounts are undone on exit, also on failure or a timeout's TERM.
#
#   BOOKING_VERSION_STAGES="regress ..."  the inner stages to run instead
#   BOOKING_VERSION_CITUS=a,b,...        the Citus scripts to run on 17
#                                        instead of CITUS_ON_VERSION's
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
here=$(pwd)
m=${1:?usage: stage.sh MAJOR}
. test/versions/chroot.sh

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
bad() { failed=$((failed + 1)); echo "not ok - $1"; }
done_() {
	echo "$passed passed, $failed failed"
	[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
	exit
}
# step DESCRIPTION LOG CMD: runs CMD in the chroot, its output to LOG (the
# chroot's path); on failure the log's tail is shown
step() {
	local desc=$1 log=$2 t0=$SECONDS
	shift 2
	now "$desc"
	if in_chroot "$* >$log 2>&1"; then
		ok "$desc ($((SECONDS - t0)) s)"
	else
		bad "$desc ($((SECONDS - t0)) s)"
		tail -n 30 "$CHROOT$log" | sed 's/^/#   /'
		return 1
	fi
}

# now WHAT: what the stage is doing, for test/run.sh's TIMEOUT line
now() {
	[ -n "${BOOKING_STAGE_CURRENT:-}" ] && echo "pg$m: $1" >"$BOOKING_STAGE_CURRENT"
	return 0
}

hostmount=
cleanup() {
	[ -n "${PGHOST:-}" ] && psql -X -q -d postgres -c "DROP DATABASE IF EXISTS booking_cross" >/dev/null 2>&1
	[ -n "$hostmount" ] && mountpoint -q "$hostmount" && umount -l "$hostmount"
	chroot_umount
}
trap cleanup EXIT
trap 'exit 143' INT TERM

t0=$SECONDS
now "the chroot"
chroot_ready "$m" || { bad "a Debian $(chroot_suite "$m" || echo '?') chroot with PostgreSQL $m"; done_; }
ok "a Debian $(chroot_suite "$m") chroot with $(in_chroot "/usr/lib/postgresql/$m/bin/pg_config --version") ($((SECONDS - t0)) s)"
chroot_mount
# the processes of the chroot carry the stage's tag too, so that
# test/run.sh finds what a timed-out stage left running
CHROOT_ENV="BOOKING_STAGE_TAG=${BOOKING_STAGE_TAG:-}"

# this checkout's files (what git tracks and what it would, without what it
# ignores), fresh in /build/booking; the team's Citus source beside it
rm -rf "$CHROOT/build"
mkdir -p "$CHROOT/build/booking" "$CHROOT/build/shared/vendor"
if git rev-parse --git-dir >/dev/null 2>&1; then
	git ls-files -z --cached --others --exclude-standard | tar -c --null -T - -f - | tar -x -C "$CHROOT/build/booking"
else
	tar -c --exclude=.git -f - . | tar -x -C "$CHROOT/build/booking"
fi
citus=../shared/vendor/citus
[ -d "$citus" ] || citus=/work/shared/vendor/citus
[ -d "$citus" ] && cp -r "$citus" "$CHROOT/build/shared/vendor/"
in_chroot "chown -R postgres:postgres /build"

step "build with -Werror and assertions on PostgreSQL $m ($(in_chroot "gcc -dumpfullversion" | sed 's/^/gcc /'))" /build/werror.log \
	"make -s PG_CONFIG=/usr/lib/postgresql/$m/bin/pg_config BOOKING_CFLAGS='-Werror -DUSE_ASSERT_CHECKING' && make -s clean"

# the package: debian/control for this chroot's majors, the build (and the
# package's own installcheck), lintian, and apt
in_chroot "apt-get purge -y -qq postgresql-$m-booking >/dev/null 2>&1; rm -f /build/*.deb /build/*.changes /build/*.buildinfo"
if step "dpkg-buildpackage: postgresql-$m-booking (with its installcheck)" /build/dpkg.log \
	"pg_buildext updatecontrol && dpkg-buildpackage -us -uc -b"; then
	deb=$(cd "$CHROOT/build" && ls postgresql-"$m"-booking_*.deb 2>/dev/null | head -n 1)
	grep -E '^(ok|not ok) [0-9]+ |^test |^# All ' "$CHROOT/build/dpkg.log" | tail -n 3 | sed 's/^/#   /'
	# as a user, as lintian wants; --fail-on error: a warning does not fail
	in_chroot "runuser -u postgres -- env HOME=/tmp lintian --fail-on error /build/booking_*.changes" >"$CHROOT/build/lintian.log" 2>&1
	rc=$?
	if [ $rc -eq 0 ]; then
		ok "lintian reports no error ($(wc -l <"$CHROOT/build/lintian.log") line(s) of output)"
	else
		bad "lintian reports no error (exit $rc)"
	fi
	sed 's/^/#   lintian: /' "$CHROOT/build/lintian.log"
	step "apt-get install ./$deb" /build/apt.log "apt-get install -y --no-install-recommends /build/$deb"
	owner=$(in_chroot "dpkg -S /usr/lib/postgresql/$m/lib/booking.so" 2>&1)
	if [ "${owner%%:*}" = "postgresql-$m-booking" ]; then
		ok "booking.so is the package's ($owner)"
	else
		bad "booking.so is the package's (dpkg -S says: $owner)"
	fi
else
	done_
fi
in_chroot "chown -R postgres:postgres /build/booking"

# data crosses versions: the live state on 15, dumped by 15's pg_dump here
# and by this major's pg_dump through the test cluster's socket, mounted in
# the chroot
mkdir -p "$CHROOT/build/cross"
chmod 777 "$CHROOT/build/cross"
log=$CHROOT/build/cross.log
if [ -n "${PGHOST:-}" ] && bash test/versions/crossdump.sh make "$CHROOT/build/cross" >"$log" 2>&1; then
	ok "crossdump make: live state on $(psql -X -At -d postgres -c 'SHOW server_version' | cut -d' ' -f1), dumped with 15's pg_dump"
	hostmount=$CHROOT/build/host-socket
	mkdir -p "$hostmount"
	mount --bind "$PGHOST" "$hostmount"
	step "pg_dump -Fc of the same database with PostgreSQL $m's pg_dump" /build/pg_dump.log \
		"/usr/lib/postgresql/$m/bin/pg_dump -h /build/host-socket -p $PGPORT -U postgres -Fc -f /build/cross/live$m.dump booking_cross"
	umount -l "$hostmount"
	hostmount=
	cleanup_cross=1
else
	bad "crossdump make (live state on 15 in the test cluster)"
	sed 's/^/#   /' "$log" | tail -n 30
fi
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS booking_cross" >/dev/null 2>&1
if [ -n "${cleanup_cross:-}" ]; then
	t1=$SECONDS
	CHROOT_ENV="$CHROOT_ENV BOOKING_PG_BIN=/usr/lib/postgresql/$m/bin BOOKING_TEST_PORT=${BOOKING_VERSION_PORT:-54429}"
	now "crossdump check"
	in_chroot "bash test/versions/crossdump.sh check /build/cross" >"$log" 2>&1
	rc=$?
	cat "$log"
	n=$(grep -c '^ok - ' "$log")
	if [ $rc -eq 0 ] && [ "$n" -gt 0 ] && ! grep -q '^not ok' "$log"; then
		ok "crossdump check: the dumps of 15 restored into $m ($n checks, $((SECONDS - t1)) s)"
	else
		bad "crossdump check: the dumps of 15 restored into $m (exit $rc)"
	fi
fi

# the suite, against the installed package
CITUS_ON_VERSION=distribute,regress,worker_down,routing,shard_tables,delegate,amend,outbox,roles,metadata
stages=${BOOKING_VERSION_STAGES:-regress isolation pgtap upgrade stress}
if [ "$m" = 17 ] && [ -z "${BOOKING_VERSION_STAGES:-}" ]; then
	stages="$stages citus"
	step "Citus 13.2.2 built and installed into PostgreSQL 17 (../shared/vendor/citus/build.sh)" /build/citus.log \
		"PG_CONFIG=/usr/lib/postgresql/17/bin/pg_config bash /build/shared/vendor/citus/build.sh"
fi
CHROOT_ENV="BOOKING_STAGE_TAG=${BOOKING_STAGE_TAG:-} BOOKING_SKIP_BUILD=1 BOOKING_REQUIRE_CITUS=1
	BOOKING_PG_BIN=/usr/lib/postgresql/$m/bin BOOKING_TEST_PORT=${BOOKING_VERSION_PORT:-54429}
	BOOKING_TIMEOUT_TOTAL=${BOOKING_VERSION_BUDGET:-1500}
	SLOTS_SECONDS=${SLOTS_SECONDS:-10} SLOTS_CHURN_SECONDS=${SLOTS_CHURN_SECONDS:-4}
	ROOM_RACE_SECONDS=${ROOM_RACE_SECONDS:-5} SERIES_ATTEMPTS=${SERIES_ATTEMPTS:-40}
	MOVE_BUFFERS_SECONDS=${MOVE_BUFFERS_SECONDS:-10}
	BOOKING_CITUS_SCRIPTS=${BOOKING_VERSION_CITUS:-$CITUS_ON_VERSION}"
CHROOT_ENV=$(echo $CHROOT_ENV)
log=$CHROOT/build/run.log
echo "== test/run.sh $stages, in the chroot, against postgresql-$m-booking"
now "test/run.sh $stages in the chroot"
in_chroot "bash test/run.sh $stages" 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
read -r p f < <(sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' "$log" | tail -n 1)
p=${p:-0}
f=${f:-0}
passed=$((passed + p))
failed=$((failed + f))
if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
	bad "test/run.sh in the chroot exited $rc with no test failed"
elif [ "$p" -eq 0 ]; then
	bad "test/run.sh in the chroot ran no test"
fi
done_
