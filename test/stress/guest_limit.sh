#!/usr/bin/env bash
# guest_limit.sh: booking.set_guest_limit under real concurrency (pgbench).
# A 1,000-seat session limited to 20 seats per guest; 50 clients, all the
# same guest, make 100 attempts of one seat each, all starting together (a
# barrier per round).  Exactly 20 seats are sold to that guest (20 ok answers,
# 80 guest_limit, no busy with a generous lock wait, nothing else), and the
# counter equals the sum of blocking quantities.  20 plain rounds, a fresh
# resource each, then one round on a striped resource with the stripes set
# before the limit, one with them set after it, one where 20 holds of the
# guest lapsed before the race (lapsed holds do not count: 20 sold again),
# and one where the guest held 5 seats before the limit was set (they count:
# 15 sold).  All the rounds run in one pgbench run (one connection per
# client for all of them).  Last, one round at REPEATABLE READ, where a call
# may answer retry: 50 clients x 10 attempts; never more than 20 sold, and
# exactly 20 once any attempt answered guest_limit.
set -u
cd "$(dirname "$0")"
. ./lib.bash

CLIENTS=50
PER_ROUND=2			# attempts per client and round: 100 attempts for a limit of 20
ATTEMPTS=$((CLIENTS * PER_ROUND))
LIMIT=20
CAPACITY=1000
PLAIN_ROUNDS=${GUEST_LIMIT_ROUNDS:-20}
ROUNDS=$((PLAIN_ROUNDS + 4))
stress_db booking_stress_guest_limit

sql "CREATE TABLE stress_log (round int NOT NULL, code text NOT NULL, booking_id bigint, pid int NOT NULL, iso text)
     ; CREATE TABLE stress_rounds (round int PRIMARY KEY, kind text NOT NULL, resource bigint NOT NULL, expect int NOT NULL)
     ; CREATE TABLE stress_barrier (round int PRIMARY KEY, arrived int NOT NULL DEFAULT 0)
     ; INSERT INTO stress_barrier (round) SELECT generate_series(1, $ROUNDS)
     -- waits until n clients reached the round's barrier (60 s at most: a hang is an error)
     ; CREATE FUNCTION stress_wait(r int, n int) RETURNS void LANGUAGE plpgsql AS \$\$
       DECLARE deadline timestamptz := clock_timestamp() + interval '60 s';
       BEGIN
         WHILE (SELECT arrived FROM stress_barrier WHERE round = r) < n LOOP
           IF clock_timestamp() > deadline THEN RAISE EXCEPTION 'barrier of round % timed out', r; END IF;
           PERFORM pg_sleep(0.002);
         END LOOP;
       END \$\$" >/dev/null || exit 1

# round N KIND RESOURCE EXPECTED_OK
round() {
	sql "INSERT INTO stress_rounds VALUES ($1, '$2', $3, $4)" >/dev/null
}

new_limited() {
	local res
	res=$(sql "SELECT booking.create_resource('$1', $CAPACITY)")
	[ "$(sql "SELECT code FROM booking.set_guest_limit($res, $LIMIT)")" = ok ] || echo "# set_guest_limit($res) did not answer ok" >&2
	echo "$res"
}

# the plain rounds
for ((i = 1; i <= PLAIN_ROUNDS; i++)); do
	round "$i" plain "$(new_limited "limited session $i")" $LIMIT
done

# striped: stripes before the limit, and after it
res=$(sql "SELECT booking.create_resource('striped then limited', $CAPACITY)")
check "striped-first: set_stripes answers ok" "SELECT code FROM booking.set_stripes($res, 8)" ok
check "striped-first: set_guest_limit answers ok" "SELECT code FROM booking.set_guest_limit($res, $LIMIT)" ok
round $((PLAIN_ROUNDS + 1)) striped "$res" $LIMIT
res=$(new_limited "limited then striped")
check "limited-first: set_stripes answers ok" "SELECT code FROM booking.set_stripes($res, 8)" ok
round $((PLAIN_ROUNDS + 2)) striped "$res" $LIMIT

# 5 seats held before the limit was set count too
res=$(sql "SELECT booking.create_resource('limited later', $CAPACITY)")
check "premade: 5 seats booked by the guest before the limit" \
	"SELECT code || ' ' || (SELECT code FROM booking.reserve_seat($res, 'same-guest', 4)) FROM booking.reserve_seat($res, 'same-guest', 1)" "ok ok"
