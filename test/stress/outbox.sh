#!/usr/bin/env bash
# outbox.sh: the outbox (events, consumers, claim_events, ack_events) under
# real concurrency.  For 20 s, 64 pgbench clients book 4 seat sessions of 40
# (2 striped with set_stripes 4) and 2 rooms (one day of 40 each), with no
# hold, a 1 s or a 4 s hold, and confirm and cancel their own bookings;
# 2 clients make calls inside transactions that roll back (a hold, its
# confirm, the cancel of someone's confirmed booking); 1 client runs
# hold_expire.  At the same time 4 relays drain consumer "mail" and 1
# relay drains "audit" with claim_events under a 2 s lease; 10% of their
# steps never ack (a relay that died) and 5% ack after the lease lapsed.
# Afterwards both consumers are drained to empty, and exactly:
#   - each booking has exactly the events of its state changes, in order
#     (reserved; confirmed iff a confirm answered ok; cancelled iff it ends
#     cancelled; expired iff it ends expired), and each kind's total matches;
#   - no event comes from a rolled-back call;
#   - each resource's seq is exactly 1..count, and no head row was written;
#   - each consumer has one delivery per event, acknowledged, and the relays'
#     acks acknowledged each event exactly once (ack_events' counts sum to the
#     events; each event is in exactly one ack's written rows);
#   - two leases of one event never overlapped, a lease was never given
#     again after an ack, and deliveries.attempts counts the claims.
set -u
cd "$(dirname "$0")"
. ./lib.bash

CLIENTS=${OUTBOX_CLIENTS:-64}
RUN_SECONDS=20
CAPACITY=40
stress_db booking_stress_outbox
# confirm and cancel take no lock_timeout argument: on a loaded 2-core box
# 64 clients can queue longer than the default 3 s (busy); wait up to 20 s
stress_psql -d postgres -c "ALTER DATABASE $STRESS_DB SET booking.lock_timeout = '20s'" >/dev/null || exit 1

sql "CREATE TABLE ob_res (n int PRIMARY KEY, id bigint NOT NULL)
   ; CREATE TABLE ob_log (client int NOT NULL, op text NOT NULL, res int, hold boolean, code text, booking_id bigint, replayed boolean)
   ; CREATE INDEX ON ob_log (client, op)
   ; CREATE INDEX ON ob_log (booking_id)
   ; CREATE TABLE ob_rolled_back (booking_id bigint, reserve_code text, confirm_code text, victim bigint, cancel_code text)
   ; CREATE TABLE ob_expire (n bigint)
   ; CREATE TABLE ob_claims (consumer text NOT NULL, event_id bigint NOT NULL, lease_token bigint NOT NULL, relay int NOT NULL, lease_until timestamptz)
   ; CREATE INDEX ON ob_claims (lease_token)
   ; CREATE TABLE ob_ack_calls (consumer text NOT NULL, lease_token bigint NOT NULL, listed bigint, returned int NOT NULL, late boolean)
   ; CREATE TABLE ob_acked (consumer text NOT NULL, lease_token bigint NOT NULL, event_id bigint NOT NULL)" >/dev/null || exit 1
check "consumers mail and audit added" "SELECT booking.add_consumer('mail') AND booking.add_consumer('audit')" t
sql "INSERT INTO ob_res SELECT n, booking.create_resource(CASE WHEN n <= 4 THEN 'session ' ELSE 'room ' END || n, CASE WHEN n <= 4 THEN $CAPACITY ELSE 1 END)
       FROM generate_series(1, 6) n" >/dev/null || exit 1
check "sessions 3 and 4 striped (set_stripes 4)" \
	"SELECT string_agg((booking.set_stripes(id, 4)).code, ',' ORDER BY n) FROM ob_res WHERE n IN (3, 4)" "ok,ok"

