#!/usr/bin/env bash
# test/reliability/run.sh: the reliability suite (docs/guarantees.md says
# what it proves).  test/run.sh runs it against its test cluster; run alone,
#     bash test/reliability/run.sh [crash dump_restore hostile ...]
# it starts a private cluster of its own (port BOOKING_RELIABILITY_PORT,
# default 54339) and uses the installed extension.
#
# Scripts: crash, dump_restore, hostile, privilege, long_txn, keys_txn, worker, launcher, relays, stats,
# sanitizers.
# BOOKING_SANITIZERS=0 skips the sanitizer build.  The isolation-level
# re-runs of the flash sale and the room race live in test/stress/serializable.sh.
#
# Prints each script's checks, one "PASS: <script>" / "FAIL: <script>" line
# per script, and ends with "N passed, N failed" over all the checks.
set -uo pipefail
cd "$(dirname "$0")" || exit 1

own_cluster=
if [ -z "${PGHOST:-}" ] || [ -z "${PGPORT:-}" ]; then
	. ../lib/cluster.sh
	booking_need_packages || exit 1
	booking_cluster_start "${BOOKING_RELIABILITY_PORT:-54339}" || exit 1
	own_cluster=1
fi
export PGUSER=${PGUSER:-postgres}

scripts=("$@")
if [ ${#scripts[@]} -eq 0 ]; then
	scripts=(crash dump_restore hostile privilege long_txn keys_txn worker launcher relays stats sanitizers)
	[ "${BOOKING_SANITIZERS:-1}" = 0 ] && scripts=(crash dump_restore hostile privilege long_txn keys_txn worker launcher relays stats)
fi

passed=0
failed=0
out=$(mktemp "${TMPDIR:-/tmp}/booking-reliability-run.XXXXXX")
trap 'rm -f "$out"; [ -n "$own_cluster" ] && booking_cluster_stop' EXIT
trap 'exit 130' INT TERM
for name in "${scripts[@]}"; do
	name=${name%.sh}
	echo "-- test/reliability/$name.sh"
	# test/run.sh names the script that was running if the stage times out
	[ -n "${BOOKING_STAGE_CURRENT:-}" ] && echo "test/reliability/$name.sh" >"$BOOKING_STAGE_CURRENT"
	started=$SECONDS
	bash "./$name.sh" 2>&1 | tee "$out"
	rc=${PIPESTATUS[0]}
	ok=$(grep -c '^ok - ' "$out")
	bad=$(grep -c '^not ok - ' "$out")
	passed=$((passed + ok))
	failed=$((failed + bad))
	if [ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$ok" -gt 0 ]; then
		echo "PASS: $name ($ok checks, $((SECONDS - started)) s)"
	else
		[ "$bad" -eq 0 ] && failed=$((failed + 1))	# it died before saying what failed
		echo "FAIL: $name ($ok passed, $bad failed, exit $rc, $((SECONDS - started)) s)"
	fi
done
rm -f "$out"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