check "premade: another guest's 7 seats do not count" "SELECT code FROM booking.reserve_seat($res, 'other-guest', 7)" ok
check "premade: set_guest_limit answers ok" "SELECT code FROM booking.set_guest_limit($res, $LIMIT)" ok
round $((PLAIN_ROUNDS + 3)) premade "$res" $((LIMIT - 5))

# 20 holds of the guest that lapse before the race; in one statement (well
# within the second) the 20 live holds count, so a 21st is refused
res=$(new_limited "lapsed holds")
check "lapsed: 20 holds of one seat made, a 21st refused with guest_limit" \
	"SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT (r).code, count(*) n FROM (
	   SELECT booking.reserve_seat($res, 'same-guest', 1, hold => '1 second') r FROM generate_series(1, $((LIMIT + 1)))) s GROUP BY 1) t" \
	"guest_limit=1, ok=$LIMIT"
round $((PLAIN_ROUNDS + 4)) lapsed "$res" $LIMIT
sleep 1.2
check_true "lapsed: every hold's expiry is in the past" \
	"SELECT count(*) = $LIMIT AND max(expires_at) < clock_timestamp() FROM booking.bookings WHERE resource_id = $res"

run_pgbench "$ROUNDS rounds of $CLIENTS clients" -c $CLIENTS -j 2 -t $((ROUNDS * PER_ROUND)) \
	-D n=0 -D clients=$CLIENTS -f guest_limit_race.pgb

check "lapsed: the 20 lapsed holds are not confirmed" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $res AND expires_at IS NOT NULL AND status = 'confirmed'" 0

########################################################################
# the totals, per round
########################################################################
echo "# answers: $(sql "SELECT string_agg(kind || ': ' || a, '; ' ORDER BY kind) FROM (
	SELECT k.kind, string_agg(code || '=' || n, ', ' ORDER BY code) a FROM (
	  SELECT r.kind, l.code, count(*) n FROM stress_log l JOIN stress_rounds r USING (round) GROUP BY 1, 2) k GROUP BY 1) s")"

# per_round NAME EXPR: EXPR (over the row r of stress_rounds) must be true in
# every round; the rounds where it is not are listed
per_round() {
	check "$1" "SELECT coalesce(string_agg('round ' || round, ', ' ORDER BY round), 'none')
		FROM stress_rounds r WHERE ($2) IS NOT TRUE" none
}
# the guest's blocking seats of round r's resource
guest_blocking="SELECT coalesce(sum(b.quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.resource AND b.guest = 'same-guest'
	AND (b.status = 'confirmed' OR (b.status = 'pending' AND b.expires_at > clock_timestamp()))"
all_blocking="SELECT coalesce(sum(b.quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.resource AND b.status IN ('pending', 'confirmed')"
n_code() { echo "(SELECT count(*) FROM stress_log l WHERE l.round = r.round AND l.code = '$1')"; }

check "rounds: $PLAIN_ROUNDS plain, 2 striped, 1 lapsed, 1 premade" \
	"SELECT string_agg(kind || '=' || n, ', ' ORDER BY kind) FROM (SELECT kind, count(*) n FROM stress_rounds GROUP BY kind) s" \
	"lapsed=1, plain=$PLAIN_ROUNDS, premade=1, striped=2"
per_round "every round: $CLIENTS clients met at its barrier" "(SELECT arrived FROM stress_barrier x WHERE x.round = r.round) = $CLIENTS"
per_round "every round: $ATTEMPTS attempts answered, from $CLIENTS connections" \
	"(SELECT count(*) || '/' || count(DISTINCT pid) FROM stress_log l WHERE l.round = r.round) = '$ATTEMPTS/$CLIENTS'"
per_round "every round: answers only ok, guest_limit or busy" \
	"NOT EXISTS (SELECT 1 FROM stress_log l WHERE l.round = r.round AND l.code NOT IN ('ok', 'guest_limit', 'busy'))"