echo "# $CLIENTS bookers, 2 rolling back, 1 expiring, relays: 4 for mail, 1 for audit; $RUN_SECONDS s"
pg="$STRESS_PGBIN/pgbench -n -T $RUN_SECONDS"
$pg -c "$CLIENTS" -j 4 -f outbox_book.pgb "$STRESS_DB" >"$STRESS_TMP/book.out" 2>&1 & book_pid=$!
$pg -c 2 -j 1 -R 20 -f outbox_rollback.pgb "$STRESS_DB" >"$STRESS_TMP/rollback.out" 2>&1 & rb_pid=$!
$pg -c 1 -j 1 -R 4 -f outbox_expire.pgb "$STRESS_DB" >"$STRESS_TMP/expire.out" 2>&1 & exp_pid=$!
$pg -c 4 -j 1 -D cons=1 -D batch=20 -D crash=10 -D late=5 -f outbox_relay.pgb "$STRESS_DB" >"$STRESS_TMP/mail.out" 2>&1 & mail_pid=$!
$pg -c 1 -j 1 -D cons=2 -D batch=50 -D crash=10 -D late=5 -f outbox_relay.pgb "$STRESS_DB" >"$STRESS_TMP/audit.out" 2>&1 & audit_pid=$!
wait $book_pid; book_rc=$?
wait $rb_pid; rb_rc=$?
wait $exp_pid; exp_rc=$?
wait $mail_pid; mail_rc=$?
wait $audit_pid; audit_rc=$?
check_pgbench_output "bookers x$CLIENTS" "$STRESS_TMP/book.out" $book_rc
check_pgbench_output "rolled-back calls x2" "$STRESS_TMP/rollback.out" $rb_rc
check_pgbench_output "hold_expire x1" "$STRESS_TMP/expire.out" $exp_rc
check_pgbench_output "relays of mail x4" "$STRESS_TMP/mail.out" $mail_rc
check_pgbench_output "relay of audit x1" "$STRESS_TMP/audit.out" $audit_rc

# every hold has lapsed 4 s after the load; one last expiry pass makes them expired
sleep 4
sql "INSERT INTO ob_expire (n) SELECT booking.hold_expire()" >/dev/null
check "no pending booking is left" "SELECT count(*) FROM booking.bookings WHERE status = 'pending'" 0

# drain both consumers to empty with one relay each that always acks; the
# leases that died relays left lapse within 2 s
open_work() {
	sql "SELECT (SELECT count(*) FROM booking.events WHERE seq IS NULL) + (SELECT count(*) FROM booking.deliveries WHERE acked_at IS NULL)"
}
for ((i = 0; i < 20; i++)); do
	[ "$(open_work)" = 0 ] && break
	[ "$i" -gt 0 ] && sleep 0.5
	for cons in 1 2; do
		"$STRESS_PGBIN/pgbench" -n -c 1 -t 10 -D cons=$cons -D batch=500 -D crash=0 -D late=0 -f outbox_relay.pgb "$STRESS_DB" \
			>"$STRESS_TMP/drain.out" 2>&1 || { cat "$STRESS_TMP/drain.out"; break 2; }
	done
done
check "drained: every event numbered, every delivery acknowledged" "SELECT $(open_work)" 0

sql "CREATE INDEX ON ob_claims (consumer, event_id); CREATE INDEX ON ob_acked (consumer, event_id); CREATE INDEX ON ob_acked (lease_token); ANALYZE" >/dev/null
echo "# deadlocks: $(sql "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")"
echo "# answers: $(sql "SELECT string_agg(op || ' ' || code || '=' || n, ', ' ORDER BY op, code) FROM (SELECT op, code, count(*) n FROM ob_log GROUP BY 1, 2) s")"
echo "# final states: $(sql "SELECT string_agg(status || '=' || n, ', ' ORDER BY status) FROM (SELECT status, count(*) n FROM booking.bookings GROUP BY status) s")"
echo "# events: $(sql "SELECT string_agg(kind || '=' || n, ', ' ORDER BY kind) FROM (SELECT kind, count(*) n FROM booking.events GROUP BY kind) s")"
echo "# rolled back: $(sql "SELECT count(*) || ' tries, ' || count(*) FILTER (WHERE reserve_code = 'ok') || ' holds, ' || count(*) FILTER (WHERE confirm_code = 'ok') || ' confirms, ' || count(*) FILTER (WHERE cancel_code = 'ok') || ' cancels' FROM ob_rolled_back")"
echo "# relays: $(sql "SELECT string_agg(consumer || ': ' || claims || ' claims of ' || events || ' events, ' || redelivered || ' redelivered', '; ') FROM (SELECT consumer, count(DISTINCT lease_token) claims, count(DISTINCT event_id) events, count(*) - count(DISTINCT event_id) redelivered FROM ob_claims GROUP BY consumer) s"); $(sql "SELECT count(*) || ' acks, ' || count(*) FILTER (WHERE late) || ' late, ' || count(*) FILTER (WHERE returned < listed) || ' fenced (acked fewer than listed)' FROM ob_ack_calls")"

