#!/usr/bin/env bash
# launcher.sh: booking.database = '*', the expiry worker of every database
# that has the extension (src/7_worker/launcher.c), on a cluster of its own
# that preloads booking with booking.expire_interval = 1s.
#  1. The launcher runs, connected to no database.  Two databases made after
#     the server started, each with the extension, get one worker each
#     within 3 s, without a restart; a database without the extension keeps
#     none (its worker leaves at once), until it installs booking.
#  2. Each worker serves its own database: 2 s holds in both expire by
#     themselves, and with a consumer each database's events get numbered
#     (seq 1, 2, ... per resource) without a claim.
#  3. One worker per database: over 10 s of passes the count stays one per
#     served database, and a worker ended by pg_terminate_backend is back,
#     a new process, within its restart interval; a launcher that is ended
#     comes back and leaves the running workers alone.
#  4. Commands that need a database to themselves work although a worker is
#     connected there: CREATE DATABASE ... TEMPLATE (the copy is served
#     too), ALTER DATABASE ... RENAME, DROP DATABASE.  The renamed database
#     is served again.
#  5. The log shows no crash.
#
# The cluster listens on BOOKING_LAUNCHER_PORT (default PGPORT + 14).
set -u
cd "$(dirname "$0")" || exit 1
. ./lib.bash

L_PORT=${BOOKING_LAUNCHER_PORT:-$((${PGPORT:-54329} + 14))}
RESTART_S=5		# BOOKING_WORKER_RESTART_S (src/7_worker/launcher.c)