per_round "every round: no busy (a 30 s lock wait)" "$(n_code busy) = 0"
per_round "every round: exactly the expected number of ok answers (20; 15 where 5 were held before)" "$(n_code ok) = r.expect"
per_round "every round: all the other attempts answered guest_limit" "$(n_code guest_limit) = $ATTEMPTS - r.expect"
per_round "every round: the guest holds exactly $LIMIT seats (sum of its blocking quantities)" "($guest_blocking) = $LIMIT"
per_round "every round: each ok answer names its own confirmed one-seat booking of the guest" \
	"(SELECT count(DISTINCT b.id) FROM stress_log l JOIN booking.bookings b ON b.id = l.booking_id
	   WHERE l.round = r.round AND l.code = 'ok' AND b.resource_id = r.resource AND b.guest = 'same-guest'
	     AND b.quantity = 1 AND b.status = 'confirmed' AND b.expires_at IS NULL) = r.expect"
per_round "every round: no booking made in the race without its ok answer" \
	"(SELECT count(*) FROM booking.bookings b WHERE b.resource_id = r.resource AND b.expires_at IS NULL)
	 = r.expect + (CASE r.kind WHEN 'premade' THEN 3 ELSE 0 END)"
per_round "every round: refusals name no booking" \
	"NOT EXISTS (SELECT 1 FROM stress_log l WHERE l.round = r.round AND l.code <> 'ok' AND l.booking_id IS NOT NULL)"
per_round "every unstriped round: resources.taken equals the sum of blocking quantities" \
	"(SELECT s.stripes > 1 OR s.taken = ($all_blocking) FROM booking.resources s WHERE s.id = r.resource)"
per_round "every striped round: capacity - sum(stripes.free) equals the sum of blocking quantities" \
	"(SELECT s.stripes <= 1 OR s.capacity - (SELECT sum(f.free) FROM booking.resource_stripes f WHERE f.resource_id = s.id) = ($all_blocking)
	    FROM booking.resources s WHERE s.id = r.resource)"
per_round "every round: seats_left = capacity - the seats held (confirmed or live holds)" \
	"booking.seats_left(r.resource) = $CAPACITY - (SELECT coalesce(sum(b.quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.resource
	   AND (b.status = 'confirmed' OR (b.status = 'pending' AND b.expires_at > clock_timestamp())))"
check "the striped rounds have 8 stripes" \
	"SELECT string_agg(s.stripes::text, ',') FROM stress_rounds r JOIN booking.resources s ON s.id = r.resource WHERE r.kind = 'striped'" "8,8"

########################################################################
# one round at REPEATABLE READ (retry is an answer there)
########################################################################
RR_PER_CLIENT=10
res=$(new_limited "repeatable read")
PGOPTIONS="${PGOPTIONS:-} -c default_transaction_isolation=repeatable\\ read" \
	run_pgbench "repeatable read round" -c $CLIENTS -j 2 -t $RR_PER_CLIENT -D sale="$res" -f guest_limit_rr.pgb
echo "# repeatable read answers: $(sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_log WHERE round = 0 GROUP BY code) s")"
check "repeatable read: every call ran at REPEATABLE READ" \
	"SELECT count(*) FROM stress_log WHERE round = 0 AND iso IS DISTINCT FROM 'repeatable read'" 0
check "repeatable read: every attempt answered, only ok, guest_limit, retry or busy" \
	"SELECT count(*) || '/' || count(*) FILTER (WHERE code IN ('ok', 'guest_limit', 'retry', 'busy')) FROM stress_log WHERE round = 0" \
	"$((CLIENTS * RR_PER_CLIENT))/$((CLIENTS * RR_PER_CLIENT))"
check "repeatable read: guest_limit was reached, and then exactly $LIMIT seats are held, one ok answer per booking" \
	"SELECT (SELECT count(*) FROM stress_log WHERE round = 0 AND code = 'guest_limit') > 0
	    AND (SELECT coalesce(sum(quantity), 0) FROM booking.bookings WHERE resource_id = $res AND status IN ('pending', 'confirmed')) = $LIMIT
	    AND (SELECT count(*) FROM booking.bookings WHERE resource_id = $res) = $LIMIT
	    AND (SELECT count(DISTINCT l.booking_id) FROM stress_log l JOIN booking.bookings b ON b.id = l.booking_id
	          WHERE l.round = 0 AND l.code = 'ok' AND b.resource_id = $res) = $LIMIT
	    AND (SELECT count(*) FROM stress_log WHERE round = 0 AND code = 'ok') = $LIMIT" t
check "repeatable read: resources.taken = $LIMIT" "SELECT taken FROM booking.resources WHERE id = $res" $LIMIT

stress_done
