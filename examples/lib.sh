# examples/lib.sh: sourced by examples/*/test.sh (not a test itself).
#
# example_begin NAME: a database NAME with the extension, and a login role
#   NAME_app that has only the grants a web role needs. Uses the cluster named by
#   PGHOST/PGPORT/PGUSER (test/run.sh sets them); without PGHOST, or with
#   EXAMPLE_CLUSTER_CONF set (postgresql.conf lines for it), starts a private
#   throwaway cluster on port ${BOOKING_EXAMPLE_PORT:-54345} (the extension must
#   be installed).
# example_serve COMMAND...: starts the service with PORT=0, as NAME_app on NAME,
#   and waits for its "listening on URL" line; sets EXAMPLE_URL.
# example_check: runs the shared HTTP contract check against EXAMPLE_URL.
# Everything is removed on exit: the service, the database, the role, the
# private cluster.

EXAMPLES_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
EXAMPLE_DB=
EXAMPLE_PID=
EXAMPLE_TMP=$(mktemp -d /tmp/booking-example.XXXXXX)
EXAMPLE_OWN_CLUSTER=

example_psql() {
	psql -X -q -v ON_ERROR_STOP=1 "$@"
}

example_cleanup() {
	if [ -n "$EXAMPLE_PID" ]; then
		kill "$EXAMPLE_PID" 2>/dev/null && wait "$EXAMPLE_PID" 2>/dev/null
		EXAMPLE_PID=
	fi
	if [ -n "$EXAMPLE_DB" ]; then
		example_psql -d postgres -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '$EXAMPLE_DB' AND pid <> pg_backend_pid()" >/dev/null 2>&1
		example_psql -d postgres -c "DROP DATABASE IF EXISTS $EXAMPLE_DB" -c "DROP ROLE IF EXISTS ${EXAMPLE_DB}_app" >/dev/null 2>&1
		EXAMPLE_DB=
	fi
	rm -rf "$EXAMPLE_TMP"
	[ -n "$EXAMPLE_OWN_CLUSTER" ] && booking_cluster_stop
}

example_begin() {
	local conf=()
	# EXAMPLE_CLUSTER_CONF: postgresql.conf lines, one per line, for a
	# cluster of the example's own (started even when PGHOST is set)
	if [ -n "${EXAMPLE_CLUSTER_CONF:-}" ]; then
		mapfile -t conf <<<"$EXAMPLE_CLUSTER_CONF"
		unset PGHOST PGPORT
	fi
	if [ -z "${PGHOST:-}" ]; then
		. "$EXAMPLES_DIR/../test/lib/cluster.sh"
		booking_need_packages || exit 1
		booking_cluster_start "${BOOKING_EXAMPLE_PORT:-54345}" "${conf[@]}" || exit 1
		EXAMPLE_OWN_CLUSTER=1
	fi
	export PATH="${BOOKING_PG_BIN:-/usr/lib/postgresql/15/bin}:$PATH"
	trap example_cleanup EXIT
	trap 'exit 130' INT TERM
	EXAMPLE_DB=$1
	example_psql -d postgres -c "DROP DATABASE IF EXISTS $EXAMPLE_DB" -c "DROP ROLE IF EXISTS ${EXAMPLE_DB}_app" >/dev/null 2>&1
	# the role's own booking.lock_timeout, as docs/reference.md (Settings)
	# shows: the busy check waits for it
	example_psql -d postgres -c "CREATE DATABASE $EXAMPLE_DB" \
		-c "CREATE ROLE ${EXAMPLE_DB}_app LOGIN" \
		-c "ALTER ROLE ${EXAMPLE_DB}_app SET booking.lock_timeout = '2s'" >/dev/null ||
		{ echo "not ok - create database $EXAMPLE_DB"; exit 1; }
	# the client grants of docs/reference.md (booking.grant_client): the
	# service calls the API and never writes a table; GET /metrics also reads
	# stats() and health(), an admin's calls, granted to it by name
	example_psql -d "$EXAMPLE_DB" -c "SET client_min_messages = warning" \
		-c "CREATE EXTENSION booking CASCADE" \
		-c "SELECT booking.grant_client('${EXAMPLE_DB}_app')" \
		-c "GRANT EXECUTE ON FUNCTION booking.stats(), booking.health() TO ${EXAMPLE_DB}_app" \
		>/dev/null || { echo "not ok - CREATE EXTENSION booking and grants"; exit 1; }
	echo "ok - database $EXAMPLE_DB with role ${EXAMPLE_DB}_app"
}

example_serve() {
	local line i
	# the service connects as the web role, through libpq's environment
	PORT=0 POOL_SIZE=${POOL_SIZE:-50} DATABASE_URL= PGUSER=${EXAMPLE_DB}_app PGDATABASE=$EXAMPLE_DB \
		"$@" >"$EXAMPLE_TMP/service.out" 2>"$EXAMPLE_TMP/service.err" &
	EXAMPLE_PID=$!
	for i in $(seq 1 150); do
		line=$(grep -m1 '^listening on ' "$EXAMPLE_TMP/service.out" 2>/dev/null)
		[ -n "$line" ] && break
		kill -0 "$EXAMPLE_PID" 2>/dev/null || break
		sleep 0.1
	done
	EXAMPLE_URL=${line#listening on }
	if [ -z "$line" ]; then
		echo "not ok - the service started"
		sed 's/^/#   /' "$EXAMPLE_TMP/service.err" | head -n 30
		exit 1
	fi
	echo "ok - the service listens on $EXAMPLE_URL"
}

example_check() {
	local rc
	/usr/bin/python3 "$EXAMPLES_DIR/check_service.py" "$EXAMPLE_URL" "$EXAMPLE_DB"
	rc=$?
	if [ -s "$EXAMPLE_TMP/service.err" ]; then
		echo "# the service's stderr:"
		sed 's/^/#   /' "$EXAMPLE_TMP/service.err" | head -n 30
	fi
	return $rc
}
