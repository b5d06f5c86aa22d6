#!/usr/bin/env bash
# The README's test command (CI runs exactly it, through .ci/run):
#
#     bash test/run.sh [stage ...]
#
# Installs what is missing, builds with -Werror and assertions and installs
# the build, starts a private cluster, runs the stages, stops the cluster (also
# on failure), and ends with "N passed, N failed".  It exits non-zero when
# anything failed, and also when nothing passed.
#
# The stages, in this order when none is named:
#   house        test/house/graph.py --check: src/ keeps its layers (a file
#                uses only its own layer or lower ones, no circle, no .c file
#                over 600 lines; docs/layout.md)
#   regress      pg_regress (test/sql, expected/), via make installcheck
#   isolation    the isolation specs (test/specs/iso_*), via make installcheck
#   pgtap        test/pgtap/*.sql, each file with pg_prove
#   stress       test/stress/*.sh, one test per script
#   upgrade      test/upgrade/*.sh: the upgrade path and META.json
#   examples     examples/*/test.sh: the Python and Node HTTP services, and the
#                Prometheus exporter with examples/prometheus/queries.yaml
#   reliability  test/reliability/run.sh: one test per script
#   selftest     test/selftest/run.sh: this runner fails when a test fails (one test)
#   citus        test/citus/run.sh: booking on a coordinator and two workers
#                (one test per script); skipped, with one line saying so,
#                when Citus is not installed, unless BOOKING_REQUIRE_CITUS=1
#   pg17, pg18   test/versions/stage.sh: in a Debian chroot of that major
#                (made with debootstrap, cached in /var/cache/booking-chroot),
#                the -Werror build, the Debian package (built, lintian,
#                installed with apt), a dump of live state on 15 restored
#                there, and the stages regress isolation pgtap upgrade stress
#                (and, on 17, citus) against the installed package; one test
#                per step plus the inner stages' counts.  Needs root
#
# Every stage counts a failure when its runner exits non-zero, whatever it
# printed.  Every stage has a timeout (BOOKING_TIMEOUT_<STAGE>, in seconds,
# e.g. BOOKING_TIMEOUT_REGRESS=60): a stage that runs longer fails, its whole
# process tree is killed (with the private clusters it started), the
# sessions it left in the test cluster are terminated, and the next stage
# runs.  The whole run, build included, has a budget too
# (BOOKING_TIMEOUT_TOTAL, default 4800 s): a stage gets at most what is left
# of it, and a stage that no time is left for fails without running.  A full
# run took 54 minutes on 2 cores (measured 2026-12-04 with the chroots cached):
# 25 for PostgreSQL 15 (citus 12.5, reliability 5.5, stress 4), 20.5 for pg17
# (citus 13, stress 4, package and crossdump 3) and 7.5 for pg18; since then
# pg17 runs the Citus scripts whose subject differs by version (6 minutes)
# and the version stages' timed stress scripts run half as long, about 45
# minutes in all; making a chroot adds 2 to 5 minutes the first time.  On
# 2026-12-07 a slower machine of the same kind, fresh, took 58.6 minutes
# (15: 27, citus 14 of them; 17: 19, its chroot and Citus build 4.7; 18: 9,
# its chroot 2.2), close to the old budget of 65: the budget is 80 minutes
# now, under CI's 90, and the chroots are made in the background meanwhile.
#
# Environment:
#   BOOKING_TEST_PORT=N     the test cluster's port (default 54329); the
#                           stages use a few ports above it (up to N+13:
#                           the Citus cluster is on N+11..N+13)
#   BOOKING_REQUIRE_CITUS=1 a missing Citus fails the run instead of
#                           skipping the citus stage
#   BOOKING_SKIP_BUILD=1    do not build and install: test what is installed
#   BOOKING_REGRESS="a b"   run these pg_regress tests instead of the Makefile's
#   BOOKING_ISOLATION="a"   run these isolation specs instead of the Makefile's
#   BOOKING_CITUS_SCRIPTS=a,b  run these Citus scripts instead of all (the
#                           pg17 stage runs a subset: test/versions/stage.sh)
#   BOOKING_SANITIZERS=0    skip the sanitizer build of the reliability suite
#   BOOKING_PG_BIN, TMPDIR  see test/lib/cluster.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

