#!/usr/bin/env bash
# worker.sh: the background expiry worker, on private clusters of its own
# (the test cluster does not preload the library).
#  1. booking.database = 'postgres' without the extension: the worker starts,
#     shows in pg_stat_activity, logs the missing extension once and keeps
#     running (same pid, no crash, postmaster not restarted).
#  2. CREATE EXTENSION there: 1 s holds (a seat and a stay) become expired by
#     themselves within a few seconds and the seat counter is given back.
#  3. booking.expire_interval = 0 (reloaded) stops the passes; back to 1s
#     they resume.
#  4. A fast shutdown stops the worker cleanly.
#  5. booking.database names a database that does not exist: the postmaster
#     survives it.
set -u
cd "$(dirname "$0")"
. ./lib.bash

W_PORT=$(( ${PGPORT:-54329} + 1 ))
W_DIR=

as_postgres() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# worker_cluster_start CONF-LINES...: like booking_cluster_start in
# test/lib/cluster.sh, but on its own port and directory, without touching
# the environment that points at the test cluster
worker_cluster_start() {
	W_DIR=$(mktemp -d /tmp/booking-worker.XXXXXX)
	[ "$(id -u)" = 0 ] && chown postgres:postgres "$W_DIR"
	chmod 700 "$W_DIR"
	as_postgres "$STRESS_PGBIN/initdb" -D "$W_DIR/data" -U postgres --auth=trust --no-sync \
		-E UTF8 --locale=C.UTF-8 >"$W_DIR/initdb.log" 2>&1 || { cat "$W_DIR/initdb.log"; return 1; }
	{
		echo "port = $W_PORT"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$W_DIR'"
		echo "max_connections = 20"
		echo "log_min_messages = warning"
		for line in "$@"; do echo "$line"; done
	} >>"$W_DIR/data/postgresql.conf"
	as_postgres "$STRESS_PGBIN/pg_ctl" -D "$W_DIR/data" -l "$W_DIR/server.log" -w -t 60 start >/dev/null ||
		{ cat "$W_DIR/server.log"; return 1; }
}

worker_cluster_stop() {
	if [ -n "$W_DIR" ] && [ -d "$W_DIR/data" ]; then
		as_postgres "$STRESS_PGBIN/pg_ctl" -D "$W_DIR/data" -m fast -w -t 30 stop >/dev/null 2>&1
		local rc=$?
		cp "$W_DIR/server.log" "$STRESS_TMP/server.log" 2>/dev/null
		rm -rf "$W_DIR"
		W_DIR=
		return $rc
	fi
}

trap 'worker_cluster_stop; rm -rf "$STRESS_TMP"' EXIT

wsql() {
	"$STRESS_PGBIN/psql" -X -q -At -h "$W_DIR" -p "$W_PORT" -U postgres -d postgres -c "$1" 2>&1
}

# wcheck DESCRIPTION QUERY EXPECTED
wcheck() {
	local got
	got=$(wsql "$2")
	if [ "$got" = "$3" ]; then pass "$1"; else fail "$1"; echo "#   expected: $3"; echo "#   got:      $got"; fi
}

# wait_for QUERY EXPECTED TENTHS: polls until the query prints EXPECTED
wait_for() {
	local i
	for i in $(seq 1 "$3"); do
		[ "$(wsql "$1")" = "$2" ] && return 0
		sleep 0.1
	done
	return 1
}

log_has() { grep -c -- "$1" "$W_DIR/server.log"; }

worker_query="SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'"

########################################################################
# 1. the database has no extension yet
########################################################################
worker_cluster_start "shared_preload_libraries = 'booking'" "booking.expire_interval = '1s'" \
	"booking.database = 'postgres'" || { echo "not ok - start a cluster with shared_preload_libraries = 'booking'"; exit 1; }
pass "a cluster with shared_preload_libraries = 'booking' starts"
started=$(wsql "SELECT pg_postmaster_start_time()")

if wait_for "$worker_query" 1 50; then pass "the worker shows in pg_stat_activity"
else fail "the worker shows in pg_stat_activity"; fi
wcheck "its backend_type, application_name and database" \
	"SELECT backend_type || '|' || application_name || '|' || datname FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'" \
	"booking expiry worker|booking expiry worker|postgres"
pid=$(wsql "SELECT pid FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'")
wcheck "booking.expire_interval and booking.database are set" \
	"SELECT current_setting('booking.expire_interval') || '|' || current_setting('booking.database')" "1s|postgres"

sleep 2.5	# a few passes without the extension
n=$(log_has 'extension "booking" is not installed in database "postgres"')
if [ "$n" = 1 ]; then pass "the missing extension is logged once"
else fail "the missing extension is logged once (logged $n times)"; fi
wcheck "the worker keeps running (same pid)" \
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'" "$pid"
n=$(log_has 'terminated by signal')
if [ "$n" = 0 ]; then pass "no process was terminated by a signal"
else fail "no process was terminated by a signal"; grep 'terminated by signal' "$W_DIR/server.log" | sed 's/^/#   /'; fi
wcheck "the postmaster was not restarted" "SELECT pg_postmaster_start_time()" "$started"