# the log is complete and the bookings are the ok answers
# retry: a deadlock with a rolled-back transaction, which holds a resource
# row and a booking row at once (the call wrote nothing; checked below).
# busy: a reserve's 10 s lock_timeout ran out in a convoy behind those
# transactions, each holding one session while it queues for another's
# (seen once: 16 of 6,043 reserves in a slow CI run; they wrote nothing)
check "every answer is expected (reserve: ok/sold_out/unavailable/just_taken/busy; confirm: ok/hold_expired; cancel: ok, or invalid_state of an expired booking; any: retry)" \
	"SELECT count(*) FROM ob_log l WHERE NOT (code = 'retry' OR (op = 'reserve' AND code IN ('ok', 'sold_out', 'unavailable', 'just_taken', 'busy'))
	     OR (op = 'confirm' AND code IN ('ok', 'hold_expired')) OR (op = 'cancel' AND code = 'ok')
	     OR (op = 'cancel' AND code = 'invalid_state' AND (SELECT status FROM booking.bookings b WHERE b.id = l.booking_id) = 'expired'))" 0
check "every confirm answered hold_expired is of a booking that ended expired" \
	"SELECT count(*) FROM ob_log l JOIN booking.bookings b ON b.id = l.booking_id WHERE l.op = 'confirm' AND l.code = 'hold_expired' AND b.status <> 'expired'" 0
check "no answer is a replay" "SELECT count(*) FROM ob_log WHERE replayed" 0
check "the bookings are exactly the ok reserve answers" \
	"SELECT (SELECT array_agg(id ORDER BY id) FROM booking.bookings) IS NOT DISTINCT FROM
	        (SELECT array_agg(booking_id ORDER BY booking_id) FROM ob_log WHERE op = 'reserve' AND code = 'ok')" t
check_true "far more attempts than seats: sold out and unavailable answers, holds confirmed, lapsed and cancelled" \
	"SELECT count(*) FILTER (WHERE code = 'sold_out') > 100 AND count(*) FILTER (WHERE code = 'unavailable') > 100
	    AND count(*) FILTER (WHERE op = 'confirm' AND code = 'ok') > 0 AND count(*) FILTER (WHERE op = 'confirm' AND code = 'hold_expired') > 0
	    AND count(*) FILTER (WHERE op = 'cancel') > 0 FROM ob_log"

# one event per state change
expected_kinds="SELECT b.id, b.status, l.hold,
	   'reserved' || CASE WHEN EXISTS (SELECT 1 FROM ob_log c WHERE c.booking_id = b.id AND c.op = 'confirm' AND c.code = 'ok') THEN ',confirmed' ELSE '' END
	              || CASE b.status WHEN 'cancelled' THEN ',cancelled' WHEN 'expired' THEN ',expired' ELSE '' END AS kinds
	  FROM booking.bookings b JOIN ob_log l ON l.booking_id = b.id AND l.op = 'reserve'"
check "every booking's events, in seq order, are exactly its state changes" \
	"SELECT count(*) FROM ($expected_kinds) x
	   LEFT JOIN (SELECT booking_id, string_agg(kind, ',' ORDER BY seq) AS kinds FROM booking.events GROUP BY booking_id) e ON e.booking_id = x.id
	  WHERE x.kinds IS DISTINCT FROM e.kinds" 0