ALL_STAGES="house regress isolation pgtap stress upgrade examples reliability selftest citus pg17 pg18"

# default timeout of each stage, in seconds: three to five times what the
# stage takes on a loaded 2-core machine
stage_timeout() {
	local var
	var=BOOKING_TIMEOUT_$(echo "$1" | tr '[:lower:]' '[:upper:]')
	if [ -n "${!var:-}" ]; then
		echo "${!var}"
		return
	fi
	case $1 in
	build) echo 600 ;;
	total) echo 4800 ;;
	house) echo 60 ;;
	regress) echo 180 ;;
	isolation) echo 180 ;;
	pgtap) echo 120 ;;
	stress) echo 420 ;;
	upgrade) echo 180 ;;
	examples) echo 300 ;;
	reliability) echo 600 ;;
	selftest) echo 240 ;;
	citus) echo 1500 ;;
	pg17) echo 2100 ;;
	pg18) echo 1200 ;;
	esac
}

# -- one stage (run as: bash test/run.sh --stage NAME COUNTFILE) ----------------
#
# Runs in a process group of its own under timeout(1), with the test cluster
# named by PGHOST/PGPORT.  Prints the runners' output and writes
# "PASSED FAILED" to COUNTFILE; its exit status says whether anything failed.

passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "not ok - $1"; }

# count_lines FILE OK-PATTERN FAILED-PATTERN: adds the runner's own per-test
# report lines
count_lines() {
	local n
	n=$(grep -cE "$2" "$1")
	passed=$((passed + n))
	n=$(grep -cE "$3" "$1")
	failed=$((failed + n))
}

# run_script NAME: one script is one test; it passes when it exits 0
run_script() {
	echo "-- $1"
	echo "$1" >"$STAGE_CURRENT"
	if bash "$1"; then
		ok
	else
		bad "$1 (exit $?)"
	fi
}

# the pg_regress and isolation stages: make installcheck, one test per line
# of pg_regress's report; an exit status other than 0 with no failed test
# counted (pg_regress could not drop its database, a diff failed, a test is
# missing...) is a failure of its own
stage_installcheck() {
	local kind=$1 log=$STAGE_CURRENT.log rc before=$failed ok_before=$passed
	local args=(PG_CONFIG="$BOOKING_PG_BIN/pg_config")
	if [ "$kind" = regress ]; then
		args+=(ISOLATION=)
		[ -n "${BOOKING_REGRESS+set}" ] && args+=(REGRESS="$BOOKING_REGRESS")
	else
		args+=(REGRESS=)
		[ -n "${BOOKING_ISOLATION+set}" ] && args+=(ISOLATION="$BOOKING_ISOLATION")
	fi
	rm -f test/regression.diffs test/regression.out test/output_iso/regression.diffs
	echo "make installcheck ($kind)" >"$STAGE_CURRENT"
	# streamed, so that a stage that times out shows the test it hung in
	make -s installcheck "${args[@]}" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	# PostgreSQL 15's pg_regress prints "test NAME ... ok", 17's TAP-like
	# "ok N - NAME"
	count_lines "$log" '^(test |     ).* \.\.\. ok( |$)|^ok [0-9]+ +[-+] ' \
		'^(test |     ).* \.\.\. (FAILED|failed)|^not ok [0-9]+ +[-+] '
	if [ "$rc" -ne 0 ]; then
		for f in test/regression.diffs test/output_iso/regression.diffs; do
			[ -s "$f" ] && head -n 200 "$f"
		done
		[ "$failed" -eq "$before" ] && bad "make installcheck ($kind) exited $rc, and pg_regress reported no failed test"
	elif [ "$passed" -eq "$ok_before" ]; then
		bad "make installcheck ($kind) ran no test"
	fi
}

