#!/usr/bin/env bash
# test/selftest/run.sh: the test runner's own test.  test/run.sh must fail
# when a test fails, whatever way it fails; this shows that it does.
#
# It copies the checkout to a scratch directory, replaces the pgTAP files and
# the stress scripts there with small ones of its own (test/selftest/), and
# runs the scratch copy's test/run.sh on a stage or two, once per fault, with
# one fault planted each time:
#
#   pgtap      a failing pgTAP assertion, in a second file beside a passing one
#   regress    a pg_regress test whose output differs from its expected output
#   isolation  an isolation spec whose output differs
#   regress    pg_regress exits 2 after a test passed, with no test counted as
#              failed: the next test has no expected output
#   isolation  pg_isolation_regress exits 2 with nothing counted: a regress
#              test left a session connected to isolation_regression
#   regress    a test that hangs past the stage's timeout (10 s here): the
#              stage is killed, its session terminated, the next stage passes
#   stress     a stress script that says "ok" and exits 1
#   house      a file of the ground that includes a header of the calls
#
# Each time, the scratch run.sh must exit non-zero, name the stage in a FAIL:
# or TIMEOUT: line and end with "N passed, M failed" where M > 0.  One more
# run with the same files and no fault must exit 0 with "N passed, 0 failed".
#
# The scratch runs use the installed build (BOOKING_SKIP_BUILD=1) and a
# private cluster of their own on port BOOKING_SELFTEST_PORT (default: the
# test port + 10), so this runs while test/run.sh's own cluster is up.
# Prints one "ok - ..." / "not ok - ..." line per run and ends with
# "N passed, N failed"; takes about a minute.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
SELF=$ROOT/test/selftest

PORT=${BOOKING_SELFTEST_PORT:-$((${BOOKING_TEST_PORT:-${PGPORT:-54329}} + 10))}
SELF_TMP=$(mktemp -d "${TMPDIR:-/tmp}/booking-selftest.XXXXXX")
chmod 755 "$SELF_TMP"
trap 'rm -rf "$SELF_TMP"' EXIT
trap 'exit 130' INT TERM
PASSED=0
FAILED=0

# the scratch runs start their own cluster: forget the caller's
unset PGHOST PGPORT PGDATABASE BOOKING_REGRESS BOOKING_ISOLATION
for v in $(compgen -e | grep '^BOOKING_TIMEOUT_'); do unset "$v"; done

# -- the scratch checkout ------------------------------------------------------

base=$SELF_TMP/base
mkdir "$base"
if git -C "$ROOT" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# tracked files and new ones, as they are in the working tree
	git -C "$ROOT" ls-files -z -co --exclude-standard | (cd "$ROOT" && tar --null -T - -cf -) | tar -xf - -C "$base"
else
	tar -C "$ROOT" --exclude=./test/results --exclude=./node_modules -cf - . | tar -xf - -C "$base"
