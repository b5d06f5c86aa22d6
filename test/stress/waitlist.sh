#!/usr/bin/env bash
# waitlist.sh: join_waitlist and the offers under real concurrency.  A
# 100-seat session is sold out (60 confirmed, 25 long holds, 15 holds that
# lapse during the run); 64 clients put 200 distinct guests in line (and 256
# repeated joins of random ones of them).  Then for 20 s 62 clients cancel
# holders' seats, buy as newcomers (logging the line's length under the
# resource lock of their own call; 3 in 10 then join the line), confirm,
# cancel or ignore offered holds (offers last 3 s: booking.waitlist_offer),
# and leave the line; 1 client runs hold_expire, 1 client samples the
# resource and its bookings 10 times a second.  Checked exactly, in every
# sample and at the end: taken = held + confirmed <= capacity, the waiting
# counter = the waiting rows, and while anyone waits every seat is taken (a
# freed seat goes to the line in the same transaction); no newcomer got a
# seat while the line was non-empty; offers went in join order, and every
# entry still waiting joined after every entry that was offered; each entry
# has one waitlist_joined event, and one waitlist_offered event iff it was
# offered; the last hold_expire offers exactly min(lapsed, waiting) seats.
set -u
cd "$(dirname "$0")"
. ./lib.bash

CAPACITY=100
LINE=200
RUN_SECONDS=20
stress_db booking_stress_waitlist
# offers last 3 s; 64 joins queue on one row lock: wait up to 20 s, not 3 s (busy)
stress_psql -d postgres -c "ALTER DATABASE $STRESS_DB SET booking.waitlist_offer = '3s'" \
	-c "ALTER DATABASE $STRESS_DB SET booking.lock_timeout = '20s'" >/dev/null || exit 1

sql "CREATE SEQUENCE wl_gseq; CREATE SEQUENCE wl_newseq
   ; CREATE TABLE wl_join (client int, guest text NOT NULL, code text, booking_id bigint, at timestamptz NOT NULL DEFAULT clock_timestamp())
   ; CREATE TABLE wl_log (client int, op text NOT NULL, booking_id bigint, code text)
   ; CREATE TABLE wl_acted (booking_id bigint PRIMARY KEY, op text NOT NULL)
   ; CREATE TABLE wl_new (client int, code text NOT NULL, booking_id bigint, waiting int NOT NULL)
   ; CREATE TABLE wl_expire (n bigint, at timestamptz NOT NULL DEFAULT clock_timestamp())
   ; CREATE TABLE wl_monitor (at timestamptz NOT NULL DEFAULT clock_timestamp(), capacity int, taken int, waiting_col int, held bigint, confirmed bigint, waiting_rows bigint)" >/dev/null || exit 1
check "consumer audit added" "SELECT booking.add_consumer('audit')" t
res=$(sql "SELECT booking.create_resource('session', $CAPACITY)")

# sold out: 60 confirmed, 25 holds of an hour, 15 holds lapsing 8 s to 22 s from now
check "the line refuses while seats are free (seats_available)" "SELECT (booking.join_waitlist($res, 'early')).code" seats_available
check "100 seats sold: 60 confirmed, 40 held" \
	"SELECT count(*) FILTER (WHERE (r).code = 'ok') FROM (SELECT booking.reserve_seat($res, 'holder-' || i, 1,
	     hold => CASE WHEN i <= 60 THEN NULL WHEN i <= 85 THEN interval '1 hour' ELSE make_interval(secs => 8 + (i - 86)) END) AS r
	   FROM generate_series(1, $CAPACITY) i) s" $CAPACITY
check "sold out: seats_left 0, a buyer gets sold_out" \
	"SELECT booking.seats_left($res) || ' ' || (booking.reserve_seat($res, 'late')).code" "0 sold_out"

run_pgbench "join x64" -c 64 -j 4 -t 4 -D res="$res" -f waitlist_join.pgb
check "$LINE distinct guests waitlisted, each exactly once" \
	"SELECT count(*) || '/' || count(DISTINCT guest) || '/' || count(DISTINCT booking_id) FROM wl_join WHERE code = 'waitlisted'" "$LINE/$LINE/$LINE"
