#!/usr/bin/env bash
# passes.sh: booking.reserve_seats under real concurrency (pgbench).
# 10 sessions of 100 seats (2 of them striped: set_stripes 4); 32 clients buy
# 1,280 passes of 3 distinct random sessions, listed in random order, one seat
# each or a random 1..2 each: far more than the 1,000 seats.  Afterwards every
# pass is all or nothing (each ok answer is a group of exactly its 3 rows, with
# its quantities; no row outside an ok group), no session is over capacity and
# its counter (resources.taken, or capacity - sum(stripes.free)) equals the sum
# of its blocking quantities, the answers are only ok or sold_out (no
# deadlock, no busy or retry with a 5 s lock wait), and every sold_out names
# a session of the pass that still cannot serve it (seats never come back
# here, so what was short then is short now).
set -u
cd "$(dirname "$0")"
. ./lib.bash

CLIENTS=32
PER_CLIENT=40
ATTEMPTS=$((CLIENTS * PER_CLIENT))
SESSIONS=10
CAPACITY=100
stress_db booking_stress_passes

sql "CREATE TABLE stress_log (code text NOT NULL, booking_id bigint, message text, sessions bigint[] NOT NULL, quantities int[])
     ; CREATE TABLE stress_sessions (n int PRIMARY KEY, resource bigint NOT NULL)
     ; INSERT INTO stress_sessions SELECT n, booking.create_resource('session ' || n, $CAPACITY) FROM generate_series(1, $SESSIONS) n" >/dev/null || exit 1
check "sessions 4 and 8 striped (set_stripes 4)" \
	"SELECT string_agg((booking.set_stripes(resource, 4)).code, ',' ORDER BY n) FROM stress_sessions WHERE n IN (4, 8)" "ok,ok"

deadlocks() {
	sql "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
}

before=$(deadlocks)
run_pgbench "passes" -c $CLIENTS -j 2 -t $PER_CLIENT -f passes_buy.pgb
after=$(deadlocks)
if [ "$before" = "$after" ]; then pass "pg_stat_database.deadlocks unchanged ($after)"
else fail "pg_stat_database.deadlocks unchanged (before $before, after $after)"; fi

echo "# answers: $(sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_log GROUP BY code) s")"
echo "# seats sold per session: $(sql "SELECT string_agg(coalesce(s.sold, 0)::text, ' ' ORDER BY x.n) FROM stress_sessions x
	LEFT JOIN LATERAL (SELECT sum(quantity) sold FROM booking.bookings b WHERE b.resource_id = x.resource AND b.status IN ('pending', 'confirmed')) s ON true")"
busy_retry=$(sql "SELECT string_agg(code || ': ' || message, E'\n#   ') FROM (SELECT DISTINCT ON (code) code, message FROM stress_log WHERE code NOT IN ('ok', 'sold_out')) s")
[ -n "$busy_retry" ] && echo "# unexpected answers (first of each): $busy_retry"

check "every attempt answered" "SELECT count(*) FROM stress_log" "$ATTEMPTS"
check "every answer is ok or sold_out (no busy, retry or error)" \
	"SELECT count(*) FROM stress_log WHERE code NOT IN ('ok', 'sold_out')" 0
check_true "some passes were sold and some refused" \
	"SELECT count(*) FILTER (WHERE code = 'ok') > 0 AND count(*) FILTER (WHERE code = 'sold_out') > 0 FROM stress_log"

# all or nothing
check "every booking row belongs to a group" "SELECT count(*) FROM booking.bookings WHERE group_id IS NULL" 0
check "every group has exactly 3 members, on 3 distinct sessions" \
	"SELECT count(*) FROM (SELECT group_id FROM booking.bookings GROUP BY group_id
	   HAVING count(*) <> 3 OR count(DISTINCT resource_id) <> 3) s" 0
check "one group per ok answer, 3 rows each (no row outside an ok group)" \
	"SELECT (SELECT count(DISTINCT group_id) || '/' || count(*) FROM booking.bookings)
	      = (SELECT count(*) || '/' || 3 * count(*) FROM stress_log WHERE code = 'ok')" t
check "every ok answer names a distinct group" \
	"SELECT count(DISTINCT booking_id) = count(*) AND count(booking_id) = count(*) FROM stress_log WHERE code = 'ok'" t
check "every ok answer's group is its pass: its 3 sessions, quantities, guest, confirmed, named by the lowest session's member" \
	"SELECT count(*) FROM stress_log l
	   LEFT JOIN booking.bookings f ON f.id = l.booking_id
	  WHERE l.code = 'ok'
	    AND (f.id IS NULL OR f.group_id IS DISTINCT FROM f.id
	         OR f.resource_id <> (SELECT min(x) FROM unnest(l.sessions) x)
	         OR (SELECT array_agg(m.resource_id || ':' || m.quantity ORDER BY m.resource_id) FROM booking.bookings m WHERE m.group_id = f.id)
	            IS DISTINCT FROM (SELECT array_agg(x.s || ':' || coalesce(l.quantities[x.i], 1) ORDER BY x.s)
	                                FROM unnest(l.sessions) WITH ORDINALITY x(s, i))
	         OR EXISTS (SELECT 1 FROM booking.bookings m WHERE m.group_id = f.id
	                     AND (m.guest <> f.guest OR m.status <> 'confirmed' OR m.expires_at IS NOT NULL OR m.during IS NOT NULL)))" 0
check "refusals name no booking" "SELECT count(*) FROM stress_log WHERE code <> 'ok' AND booking_id IS NOT NULL" 0

# capacity
blocking="(SELECT coalesce(sum(b.quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed'))"
check "no session over capacity (sum of blocking quantities <= 100)" \
	"SELECT count(*) FROM booking.resources r WHERE $blocking > r.capacity" 0
check "the 8 unstriped sessions: resources.taken equals the sum of blocking quantities" \
	"SELECT count(*) FILTER (WHERE r.taken = $blocking) || '/' || count(*) FROM booking.resources r WHERE r.stripes <= 1" "8/8"
check "the 2 striped sessions: capacity - sum(stripes.free) equals the sum of blocking quantities" \
	"SELECT count(*) FILTER (WHERE r.capacity - (SELECT sum(f.free) FROM booking.resource_stripes f WHERE f.resource_id = r.id) = $blocking)
	   || '/' || count(*) FROM booking.resources r WHERE r.stripes = 4" "2/2"
check "seats_left = capacity - the sum of blocking quantities, every session" \
	"SELECT count(*) FROM booking.resources r WHERE booking.seats_left(r.id) <> r.capacity - $blocking" 0
check "the ok answers' seats add up to the seats booked" \
	"SELECT (SELECT sum(coalesce(l.quantities[i], 1)) FROM stress_log l, generate_series(1, 3) i WHERE l.code = 'ok')
	      = (SELECT sum(quantity) FROM booking.bookings)" t

# sold_out is true: the named session is in the pass and cannot serve its part
# even now (no seat was ever given back)
check "every sold_out names a session of its pass that still has fewer seats left than it asked for there" \
	"SELECT count(*) FROM (SELECT l.*, substring(l.message from 'of resource ([0-9]+),')::bigint AS named FROM stress_log l WHERE l.code = 'sold_out') l
	  WHERE l.named IS NULL OR NOT (l.named = ANY (l.sessions))
	     OR booking.seats_left(l.named) >= coalesce(l.quantities[array_position(l.sessions, l.named)], 1)" 0

stress_done
