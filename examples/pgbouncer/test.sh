#!/usr/bin/env bash
# examples/pgbouncer/test.sh: the Python service (examples/python/server.py,
# psycopg 3) through Debian's pgbouncer in transaction mode
# (test/lib/pgbouncer.sh: a private pgbouncer, pool_mode = transaction,
# default_pool_size 20, unix socket only, port BOOKING_PGBOUNCER_EXAMPLE_PORT,
# default 54722), then the HTTP contract check (examples/check_service.py): 50
# concurrent requests at a one-seat session give exactly one 201 and 49 409s,
# Idempotency-Key replays, busy after the role's booking.lock_timeout.  The
# service connects through pgbouncer with psycopg's prepare_threshold=None (no
# named prepared statements: pgbouncer 1.18 cannot follow them across server
# connections); check_service.py's own psql connects directly.  Then
# prepare_probe.py shows why: 40 psycopg connections through the same
# pgbouncer, with the default prepare_threshold (errors, reported) and with
# None (no error, asserted).  Run by test/run.sh; alone, it starts its own
# cluster (see examples/lib.sh).  docs/poolers.md explains the settings.
set -u
cd "$(dirname "$0")"
. ../lib.sh
. ../../test/lib/pgbouncer.sh

# Debian's interpreter and Debian's psycopg 3 (python3-psycopg)
if ! /usr/bin/python3 -c 'import psycopg' 2>/dev/null; then
	echo "== installing: python3-psycopg"
	export DEBIAN_FRONTEND=noninteractive
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-psycopg >/dev/null; } ||
		{ echo "not ok - install python3-psycopg"; exit 1; }
fi
pgbouncer_need || exit 1

# example_begin's EXIT trap calls example_cleanup: stop pgbouncer first (the
# service goes with it), then the rest
eval "$(declare -f example_cleanup | sed '1s/^example_cleanup/lib_example_cleanup/')"
example_cleanup() {
	pgbouncer_stop
	lib_example_cleanup
}

example_begin booking_example_pgbouncer
pgbouncer_start "${BOOKING_PGBOUNCER_EXAMPLE_PORT:-54722}" "${PGUSER:-postgres} ${EXAMPLE_DB}_app" \
	"$EXAMPLE_DB = host=$PGHOST port=$PGPORT dbname=$EXAMPLE_DB" ||
	{ echo "not ok - pgbouncer started"; exit 1; }
echo "ok - pgbouncer $PGBOUNCER_VERSION in transaction mode in front of $EXAMPLE_DB ($PGBOUNCER_DIR, port $PGBOUNCER_PORT)"

# the service reaches the database only through pgbouncer (libpq's PGHOST and
# PGPORT), with psycopg's prepared statements off (PREPARE_THRESHOLD=none,
# docs/poolers.md)
example_serve env PGHOST="$PGBOUNCER_DIR" PGPORT="$PGBOUNCER_PORT" PREPARE_THRESHOLD=none \
	/usr/bin/python3 ../python/server.py
EXAMPLE_METRICS=1 example_check
rc=$?

# why the setting: 40 psycopg connections through the same pgbouncer, with
# psycopg's default prepare_threshold and with None (only None is asserted)
probe=$(example_psql -At -d "$EXAMPLE_DB" -c "SELECT booking.create_resource('prepare probe', 100000)")
PGHOST="$PGBOUNCER_DIR" PGPORT="$PGBOUNCER_PORT" PGUSER="${EXAMPLE_DB}_app" PGDATABASE="$EXAMPLE_DB" \
	/usr/bin/python3 prepare_probe.py "$probe" || rc=1

# the web role's database sessions were pgbouncer's: every server connection
# to the database logged in as the web role, and there were at most
# default_pool_size of them
served=$(pgbouncer_psql -At -U "${PGUSER:-postgres}" -d pgbouncer -c "SHOW SERVERS" | awk -F'|' -v db="$EXAMPLE_DB" '$3 == db { n++; if ($2 != db "_app") bad++ } END { print n + 0, bad + 0 }')
if [ "${served%% *}" -ge 1 ] && [ "${served%% *}" -le 20 ] && [ "${served##* }" = 0 ]; then
	echo "ok - the service and the probe ran on ${served%% *} pooled server connection(s), all as ${EXAMPLE_DB}_app"
else
	echo "not ok - the service and the probe ran on 1 to 20 pooled server connections as ${EXAMPLE_DB}_app (got: $served)"
	rc=1
fi
exit $rc