check "every event of a booking is in its resource, with its guest" \
	"SELECT count(*) FROM booking.events e JOIN booking.bookings b ON b.id = e.booking_id
	  WHERE e.resource_id <> b.resource_id OR e.guest IS DISTINCT FROM b.guest" 0
check "the states agree with the answers: confirmed iff (no hold or confirm ok) and not cancelled; cancelled iff cancel ok" \
	"SELECT count(*) FROM ($expected_kinds) x
	  WHERE (x.status = 'cancelled') <> EXISTS (SELECT 1 FROM ob_log c WHERE c.booking_id = x.id AND c.op = 'cancel' AND c.code = 'ok')
	     OR (x.status = 'confirmed') <> (x.status <> 'cancelled' AND (NOT x.hold OR x.kinds LIKE '%,confirmed%'))" 0
check "reserved events: as many as bookings; status_after confirmed iff no hold" \
	"SELECT count(*) || '/' || count(*) FILTER (WHERE (e.payload->>'status_after' = 'confirmed') = NOT l.hold AND e.payload->>'status_after' IN ('pending', 'confirmed'))
	   FROM booking.events e JOIN ob_log l ON l.booking_id = e.booking_id AND l.op = 'reserve' WHERE e.kind = 'reserved'" \
	"$(sql "SELECT count(*) || '/' || count(*) FROM booking.bookings")"
check "confirmed events = ok confirm answers" \
	"SELECT (SELECT count(*) FROM booking.events WHERE kind = 'confirmed') - (SELECT count(*) FROM ob_log WHERE op = 'confirm' AND code = 'ok')" 0
check "cancelled events = cancelled bookings = ok cancel answers" \
	"SELECT (SELECT count(*) FROM booking.events WHERE kind = 'cancelled') || '=' || (SELECT count(*) FROM booking.bookings WHERE status = 'cancelled')
	        || '=' || (SELECT count(*) FROM ob_log WHERE op = 'cancel' AND code = 'ok')" \
	"$(sql "SELECT count(*) || '=' || count(*) || '=' || count(*) FROM booking.bookings WHERE status = 'cancelled'")"
check "expired events = expired bookings" \
	"SELECT (SELECT count(*) FROM booking.events WHERE kind = 'expired') - (SELECT count(*) FROM booking.bookings WHERE status = 'expired')" 0
check "no event of another kind, every event names a booking that exists" \
	"SELECT count(*) FROM booking.events e WHERE e.kind NOT IN ('reserved', 'confirmed', 'cancelled', 'expired')
	     OR NOT EXISTS (SELECT 1 FROM booking.bookings b WHERE b.id = e.booking_id)" 0
check "events = state changes (bookings + ok confirms + cancelled + expired)" \
	"SELECT (SELECT count(*) FROM booking.events) - (SELECT count(*) FROM booking.bookings) - (SELECT count(*) FROM ob_log WHERE op = 'confirm' AND code = 'ok')
	        - (SELECT count(*) FROM booking.bookings WHERE status IN ('cancelled', 'expired'))" 0

# rolled-back calls
check_true "the rolled-back transactions made holds, confirms and cancels" \
	"SELECT count(*) FILTER (WHERE reserve_code = 'ok' AND confirm_code = 'ok') > 0 AND count(*) FILTER (WHERE cancel_code = 'ok') > 0 FROM ob_rolled_back"
check "no booking and no event of a rolled-back hold" \
	"SELECT count(*) FROM ob_rolled_back r WHERE r.booking_id <> 0
	    AND (EXISTS (SELECT 1 FROM booking.bookings b WHERE b.id = r.booking_id) OR EXISTS (SELECT 1 FROM booking.events e WHERE e.booking_id = r.booking_id))" 0