check "every other join is already_waiting and names that guest's entry" \
	"SELECT count(*) FILTER (WHERE j.code = 'already_waiting' AND j.booking_id = w.booking_id) || '/' || count(*)
	   FROM wl_join j JOIN wl_join w ON w.guest = j.guest AND w.code = 'waitlisted' WHERE j.code <> 'waitlisted' OR j.booking_id <> w.booking_id" \
	"256/256"
check "resources.waiting = waiting rows = $LINE, and still sold out" \
	"SELECT r.waiting || '/' || (SELECT count(*) FROM booking.bookings WHERE status = 'waiting') || '/' || r.taken FROM booking.resources r WHERE r.id = $res" \
	"$LINE/$LINE/$CAPACITY"

echo "# 62 clients (holders, newcomers, offered guests, leavers) + hold_expire + monitor; $RUN_SECONDS s"
pg="$STRESS_PGBIN/pgbench -n -T $RUN_SECONDS -D res=$res"
$pg -c 62 -j 4 -R 120 -f waitlist_holder.pgb@1 -f waitlist_newcomer.pgb@4 -f waitlist_offered.pgb@3 -f waitlist_leave.pgb@1 \
	"$STRESS_DB" >"$STRESS_TMP/main.out" 2>&1 & main_pid=$!
$pg -c 1 -j 1 -R 2 -f waitlist_expire.pgb "$STRESS_DB" >"$STRESS_TMP/expire.out" 2>&1 & exp_pid=$!
$pg -c 1 -j 1 -R 10 -f waitlist_monitor.pgb "$STRESS_DB" >"$STRESS_TMP/monitor.out" 2>&1 & mon_pid=$!
wait $main_pid; main_rc=$?
wait $exp_pid; exp_rc=$?
wait $mon_pid; mon_rc=$?
check_pgbench_output "holders, newcomers, offered, leavers x62" "$STRESS_TMP/main.out" $main_rc
check_pgbench_output "hold_expire x1" "$STRESS_TMP/expire.out" $exp_rc
check_pgbench_output "monitor x1" "$STRESS_TMP/monitor.out" $mon_rc

echo "# answers: $(sql "SELECT string_agg(op || ' ' || code || '=' || n, ', ' ORDER BY op, code) FROM (SELECT op, code, count(*) n FROM wl_log GROUP BY 1, 2) s")"
echo "# newcomers: $(sql "SELECT string_agg(code || '=' || n, ', ') FROM (SELECT code, count(*) n FROM wl_new GROUP BY 1) s"); joins: $(sql "SELECT string_agg(code || '=' || n, ', ') FROM (SELECT code, count(*) n FROM wl_join GROUP BY 1) s")"
echo "# final states: $(sql "SELECT string_agg(status || '=' || n, ', ' ORDER BY status) FROM (SELECT status, count(*) n FROM booking.bookings GROUP BY status) s")"
echo "# hold_expire moved $(sql "SELECT sum(n) FROM wl_expire"); monitor samples: $(sql "SELECT count(*) || ', line ' || min(waiting_rows) || '..' || max(waiting_rows) FROM wl_monitor")"

# during the run
check_true "the monitor took samples all along (at least 100)" "SELECT count(*) >= 100 FROM wl_monitor"
check "every sample: taken = held + confirmed <= capacity" \
	"SELECT count(*) FROM wl_monitor WHERE taken <> held + confirmed OR held + confirmed > capacity" 0
check "every sample: resources.waiting = the waiting rows" "SELECT count(*) FROM wl_monitor WHERE waiting_col <> waiting_rows" 0
check "every sample with someone waiting: every seat taken (freed seats went to the line at once)" \
	"SELECT count(*) FROM wl_monitor WHERE waiting_rows > 0 AND taken <> capacity" 0
