#!/usr/bin/env bash
# move_buffers.sh: booking.move_stay on rooms with buffers
# (set_buffer(room, '1 hour', '2 hours')) under real concurrency (pgbench).
# 10 rooms, each seeded with 20 stays of 2 h, 12 h apart, over a 10-day window
# of June 2031 (dense, so that moves collide); 32 clients for 20 s move random
# stays to random 1..4 hour ranges of a 20-day window, with a few new stays
# (reserve_stay) among them.  Afterwards: no two blocking footprints of a room
# overlap, and, from during alone, no two blocking stays of a room are less
# than 3 hours apart (A's 2 h after + B's 1 h before); every blocking stay's
# blocked is [lower - 1 h, upper + 2 h); moves keep the booking's id and
# status and add no row (rows after = rows before + new stays); a stay is
# where its last successful move put it (one of its ok targets), or where it
# was; and the answers are only ok, unavailable, just_taken or busy.
set -u
cd "$(dirname "$0")"
. ./lib.bash

ROOMS=10
STAYS=20
RUN_SECONDS=${MOVE_BUFFERS_SECONDS:-20}
stress_db booking_stress_move_buffers

sql "CREATE TABLE stress_log (kind text NOT NULL, code text NOT NULL, booking_id bigint, target bigint, during tstzrange, message text)
     ; CREATE TABLE stress_rooms (n int PRIMARY KEY, id bigint NOT NULL)
     ; INSERT INTO stress_rooms SELECT n, booking.create_resource('room ' || n) FROM generate_series(1, $ROOMS) n" >/dev/null || exit 1
check "set_buffer(room, 1 hour, 2 hours) answers ok for the $ROOMS rooms" \
	"SELECT count(*) FILTER (WHERE (booking.set_buffer(id, '1 hour', '2 hours')).code = 'ok') FROM stress_rooms" $ROOMS
check "$((ROOMS * STAYS)) seed stays of 2 h, 12 h apart, all ok" \
	"SELECT count(*) FILTER (WHERE (booking.reserve_stay(r.id, 'seed-' || r.n || '-' || k,
	    tstzrange(timestamptz '2031-06-01 00:00+00' + make_interval(hours => 12 * k),
	              timestamptz '2031-06-01 00:00+00' + make_interval(hours => 12 * k + 2)))).code = 'ok')
	   FROM stress_rooms r, generate_series(0, $STAYS - 1) k" $((ROOMS * STAYS))
sql "CREATE TABLE stress_before AS SELECT id, resource_id, guest, during, status FROM booking.bookings
     ; CREATE INDEX ON stress_log (target) WHERE kind = 'move' AND code = 'ok'" >/dev/null || exit 1

deadlocks() {
	sql "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
}
codes() {
	echo "# $1 answers: $(sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_log WHERE kind = '$1' GROUP BY code) s")"
}

before=$(deadlocks)
run_pgbench "moves" -c 32 -j 2 -T "$RUN_SECONDS" -f move_buffers_move.pgb@19 -f move_buffers_reserve.pgb@1
sql "ANALYZE stress_log" >/dev/null
after=$(deadlocks)
codes move
codes reserve
if [ "$before" = "$after" ]; then pass "pg_stat_database.deadlocks unchanged ($after)"
else fail "pg_stat_database.deadlocks unchanged (before $before, after $after)"; fi

blocking="status IN ('pending', 'confirmed')"
check "moves: every answer is ok, unavailable, just_taken or busy" \
	"SELECT count(*) FROM stress_log WHERE kind = 'move' AND code NOT IN ('ok', 'unavailable', 'just_taken', 'busy')" 0
check "reserves: every answer is ok, unavailable, just_taken or busy" \
	"SELECT count(*) FROM stress_log WHERE kind = 'reserve' AND code NOT IN ('ok', 'unavailable', 'just_taken', 'busy')" 0
check_true "moves: some moved and some refused" \
	"SELECT count(*) FILTER (WHERE code = 'ok') > 0 AND count(*) FILTER (WHERE code IN ('unavailable', 'just_taken')) > 0 FROM stress_log WHERE kind = 'move'"

