# test/reliability/lib.bash: sourced by the reliability scripts (not a test).
#
# Each script talks to the cluster named by PGHOST/PGPORT/PGUSER (the test
# cluster of test/run.sh), prints one "ok - ..." / "not ok - ..." line per
# check and ends with "N passed, N failed".  A script that needs a cluster of
# its own (a crash, a sanitizer build) starts it with rel_cluster_start, in a
# temporary directory of its own, on a port of its own; an EXIT trap stops it
# and drops the script's databases, also on failure.

REL_PGBIN=${BOOKING_PG_BIN:-/usr/lib/postgresql/15/bin}
REL_PASSED=0
REL_FAILED=0
REL_DBS=""
REL_CLUSTERS=""
REL_BG_PIDS=""
REL_TMP=$(mktemp -d "${TMPDIR:-/tmp}/booking-reliability.XXXXXX")
chmod 755 "$REL_TMP"
# the connection the helpers use; scripts switch it to their own clusters
REL_HOST=${PGHOST:-}
REL_PORT=${PGPORT:-5432}
REL_DB=postgres

trap 'exit 130' INT TERM
trap rel_cleanup EXIT

as_postgres() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# rel_psql ARGS...: psql on the current connection, stop on the first error
rel_psql() {
	"$REL_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$REL_HOST" -p "$REL_PORT" -U "${PGUSER:-postgres}" "$@"
}

# q QUERY: runs QUERY in $REL_DB; prints the result unaligned, tuples only
q() {
	rel_psql -At -d "$REL_DB" -c "$1"
}

pass() { echo "ok - $1"; REL_PASSED=$((REL_PASSED + 1)); }
fail() { echo "not ok - $1"; REL_FAILED=$((REL_FAILED + 1)); }

# check DESCRIPTION QUERY EXPECTED: the query's output must equal EXPECTED
check() {
	local got
	got=$(q "$2" 2>&1)
	if [ "$got" = "$3" ]; then
		pass "$1"
	else
		fail "$1"
		echo "#   expected: $3"
		echo "#   got:      $got" | head -n 20
	fi
}

# check_cmd DESCRIPTION COMMAND...: the command must exit 0
check_cmd() {
	local desc=$1
	shift
	if "$@"; then pass "$desc"; else fail "$desc"; fi
}

# rel_db NAME: a fresh database with the extension on the current cluster;
# dropped on exit
rel_db() {
	REL_DB=$1
	REL_DBS="$REL_DBS $REL_HOST|$REL_PORT|$1"
	rel_psql -d postgres -c "DROP DATABASE IF EXISTS $1" >/dev/null 2>&1
	rel_psql -d postgres -c "CREATE DATABASE $1" >/dev/null || { fail "create database $1"; exit 1; }
	rel_psql -d "$1" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE" >/dev/null ||
		{ fail "CREATE EXTENSION booking CASCADE in $1"; exit 1; }
}

# rel_cluster_start NAME PORT [postgresql.conf lines...]: a private cluster
# like test/lib/cluster.sh's, without touching PGHOST/PGPORT; sets
# REL_CDIR (its directory: data/, server.log, the socket) and switches the
# current connection to it.  REL_POSTGRES, when set, is the postgres
# executable pg_ctl starts (a wrapper that sets LD_PRELOAD, say).
rel_cluster_start() {
	local name=$1 port=$2
	shift 2
	REL_CDIR=$(mktemp -d "${TMPDIR:-/tmp}/booking-$name.XXXXXX")
	[ "$(id -u)" = 0 ] && chown postgres:postgres "$REL_CDIR"
	chmod 700 "$REL_CDIR"
	REL_CLUSTERS="$REL_CLUSTERS $REL_CDIR"
	as_postgres "$REL_PGBIN/initdb" -D "$REL_CDIR/data" -U postgres --auth=trust --no-sync \
		-E UTF8 --locale=C.UTF-8 >"$REL_CDIR/initdb.log" 2>&1 || { cat "$REL_CDIR/initdb.log"; return 1; }
	{
		echo "port = $port"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$REL_CDIR'"
		echo "log_min_messages = warning"
		for line in "$@"; do echo "$line"; done
	} >>"$REL_CDIR/data/postgresql.conf"
	REL_HOST=$REL_CDIR
	REL_PORT=$port
	rel_cluster_up
}