now_ms() { date +%s%3N; }
# dq DB QUERY: in database DB; errors are printed, so a check compares them
dq() { "$REL_PGBIN/psql" -X -q -At -h "$REL_HOST" -p "$REL_PORT" -U postgres -d "$1" -c "$2" 2>&1; }
pq() { dq postgres "$1"; }
# dcheck DESCRIPTION DB QUERY EXPECTED
dcheck() {
	local got
	got=$(dq "$2" "$3")
	if [ "$got" = "$4" ]; then pass "$1"; else fail "$1"; echo "#   expected: $4"; echo "#   got:      $got" | head -n 10; fi
}
# wait_for DB QUERY EXPECTED TENTHS: polls for at most TENTHS tenths of a second
wait_for() {
	local deadline=$(($(now_ms) + $4 * 100))
	while :; do
		[ "$(dq "$1" "$2")" = "$3" ] && return 0
		[ "$(now_ms)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}
# workers: "database:count" of the expiry workers, by database name
workers_sql="SELECT coalesce(string_agg(datname || ':' || n, ',' ORDER BY datname), 'none')
               FROM (SELECT datname, count(*) AS n FROM pg_stat_activity
                      WHERE backend_type = 'booking expiry worker' GROUP BY datname) w"
worker_of() { pq "SELECT pid FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND datname = '$1'"; }
# served DB DESCRIPTION: the database gets its worker within 3 s
served() {
	local t0
	t0=$(now_ms)
	if wait_for postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND datname = '$1'" 1 30; then
		pass "$2 ($(($(now_ms) - t0)) ms)"
	else fail "$2 (workers: $(pq "$workers_sql"))"; fi
}
with_booking() { dq "$1" "SET client_min_messages = warning; CREATE EXTENSION booking CASCADE" >/dev/null; }

########################################################################
# 1. the launcher, and databases made after the server started
########################################################################
rel_cluster_start launcher "$L_PORT" "shared_preload_libraries = 'booking'" "booking.database = '*'" \
	"booking.expire_interval = '1s'" "max_worker_processes = 12" "max_connections = 30" ||
	{ fail "start a cluster with booking.database = '*' on port $L_PORT"; rel_done; }
L_LOG=$REL_CDIR/server.log
pass "a cluster with shared_preload_libraries = 'booking' and booking.database = '*' starts"
if wait_for postgres "SELECT count(*) || '|' || count(datname) FROM pg_stat_activity WHERE backend_type = 'booking launcher'" "1|0" 50; then
	pass "one booking launcher runs, connected to no database"
else fail "one booking launcher runs, connected to no database ($(pq "SELECT backend_type, datname FROM pg_stat_activity"))"; fi
sleep 1
check "no database has the extension yet: no expiry worker stays" "$workers_sql" none

for db in shop_a shop_b plain; do
	pq "CREATE DATABASE $db" >/dev/null
	REL_DBS="$REL_DBS $REL_HOST|$REL_PORT|$db"
done
with_booking shop_a
with_booking shop_b
served shop_a "shop_a, made and given the extension after the start, gets its worker within 3 s"
served shop_b "shop_b too"
sleep 1.5
check "one worker in each, none in the database without the extension (nor in postgres)" "$workers_sql" "shop_a:1,shop_b:1"

########################################################################
# 2. each worker serves its own database
########################################################################
for db in shop_a shop_b; do
	dq "$db" "SELECT booking.add_consumer('mailer')" >/dev/null
	dq "$db" "SELECT booking.create_resource('$db seats', 10)" >/dev/null
done
held_a=$(dq shop_a "SELECT booking_id FROM booking.reserve_seat(1, 'walks away', 2, hold => '2 s')")
held_b=$(dq shop_b "SELECT booking_id FROM booking.reserve_seat(1, 'walks away', 3, hold => '2 s')")
dq shop_b "SELECT booking.reserve_seat(1, 'stays', 1)" >/dev/null
dcheck "shop_a: a 2 s hold of 2 seats is pending" shop_a \
	"SELECT status || '|' || (SELECT taken FROM booking.resources WHERE id = 1) FROM booking.bookings WHERE id = ${held_a:-0}" "pending|2"
dcheck "shop_b: a 2 s hold of 3 seats and a booking of 1" shop_b \
	"SELECT status || '|' || (SELECT taken FROM booking.resources WHERE id = 1) FROM booking.bookings WHERE id = ${held_b:-0}" "pending|4"
for db in shop_a shop_b; do
	held=$held_a
	[ "$db" = shop_b ] && held=$held_b
	if wait_for "$db" "SELECT status FROM booking.bookings WHERE id = ${held:-0}" expired 80; then
		pass "$db: the hold expired by itself within 8 s"
	else fail "$db: the hold expired by itself within 8 s"; tail -n 10 "$L_LOG" | sed 's/^/#   /'; fi
done
dcheck "shop_a: the seats went back (taken 0)" shop_a "SELECT taken FROM booking.resources WHERE id = 1" 0
dcheck "shop_b: the seats went back (taken 1)" shop_b "SELECT taken FROM booking.resources WHERE id = 1" 1
# the worker numbers the events of its database after their commits; no claim ran
numbered="SELECT string_agg(kind || ':' || coalesce(seq::text, 'null'), ',' ORDER BY id) FROM booking.events"
if wait_for shop_a "$numbered" "reserved:1,expired:2" 50; then pass "shop_a: its worker numbered its events (reserved 1, expired 2)"
else fail "shop_a: its worker numbered its events: $(dq shop_a "$numbered")"; fi
if wait_for shop_b "$numbered" "reserved:1,reserved:2,expired:3" 50; then pass "shop_b: its worker numbered its own (1, 2, 3)"
else fail "shop_b: its worker numbered its own: $(dq shop_b "$numbered")"; fi

########################################################################
# 3. one worker per database, and a worker that is ended comes back
########################################################################
twice=0
for ((i = 0; i < 20; i++)); do
	w=$(pq "$workers_sql")
	[ "$w" != "shop_a:1,shop_b:1" ] && { twice=1; echo "#   workers: $w"; }
	sleep 0.5
done
if [ "$twice" = 0 ]; then pass "over 10 s of passes, exactly one worker per served database"
else fail "over 10 s of passes, exactly one worker per served database"; fi

old=$(worker_of shop_a)
pq "SELECT pg_terminate_backend($old)" >/dev/null
t0=$(now_ms)
if wait_for postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND datname = 'shop_a' AND pid <> ${old:-0}" 1 \
	$(((RESTART_S + 3) * 10)); then
	pass "after pg_terminate_backend a new worker serves shop_a within $RESTART_S s + 3 s ($(($(now_ms) - t0)) ms)"
else fail "after pg_terminate_backend a new worker serves shop_a within $RESTART_S s + 3 s ($(pq "$workers_sql"))"; fi
held_a=$(dq shop_a "SELECT booking_id FROM booking.reserve_seat(1, 'walks away again', 1, hold => '1 s')")
if wait_for shop_a "SELECT status FROM booking.bookings WHERE id = ${held_a:-0}" expired 60; then
	pass "the new worker expires holds"
else fail "the new worker expires holds"; fi

# a launcher that is ended comes back (the postmaster restarts it) and leaves
# the workers it finds alone: same pids, no second worker tried anywhere
before=$(pq "SELECT string_agg(datname || ':' || pid, ',' ORDER BY datname) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'")
tried=$(grep -c 'is served by another worker' "$L_LOG")
pq "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE backend_type = 'booking launcher'" >/dev/null
sleep 0.5
if wait_for postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking launcher'" 1 $(((RESTART_S + 3) * 10)); then
	pass "after pg_terminate_backend the launcher is back within $RESTART_S s + 3 s"
else fail "after pg_terminate_backend the launcher is back within $RESTART_S s + 3 s"; fi
sleep 3
check "the restarted launcher left the running workers alone (same pids)" \
	"SELECT string_agg(datname || ':' || pid, ',' ORDER BY datname) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'" "$before"
n=$(($(grep -c 'is served by another worker' "$L_LOG") - tried))
if [ "$n" = 0 ]; then pass "and started no second worker in a served database"
else fail "and started no second worker in a served database ($n tried)"; fi

# a database that installs booking later is served then, without a restart
check "plain, without the extension, still has no worker" \
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND datname = 'plain'" 0
with_booking plain
served plain "plain gets its worker within 3 s of CREATE EXTENSION booking"

########################################################################
# 4. commands that need a database to themselves
########################################################################
out=$(pq "CREATE DATABASE shop_c TEMPLATE shop_a")
if [ "$out" = "" ]; then pass "CREATE DATABASE shop_c TEMPLATE shop_a, while a worker served shop_a"
else fail "CREATE DATABASE shop_c TEMPLATE shop_a, while a worker served shop_a: $out"; fi
REL_DBS="$REL_DBS $REL_HOST|$REL_PORT|shop_c"
served shop_c "the copy (with the extension from its template) is served"
if wait_for postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND datname = 'shop_a'" 1 \
	$(((RESTART_S + 3) * 10)); then
	pass "shop_a is served again after the copy"
else fail "shop_a is served again after the copy ($(pq "$workers_sql"))"; fi

out=$(pq "ALTER DATABASE shop_b RENAME TO shop_b2")
if [ "$out" = "" ]; then pass "ALTER DATABASE shop_b RENAME TO shop_b2, while a worker served shop_b"
else fail "ALTER DATABASE shop_b RENAME TO shop_b2, while a worker served shop_b: $out"; fi
REL_DBS="$REL_DBS $REL_HOST|$REL_PORT|shop_b2"
if wait_for postgres "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND datname = 'shop_b2'" 1 \
	$(((RESTART_S + 3) * 10)); then
	pass "shop_b2 is served"
else fail "shop_b2 is served ($(pq "$workers_sql"))"; fi
dcheck "its data came along" shop_b2 "SELECT count(*) FROM booking.bookings" 2

out=$(pq "DROP DATABASE shop_c")
if [ "$out" = "" ]; then pass "DROP DATABASE shop_c, while a worker served it"
else fail "DROP DATABASE shop_c, while a worker served it: $out"; fi
sleep 1.5
check "one worker in each database with the extension, none elsewhere" "$workers_sql" "plain:1,shop_a:1,shop_b2:1"

########################################################################
# 5. the log
########################################################################
n=$(grep -c 'terminated by signal\|server process .* was terminated\|PANIC' "$L_LOG")
if [ "$n" = 0 ]; then pass "the log shows no crash"
else fail "the log shows no crash"; grep 'terminated by signal\|PANIC' "$L_LOG" | head -n 5 | sed 's/^/#   /'; fi
rel_done