# the buffers hold
check "no two blocking footprints (blocked) of a room overlap" \
	"SELECT count(*) FROM booking.bookings a JOIN booking.bookings b
	   ON a.resource_id = b.resource_id AND a.id < b.id AND a.blocked && b.blocked
	  WHERE a.$blocking AND b.$blocking" 0
check "from during alone: no two blocking stays of a room less than 3 h apart (or overlapping)" \
	"SELECT count(*) FROM booking.bookings a JOIN booking.bookings b
	   ON a.resource_id = b.resource_id AND a.id <> b.id
	  WHERE a.$blocking AND b.$blocking
	    AND lower(b.during) >= lower(a.during)
	    AND lower(b.during) < upper(a.during) + interval '3 hours'" 0
check "every blocking stay's blocked is [lower(during) - 1 h, upper(during) + 2 h)" \
	"SELECT count(*) FROM booking.bookings WHERE $blocking
	    AND blocked IS DISTINCT FROM tstzrange(lower(during) - interval '1 hour', upper(during) + interval '2 hours', '[)')" 0
check "every range is stored half-open" \
	"SELECT count(*) FROM booking.bookings WHERE NOT (lower_inc(during) AND NOT upper_inc(during))" 0

# moves keep the booking: its id, its status, its guest; no row added or lost
check "rows after = rows before + ok new stays" \
	"SELECT (SELECT count(*) FROM booking.bookings)
	      = (SELECT count(*) FROM stress_before) + (SELECT count(*) FROM stress_log WHERE kind = 'reserve' AND code = 'ok')" t
check "every seeded booking is still there, same room, guest, status (confirmed)" \
	"SELECT count(*) FROM stress_before s JOIN booking.bookings b USING (id)
	  WHERE b.resource_id = s.resource_id AND b.guest = s.guest AND b.status = s.status AND b.status = 'confirmed'" $((ROOMS * STAYS))
check "every ok new stay is its own confirmed row on its room, with the range asked for unless moved since" \
	"SELECT count(*) FROM stress_log l LEFT JOIN booking.bookings b ON b.id = l.booking_id
	  WHERE l.kind = 'reserve' AND l.code = 'ok'
	    AND (b.id IS NULL OR b.resource_id <> l.target OR b.status <> 'confirmed'
	         OR b.id IN (SELECT id FROM stress_before)
	         OR (b.during <> l.during AND NOT EXISTS (SELECT 1 FROM stress_log m WHERE m.kind = 'move' AND m.code = 'ok' AND m.target = b.id)))" 0
check "every booking is confirmed" "SELECT count(*) FROM booking.bookings WHERE status <> 'confirmed'" 0
check "every ok move names the booking it moved (same id)" \
	"SELECT count(*) FROM stress_log WHERE kind = 'move' AND code = 'ok' AND booking_id IS DISTINCT FROM target" 0
check "refused moves name no other booking" \
	"SELECT count(*) FROM stress_log WHERE kind = 'move' AND code <> 'ok' AND booking_id IS NOT NULL AND booking_id <> target" 0
check "a stay never moved ok is where it was; a moved one is at one of its ok targets" \
	"SELECT count(*) FROM booking.bookings b
	   LEFT JOIN stress_before s USING (id)
	  WHERE CASE WHEN EXISTS (SELECT 1 FROM stress_log l WHERE l.kind = 'move' AND l.code = 'ok' AND l.target = b.id)
	             THEN NOT EXISTS (SELECT 1 FROM stress_log l WHERE l.kind = 'move' AND l.code = 'ok' AND l.target = b.id AND l.during = b.during)
	             WHEN s.id IS NOT NULL THEN b.during <> s.during
	             ELSE b.during <> (SELECT l.during FROM stress_log l WHERE l.kind = 'reserve' AND l.code = 'ok' AND l.booking_id = b.id) END" 0
echo "# stays moved at least once: $(sql "SELECT count(DISTINCT target) FROM stress_log WHERE kind = 'move' AND code = 'ok'") of $(sql "SELECT count(*) FROM booking.bookings")"

stress_done
