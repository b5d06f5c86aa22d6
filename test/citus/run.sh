#!/usr/bin/env bash
# test/citus/run.sh: the Citus suite (docs/citus-tests.md says what each
# script shows).  booking on a coordinator and two workers, all calls through
# the coordinator, with real concurrent connections (pgbench).
#
#     bash test/citus/run.sh [script ...]     e.g. flash_sale groups
#
# Starts a cluster of three nodes on ports BOOKING_CITUS_PORT..+2 (default
# 54380) under TMPDIR, runs each script (each in a database of its own, made
# on every node and dropped after it), stops the cluster, also on failure or
# interrupt, and ends with "N passed, N failed" over all the scripts' checks.
# Exits non-zero when anything failed or nothing passed.  Each script has a
# timeout (BOOKING_CITUS_SCRIPT_TIMEOUT, default 240 s) that fails it.
#
# It tests the installed build (it does not build): install the extension
# into the PostgreSQL named by BOOKING_PG_BIN first, as test/run.sh does.
#
# When Citus is not installed (no citus.control in the share directory of
# BOOKING_PG_BIN's pg_config) it prints one line saying so and exits 0;
# with BOOKING_REQUIRE_CITUS=1 that is a failure.
#
# A cluster that outlives the run, for working on one script:
#     bash test/citus/run.sh --start          prints BOOKING_CITUS_DIR=...
#     BOOKING_CITUS_DIR=... bash test/citus/run.sh flash_sale
#     bash test/citus/run.sh --stop DIR
# With BOOKING_CITUS_DIR set, the run uses that cluster and leaves it running.
set -uo pipefail
cd "$(dirname "$0")" || exit 1
. ./lib.bash
trap 'rm -rf "$CITUS_TMP"' EXIT

ALL_SCRIPTS="distribute regress flash_sale room_race groups holds_keys worker_down shard_move move_race routing shard_tables delegate amend passes outbox roles metadata"

if ! citus_installed; then
	where="$("$CITUS_PGBIN/pg_config" --sharedir)/extension/citus.control"
	if [ "${BOOKING_REQUIRE_CITUS:-0}" = 1 ]; then
		echo "not ok - Citus is required (BOOKING_REQUIRE_CITUS=1) but not installed: no $where"
		echo "0 passed, 1 failed"
		exit 1
	fi
	echo "Citus is not installed (no $where): the Citus suite is skipped"
	exit 0
fi
if rehearsal; then
	echo "not ok - BOOKING_CITUS_REHEARSAL=1 runs the scripts without Citus; it is not a run of the suite"
	echo "0 passed, 1 failed"
	exit 1
fi

case ${1:-} in
--start)
	citus_cluster_create "${BOOKING_CITUS_PORT:-54380}" || { citus_cluster_destroy; exit 1; }
	echo "BOOKING_CITUS_DIR=$CITUS_DIR"
	exit 0
	;;
--stop)
	citus_cluster_use "${2:?--stop DIR}" && citus_cluster_destroy
	exit
	;;
esac

scripts=("$@")
[ ${#scripts[@]} -eq 0 ] && read -ra scripts <<<"$ALL_SCRIPTS"
for name in "${scripts[@]}"; do
	[ -f "${name%.sh}.sh" ] || { echo "test/citus/run.sh: no script ${name%.sh}.sh (scripts: $ALL_SCRIPTS)" >&2; exit 2; }
done

own=
if [ -n "${BOOKING_CITUS_DIR:-}" ]; then
	citus_cluster_use "$BOOKING_CITUS_DIR" || { echo "0 passed, 1 failed"; exit 1; }
	echo "== the Citus cluster in $CITUS_DIR"
else
	started=$SECONDS
	own=1
	trap 'rm -rf "$CITUS_TMP"; citus_cluster_destroy' EXIT
	trap 'exit 130' INT TERM
	if ! citus_cluster_create "${BOOKING_CITUS_PORT:-54380}"; then
		echo "not ok - start a coordinator and two workers on ports ${BOOKING_CITUS_PORT:-54380}..+2"
		echo "0 passed, 1 failed"
		exit 1
	fi
	echo "== a coordinator and two workers on ports $(awk '{ printf "%s%s", sep, $2; sep = ", " }' "$CITUS_DIR/ports") ($((SECONDS - started)) s)"
fi
export BOOKING_CITUS_DIR=$CITUS_DIR BOOKING_PG_BIN=$CITUS_PGBIN

passed=0
failed=0
summary=()
out=$CITUS_TMP/script.out
for name in "${scripts[@]}"; do
	name=${name%.sh}
	echo "-- test/citus/$name.sh"
	[ -n "${BOOKING_STAGE_CURRENT:-}" ] && echo "test/citus/$name.sh" >"$BOOKING_STAGE_CURRENT"
	t0=$SECONDS
	# TERM first: the script's EXIT trap drops its database and restarts a
	# worker it stopped
	timeout --kill-after=20 "${BOOKING_CITUS_SCRIPT_TIMEOUT:-240}" bash "./$name.sh" 2>&1 </dev/null | tee "$out"
	rc=${PIPESTATUS[0]}
	ok=$(grep -c '^ok - ' "$out")
	bad=$(grep -c '^not ok - ' "$out")
	passed=$((passed + ok))
	failed=$((failed + bad))
	if [ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] && [ "$ok" -gt 0 ]; then
		line="PASS: $name ($ok checks, $((SECONDS - t0)) s)"
	else
		# it died before saying what failed, or timed out
		[ "$bad" -eq 0 ] && failed=$((failed + 1))
		why="exit $rc"
		[ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && why="timed out after ${BOOKING_CITUS_SCRIPT_TIMEOUT:-240} s"
		line="FAIL: $name ($ok passed, $bad failed, $why, $((SECONDS - t0)) s)"
	fi
	echo "$line"
	summary+=("$line")
done

# the summary is indented: test/run.sh counts the PASS: and FAIL: lines
# at the start of a line, one per script
echo
echo "== summary"
printf '  %s\n' "${summary[@]}"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