check "every newcomer answer is sold_out or ok" "SELECT count(*) FROM wl_new WHERE code NOT IN ('sold_out', 'ok')" 0
check "no newcomer got a seat while the line was non-empty" "SELECT count(*) FROM wl_new WHERE code = 'ok' AND waiting > 0" 0
check_true "newcomers were refused while people waited (at least 100 times)" "SELECT count(*) >= 100 FROM wl_new WHERE code = 'sold_out' AND waiting > 0"
check "every newcomer's join was waitlisted" "SELECT count(*) FROM wl_join WHERE guest LIKE 'new-%' AND code <> 'waitlisted'" 0
check "every answer to a holder, an offered guest or a leaver is expected (cancel ok, or invalid_state of an expired hold; confirm ok or hold_expired)" \
	"SELECT count(*) FROM wl_log l JOIN booking.bookings b ON b.id = l.booking_id
	  WHERE NOT (l.code = 'ok' OR (l.op = 'offer_confirm' AND l.code = 'hold_expired' AND b.status = 'expired')
	             OR (l.op IN ('holder_cancel', 'offer_cancel', 'leave') AND l.code = 'invalid_state' AND b.status = 'expired') OR l.op = 'offer_ignore')" 0
# a lapsed hold is expired by hold_expire or, first, by the call that next
# takes seats (hold_expire skips a resource whose row is held, and with 62
# clients on one session it may never find it free: seen, 0 in 20 s)
check_true "holders cancelled, holds lapsed, offers were confirmed, cancelled and left to lapse, people left the line" \
	"SELECT count(*) FILTER (WHERE op = 'holder_cancel' AND code = 'ok') > 0 AND count(*) FILTER (WHERE op = 'offer_confirm' AND code = 'ok') > 0
	    AND count(*) FILTER (WHERE op = 'offer_cancel' AND code = 'ok') > 0 AND count(*) FILTER (WHERE op = 'offer_ignore') > 0
	    AND count(*) FILTER (WHERE op = 'leave' AND code = 'ok') > 0
	    AND (SELECT count(*) FROM booking.bookings WHERE status = 'expired') > 0 FROM wl_log"

# the end, once every hold has lapsed (offers last 3 s, newcomers' holds 3 s)
sleep 3.5
totals="SELECT r.taken || '/' || (SELECT coalesce(sum(quantity), 0) FROM booking.bookings WHERE resource_id = r.id AND status IN ('pending', 'confirmed'))
	        || '/' || r.waiting || '/' || (SELECT count(*) FROM booking.bookings WHERE resource_id = r.id AND status = 'waiting')
	   FROM booking.resources r WHERE r.id = $res"
t=$(sql "$totals")
check "at the end: taken = held + confirmed; resources.waiting = waiting rows" \
	"SELECT split_part('$t', '/', 1) = split_part('$t', '/', 2) AND split_part('$t', '/', 3) = split_part('$t', '/', 4)" t
check "at the end, every hold lapsed: seats_left = capacity - confirmed" \
	"SELECT booking.seats_left($res) = $CAPACITY - (SELECT count(*) FROM booking.bookings WHERE status = 'confirmed')" t
before=$(sql "SELECT (SELECT count(*) FROM booking.bookings WHERE status = 'pending') || ' ' || waiting || ' ' || (SELECT count(*) FROM booking.bookings WHERE status = 'confirmed') FROM booking.resources WHERE id = $res")
read -r lapsed waiting confirmed <<<"$before"
offers=$((lapsed < waiting ? lapsed : waiting))
mark=$(sql "SELECT clock_timestamp()")
check "a last hold_expire expires the $lapsed lapsed holds" "SELECT booking.hold_expire()" "$lapsed"
check "... and offers min(lapsed, waiting $waiting) = $offers seats to the line: pending, waiting, offered events" \
	"SELECT (SELECT count(*) FROM booking.bookings WHERE status = 'pending') || ' ' || (SELECT waiting FROM booking.resources WHERE id = $res)
	   || ' ' || (SELECT count(*) FROM booking.events WHERE kind = 'waitlist_offered' AND created_at > '$mark')" "$offers $((waiting - offers)) $offers"
check "then: confirmed + live holds + free = capacity, every seat taken if anyone waits" \
	"SELECT booking.seats_left($res) + $confirmed + (SELECT count(*) FROM booking.bookings WHERE status = 'pending' AND expires_at > clock_timestamp())
	        || ' ' || (r.waiting = 0 OR r.taken = r.capacity) FROM booking.resources r WHERE r.id = $res" "$CAPACITY true"

