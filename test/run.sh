#!/usr/bin/env bash
# The README's test command: bash test/run.sh
# Installs what is missing, builds with -Werror and assertions, starts a private cluster, runs
# pg_regress, the isolation specs, the pgTAP files and the stress tests, stops
# the cluster (also on failure) and ends with "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
. test/lib/cluster.sh

booking_need_packages || exit 1
BOOKING_CFLAGS="-Werror -DUSE_ASSERT_CHECKING" booking_build_install || exit 1
booking_cluster_start "${BOOKING_TEST_PORT:-54329}" || exit 1

passed=0
failed=0
log=$(mktemp /tmp/booking-test-log.XXXXXX)

# count one line per test from the runners' own reports
count() {
	local ok bad
	ok=$(grep -cE "$1" "$log")
	bad=$(grep -cE "$2" "$log")
	passed=$((passed + ok))
	failed=$((failed + bad))
}

echo "== pg_regress"
make -s installcheck ISOLATION= PG_CONFIG=$BOOKING_PG_BIN/pg_config >"$log" 2>&1
rc=$?
cat "$log"
count '^(ok|test) .*\.\.\. ok|^ok [0-9]+ ' '\.\.\. FAILED|^not ok [0-9]+ '
[ $rc -eq 0 ] || { [ -f test/regression.diffs ] && head -n 200 test/regression.diffs; failed=$((failed + 0)); }

echo "== isolation"
make -s installcheck REGRESS= PG_CONFIG=$BOOKING_PG_BIN/pg_config >"$log" 2>&1
rc=$?
cat "$log"
count '^(ok|test) .*\.\.\. ok|^ok [0-9]+ ' '\.\.\. FAILED|^not ok [0-9]+ '
[ $rc -eq 0 ] || { [ -f test/regression.diffs ] && head -n 200 test/regression.diffs; }

echo "== pgTAP"
psql -X -q -d postgres -c "DROP DATABASE IF EXISTS booking_tap" -c "CREATE DATABASE booking_tap" >/dev/null
psql -X -q -d booking_tap -c "CREATE EXTENSION pgtap" -c "CREATE EXTENSION booking CASCADE" >/dev/null 2>&1
pg_prove -d booking_tap test/pgtap/*.sql >"$log" 2>&1
cat "$log"
count '\.\. ok$' '\.\. (Failed|Dubious|No subtests)'

echo "== stress"
for t in test/stress/*.sh; do
	echo "-- $t"
	if bash "$t"; then passed=$((passed + 1)); else echo "FAILED: $t"; failed=$((failed + 1)); fi
done

echo "== upgrade path, META.json, client examples"
# test/upgrade/*.sh: ALTER EXTENSION UPDATE from the previous version, and the
# PGXN metadata; examples/*/test.sh: the Python and Node HTTP services
for t in test/upgrade/*.sh examples/*/test.sh; do
	echo "-- $t"
	if bash "$t"; then passed=$((passed + 1)); else echo "FAILED: $t"; failed=$((failed + 1)); fi
done

echo "== reliability"
# test/reliability/run.sh: crash recovery, dump and restore, hostile input,
# least privilege, long transactions, sanitizers (BOOKING_SANITIZERS=0 skips
# them); one PASS/FAIL line per script, counted here per script
bash test/reliability/run.sh 2>&1 | tee "$log"
rc=${PIPESTATUS[0]}
count '^PASS: ' '^FAIL: '
[ "$rc" -eq 0 ] || grep -q '^FAIL: ' "$log" || { echo "FAILED: test/reliability/run.sh (exit $rc)"; failed=$((failed + 1)); }

rm -f "$log"
booking_cluster_stop
echo
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
