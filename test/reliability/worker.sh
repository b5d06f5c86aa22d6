#!/usr/bin/env bash
# worker.sh: the expiry background worker, on a cluster of its own (the test
# cluster does not preload the library): shared_preload_libraries = 'booking',
# booking.expire_interval = 1s, and booking.database naming a database that
# is created only after the server started.
#  1. Late database: the server runs and logs the missing database; once it
#     is created the worker comes up there within its restart interval (5 s),
#     logs the missing extension once (same pid over several passes), and
#     after CREATE EXTENSION expires 2 s holds (a seat and a stay) by itself.
#     With a consumer registered, NOTIFY booking_events comes from the
#     worker, after the commits that wrote events; none without one.
#  2. booking.expire_interval = 0 (reloaded) stops the passes; 1s resumes.
#  3. booking.expire_batch: 5,000 lapsed holds go in one pass with batch
#     10,000; with batch 1,000 and an interval of 1 h, a pass that fills its
#     batch is followed by the next at once: five passes of at most 1,000
#     expire them all; so are passes that purge a full batch of old keys or
#     of old events.  (A reload runs a pass at once, which makes a pass
#     something the test can ask for.)
#  4. The installed extension version differs from the library's: logged
#     once, passes skipped (a lapsed hold stays pending, same pid), and they
#     resume once the version matches again.
#  5. An error in a pass (a trigger that refuses UPDATE of booking.bookings):
#     logged once, the same process retries with a growing delay (at most 3
#     failed passes in the first 4.5 s, where 1 s passes would fail 5 times),
#     and once the trigger is gone the same pid expires the hold.
#  6. A pass blocked on a relation lock (a prepared transaction holds ACCESS
#     EXCLUSIVE on booking.bookings): with booking.lock_timeout = 1s it gives
#     up after 1 s (logged once) and the process stays.  With 1h it really
#     waits: pg_terminate_backend ends it within 1 s, a new worker is back
#     within the restart interval and expires the hold once the lock is gone.
#  7. Fast shutdown while a pass is blocked on that lock completes within 8 s;
#     the log shows no crash.
#
# The cluster listens on BOOKING_WORKER_PORT (default PGPORT + 4).
# BOOKING_WORKER_SECTIONS="5 7" runs section 1 and the ones named.
set -u
cd "$(dirname "$0")" || exit 1
. ./lib.bash

W_PORT=${BOOKING_WORKER_PORT:-$((${PGPORT:-54329} + 4))}
W_DB=booking_worker
RESTART_S=5		# bgw_restart_time of the worker (src/7_worker/worker.c)
W_LOG=

now_ms() { date +%s%3N; }

# pq QUERY / wq QUERY: in the postgres database / in the worker's database;
# errors are printed, so a check compares them
pq() { "$REL_PGBIN/psql" -X -q -At -h "$REL_HOST" -p "$REL_PORT" -U postgres -d postgres -c "$1" 2>&1; }
wq() { "$REL_PGBIN/psql" -X -q -At -h "$REL_HOST" -p "$REL_PORT" -U postgres -d "$W_DB" -c "$1" 2>&1; }

# wcheck DESCRIPTION QUERY EXPECTED: in the worker's database
wcheck() {
	local got
	got=$(wq "$2")
	if [ "$got" = "$3" ]; then pass "$1"; else fail "$1"; echo "#   expected: $3"; echo "#   got:      $got" | head -n 10; fi
}

# wait_for FN QUERY EXPECTED TENTHS: polls until FN QUERY prints EXPECTED, for
# at most TENTHS tenths of a second of wall-clock time
wait_for() {
	local deadline=$(($(now_ms) + $4 * 100))
	while :; do
		[ "$($1 "$2")" = "$3" ] && return 0
		[ "$(now_ms)" -ge "$deadline" ] && return 1
		sleep 0.1
	done
}

# wcheck_within DESCRIPTION QUERY EXPECTED TENTHS: polls the worker's database
# until QUERY prints EXPECTED, for at most TENTHS tenths of a second
wcheck_within() {
	if wait_for wq "$2" "$3" "$4"; then pass "$1"
	else fail "$1"; echo "#   expected: $3"; wq "$2" | sed 's/^/#   got:      /'; fi
}