# number the events (claim them once), then the line's order
for ((i = 0; i < 10; i++)); do
	sql "SELECT count(*) FROM booking.claim_events('audit', 10000)" >/dev/null
	[ "$(sql "SELECT count(*) FROM booking.events WHERE seq IS NULL")" = 0 ] && break
done
check "every event numbered; the resource's seq is exactly 1..count" \
	"SELECT count(seq) = count(*) AND min(seq) = 1 AND max(seq) = count(*) AND count(DISTINCT seq) = count(*) FROM booking.events WHERE resource_id = $res" t
entries="SELECT b.*, row_number() OVER (ORDER BY b.created_at, b.id) AS pos,
	        (SELECT count(*) FROM booking.events e WHERE e.booking_id = b.id AND e.kind = 'waitlist_joined') AS joined,
	        (SELECT count(*) FROM booking.events e WHERE e.booking_id = b.id AND e.kind = 'waitlist_offered') AS offered,
	        (SELECT min(e.seq) FROM booking.events e WHERE e.booking_id = b.id AND e.kind = 'waitlist_offered') AS offered_seq,
	        (SELECT e.payload->>'status_before' FROM booking.events e WHERE e.booking_id = b.id AND e.kind = 'cancelled') AS cancelled_from
	   FROM booking.bookings b WHERE b.id IN (SELECT booking_id FROM wl_join WHERE code = 'waitlisted')"
sql "CREATE TABLE wl_entries AS $entries" >/dev/null
check "the entries are the waitlisted answers, each with exactly one waitlist_joined event" \
	"SELECT count(*) || '/' || count(*) FILTER (WHERE joined = 1) FROM wl_entries" "$(sql "SELECT count(*) || '/' || count(*) FROM wl_join WHERE code = 'waitlisted'")"
check "waitlist_joined events in seq order = join order (created_at, id)" \
	"SELECT array_agg(e.booking_id ORDER BY e.seq) = (SELECT array_agg(id ORDER BY pos) FROM wl_entries) FROM booking.events e WHERE e.kind = 'waitlist_joined'" t
check "one waitlist_offered event iff offered (pending, confirmed, expired, or cancelled from pending); none if waiting or left while waiting" \
	"SELECT count(*) FROM wl_entries WHERE offered <> CASE WHEN status IN ('pending', 'confirmed', 'expired') THEN 1
	                                                      WHEN status = 'waiting' THEN 0
	                                                      WHEN status = 'cancelled' AND cancelled_from = 'pending' THEN 1
	                                                      WHEN status = 'cancelled' AND cancelled_from = 'waiting' THEN 0 END
	     OR (status = 'cancelled' AND cancelled_from IS NULL)" 0
check "waitlist_offered events: only of entries, each waiting -> pending" \
	"SELECT count(*) FROM booking.events e WHERE e.kind = 'waitlist_offered'
	    AND (e.booking_id NOT IN (SELECT id FROM wl_entries) OR e.payload->>'status_before' <> 'waiting' OR e.payload->>'status_after' <> 'pending')" 0
check "offers in FIFO order: the offered entries by offer seq = by join order" \
	"SELECT array_agg(id ORDER BY offered_seq) = array_agg(id ORDER BY pos) FROM wl_entries WHERE offered = 1" t
check "strict FIFO: every entry still waiting joined after every entry that was offered" \
	"SELECT coalesce(max(pos) FILTER (WHERE offered = 1), 0) < coalesce(min(pos) FILTER (WHERE status = 'waiting'), 1000000) FROM wl_entries" t
check_true "the line moved (over 100 offers) and is still there (newcomers were always behind someone)" \
	"SELECT count(*) FILTER (WHERE offered = 1) > 100 AND count(*) FILTER (WHERE status = 'waiting') > 0 FROM wl_entries"
check "no booking of a newcomer's reserve_seat exists unless it answered ok" \
	"SELECT count(*) FROM booking.bookings b WHERE b.guest LIKE 'buyer-%' AND b.id NOT IN (SELECT booking_id FROM wl_new WHERE code = 'ok')" 0

stress_done