stage_pgtap() {
	local f out=$STAGE_TMP/pg_prove.out
	psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "SET client_min_messages = warning" \
		-c "DROP DATABASE IF EXISTS booking_tap" -c "CREATE DATABASE booking_tap" >/dev/null &&
		psql -X -q -v ON_ERROR_STOP=1 -d booking_tap -c "SET client_min_messages = warning" \
			-c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION booking CASCADE" >/dev/null ||
		{ bad "a database booking_tap with pgtap and booking"; return; }
	for f in test/pgtap/*.sql; do
		echo "$f" >"$STAGE_CURRENT"
		pg_prove -d booking_tap "$f" >"$out" 2>&1
		local rc=$?
		cat "$out"
		# pg_prove exits non-zero for a failed assertion, a wrong plan, or a
		# file that died; "Result: PASS" guards against a run of nothing
		if [ "$rc" -eq 0 ] && grep -q '^Result: PASS' "$out"; then
			ok
		else
			bad "$f (pg_prove exited $rc)"
		fi
	done
	psql -X -q -d postgres -c "DROP DATABASE IF EXISTS booking_tap" >/dev/null 2>&1
}

stage_reliability() {
	local log=$STAGE_TMP/reliability.log rc before=$failed
	echo test/reliability/run.sh >"$STAGE_CURRENT"
	bash test/reliability/run.sh 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	# one test per script: run.sh prints "PASS: name" or "FAIL: name" for
	# each, and FAIL also for a script that died before it said what failed
	count_lines "$log" '^PASS: ' '^FAIL: '
	if [ "$rc" -ne 0 ] && [ "$failed" -eq "$before" ]; then
		bad "test/reliability/run.sh exited $rc with no script failed"
	fi
}

# the Citus suite starts its own coordinator and two workers; one test per
# script (its runner prints "PASS: name" / "FAIL: name")
stage_citus() {
	local log=$STAGE_TMP/citus.log rc before=$failed
	BOOKING_CITUS_SCRIPTS=${BOOKING_CITUS_SCRIPTS:-}
	echo test/citus/run.sh >"$STAGE_CURRENT"
	# always a cluster of its own, whatever cluster the caller's
	# BOOKING_CITUS_DIR names
	env -u BOOKING_CITUS_DIR BOOKING_CITUS_PORT="${BOOKING_CITUS_PORT:-$((BOOKING_TEST_PORT + 11))}" \
		BOOKING_REQUIRE_CITUS=1 bash test/citus/run.sh ${BOOKING_CITUS_SCRIPTS//,/ } 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	count_lines "$log" '^PASS: ' '^FAIL: '
	if [ "$rc" -ne 0 ] && [ "$failed" -eq "$before" ]; then
		bad "test/citus/run.sh exited $rc with no script failed"
	fi
}

# pg17, pg18: test/versions/stage.sh prints "ok - " / "not ok - " per step,
# the inner run's output, and last its own "N passed, N failed" (its steps
# plus the inner run's counts)
stage_version() {
	local log=$STAGE_TMP/version.log rc p f
	echo "test/versions/stage.sh $1" >"$STAGE_CURRENT"
	bash test/versions/stage.sh "$1" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	read -r p f < <(sed -n 's/^\([0-9][0-9]*\) passed, \([0-9][0-9]*\) failed$/\1 \2/p' "$log" | tail -n 1)
	passed=$((passed + ${p:-0}))
	failed=$((failed + ${f:-0}))
	if [ "$rc" -ne 0 ] && [ "${f:-0}" -eq 0 ]; then
		bad "test/versions/stage.sh $1 exited $rc with no test failed"
	fi
}

# citus_installed: Citus's control file is in the share directory
citus_installed() {
	[ -f "$("$BOOKING_PG_BIN/pg_config" --sharedir)/extension/citus.control" ]
}

# the house: one test, which fails with the problems graph.py lists
stage_house() {
	local out=$STAGE_TMP/house.out
	echo "test/house/graph.py --check" >"$STAGE_CURRENT"
	if python3 test/house/graph.py --check >"$out" 2>&1; then
		tail -n 1 "$out"
		ok
	else
		grep -vE '^[^ ]+ +[0-9]+ [0-9]+ ' "$out"
		bad "test/house/graph.py --check"
	fi
}

run_stage_body() {
	local stage=$1 t
	case $stage in
	house) stage_house ;;
	regress | isolation) stage_installcheck "$stage" ;;
	pgtap) stage_pgtap ;;
	stress) for t in test/stress/*.sh; do run_script "$t"; done ;;
	upgrade) for t in test/upgrade/*.sh; do run_script "$t"; done ;;
	examples) for t in examples/*/test.sh; do run_script "$t"; done ;;
	reliability) stage_reliability ;;
	selftest) run_script test/selftest/run.sh ;;
	citus) stage_citus ;;
	pg17 | pg18) stage_version "${stage#pg}" ;;
	esac
}