# set_conf NAME VALUE...: ALTER SYSTEM SET for each pair, then one reload
set_conf() {
	while [ $# -ge 2 ]; do
		pq "ALTER SYSTEM SET $1 = '$2'" | sed 's/^/#   /'
		shift 2
	done
	pq "SELECT pg_reload_conf()" >/dev/null
}

log_count() { grep -c -- "$1" "$W_LOG"; }
# section N: whether to run section N (BOOKING_WORKER_SECTIONS, default all;
# section 1 always runs, the others build on it)
section() { [[ " ${BOOKING_WORKER_SECTIONS:-2 3 4 5 6 7} " == *" $1 "* ]]; }

worker_sql="SELECT pid FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'"
worker_pid() { pq "$worker_sql"; }
# the worker waits on a heavyweight lock (its pass is blocked)
worker_waits_sql="SELECT wait_event_type FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'"

# lock_bookings [QUERY]: a prepared transaction holds ACCESS EXCLUSIVE on
# booking.bookings; it outlives its session and a fast shutdown, so nothing
# but ROLLBACK PREPARED (or the worker giving up) ends the worker's wait.
# QUERY runs under the lock, before the PREPARE; its output is printed.
lock_bookings() {
	wq "BEGIN; LOCK TABLE booking.bookings IN ACCESS EXCLUSIVE MODE; ${1:-} PREPARE TRANSACTION 'worker_lock'"
}
unlock_bookings() { wq "ROLLBACK PREPARED 'worker_lock'" | sed 's/^/#   /'; }

# hold N SECONDS RESOURCE: N one-seat holds of SECONDS; prints how many were made
hold() {
	wq "SELECT count(DISTINCT r.booking_id) FROM generate_series(1, $1) g,
	      LATERAL booking.reserve_seat($3, 'walks away ' || g, 1, hold => '$2 s') r WHERE r.code = 'ok'"
}
pending_sql() { echo "SELECT count(*) FILTER (WHERE status = 'pending') || '|' || count(*) FILTER (WHERE status = 'expired') FROM booking.bookings WHERE resource_id = $1"; }

########################################################################
# 1. the database appears after the server started
########################################################################
rel_cluster_start worker "$W_PORT" "shared_preload_libraries = 'booking'" "booking.expire_interval = '1s'" \
	"booking.database = '$W_DB'" "max_connections = 20" "max_prepared_transactions = 2" ||
	{ fail "start a cluster with shared_preload_libraries = 'booking' on port $W_PORT"; rel_done; }
W_LOG=$REL_CDIR/server.log
pass "a cluster with shared_preload_libraries = 'booking' and booking.database = '$W_DB' (not created yet) starts"
started=$(pq "SELECT pg_postmaster_start_time()")

for ((i = 0; i < 50; i++)); do [ "$(log_count "database \"$W_DB\" does not exist")" -ge 1 ] && break; sleep 0.1; done
if [ "$(log_count "database \"$W_DB\" does not exist")" -ge 1 ]; then pass "the missing database is logged"
else fail "the missing database is logged"; tail -n 5 "$W_LOG" | sed 's/^/#   /'; fi
if [ "$(pq "SELECT pg_postmaster_start_time()")" = "$started" ] && [ "$(log_count 'terminated by signal')" = 0 ]; then
	pass "the server keeps running (no restart, nothing terminated by a signal)"
else fail "the server keeps running (no restart, nothing terminated by a signal)"; fi

pq "CREATE DATABASE $W_DB" >/dev/null
t0=$(now_ms)
if wait_for pq "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND datname = '$W_DB'" 1 \
	$(((RESTART_S + 2) * 10)); then
	pass "once the database exists the worker comes up there within its restart interval ($((($(now_ms) - t0))) ms)"
else
	fail "once the database exists the worker comes up there within its restart interval ($RESTART_S s + 2 s)"
	wait_for pq "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'" 1 100
	echo "#   it came up after $((($(now_ms) - t0))) ms"
fi
check "its backend_type, application_name and database" \
	"SELECT backend_type || '|' || application_name || '|' || datname FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'" \
	"booking expiry worker|booking expiry worker|$W_DB"
pid=$(worker_pid)
check "booking.expire_interval, booking.expire_batch and booking.database are shown" \
	"SELECT current_setting('booking.expire_interval') || '|' || current_setting('booking.expire_batch', true) || '|' || current_setting('booking.database')" \
	"1s|10000|$W_DB"

sleep 2.5	# a few passes without the extension
n=$(log_count "extension \"booking\" is not installed in database \"$W_DB\"")
if [ "$n" = 1 ]; then pass "the missing extension is logged once"
else fail "the missing extension is logged once (logged $n times)"; fi
check "the worker keeps running (same pid)" "$worker_sql" "$pid"

wq "SET client_min_messages = warning; CREATE EXTENSION booking CASCADE" >/dev/null
seat=$(wq "SELECT booking.create_resource('worker seats', 10)")
room=$(wq "SELECT booking.create_resource('worker room')")
held_seat=$(wq "SELECT booking_id FROM booking.reserve_seat($seat, 'walks away', 3, hold => '2 s')")
held_room=$(wq "SELECT booking_id FROM booking.reserve_stay($room, 'walks away', '[2030-01-01,2030-01-02)', hold => '2 s')")
wcheck "two 2 s holds are pending and 3 seats are taken" \
	"SELECT string_agg(status::text, ',' ORDER BY id) || '|' || (SELECT taken FROM booking.resources WHERE id = $seat)
	   FROM booking.bookings WHERE id IN (${held_seat:-0}, ${held_room:-0})" "pending,pending|3"
if wait_for wq "SELECT string_agg(status::text, ',' ORDER BY id) FROM booking.bookings WHERE id IN (${held_seat:-0}, ${held_room:-0})" \
	"expired,expired" 80; then
	pass "both holds became expired by themselves within 8 s"
else
	fail "both holds became expired by themselves within 8 s"
	tail -n 20 "$W_LOG" | sed 's/^/#   /'
fi
wcheck "the worker gave the seats back to the counter" "SELECT taken FROM booking.resources WHERE id = $seat" 0
check "the same worker did it" "$worker_sql" "$pid"

# NOTIFY booking_events comes from the worker, once the commits that wrote
# events are done (src/3_frame/events.c): a listener that books in its own session
# hears the worker's pid, not its own; and nothing while no consumer exists
listen_and_book() {
	printf '%s\n' "LISTEN booking_events;" \
		"SELECT code FROM booking.reserve_seat($seat, 'listener', 1);" \
		"SELECT code FROM booking.reserve_seat($seat, 'listener', 1);" \
		"SELECT pg_sleep(1.5);" "SELECT 'me ' || pg_backend_pid();" |
		"$REL_PGBIN/psql" -X -q -At -h "$REL_HOST" -p "$REL_PORT" -U postgres -d "$W_DB" 2>&1
}
out=$(listen_and_book)
if ! echo "$out" | grep -q 'Asynchronous notification'; then pass "no NOTIFY while no consumer is registered"
else fail "no NOTIFY while no consumer is registered"; echo "$out" | sed 's/^/#   /'; fi
wq "SELECT booking.add_consumer('listener')" >/dev/null
out=$(listen_and_book)
senders=$(echo "$out" | sed -n 's/.*"booking_events" received from server process with PID \([0-9]*\).*/\1/p' | sort -u | paste -sd' ')
if [ "$senders" = "$pid" ]; then pass "with a consumer, the listener is woken by the worker (pid $pid), not by its own commits"
else fail "with a consumer, the listener is woken by the worker (pid $pid), not by its own commits (senders: ${senders:-none})"
	echo "$out" | sed 's/^/#   /'; fi
wq "SELECT booking.drop_consumer('listener')" >/dev/null

########################################################################
# 2. expire_interval = 0 disables the passes; a reload brings them back
########################################################################
if section 2; then
	set_conf booking.expire_interval 0
	sleep 0.5
	held=$(wq "SELECT booking_id FROM booking.reserve_seat($seat, 'idle worker', 1, hold => '1 s')")
	sleep 2.5
	wcheck "with booking.expire_interval = 0 the lapsed hold stays pending" \
		"SELECT status FROM booking.bookings WHERE id = ${held:-0}" pending
	set_conf booking.expire_interval 1s
	if wait_for wq "SELECT status FROM booking.bookings WHERE id = ${held:-0}" expired 40; then
		pass "after a reload to 1s the worker expires it"
	else fail "after a reload to 1s the worker expires it"; fi
	check "the worker is still the same process" "$worker_sql" "$pid"
fi

########################################################################
# 3. booking.expire_batch
########################################################################
if section 3; then
	# no timed passes from here on: each reload runs one pass
	set_conf booking.expire_interval 0
	big=$(wq "SELECT booking.create_resource('worker batch', 5000)")
	n=$(hold 5000 1 "$big")
	[ "$n" = 5000 ] || echo "#   made $n holds"
	sleep 1.2
	set_conf booking.expire_batch 10000 booking.expire_interval 1h
	if wait_for wq "SELECT count(*) > 0 FROM booking.bookings WHERE resource_id = $big AND status = 'expired'" t 50; then :; fi
	wcheck "booking.expire_batch = 10000: one pass expires all 5,000 lapsed holds" "$(pending_sql "$big")" "0|5000"

	set_conf booking.expire_batch 1000
	sleep 0.5	# the reload's pass finds nothing lapsed
	big2=$(wq "SELECT booking.create_resource('worker batch 2', 5000)")
	n=$(hold 5000 1 "$big2")
	[ "$n" = 5000 ] || echo "#   made $n holds"
	sleep 1.2
	# one pass on the reload; each pass that fills its batch is followed by
	# the next at once, although the interval is 1 h
	pq "SELECT pg_reload_conf()" >/dev/null
	wcheck_within "booking.expire_batch = 1000: passes that fill their batch follow at once until all 5,000 are expired" \
		"$(pending_sql "$big2")" "0|5000" 100
	# each pass is one transaction: the expired rows' xmin tells the passes apart
	wcheck "five passes, each expiring at most its batch of 1,000" \
		"SELECT count(*) || '|' || max(n) FROM (SELECT count(*) AS n FROM booking.bookings
		   WHERE resource_id = $big2 AND status = 'expired' GROUP BY xmin::text) p" "5|1000"

	# the same for the purges, each on its own (a pass purges both, so
	# together one would carry the other): 3,000 keys past a retention of
	# 1 s, then 3,000 events no consumer needs past one of 1 s
	keyed=$(wq "SELECT booking.create_resource('worker keys', 10000)")
	keys_sql="SELECT count(*) FROM booking.idempotency_keys WHERE key LIKE 'worker-key-%'"
	events_sql="SELECT count(*) FROM booking.events WHERE resource_id = $keyed"
	wq "SELECT count(*) FROM generate_series(1, 3000) g,
	      LATERAL booking.reserve_seat($keyed, 'keyed ' || g, 1, idempotency_key => 'worker-key-' || g) r
	    WHERE r.code = 'ok'" | grep -qx 3000 || echo "#   the 3,000 keyed calls did not all succeed"
	wcheck "3,000 keyed calls left 3,000 keys and no event (no consumer)" "SELECT ($keys_sql) || '|' || ($events_sql)" "3000|0"
	sleep 1.2
	set_conf booking.idempotency_retention 1s
	wcheck_within "booking.expire_batch = 1000: passes that purge a full batch of keys follow at once until all 3,000 are gone" \
		"$keys_sql" 0 100
	wq "SELECT booking.add_consumer('worker purge')" >/dev/null
	wq "SELECT count(*) FROM generate_series(1, 3000) g,
	      LATERAL booking.reserve_seat($keyed, 'unkeyed ' || g, 1) r WHERE r.code = 'ok'" | grep -qx 3000 ||
		echo "#   the 3,000 calls did not all succeed"
	wq "SELECT booking.drop_consumer('worker purge')" >/dev/null
	wcheck "3,000 calls with a consumer left 3,000 events and no key" "SELECT ($keys_sql) || '|' || ($events_sql)" "0|3000"
	sleep 1.2
	set_conf booking.event_retention 1s
	wcheck_within "booking.expire_batch = 1000: passes that purge a full batch of events follow at once until all 3,000 are gone" \
		"$events_sql" 0 100
	check "the worker is still the same process" "$worker_sql" "$pid"
	pq "ALTER SYSTEM RESET booking.idempotency_retention" | sed 's/^/#   /'
	pq "ALTER SYSTEM RESET booking.event_retention" | sed 's/^/#   /'
	set_conf booking.expire_batch 10000 booking.expire_interval 1s