# rel_cluster_up: (re)starts the cluster in REL_CDIR
rel_cluster_up() {
	as_postgres "$REL_PGBIN/pg_ctl" -D "$REL_CDIR/data" -l "$REL_CDIR/server.log" \
		${REL_POSTGRES:+-p "$REL_POSTGRES"} -w -t 120 start >/dev/null || { tail -n 30 "$REL_CDIR/server.log"; return 1; }
}

# rel_wait_ready SECONDS: waits until the current cluster answers a query
rel_wait_ready() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		if "$REL_PGBIN/psql" -X -At -h "$REL_HOST" -p "$REL_PORT" -U postgres -d postgres \
			-c "SELECT 1" >/dev/null 2>&1; then
			return 0
		fi
		sleep 0.1
	done
	return 1
}

rel_cleanup() {
	local p entry host port db dir
	for p in $REL_BG_PIDS; do kill "$p" 2>/dev/null; done
	for entry in $REL_DBS; do
		IFS='|' read -r host port db <<<"$entry"
		[ -S "$host/.s.PGSQL.$port" ] || continue
		"$REL_PGBIN/psql" -X -q -h "$host" -p "$port" -U postgres -d postgres \
			-c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '$db' AND pid <> pg_backend_pid()" \
			-c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
	done
	for dir in $REL_CLUSTERS; do
		if [ -d "$dir/data" ]; then
			as_postgres "$REL_PGBIN/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1
		fi
		rm -rf "$dir"
	done
	rm -rf "$REL_TMP"
}

# rel_counters_sql: a query of (id, capacity, taken, seats) per resource:
# taken is the seat counter, whichever layout the installed version has
# (resources.taken, or for a striped resource of 0.2.0 capacity minus the
# free seats of its stripes); seats is the sum of its blocking seat bookings.
# One pass over each table, so it stays fast with 100,000s of bookings.
rel_counters_sql() {
	local taken="r.taken" stripes=""
	if [ "$(q "SELECT to_regclass('booking.resource_stripes') IS NOT NULL")" = t ]; then
		taken="CASE WHEN r.stripes > 1 THEN r.capacity - coalesce(st.free, 0) ELSE r.taken END"
		stripes="LEFT JOIN (SELECT resource_id, sum(free) AS free FROM booking.resource_stripes GROUP BY resource_id) st
			ON st.resource_id = r.id"
	fi
	echo "SELECT r.id, r.capacity, $taken AS taken, coalesce(b.seats, 0) AS seats
		FROM booking.resources r
		LEFT JOIN (SELECT resource_id, sum(quantity) AS seats FROM booking.bookings
		            WHERE during IS NULL AND status IN ('pending', 'confirmed') GROUP BY resource_id) b
		  ON b.resource_id = r.id
		$stripes"
}

# check_invariants LABEL: the three invariants of the extension's data, in
# the current database; every one must hold whatever happened before
check_invariants() {
	local label=$1 counters
	counters=$(rel_counters_sql)
	# fresh statistics, so the self-join below rides the GiST index
	q "ANALYZE booking.bookings" >/dev/null
	check "$label: every seat counter equals the sum of its blocking seat bookings" \
		"SELECT count(*) FROM ($counters) c WHERE c.taken <> c.seats" 0
	check "$label: no resource has more seats out than its capacity" \
		"SELECT count(*) FROM ($counters) c WHERE c.taken > c.capacity OR c.seats > c.capacity" 0
	# the exclusion constraint's own test: same resource, overlapping dates
	# and overlapping validity (a lapsed hold stops blocking by itself)
	check "$label: no two blocking stays of one resource overlap" \
		"SELECT count(*) FROM booking.bookings a JOIN booking.bookings b
		   ON a.resource_id = b.resource_id AND a.during && b.during AND a.validity && b.validity AND a.id < b.id
		 WHERE a.during IS NOT NULL AND a.status IN ('pending', 'confirmed')
		   AND b.during IS NOT NULL AND b.status IN ('pending', 'confirmed')" 0
}

# rel_done: prints the closing line and exits with the script's status
rel_done() {
	echo "$REL_PASSED passed, $REL_FAILED failed"
	[ "$REL_FAILED" -eq 0 ] && [ "$REL_PASSED" -gt 0 ]
	exit $?
}