if [ "${1:-}" = --stage ]; then
	STAGE_TMP=$(mktemp -d "${TMPDIR:-/tmp}/booking-stage.XXXXXX")
	# what the stage is running now, for the TIMEOUT line; runners that
	# loop over scripts (test/reliability/run.sh) write it too
	export BOOKING_STAGE_CURRENT=$3.current
	STAGE_CURRENT=$BOOKING_STAGE_CURRENT
	trap 'rm -rf "$STAGE_TMP"' EXIT
	run_stage_body "$2"
	echo "$passed $failed" >"$3"
	[ "$failed" -eq 0 ]
	exit
fi

# -- the run -------------------------------------------------------------------

stages=("$@")
[ ${#stages[@]} -eq 0 ] && read -ra stages <<<"$ALL_STAGES"
for s in "${stages[@]}"; do
	case " $ALL_STAGES " in
	*" $s "*) ;;
	*)
		echo "test/run.sh: unknown stage \"$s\" (stages: $ALL_STAGES)" >&2
		exit 2
		;;
	esac
done

. test/lib/cluster.sh
started=$SECONDS
deadline=$((started + $(stage_timeout total)))
case " ${stages[*]} " in
*" pg17 "* | *" pg18 "*) booking_need_packages debootstrap || exit 1 ;;
*) booking_need_packages || exit 1 ;;
esac
if [ "${BOOKING_SKIP_BUILD:-0}" = 1 ]; then
	echo "== BOOKING_SKIP_BUILD=1: testing the installed build"
else
	timeout --kill-after=15 "$(stage_timeout build)" bash -c \
		'. test/lib/cluster.sh && BOOKING_CFLAGS="-Werror -DUSE_ASSERT_CHECKING" booking_build_install' </dev/null ||
		{ echo "FAIL: the build (exit $?)"; echo "0 passed, 1 failed"; exit 1; }
fi
# the test cluster preloads booking, so that the regress test stats checks
# real counters (booking.stats() counts only in shared memory).  The expiry
# worker then runs in booking.database, postgres by default, where no stage
# installs booking: it finds no extension there and does nothing.
booking_cluster_start "${BOOKING_TEST_PORT:-54329}" "shared_preload_libraries = 'booking'" || exit 1
export BOOKING_PG_BIN BOOKING_TEST_PORT=$BOOKING_PORT

RUN_TMP=$(mktemp -d "${TMPDIR:-/tmp}/booking-run.XXXXXX")
# the chroots of the version stages are made in the background from now on
# (mostly downloads and unpacking: 2 to 3 minutes each on a fresh machine),
# in a process group of their own; a stage that needs one waits for it
# (test/versions/chroot.sh), and makes it itself if this failed
chroots=
majors=
for s in "${stages[@]}"; do
	case $s in pg17) majors="$majors 17" ;; pg18) majors="$majors 18" ;; esac
