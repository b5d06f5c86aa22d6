#!/usr/bin/env bash
# regress.sh (suite item 1): the project's pg_regress files and isolation
# specs against the distributed install, all through the coordinator.
#
# The pg_regress files run in one database in the Makefile's order, as
# `make installcheck` runs them: setup.sql creates the extension on the
# coordinator (Citus creates it on the workers), then citus_distribute.sql
# (kept beside this script) runs booking.distribute(), then the other files.
# The isolation specs run in a second, distributed database, in which
# pg_isolation_test_session_is_blocked is swapped for Citus's
# citus_isolation_test_session_is_blocked (as Citus's own isolation tests
# do), so that the tester sees a session that waits for a lock on a worker.
# Both use pg_regress --use-existing, with the project's expected outputs.
#
# None of the project's files and specs passes unchanged on Citus: they
# name resources by the ids a fresh single server hands out (1, 2, 3), and
# ids on Citus are drawn to land in their shards; docs/citus-tests.md lists
# each one with the reasons.  CITUS_REGRESS and CITUS_ISOLATION below list
# the ones that must pass here (empty today).  The suite's own specs
# (test/citus/specs/iso_*.spec, expected outputs in test/citus/expected/)
# run the races that matter with ids kept in a table, and must pass.
# BOOKING_CITUS_REGRESS_ALL=1 runs every file and spec of the Makefile too
# and reports which pass, without failing on the others, and keeps the diffs
# in TMPDIR (to review the lists).
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

# the project's files and specs that run on Citus unchanged (none: see
# docs/citus-tests.md for why), and this suite's own specs (test/citus/specs,
# expected outputs in test/citus/expected), which must pass
CITUS_REGRESS=""
CITUS_ISOLATION=""
OWN_SPECS=$(cd specs && ls iso_*.spec | sed 's/\.spec$//' | xargs)

ROOT=$(cd ../.. && pwd)
makefile_list() {
	awk -v v="$1" '$1 == v && $2 == "=" { on = 1 } on { print; if ($0 !~ /\\$/) on = 0 }' "$ROOT/Makefile" |
		sed "s/^$1 =//" | tr -d '\\' | xargs
}
ALL_REGRESS=$(makefile_list REGRESS)
ALL_ISOLATION=$(makefile_list ISOLATION)
if [ "${BOOKING_CITUS_REGRESS_ALL:-0}" = 1 ]; then
	regress_list=${ALL_REGRESS#setup}
	isolation_list=$ALL_ISOLATION
else
	regress_list=$CITUS_REGRESS
	isolation_list=$CITUS_ISOLATION
fi
isolation_list="$OWN_SPECS $isolation_list"
echo "# pg_regress files: setup citus_distribute$regress_list"
echo "# isolation specs: ${isolation_list:-none}"

if rehearsal; then
	echo "# REHEARSAL: the files need a distributed install"
	pass "rehearsal"
	citus_done
fi

# a scratch input directory: the project's sources and expected outputs,
# and citus_distribute
S=${CITUS_REGRESS_DIR:-$CITUS_TMP/regress}
mkdir -p "$S/sql" "$S/expected" "$S/specs" "$S/out" "$S/out_iso"
cp "$ROOT"/test/sql/*.sql citus_distribute.sql "$S/sql/"
cp "$ROOT"/test/specs/*.spec specs/*.spec "$S/specs/"
cp "$ROOT"/expected/*.out citus_distribute.out expected/*.out "$S/expected/"
chmod -R a+rwX "$S"
PGXS_DIR=$("$CITUS_PGBIN/pg_config" --pkglibdir)/pgxs/src/test

# report_lines LOG: "name ok" / "name failed" per test of pg_regress's
# report: 15's "test name ... ok", 17's TAP-like "ok 1 - name"
report_lines() {
	sed -n -e 's/^\(test\|    \) *\([a-z_0-9]*\) *\.\.\. *\(ok\|FAILED\|failed\).*/\2 \3/p' \
		-e 's/^ok [0-9][0-9]* *[-+] *\([a-z_0-9]*\) .*/\1 ok/p' \
		-e 's/^not ok [0-9][0-9]* *[-+] *\([a-z_0-9]*\) .*/\1 failed/p' "$1"
}

