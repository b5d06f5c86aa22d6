# test/stress/lib.bash: sourced by the stress scripts (not a test itself).
# Each script creates its own database, runs pgbench with real connections
# against the cluster named by PGHOST/PGPORT/PGUSER, checks exact totals and
# prints one "ok - ..." / "not ok - ..." line per check.

STRESS_PGBIN=${BOOKING_PG_BIN:-/usr/lib/postgresql/15/bin}
STRESS_PASSED=0
STRESS_FAILED=0
STRESS_DB=
STRESS_TMP=$(mktemp -d "${TMPDIR:-/tmp}/booking-stress.XXXXXX")
chmod 755 "$STRESS_TMP"
# an interrupted script still runs its EXIT trap (drops its database, stops
# its cluster)
trap 'exit 130' INT TERM

stress_psql() {
	"$STRESS_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 "$@"
}

# sql QUERY: runs QUERY in the stress database and prints the result unaligned, tuples only
sql() {
	stress_psql -At -d "$STRESS_DB" -c "$1"
}

pass() { echo "ok - $1"; STRESS_PASSED=$((STRESS_PASSED + 1)); }
fail() { echo "not ok - $1"; STRESS_FAILED=$((STRESS_FAILED + 1)); }

# check DESCRIPTION QUERY EXPECTED: the query's output must equal EXPECTED
check() {
	local got
	got=$(sql "$2" 2>&1)
	if [ "$got" = "$3" ]; then
		pass "$1"
	else
		fail "$1"
		echo "#   expected: $3"
		echo "#   got:      $got"
	fi
}

# check_true DESCRIPTION QUERY: the query must print t
check_true() {
	check "$1" "$2" t
}

stress_cleanup() {
	if [ -n "$STRESS_DB" ]; then
		stress_psql -d postgres -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '$STRESS_DB' AND pid <> pg_backend_pid()" >/dev/null 2>&1
		stress_psql -d postgres -c "DROP DATABASE IF EXISTS $STRESS_DB" >/dev/null 2>&1
	fi
	rm -rf "$STRESS_TMP"
}

# stress_db NAME: a fresh database with the extension; dropped on exit
stress_db() {
	STRESS_DB=$1
	trap stress_cleanup EXIT
	stress_psql -d postgres -c "DROP DATABASE IF EXISTS $STRESS_DB" >/dev/null 2>&1
	stress_psql -d postgres -c "CREATE DATABASE $STRESS_DB" >/dev/null || { echo "not ok - create database $STRESS_DB"; exit 1; }
	# the checks are about concurrency, not durability: do not wait for WAL
	# flushes while holding the hot row lock (it only slows the run down)
	stress_psql -d postgres -c "ALTER DATABASE $STRESS_DB SET synchronous_commit = off" >/dev/null
	stress_psql -d "$STRESS_DB" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE" >/dev/null ||
		{ echo "not ok - CREATE EXTENSION booking CASCADE"; exit 1; }
}

# run_pgbench LABEL pgbench-args...: runs pgbench against the stress database
# and checks that it exited 0, no client aborted and no transaction failed
run_pgbench() {
	local label=$1 out rc failed
	shift
	out="$STRESS_TMP/pgbench.$label.out"
	"$STRESS_PGBIN/pgbench" -n "$@" "$STRESS_DB" >"$out" 2>&1
	rc=$?
	check_pgbench_output "$label" "$out" "$rc"
}

# check_pgbench_output LABEL FILE RC
check_pgbench_output() {
	local label=$1 out=$2 rc=$3 failed processed
	processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
	echo "# $label: ${processed:-?} transactions, $(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out" | head -n 1) tps"
	if [ "$rc" -eq 0 ] && ! grep -q 'aborted' "$out"; then
		pass "$label: pgbench exited 0, no client aborted"
	else
		fail "$label: pgbench exited 0, no client aborted (rc=$rc)"
		grep -E 'aborted|ERROR|error' "$out" | head -n 10 | sed 's/^/#   /'
	fi
	if [ "${failed:-}" = 0 ]; then
		pass "$label: 0 failed transactions"
	else
		fail "$label: 0 failed transactions (got ${failed:-none reported})"
	fi
}

# stress_done: the closing line and the exit status of the script
stress_done() {
	echo "$STRESS_PASSED passed, $STRESS_FAILED failed"
	[ "$STRESS_FAILED" -eq 0 ] && [ "$STRESS_PASSED" -gt 0 ]
	exit
}