done
if [ -n "$majors" ]; then
	setsid bash -c '. test/versions/chroot.sh && for m in $0; do chroot_ready "$m"; done' "$majors" \
		</dev/null >"$RUN_TMP/chroots.log" 2>&1 &
	chroots=$!
fi
# the maker's group is stopped only while its leader still runs: a group id
# that ended long ago could by then be another's
trap '[ -n "$chroots" ] && kill -0 "$chroots" 2>/dev/null && kill -TERM -- -"$chroots" 2>/dev/null; rm -rf "$RUN_TMP"; booking_cluster_stop' EXIT
total_passed=0
total_failed=0
summary=()

# tagged_pids TAG: every process whose environment has BOOKING_STAGE_TAG=TAG
# (or TAG/..., set by a run.sh that a stage ran, as the self-test does): what
# a stage started, also what left its process group (a postmaster that
# pg_ctl started, a service)
tagged_pids() {
	local f pid
	for f in /proc/[0-9]*/environ; do
		pid=${f#/proc/}
		pid=${pid%/environ}
		[ "$pid" = "$$" ] && continue
		grep -qzE "^BOOKING_STAGE_TAG=$1(/.*)?\$" "$f" 2>/dev/null && echo "$pid"
	done
}

# stop_leftovers TAG: stops what a stage left running: the private clusters
# it started (an immediate shutdown of each postmaster takes its backends
# along; then its directory goes), then any other process of it
stop_leftovers() {
	local pid dir pids i
	for pid in $(tagged_pids "$1"); do
		[ -r "/proc/$pid/cwd/postmaster.pid" ] || continue
		[ "$(head -n 1 "/proc/$pid/cwd/postmaster.pid" 2>/dev/null)" = "$pid" ] || continue
		dir=$(readlink "/proc/$pid/cwd")
		echo "# stopping a cluster the stage left running: $dir (postmaster $pid)"
		kill -QUIT "$pid" 2>/dev/null
		for ((i = 0; i < 100; i++)); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		case $dir in "${TMPDIR:-/tmp}"/booking-*/data) rm -rf "${dir%/data}" ;; esac
	done
	pids=$(tagged_pids "$1")
	if [ -n "$pids" ]; then
		echo "# killing $(echo $pids | wc -w) process(es) the stage left running: $(echo $pids)"
		kill -KILL $pids 2>/dev/null
	fi
}