fi

########################################################################
# 4. the installed version differs from the library's
########################################################################
if section 4; then
	version=$(wq "SELECT extversion FROM pg_extension WHERE extname = 'booking'")
	wq "UPDATE pg_extension SET extversion = '0.0.0' WHERE extname = 'booking'" >/dev/null
	sleep 0.5
	held=$(wq "SELECT booking_id FROM booking.reserve_seat($seat, 'version skew', 1, hold => '1 s')")
	sleep 3
	wcheck "with extversion 0.0.0 the worker skips its passes: the lapsed hold stays pending" \
		"SELECT status FROM booking.bookings WHERE id = ${held:-0}" pending
	n=$(log_count 'is version 0.0.0')
	if [ "$n" = 1 ]; then pass "the version mismatch is logged once"
	else fail "the version mismatch is logged once (logged $n times)"; fi
	check "the worker is still the same process" "$worker_sql" "$pid"
	wq "UPDATE pg_extension SET extversion = '$version' WHERE extname = 'booking'" >/dev/null
	if wait_for wq "SELECT status FROM booking.bookings WHERE id = ${held:-0}" expired 40; then
		pass "once the version matches again the passes resume and expire it"
	else fail "once the version matches again the passes resume and expire it"; fi
fi

########################################################################
# 5. an error in a pass
########################################################################
if section 5; then
	wq "CREATE SEQUENCE public.worker_failures;
	    CREATE FUNCTION public.refuse_update() RETURNS trigger LANGUAGE plpgsql AS \$\$
	    BEGIN
	        PERFORM nextval('public.worker_failures');	-- not rolled back: counts failed passes
	        RAISE EXCEPTION 'planted failure: booking.bookings refuses updates';
	    END \$\$;
	    CREATE TRIGGER refuse_update BEFORE UPDATE ON booking.bookings
	        FOR EACH ROW EXECUTE FUNCTION public.refuse_update()" >/dev/null
	failures="SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM public.worker_failures"
	held=$(wq "SELECT booking_id FROM booking.reserve_seat($seat, 'trigger', 1, hold => '1 s')")
	if wait_for wq "SELECT ($failures) >= 1" t 50; then pass "a pass fails on the trigger"; else fail "a pass fails on the trigger"; fi
	t0=$(now_ms)
	if wait_for wq "SELECT ($failures) >= 2" t 40; then pass "the same process retries the pass within 4 s"
	else fail "the same process retries the pass within 4 s (failed passes: $(wq "$failures"))"; fi
	wcheck "the hold is still pending" "SELECT status FROM booking.bookings WHERE id = ${held:-0}" pending
	# with the backoff the third failure comes 6 s after the first, without
	# it (a 1 s pass) after 2 s: count at 4.5 s, then drop the trigger at once
	sleep "$(awk -v t="$(($(now_ms) - t0))" 'BEGIN { s = (4500 - t) / 1000; print (s > 0 ? s : 0) }')"
	n=$(wq "$failures")
	wq "DROP TRIGGER refuse_update ON booking.bookings" >/dev/null
	if [ "$n" -ge 2 ] && [ "$n" -le 3 ]; then pass "it backs off: $n failed passes in the first 4.5 s (1 s passes would fail 5 times)"
	else fail "it backs off: $n failed passes in the first 4.5 s (expected 2 or 3)"; fi
	n=$(log_count 'planted failure')
	if [ "$n" = 1 ]; then pass "the failure is logged once"
	else fail "the failure is logged once (logged $n times)"; grep 'planted failure' "$W_LOG" | sed 's/^/#   /'; fi
	check "the worker is still the same process" "$worker_sql" "$pid"
	if wait_for wq "SELECT status FROM booking.bookings WHERE id = ${held:-0}" expired 120; then
		pass "once the trigger is gone the worker expires the hold"
	else fail "once the trigger is gone the worker expires the hold"; fi
	check "the same process did it" "$worker_sql" "$pid"
	check "the postmaster was not restarted" "SELECT pg_postmaster_start_time()" "$started"