########################################################################
# 2. with the extension, holds expire by themselves
########################################################################
wsql "SET client_min_messages = warning; CREATE EXTENSION booking CASCADE" >/dev/null
seat=$(wsql "SELECT booking.create_resource('worker seats', 10)")
room=$(wsql "SELECT booking.create_resource('worker room')")
held_seat=$(wsql "SELECT booking_id FROM booking.reserve_seat($seat, 'walks away', 3, hold => '1 s')")
held_room=$(wsql "SELECT booking_id FROM booking.reserve_stay($room, 'walks away', '[2030-01-01,2030-01-02)', hold => '1 s')")
wcheck "two 1 s holds are pending and 3 seats are taken" \
	"SELECT string_agg(status::text, ',' ORDER BY id) || '|' || (SELECT taken FROM booking.resources WHERE id = $seat)
	   FROM booking.bookings WHERE id IN (${held_seat:-0}, ${held_room:-0})" "pending,pending|3"
if wait_for "SELECT string_agg(status::text, ',' ORDER BY id) FROM booking.bookings WHERE id IN (${held_seat:-0}, ${held_room:-0})" \
	"expired,expired" 60; then
	pass "both holds became expired by themselves within 6 s"
else
	fail "both holds became expired by themselves within 6 s"
	wsql "SELECT id, status, expires_at, clock_timestamp() FROM booking.bookings" | sed 's/^/#   /'
	tail -n 20 "$W_DIR/server.log" | sed 's/^/#   /'
fi
wcheck "the worker gave the seats back to the counter" "SELECT taken FROM booking.resources WHERE id = $seat" 0

########################################################################
# 3. expire_interval = 0 disables the passes; a reload brings them back
########################################################################
wsql "ALTER SYSTEM SET booking.expire_interval = 0" >/dev/null
wsql "SELECT pg_reload_conf()" >/dev/null
sleep 0.5
held=$(wsql "SELECT booking_id FROM booking.reserve_seat($seat, 'idle worker', 1, hold => '1 s')")
sleep 2.5
wcheck "with booking.expire_interval = 0 the lapsed hold stays pending" \
	"SELECT status FROM booking.bookings WHERE id = ${held:-0}" pending
wsql "ALTER SYSTEM SET booking.expire_interval = '1s'" >/dev/null
wsql "SELECT pg_reload_conf()" >/dev/null
if wait_for "SELECT status FROM booking.bookings WHERE id = ${held:-0}" expired 40; then
	pass "after a reload to 1s the worker expires it"
else
	fail "after a reload to 1s the worker expires it"
fi
wcheck "the worker is still the same process" \
	"SELECT pid FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'" "$pid"
wcheck "the postmaster was not restarted" "SELECT pg_postmaster_start_time()" "$started"

########################################################################
# 4. clean shutdown
########################################################################
if worker_cluster_stop; then pass "a fast shutdown completes"; else fail "a fast shutdown completes"; fi
n=$(grep -c 'booking expiry worker shutting down' "$STRESS_TMP/server.log")
if [ "$n" = 1 ]; then pass "the worker logged its clean exit"; else fail "the worker logged its clean exit"; fi
n=$(grep -cE 'terminated by signal|"booking expiry worker" \(PID [0-9]+\) exited with exit code [1-9]|PANIC|TRAP' "$STRESS_TMP/server.log")
if [ "$n" = 0 ]; then pass "the server log shows no crash"
else fail "the server log shows no crash"; grep -E 'terminated by signal|exit code|PANIC|TRAP' "$STRESS_TMP/server.log" | sed 's/^/#   /'; fi

########################################################################
# 5. booking.database does not exist
########################################################################
worker_cluster_start "shared_preload_libraries = 'booking'" "booking.expire_interval = '1s'" \
	"booking.database = 'no_such_database'" || { echo "not ok - start a cluster whose booking.database does not exist"; exit 1; }
pass "a cluster whose booking.database does not exist starts"
started=$(wsql "SELECT pg_postmaster_start_time()")
sleep 2
wcheck "the server still answers and was not restarted" "SELECT pg_postmaster_start_time()" "$started"
n=$(log_has 'terminated by signal')
if [ "$n" = 0 ]; then pass "no process was terminated by a signal"; else fail "no process was terminated by a signal"; fi
n=$(log_has 'database "no_such_database" does not exist')
if [ "$n" -ge 1 ]; then pass "the missing database is logged"; else fail "the missing database is logged"; fi
if worker_cluster_stop; then pass "a fast shutdown completes"; else fail "a fast shutdown completes"; fi

stress_done