# after a timeout: make the test cluster usable for the next stage
terminate_sessions() {
	local n db gid
	n=$(psql -X -At -d postgres -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()" 2>/dev/null)
	echo "# terminated ${n:-?} leftover session(s) in the test cluster"
	psql -X -At -F ' ' -d postgres -c "SELECT database, gid FROM pg_prepared_xacts" 2>/dev/null |
		while read -r db gid; do
			psql -X -q -d "$db" -c "ROLLBACK PREPARED '$gid'" >/dev/null 2>&1 &&
				echo "# rolled back prepared transaction $gid in $db"
		done
}

# an interrupted run stops the running stage's process group too
tpid=
trap '[ -n "$tpid" ] && kill -TERM -- -"$tpid" 2>/dev/null; exit 130' INT TERM

for stage in "${stages[@]}"; do
	limit=$(stage_timeout "$stage")
	left=$((deadline - SECONDS))
	if [ "$left" -lt 10 ]; then
		line="FAIL: $stage (not run: the run's budget of $(stage_timeout total) s is spent)"
		echo "$line"
		summary+=("$line")
		total_failed=$((total_failed + 1))
		continue
	fi
	[ "$limit" -gt "$left" ] && limit=$left
	if [ "$stage" = citus ] && ! citus_installed; then
		if [ "${BOOKING_REQUIRE_CITUS:-0}" = 1 ]; then
			line="FAIL: citus (BOOKING_REQUIRE_CITUS=1, and Citus is not installed: no citus.control in $("$BOOKING_PG_BIN/pg_config" --sharedir)/extension)"
			total_failed=$((total_failed + 1))
		else
			line="SKIP: citus (Citus is not installed: no citus.control in $("$BOOKING_PG_BIN/pg_config" --sharedir)/extension)"
		fi
		echo
		echo "$line"
		summary+=("$line")
		continue
	fi
	countfile=$RUN_TMP/$stage.count
	rm -f "$countfile" "$countfile.current" "$countfile.current.log"
	echo
	echo "== $stage (timeout $limit s)"
	t0=$SECONDS
	tag="${BOOKING_STAGE_TAG:+$BOOKING_STAGE_TAG/}$$-$stage-$t0"
	# timeout(1) runs the stage in a process group of its own and, when time
	# runs out, signals the whole group: TERM (the scripts' traps stop their
	# clusters and drop their databases), then KILL 15 s later
	# the stage's output is kept too, for the failures the summary repeats
	exec {teefd}> >(tee "$RUN_TMP/$stage.log")
	teepid=$!
	BOOKING_STAGE_TAG=$tag timeout --kill-after=15 "$limit" bash test/run.sh --stage "$stage" "$countfile" </dev/null \
		>&"$teefd" 2>&1 &
	tpid=$!
	exec {teefd}>&-
	wait "$tpid"
	rc=$?
	tpid=
	took=$((SECONDS - t0))
	p=0
	f=0
	[ -f "$countfile" ] && read -r p f <"$countfile"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		where=
		[ -s "$countfile.current" ] && where=", in $(cat "$countfile.current")"
		# pg_regress prints "test NAME ... " before it runs NAME
		hung=$(sed -n '$s/^\(test \|     \)\([^ ]*\) *\.\.\. *$/\2/p' "$countfile.current.log" 2>/dev/null)
		[ -n "$hung" ] && where="$where, test $hung"
		echo "not ok - stage $stage timed out after $limit s$where"
		stop_leftovers "$tag"
		terminate_sessions
		f=$((f + 1))
		line="TIMEOUT: $stage (more than $limit s$where)"
	else
		stop_leftovers "$tag"
		if [ ! -f "$countfile" ]; then
			f=1
			line="FAIL: $stage (its runner died, exit $rc, $took s)"
		elif [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] && [ "$p" -gt 0 ]; then
			line="PASS: $stage ($p passed, $took s)"
		else
			# an exit status other than 0 with nothing counted, or a stage
			# that ran nothing, is one failure
			[ "$f" -eq 0 ] && f=1
			line="FAIL: $stage ($p passed, $f failed, exit $rc, $took s)"
		fi
	fi
	# the stage's last lines before its verdict (tee ends once nothing of
	# the stage holds its pipe; a process that escaped is not waited for)
	for ((teewait = 0; teewait < 50; teewait++)); do
		kill -0 "$teepid" 2>/dev/null || break
		sleep 0.1
	done
	echo "$line"
	summary+=("$line")
	total_passed=$((total_passed + p))
	total_failed=$((total_failed + f))
done

booking_cluster_stop
echo
echo "== summary ($((SECONDS - started)) s)"
printf '%s\n' "${summary[@]}"
# the failed checks again, each after the script or stage it came from, so
# that the tail of a long run's output (all a CI page may keep) names them
if [ "$total_failed" -gt 0 ]; then
	echo "failed checks:"
	for stage in "${stages[@]}"; do
		[ -f "$RUN_TMP/$stage.log" ] || continue
		awk -v stage="$stage" '/^(-- |== )/ { where = $0 } /^(not ok|TIMEOUT:|FAIL:)/ { print "  " stage ": " where ": " $0 }' \
			"$RUN_TMP/$stage.log" | cut -c1-300 | head -n 30
	done
fi
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ] && [ "$total_passed" -gt 0 ]