# count_report LOG KIND REQUIRED: one check per test of pg_regress's report
# in LOG; a test in REQUIRED that failed is a failure, others are reported
count_report() {
	local log=$1 kind=$2 required=" $3 " name result passed=""
	while read -r name result; do
		if [ "$result" = ok ]; then
			passed="$passed $name"
			pass "$kind $name"
		elif [[ $required == *" $name "* ]]; then
			fail "$kind $name"
		else
			echo "# $kind $name: $result (not expected to pass on Citus)"
		fi
	done < <(report_lines "$log")
	echo "# $kind that pass on Citus:${passed:- none}"
}

########################################################################
# pg_regress
########################################################################
CITUS_NO_BOOKING=1 citus_db booking_citus_regress
# setup.sql's views depend on a primary key, which Citus cannot create on
# the workers: it creates them on the coordinator only (where they are
# used) and says so in a WARNING that the expected output does not have
npsql coord -d postgres -c "ALTER DATABASE $CITUS_DB SET citus.enable_unsupported_feature_messages = off" >/dev/null
"$PGXS_DIR/regress/pg_regress" --inputdir="$S" --outputdir="$S/out" --bindir="$CITUS_PGBIN" \
	--use-existing --dbname="$CITUS_DB" --host="$CITUS_DIR/coord" --port="$(citus_port coord)" --user=postgres \
	setup citus_distribute $regress_list >"$S/regress.log" 2>&1
rc=$?
sed -n '/^\(test\|    \|ok\|not ok\) /p' "$S/regress.log" | sed 's/^/# /'
report_lines "$S/regress.log" | grep -qx 'setup ok' && report_lines "$S/regress.log" | grep -qx 'citus_distribute ok' ||
	fail "setup and citus_distribute pass"
count_report "$S/regress.log" regress "setup citus_distribute $CITUS_REGRESS"
[ "${BOOKING_CITUS_REGRESS_ALL:-0}" = 1 ] && [ -s "$S/out/regression.diffs" ] &&
	cp "$S/out/regression.diffs" "${TMPDIR:-/tmp}/citus-regress.diffs" && echo "# diffs kept in ${TMPDIR:-/tmp}/citus-regress.diffs"
[ "${BOOKING_CITUS_REGRESS_ALL:-0}" != 1 ] && [ "$rc" -ne 0 ] && head -n 200 "$S/out/regression.diffs" 2>/dev/null | sed 's/^/#   /'

########################################################################
# isolation
########################################################################
if [ -n "$isolation_list" ]; then
	citus_db booking_citus_isolation
	q "ALTER FUNCTION pg_catalog.pg_isolation_test_session_is_blocked(integer, integer[])
	     RENAME TO old_pg_isolation_test_session_is_blocked;
	   ALTER FUNCTION pg_catalog.citus_isolation_test_session_is_blocked(integer, integer[])
	     RENAME TO pg_isolation_test_session_is_blocked" >/dev/null ||
		fail "swap in citus_isolation_test_session_is_blocked"
	"$PGXS_DIR/isolation/pg_isolation_regress" --inputdir="$S" --outputdir="$S/out_iso" --bindir="$CITUS_PGBIN" \
		--use-existing --dbname="$CITUS_DB" --host="$CITUS_DIR/coord" --port="$(citus_port coord)" --user=postgres \
		$isolation_list >"$S/isolation.log" 2>&1
	rc=$?
	sed -n '/^\(test\|    \|ok\|not ok\) /p' "$S/isolation.log" | sed 's/^/# /'
	count_report "$S/isolation.log" isolation "$OWN_SPECS $CITUS_ISOLATION"
	[ "${BOOKING_CITUS_REGRESS_ALL:-0}" = 1 ] && [ -s "$S/out_iso/regression.diffs" ] &&
		cp "$S/out_iso/regression.diffs" "${TMPDIR:-/tmp}/citus-isolation.diffs" && echo "# diffs kept in ${TMPDIR:-/tmp}/citus-isolation.diffs"
	[ "${BOOKING_CITUS_REGRESS_ALL:-0}" != 1 ] && [ "$rc" -ne 0 ] && head -n 200 "$S/out_iso/regression.diffs" 2>/dev/null | sed 's/^/#   /'
fi

citus_done