fi

########################################################################
# 6. a pass blocked on a lock
########################################################################
if section 6; then
	# a bounded wait: booking.lock_timeout ends the blocked pass, not the
	# process; the worker then sleeps (wait event Extension) though the lock
	# is still held
	set_conf booking.lock_timeout 1s
	sleep 0.5
	lock_bookings | sed 's/^/#   /'
	if wait_for pq "$worker_waits_sql" Lock 30 && wait_for pq "$worker_waits_sql" Extension 30; then
		pass "with booking.lock_timeout = 1s a blocked pass gives up: the worker waits for the lock, then sleeps while it is still held"
	else fail "with booking.lock_timeout = 1s a blocked pass gives up: the worker waits for the lock, then sleeps while it is still held"; fi
	n=$(log_count 'a pass failed in database "booking_worker": could not lock the booking tables within booking.lock_timeout')
	if [ "$n" = 1 ]; then pass "the lock timeout is logged once"
	else fail "the lock timeout is logged once (logged $n times)"; fi
	check "the worker is still the same process" "$worker_sql" "$pid"
	unlock_bookings

	set_conf booking.lock_timeout 1h
	sleep 0.5
	held=$(wq "SELECT booking_id FROM booking.reserve_seat($seat, 'blocked', 1, hold => '2 s')")
	got=$(lock_bookings "SELECT status FROM booking.bookings WHERE id = ${held:-0};")
	if [ "$got" = pending ]; then pass "a 2 s hold is pending when the lock is taken"
	else fail "a 2 s hold is pending when the lock is taken (got: $got)"; fi
	if wait_for pq "$worker_waits_sql" Lock 40; then pass "with booking.lock_timeout = 1h a pass waits for the lock on booking.bookings"
	else fail "with booking.lock_timeout = 1h a pass waits for the lock on booking.bookings"; fi
	pid=$(worker_pid)
	t0=$(now_ms)
	pq "SELECT pg_terminate_backend($pid)" >/dev/null
	wait_for pq "SELECT count(*) FROM pg_stat_activity WHERE pid = $pid" 0 30
	ms=$(($(now_ms) - t0))
	if [ "$(pq "SELECT count(*) FROM pg_stat_activity WHERE pid = $pid")" = 0 ] && [ "$ms" -le 1000 ]; then
		pass "pg_terminate_backend ends the blocked pass within 1 s ($ms ms)"
	else fail "pg_terminate_backend ends the blocked pass within 1 s ($ms ms, still there: $(pq "SELECT count(*) FROM pg_stat_activity WHERE pid = $pid"))"; fi
	t0=$(now_ms)
	if wait_for pq "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND pid <> $pid" 1 \
		$(((RESTART_S + 2) * 10)); then
		pass "a new worker is back within its restart interval ($(($(now_ms) - t0)) ms)"
	else fail "a new worker is back within its restart interval ($RESTART_S s + 2 s)"; fi
	newpid=$(worker_pid)
	if wait_for pq "$worker_waits_sql" Lock 30; then pass "the new worker's pass waits for the lock too"
	else fail "the new worker's pass waits for the lock too"; fi
	unlock_bookings
	if wait_for wq "SELECT status FROM booking.bookings WHERE id = ${held:-0}" expired 40; then
		pass "once the lock is gone the new worker expires the hold"
	else fail "once the lock is gone the new worker expires the hold"; fi
	check "it is the new process" "$worker_sql" "${newpid:-none}"
