#!/usr/bin/env bash
# holds.sh: 200 short holds (1 to 2 s) on one seat resource, then 4 sessions
# running hold_expire in a loop and 4 sessions confirming random bookings,
# concurrently, for a few seconds (two pgbench runs side by side).  At the
# end, after a last hold_expire: every booking is either confirmed or
# expired, never both and never twice, every answer matches the final state,
# and the seat counter equals the sum of blocking quantities.
set -u
cd "$(dirname "$0")"
. ./lib.bash

HOLDS=200
CAPACITY=1000
RUN_SECONDS=4
stress_db booking_stress_holds

sql "CREATE TABLE stress_log (kind text NOT NULL, code text, booking_id bigint, n bigint)" || exit 1
res=$(sql "SELECT booking.create_resource('held session', $CAPACITY)")

# 200 holds of 1..3 seats, lasting 1.00 s to 1.99 s from their own call
made=$(sql "SELECT count(*) FROM (SELECT booking.reserve_seat($res, 'holder-' || i, 1 + i % 3,
		hold => make_interval(secs => 1 + (i % 100) / 100.0)) AS r
	FROM generate_series(1, $HOLDS) i) s WHERE (r).code = 'ok'")
if [ "$made" = "$HOLDS" ]; then pass "$HOLDS holds made"; else fail "$HOLDS holds made (got $made)"; fi

"$STRESS_PGBIN/pgbench" -n -c 4 -j 1 -T $RUN_SECONDS -R 200 -D res="$res" -f holds_expire.pgb \
	"$STRESS_DB" >"$STRESS_TMP/expire.out" 2>&1 &
expire_pid=$!
"$STRESS_PGBIN/pgbench" -n -c 4 -j 1 -T $RUN_SECONDS -R 60 -D res="$res" -f holds_confirm.pgb \
	"$STRESS_DB" >"$STRESS_TMP/confirm.out" 2>&1 &
confirm_pid=$!
wait $expire_pid; expire_rc=$?
wait $confirm_pid; confirm_rc=$?
check_pgbench_output "hold_expire x4" "$STRESS_TMP/expire.out" $expire_rc
check_pgbench_output "confirm x4" "$STRESS_TMP/confirm.out" $confirm_rc

# every hold has lapsed by now (the run outlasts the longest hold); one last pass
check_true "every hold's expiry is in the past" \
	"SELECT max(expires_at) < clock_timestamp() FROM booking.bookings WHERE resource_id = $res AND status <> 'confirmed'"
sql "INSERT INTO stress_log (kind, n) SELECT 'final', booking.hold_expire()" >/dev/null

echo "# confirm answers: $(sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_log WHERE kind = 'confirm' GROUP BY code) s")"
echo "# final states: $(sql "SELECT string_agg(status || '=' || n, ', ' ORDER BY status) FROM (SELECT status, count(*) n FROM booking.bookings GROUP BY status) s")"
echo "# hold_expire moved: $(sql "SELECT coalesce(sum(n), 0) FROM stress_log WHERE kind = 'expire'") in the loop, $(sql "SELECT n FROM stress_log WHERE kind = 'final'") in the last pass"

check "$HOLDS bookings, each confirmed or expired" \
	"SELECT count(*) FILTER (WHERE status IN ('confirmed', 'expired')) || '/' || count(*) FROM booking.bookings WHERE resource_id = $res" \
	"$HOLDS/$HOLDS"
check_true "some holds were confirmed and some expired" \
	"SELECT count(*) FILTER (WHERE status = 'confirmed') > 0 AND count(*) FILTER (WHERE status = 'expired') > 0 FROM booking.bookings"
check "every confirm answer is ok, hold_expired or busy" \
	"SELECT count(*) FROM stress_log WHERE kind = 'confirm' AND code NOT IN ('ok', 'hold_expired', 'busy')" 0
check "every booking confirmed with ok is confirmed" \
	"SELECT count(*) FROM stress_log l JOIN booking.bookings b ON b.id = l.booking_id
	  WHERE l.kind = 'confirm' AND l.code = 'ok' AND b.status <> 'confirmed'" 0
check "every booking answered hold_expired is expired" \
	"SELECT count(*) FROM stress_log l JOIN booking.bookings b ON b.id = l.booking_id
	  WHERE l.kind = 'confirm' AND l.code = 'hold_expired' AND b.status <> 'expired'" 0
check "every confirmed booking had an ok confirm" \
	"SELECT count(*) FROM booking.bookings b WHERE b.status = 'confirmed'
	    AND NOT EXISTS (SELECT 1 FROM stress_log l WHERE l.booking_id = b.id AND l.kind = 'confirm' AND l.code = 'ok')" 0
check "confirmed bookings have no expiry, expired ones keep theirs" \
	"SELECT count(*) FROM booking.bookings WHERE (status = 'confirmed') <> (expires_at IS NULL)" 0
# each expired hold was moved once: by hold_expire, or lazily by a confirm
# that answered hold_expired; so hold_expire's total lies between these bounds
check_true "hold_expire expired no hold twice (expired - lazily expired <= moved <= expired)" \
	"SELECT e.n - coalesce(c.n, 0) <= m.n AND m.n <= e.n
	   FROM (SELECT count(*) AS n FROM booking.bookings WHERE status = 'expired') e,
	        (SELECT count(DISTINCT booking_id) AS n FROM stress_log WHERE kind = 'confirm' AND code = 'hold_expired') c,
	        (SELECT coalesce(sum(n), 0) AS n FROM stress_log WHERE kind IN ('expire', 'final')) m"
check "resources.taken equals the sum of blocking quantities" \
	"SELECT r.taken - (SELECT coalesce(sum(b.quantity), 0) FROM booking.bookings b
	                    WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed'))
	   FROM booking.resources r WHERE r.id = $res" 0
check "seats_left = capacity - confirmed seats" \
	"SELECT booking.seats_left($res) = $CAPACITY - (SELECT coalesce(sum(quantity), 0) FROM booking.bookings WHERE status = 'confirmed')" t
check "a last hold_expire finds nothing left" "SELECT booking.hold_expire()" 0

stress_done