check "every booking a rolled-back transaction cancelled exists, and is cancelled only if its owner's cancel answered ok" \
	"SELECT count(*) FROM ob_rolled_back r LEFT JOIN booking.bookings b ON b.id = r.victim
	  WHERE r.cancel_code = 'ok' AND (b.id IS NULL OR (b.status = 'cancelled') <> EXISTS (SELECT 1 FROM ob_log c WHERE c.booking_id = b.id AND c.op = 'cancel' AND c.code = 'ok'))" 0

# sequences
check "every resource's seq is exactly 1..count (no NULL, no gap, no duplicate)" \
	"SELECT count(*) FROM (SELECT resource_id FROM booking.events GROUP BY resource_id
	   HAVING count(seq) <> count(*) OR min(seq) <> 1 OR max(seq) <> count(*) OR count(DISTINCT seq) <> count(*)) s" 0
# a resource's head is its last numbered event: only the purge (none here)
# writes a head row
check "the numbering wrote no head row" \
	"SELECT count(*) FROM booking.event_heads WHERE resource_id <> 0" 0

# deliveries and acks
for c in mail audit; do
	check "$c: one delivery per event, every one acknowledged" \
		"SELECT count(*) || '/' || count(*) FILTER (WHERE d.acked_at IS NOT NULL AND d.lease_until IS NULL)
		   FROM booking.events e JOIN booking.deliveries d ON d.event_id = e.id AND d.consumer = '$c'" \
		"$(sql "SELECT count(*) || '/' || count(*) FROM booking.events")"
	check "$c: ack_events' answers add up to the events" \
		"SELECT (SELECT coalesce(sum(returned), 0) FROM ob_ack_calls WHERE consumer = '$c') - (SELECT count(*) FROM booking.events)" 0
	check "$c: each event acknowledged by exactly one ack (the rows each ack wrote), under its final lease token" \
		"SELECT count(*) FROM booking.events e
		   LEFT JOIN LATERAL (SELECT count(*) n, min(a.lease_token) t FROM ob_acked a WHERE a.consumer = '$c' AND a.event_id = e.id) a ON true
		   LEFT JOIN booking.deliveries d ON d.consumer = '$c' AND d.event_id = e.id
		  WHERE a.n <> 1 OR a.t IS DISTINCT FROM d.lease_token" 0
done
check "each ack's answer = the rows it wrote = the claimed events its token still held" \
	"SELECT count(*) FROM ob_ack_calls k
	  WHERE k.returned <> (SELECT count(*) FROM ob_acked a WHERE a.lease_token = k.lease_token)
	     OR (NOT k.late AND k.returned <> k.listed)" 0
check "deliveries.attempts = the claims recorded of each (consumer, event)" \
	"SELECT count(*) FROM booking.deliveries d
	  WHERE d.attempts <> (SELECT count(*) FROM ob_claims c WHERE c.consumer = d.consumer AND c.event_id = d.event_id)" 0
check "each claim's rows share one token, unique to it, and carry its lease_until" \
	"SELECT count(*) FROM (SELECT lease_token FROM ob_claims GROUP BY lease_token
	   HAVING count(DISTINCT consumer) <> 1 OR count(DISTINCT relay) <> 1 OR count(lease_until) <> count(*) OR count(DISTINCT lease_until) <> 1) s" 0
check "two leases of one event never overlap: a re-claim starts (lease_until - 2 s) at or after the previous lease ran out, which was never acked" \
	"SELECT count(*) FROM (SELECT c.*, lag(lease_until) OVER w AS prev_until, lag(lease_token) OVER w AS prev_token
	                        FROM ob_claims c WINDOW w AS (PARTITION BY consumer, event_id ORDER BY lease_token)) c
	  WHERE c.prev_token IS NOT NULL
	    AND (c.prev_until > c.lease_until - interval '2 seconds'
	         OR EXISTS (SELECT 1 FROM ob_acked a WHERE a.lease_token = c.prev_token AND a.event_id = c.event_id))" 0
check_true "leases lapsed and events came again (died relays), for both consumers" \
	"SELECT count(DISTINCT consumer) = 2 FROM (SELECT consumer FROM ob_claims GROUP BY consumer, event_id HAVING count(*) > 1) s"

stress_done