fi

########################################################################
# 7. fast shutdown while a pass is blocked
########################################################################
if section 7; then
	set_conf booking.lock_timeout 1h
	sleep 0.5
	lock_bookings | sed 's/^/#   /'
	if wait_for pq "$worker_waits_sql" Lock 40; then pass "a pass waits for the lock again"
	else fail "a pass waits for the lock again"; fi
	t0=$(now_ms)
	as_postgres "$REL_PGBIN/pg_ctl" -D "$REL_CDIR/data" -m fast -w -t 15 stop >/dev/null 2>&1
	rc=$?
	ms=$(($(now_ms) - t0))
	# the shutdown checkpoint takes a second or two on a busy machine
	if [ "$rc" = 0 ] && [ "$ms" -le 8000 ]; then pass "a fast shutdown completes within 8 s ($ms ms)"
	else
		fail "a fast shutdown completes within 8 s (exit $rc after $ms ms)"
		as_postgres "$REL_PGBIN/pg_ctl" -D "$REL_CDIR/data" -m immediate -w stop >/dev/null 2>&1
	fi
	n=$(grep -cE 'terminated by signal|exited with exit code [2-9]|PANIC|TRAP' "$W_LOG")
	if [ "$n" = 0 ]; then pass "the server log shows no crash"
	else fail "the server log shows no crash"; grep -E 'terminated by signal|exit code|PANIC|TRAP' "$W_LOG" | sed 's/^/#   /'; fi
fi

# on failure, what the worker said; BOOKING_WORKER_LOG=FILE keeps the whole log
if [ "$REL_FAILED" -gt 0 ]; then
	grep -A 2 'booking expiry worker' "$W_LOG" | tail -n 40 | sed 's/^/#   log: /'
fi
[ -n "${BOOKING_WORKER_LOG:-}" ] && cp "$W_LOG" "$BOOKING_WORKER_LOG"

rel_done