fi
[ -f "$base/test/run.sh" ] || { echo "not ok - copy the checkout to $base"; echo "0 passed, 1 failed"; exit 1; }
rm -f "$base"/test/pgtap/*.sql "$base"/test/stress/*.sh
cp "$SELF/selftest_tap.sql" "$base/test/pgtap/"
cp "$SELF/selftest.sql" "$SELF/selftest_hang.sql" "$SELF/selftest_leave.sql" "$base/test/sql/"
cp "$SELF/selftest.out" "$SELF/selftest_leave.out" "$SELF/iso_selftest.out" "$base/expected/"
cp "$SELF/iso_selftest.spec" "$base/test/specs/"
cat >"$base/test/stress/selftest_ok.sh" <<'EOF'
echo "ok - a stress script that passes"
EOF

# scratch NAME: a fresh copy of the base, in $dir
scratch() {
	dir=$SELF_TMP/$1
	cp -a "$base" "$dir"
}

# runner NAME STAGE... (with VAR=value settings in the environment): runs the
# scratch copy's test/run.sh; sets out (its output file), rc and took
runner() {
	local name=$1 t0=$SECONDS
	shift
	out=$SELF_TMP/$name.out
	BOOKING_SKIP_BUILD=1 BOOKING_TEST_PORT=$PORT BOOKING_SANITIZERS=0 \
		bash "$dir/test/run.sh" "$@" >"$out" 2>&1 </dev/null
	rc=$?
	took=$((SECONDS - t0))
}

# processes still running in the scratch copy (a stage not killed whole)
strays() {
	local p
	for p in /proc/[0-9]*/cwd; do
		case $(readlink "$p" 2>/dev/null) in "$dir" | "$dir"/*) echo "${p//[^0-9]/}" ;; esac
	done
}

report() {
	if [ -z "$1" ]; then
		echo "ok - $2"
		PASSED=$((PASSED + 1))
	else
		echo "not ok - $2: $1"
		FAILED=$((FAILED + 1))
		echo "#   the scratch run's last lines:"
		tail -n 25 "$out" | sed 's/^/#   /'
	fi
}

# expect_failure DESCRIPTION STAGE-LINE-PATTERN [MORE-PATTERNS...]: the last
# run must have exited non-zero, printed each pattern (grep -E) and ended
# with "N passed, M failed", M > 0
expect_failure() {
	local description=$1 why="" last p
	shift
	last=$(tail -n 1 "$out")
	[ "$rc" -ne 0 ] || why="it exited 0"
	[[ $last =~ ^[0-9]+\ passed,\ [1-9][0-9]*\ failed$ ]] || why="${why:+$why; }its last line is \"$last\""
	for p in "$@"; do
		grep -qE "$p" "$out" || why="${why:+$why; }no line matches /$p/"
	done
	[ -z "$(strays)" ] || why="${why:+$why; }processes left running in the scratch copy: $(strays | paste -sd' ')"
	report "$why" "$description: run.sh exits $rc, \"$(grep -E "$1" "$out" | head -n 1)\", \"$last\" ($took s)"
}

# -- one clean run, then one run per fault ---------------------------------------

scratch clean
BOOKING_REGRESS=selftest BOOKING_ISOLATION=iso_selftest runner clean regress isolation pgtap stress
last=$(tail -n 1 "$out")
why=""
[ "$rc" -eq 0 ] || why="it exited $rc"
[[ $last =~ ^[1-9][0-9]*\ passed,\ 0\ failed$ ]] || why="${why:+$why; }its last line is \"$last\""
for s in regress isolation pgtap stress; do
	grep -q "^PASS: $s " "$out" || why="${why:+$why; }no \"PASS: $s\" line"
done
report "$why" "with no fault planted, run.sh regress isolation pgtap stress exits 0: \"$last\" ($took s)"

scratch pgtap
sed 's/is(1 + 1, 2,/is(1 + 1, 3,/' "$dir/test/pgtap/selftest_tap.sql" >"$dir/test/pgtap/selftest_tap_fail.sql"
runner pgtap pgtap
expect_failure "a failing pgTAP assertion beside a passing file" '^FAIL: pgtap \(1 passed, 1 failed' \
	'Failed 1/2 subtests'

scratch regress
sed -i 's/^   2$/   3/' "$dir/expected/selftest.out"
BOOKING_REGRESS=selftest runner regress regress
expect_failure "a pg_regress test whose output differs" '^FAIL: regress ' 'selftest +\.\.\. FAILED'

scratch isolation
sed -i 's/^22 *$/23/' "$dir/expected/iso_selftest.out"
BOOKING_ISOLATION=iso_selftest runner isolation isolation
expect_failure "an isolation spec whose output differs" '^FAIL: isolation ' 'iso_selftest +\.\.\. FAILED'

scratch noexpected
cp "$dir/test/sql/selftest.sql" "$dir/test/sql/selftest_noexpected.sql"
BOOKING_REGRESS="selftest selftest_noexpected" runner noexpected regress
expect_failure "pg_regress exits 2 after one test passed, none counted failed (a test without expected output)" \
	'^FAIL: regress \(1 passed, 1 failed' 'diff command failed' 'exited 2, and pg_regress reported no failed test'

scratch leave
BOOKING_REGRESS=selftest_leave BOOKING_ISOLATION=iso_selftest runner leave regress isolation
expect_failure "pg_isolation_regress exits 2 with nothing counted (a session left connected to its database)" \
	'^FAIL: isolation ' '^PASS: regress ' 'is being accessed by other users' 'exited 2, and pg_regress reported no failed test'

scratch hang
BOOKING_REGRESS="selftest selftest_hang" BOOKING_TIMEOUT_REGRESS=10 runner hang regress pgtap
expect_failure "a pg_regress test that hangs past the stage's timeout" \
	'^TIMEOUT: regress .*test selftest_hang' 'terminated [1-9][0-9]* leftover session' '^PASS: pgtap '
[ "$took" -lt 60 ] || { echo "not ok - the hanging stage was stopped within 60 s (took $took s)"; FAILED=$((FAILED + 1)); }

scratch stress
cat >"$dir/test/stress/selftest_exit1.sh" <<'EOF'
echo "ok - this stress script says ok, and exits 1"
exit 1
EOF
runner stress stress
expect_failure "a stress script that exits 1" '^FAIL: stress ' 'not ok - test/stress/selftest_exit1\.sh'

scratch house
runner house-clean house
why=""
[ "$rc" -eq 0 ] || why="it exited $rc"
grep -q '^PASS: house ' "$out" || why="${why:+$why; }no \"PASS: house\" line"
report "$why" "with no fault planted, run.sh house exits 0 ($took s)"
sed -i '0,/^#include "1_ground\/spi.h"$/s//#include "1_ground\/spi.h"\n#include "6_calls\/stay.h"/' "$dir/src/1_ground/spi.c"
runner house house
expect_failure "a file of the ground that includes a header of the calls" '^FAIL: house ' \
	'^up: 1_ground/spi.c \(layer 1\) uses 6_calls/stay.h \(layer 6\)'

echo "$PASSED passed, $FAILED failed"
[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
