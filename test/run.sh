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
#   regress      pg_regress (test/sql, expected/), via make installcheck
#   isolation    the isolation specs (test/specs/iso_*), via make installcheck
#   pgtap        test/pgtap/*.sql, each file with pg_prove
#   stress       test/stress/*.sh, one test per script
#   upgrade      test/upgrade/*.sh: the upgrade path and META.json
#   examples     examples/*/test.sh: the Python and Node HTTP services
#   reliability  test/reliability/run.sh: one test per script
#   selftest     test/selftest/run.sh: this runner fails when a test fails (one test)
#
# Every stage counts a failure when its runner exits non-zero, whatever it
# printed, and a stage that ran no test fails.
#
# Environment:
#   BOOKING_TEST_PORT=N     the test cluster's port (default 54329); the
#                           stages use a few ports above it (up to N+10)
#   BOOKING_SKIP_BUILD=1    do not build and install: test what is installed
#   BOOKING_REGRESS="a b"   run these pg_regress tests instead of the Makefile's
#   BOOKING_ISOLATION="a"   run these isolation specs instead of the Makefile's
#   BOOKING_SANITIZERS=0    skip the sanitizer build of the reliability suite
#   BOOKING_PG_BIN, TMPDIR  see test/lib/cluster.sh
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2

ALL_STAGES="regress isolation pgtap stress upgrade examples reliability selftest"

# -- one stage (run as: bash test/run.sh --stage NAME COUNTFILE) ----------------
#
# Runs with the test cluster named by PGHOST/PGPORT.  Prints the runners'
# output and writes "PASSED FAILED" to COUNTFILE; its exit status says whether
# anything failed.

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
	local kind=$1 log=$STAGE_TMP/installcheck.log rc before=$failed ok_before=$passed
	local args=(PG_CONFIG="$BOOKING_PG_BIN/pg_config")
	if [ "$kind" = regress ]; then
		args+=(ISOLATION=)
		[ -n "${BOOKING_REGRESS+set}" ] && args+=(REGRESS="$BOOKING_REGRESS")
	else
		args+=(REGRESS=)
		[ -n "${BOOKING_ISOLATION+set}" ] && args+=(ISOLATION="$BOOKING_ISOLATION")
	fi
	rm -f test/regression.diffs test/regression.out test/output_iso/regression.diffs
	make -s installcheck "${args[@]}" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	count_lines "$log" '^(test |     ).* \.\.\. ok( |$)' '^(test |     ).* \.\.\. (FAILED|failed)'
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
	bash test/reliability/run.sh 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	# one test per script: run.sh prints "PASS: name" or "FAIL: name" for
	# each, and FAIL also for a script that died before it said what failed
	count_lines "$log" '^PASS: ' '^FAIL: '
	if [ "$rc" -ne 0 ] && [ "$failed" -eq "$before" ]; then
		bad "test/reliability/run.sh exited $rc with no script failed"
	fi
}

run_stage_body() {
	local stage=$1 t
	case $stage in
	regress | isolation) stage_installcheck "$stage" ;;
	pgtap) stage_pgtap ;;
	stress) for t in test/stress/*.sh; do run_script "$t"; done ;;
	upgrade) for t in test/upgrade/*.sh; do run_script "$t"; done ;;
	examples) for t in examples/*/test.sh; do run_script "$t"; done ;;
	reliability) stage_reliability ;;
	selftest) run_script test/selftest/run.sh ;;
	esac
}

if [ "${1:-}" = --stage ]; then
	STAGE_TMP=$(mktemp -d "${TMPDIR:-/tmp}/booking-stage.XXXXXX")
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
booking_need_packages || exit 1
if [ "${BOOKING_SKIP_BUILD:-0}" = 1 ]; then
	echo "== BOOKING_SKIP_BUILD=1: testing the installed build"
else
	BOOKING_CFLAGS="-Werror -DUSE_ASSERT_CHECKING" booking_build_install ||
		{ echo "FAIL: the build"; echo "0 passed, 1 failed"; exit 1; }
fi
booking_cluster_start "${BOOKING_TEST_PORT:-54329}" || exit 1
export BOOKING_PG_BIN BOOKING_TEST_PORT=$BOOKING_PORT

RUN_TMP=$(mktemp -d "${TMPDIR:-/tmp}/booking-run.XXXXXX")
trap 'rm -rf "$RUN_TMP"; booking_cluster_stop' EXIT
total_passed=0
total_failed=0
summary=()

for stage in "${stages[@]}"; do
	countfile=$RUN_TMP/$stage.count
	rm -f "$countfile"
	echo
	echo "== $stage"
	t0=$SECONDS
	bash test/run.sh --stage "$stage" "$countfile" </dev/null
	rc=$?
	took=$((SECONDS - t0))
	p=0
	f=0
	[ -f "$countfile" ] && read -r p f <"$countfile"
	if [ ! -f "$countfile" ]; then
		f=1
		line="FAIL: $stage (its runner died, exit $rc, $took s)"
	elif [ "$rc" -eq 0 ] && [ "$f" -eq 0 ] && [ "$p" -gt 0 ]; then
		line="PASS: $stage ($p passed, $took s)"
	else
		# an exit status other than 0 with nothing counted, or a stage that
		# ran nothing, is one failure
		[ "$f" -eq 0 ] && f=1
		line="FAIL: $stage ($p passed, $f failed, exit $rc, $took s)"
	fi
	echo "$line"
	summary+=("$line")
	total_passed=$((total_passed + p))
	total_failed=$((total_failed + f))
done

booking_cluster_stop
echo
echo "== summary ($((SECONDS - started)) s)"
printf '%s\n' "${summary[@]}"
echo "$total_passed passed, $total_failed failed"
[ "$total_failed" -eq 0 ] && [ "$total_passed" -gt 0 ]
