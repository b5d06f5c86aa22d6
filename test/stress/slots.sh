#!/usr/bin/env bash
# slots.sh: capacity over time under real concurrency (reserve_slot, 0.9.0).
#  1. 64 clients book random slots (a 5-minute step of a 4-hour window, 5
#     to 90 minutes long, 1 to 3 units) on one resource of capacity 5, for
#     20 s (SLOTS_SECONDS).  Each transaction calls reserve_slot, then
#     logs the answer by a second statement, then commits.  Afterwards:
#     - a sweep over every bound of every blocking slot booking finds no
#       instant where they hold more than 5 units;
#     - every ok answer has exactly one booking row, with its range and
#       quantity, and the resource has no other booking;
#     - every sold_out message names an instant of the asked range and
#       fewer free units there than were asked for, and the final state
#       justifies it: the bookings at that instant now hold at least
#       5 - free units.  Nothing is cancelled and no hold lapses in this
#       phase, so the bookings the call saw under the lock are a subset of
#       the final ones and the use at any instant only grows.  This check
#       needs no commit timestamps (PostgreSQL keeps none by default) and
#       no assumption about the order of the decisions; it catches a
#       refusal made on a use that was never there;
#     - every sold_out message is exactly the one the state at its
#       decision calls for: the earliest instant of the asked range where
#       fewer units than asked were free, and how many were free there.
#       That state is rebuilt from the log: the log row is written after
#       the call, in its transaction, so its clock_timestamp() (at) is read
#       while the call holds the resource's row lock, which every
#       reserve_slot takes and keeps until commit, refusals included.  The
#       holders of that lock follow each other, so ordering the answers by
#       at orders the decisions, and a refusal saw exactly the ok answers
#       logged before it.  The final state alone cannot catch a refusal
#       that names the wrong instant: by the end the resource is full
#       almost everywhere;
#     - there were far more attempts than units (some ok, many more
#       sold_out), and every answer is ok, sold_out or busy.
#  2. 64 clients on a second resource of capacity 5 for 6 s
#     (SLOTS_CHURN_SECONDS): the same slots, half of them 10-minute holds,
#     with confirms and cancels of random bookings beside them.  No
#     instant is over capacity (every hold is still running, so every
#     pending or confirmed booking blocks), one booking per ok answer,
#     every booking's status follows from the answers, and every sold_out
#     message is well formed.  With cancels, the final state says nothing
#     about the state a refusal saw, so there is no justification check.
set -u
cd "$(dirname "$0")"
. ./lib.bash

SECONDS_PHASE1=${SLOTS_SECONDS:-20}
SECONDS_PHASE2=${SLOTS_CHURN_SECONDS:-6}
CAPACITY=5
stress_db booking_stress_slots

sql "CREATE TABLE stress_log (id bigserial, phase int NOT NULL, kind text NOT NULL, code text NOT NULL, booking_id bigint,
       during tstzrange, quantity int, held boolean, message text, at timestamptz NOT NULL DEFAULT clock_timestamp())" >/dev/null || exit 1
res1=$(sql "SELECT booking.create_resource('slot room 1', $CAPACITY)") || exit 1
res2=$(sql "SELECT booking.create_resource('slot room 2', $CAPACITY)") || exit 1

# blocking_slots RES: the slot bookings of RES that block (as a FROM item b)
blocking_slots() {
	echo "(SELECT during, quantity FROM booking.bookings
	        WHERE resource_id = $1 AND blocked IS NULL AND during IS NOT NULL
	          AND status IN ('pending', 'confirmed')) b"
}

# over_capacity_query RES: the instants (every lower and upper bound of a
# blocking slot booking: the use changes only there) where the blocking
# slot bookings hold more than the capacity
over_capacity_query() {
	echo "WITH b AS (SELECT * FROM $(blocking_slots "$1")),
	       t AS (SELECT lower(during) AS t FROM b UNION SELECT upper(during) FROM b)
	  SELECT count(*) FROM t WHERE (SELECT sum(quantity) FROM b WHERE b.during @> t.t) > $CAPACITY"
}

# peak RES: the most units held at one instant
peak() {
	sql "WITH b AS (SELECT * FROM $(blocking_slots "$1")),
	       t AS (SELECT lower(during) AS t FROM b UNION SELECT upper(during) FROM b)
	  SELECT coalesce(max((SELECT sum(quantity) FROM b WHERE b.during @> t.t)), 0) FROM t"
}

# sold_out_rows PHASE: the phase's sold_out answers with the message parsed:
# m[1] the resource, m[2] the units free, m[3] the instant, m[4] the units asked
sold_out_rows() {
	echo "(SELECT l.id, l.at, l.during, l.quantity, p.m
	         FROM stress_log l CROSS JOIN LATERAL regexp_match(l.message,
	              '^Resource ([0-9]+) has ([0-9]+) units? free at (.+); ([0-9]+) (?:was|were) asked for\.\$') AS p(m)
	        WHERE l.phase = $1 AND l.kind = 'reserve' AND l.code = 'sold_out') s"
}

# well_formed_query PHASE RES: sold_out answers whose message does not name
# RES, the asked quantity, an instant of the asked range and fewer free
# units than asked
well_formed_query() {
	echo "SELECT count(*) FROM $(sold_out_rows "$1")
	 WHERE NOT coalesce(s.m[1]::bigint = $2 AND s.m[4]::int = s.quantity
	                    AND s.during @> s.m[3]::timestamptz AND s.m[2]::int < s.quantity, false)"
}

codes() {
	echo "# phase $1 $2 answers: $(sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_log WHERE phase = $1 AND kind = '$2' GROUP BY code) s")"
}

########################################################################
# 1. slots only, 64 clients, one resource of capacity 5
########################################################################
run_pgbench "slots" -c 64 -j 2 -T "$SECONDS_PHASE1" -D res="$res1" -D phase=1 -D holds=0 -f slots_reserve.pgb
# statistics for the checks below, whose plans otherwise guess (and run 10 times longer)
sql "ANALYZE stress_log" >/dev/null
codes 1 reserve
echo "# phase 1: $(sql "SELECT count(*) FROM booking.bookings WHERE resource_id = $res1") bookings, peak use $(peak "$res1") of $CAPACITY"

check "slots: no instant where the blocking slot bookings hold more than $CAPACITY units" \
	"$(over_capacity_query "$res1")" 0
check_true "slots: some slots were booked, and far more were refused as sold_out" \
	"SELECT count(*) FILTER (WHERE code = 'ok') > 0
	    AND count(*) FILTER (WHERE code = 'sold_out') > 10 * count(*) FILTER (WHERE code = 'ok')
	   FROM stress_log WHERE phase = 1"
check "slots: every answer is ok, sold_out or busy" \
	"SELECT count(*) FROM stress_log WHERE phase = 1 AND code NOT IN ('ok', 'sold_out', 'busy')" 0
oks=$(sql "SELECT count(*) FROM stress_log WHERE phase = 1 AND code = 'ok'")
check "slots: every ok answer has exactly one booking row with its id, range and quantity" \
	"SELECT count(*) FROM stress_log l WHERE l.phase = 1 AND l.code = 'ok'
	   AND (SELECT count(*) FROM booking.bookings b WHERE b.id = l.booking_id AND b.resource_id = $res1
	         AND b.during = l.during AND b.quantity = l.quantity AND b.blocked IS NULL) <> 1" 0
check "slots: one booking per ok answer ($oks), and no other" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $res1" "$oks"
check "slots: every booking is confirmed (no hold, no cancel in this phase)" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $res1 AND status <> 'confirmed'" 0
check "slots: every sold_out message names the resource, the asked quantity, an instant of the asked range and fewer free units than asked" \
	"$(well_formed_query 1 "$res1")" 0
check "slots: every sold_out is justified by the final state (at its instant, the bookings now hold at least $CAPACITY - free units)" \
	"SELECT count(*) FROM $(sold_out_rows 1)
	 WHERE NOT coalesce((SELECT coalesce(sum(b.quantity), 0) FROM $(blocking_slots "$res1")
	                      WHERE b.during @> s.m[3]::timestamptz) >= $CAPACITY - s.m[2]::int, false)" 0
# the decisions in lock order: state s is the bookings of the ok answers
# logged at or before s (-infinity: none); the use at an instant changes
# only at a bound of a booking, so the earliest short instant of a range is
# its lower bound or a bound inside it
check "slots: every sold_out names the earliest short instant and the units free there, in the state its decision saw" \
	"WITH ok AS (SELECT at, during, quantity FROM stress_log WHERE phase = 1 AND kind = 'reserve' AND code = 'ok'),
	      states AS (SELECT at AS s FROM ok UNION ALL SELECT '-infinity'),
	      instants AS (SELECT lower(during) AS t FROM stress_log WHERE phase = 1 AND kind = 'reserve'
	                   UNION SELECT upper(during) FROM stress_log WHERE phase = 1 AND kind = 'reserve'),
	      use AS (SELECT states.s, instants.t,
	                     (SELECT coalesce(sum(ok.quantity), 0) FROM ok WHERE ok.at <= states.s AND ok.during @> instants.t) AS used
	                FROM states CROSS JOIN instants),
	      r AS (SELECT s.id, s.during, s.quantity, s.m,
	                   coalesce((SELECT max(ok.at) FROM ok WHERE ok.at < s.at), '-infinity') AS state
	              FROM $(sold_out_rows 1)),
	      e AS (SELECT r.id, r.m, r.state, min(use.t) AS x FROM r
	              LEFT JOIN use ON use.s = r.state AND r.during @> use.t AND use.used + r.quantity > $CAPACITY
	             GROUP BY r.id, r.m, r.state)
	 SELECT count(*) FROM e LEFT JOIN use ON use.s = e.state AND use.t = e.x
	  WHERE NOT coalesce(e.m[3]::timestamptz = e.x AND e.m[2]::int = $CAPACITY - use.used, false)" 0

########################################################################
# 2. slots, holds, confirms and cancels, 64 clients, a second resource
########################################################################
run_pgbench "churn" -c 64 -j 2 -T "$SECONDS_PHASE2" -D res="$res2" -D phase=2 -D holds=1 \
	-f slots_reserve.pgb@6 -f slots_confirm.pgb@2 -f slots_cancel.pgb@2
codes 2 reserve
codes 2 confirm
codes 2 cancel
echo "# phase 2: $(sql "SELECT string_agg(status || '=' || n, ', ' ORDER BY status) FROM (SELECT status, count(*) n FROM booking.bookings WHERE resource_id = $res2 GROUP BY status) s"), peak use $(peak "$res2") of $CAPACITY"

check "churn: every hold is still running (so every pending booking blocks)" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $res2 AND status = 'pending' AND expires_at <= clock_timestamp()" 0
check "churn: no instant where the blocking slot bookings hold more than $CAPACITY units" \
	"$(over_capacity_query "$res2")" 0
check_true "churn: some holds and slots were booked, confirmed, cancelled and refused" \
	"SELECT count(*) FILTER (WHERE kind = 'reserve' AND code = 'ok' AND held) > 0
	    AND count(*) FILTER (WHERE kind = 'reserve' AND code = 'ok' AND NOT held) > 0
	    AND count(*) FILTER (WHERE kind = 'reserve' AND code = 'sold_out') > 0
	    AND count(*) FILTER (WHERE kind = 'confirm' AND code = 'ok') > 0
	    AND count(*) FILTER (WHERE kind = 'cancel' AND code = 'ok') > 0
	   FROM stress_log WHERE phase = 2"
check "churn: every reserve answer is ok, sold_out or busy; every confirm and cancel answer ok, invalid_state or busy" \
	"SELECT count(*) FROM stress_log WHERE phase = 2
	   AND NOT (kind = 'reserve' AND code IN ('ok', 'sold_out', 'busy')
	            OR kind IN ('confirm', 'cancel') AND code IN ('ok', 'invalid_state', 'busy'))" 0
oks=$(sql "SELECT count(*) FROM stress_log WHERE phase = 2 AND kind = 'reserve' AND code = 'ok'")
check "churn: every ok answer has exactly one booking row with its id, range and quantity" \
	"SELECT count(*) FROM stress_log l WHERE l.phase = 2 AND l.kind = 'reserve' AND l.code = 'ok'
	   AND (SELECT count(*) FROM booking.bookings b WHERE b.id = l.booking_id AND b.resource_id = $res2
	         AND b.during = l.during AND b.quantity = l.quantity AND b.blocked IS NULL) <> 1" 0
check "churn: one booking per ok answer ($oks), and no other" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $res2" "$oks"
check "churn: each cancelled booking was cancelled by exactly one ok cancel" \
	"SELECT (SELECT count(*) FROM booking.bookings WHERE resource_id = $res2 AND status = 'cancelled')
	      = (SELECT count(DISTINCT booking_id) FROM stress_log WHERE phase = 2 AND kind = 'cancel' AND code = 'ok')
	    AND (SELECT count(DISTINCT booking_id) FROM stress_log WHERE phase = 2 AND kind = 'cancel' AND code = 'ok')
	      = (SELECT count(*) FROM stress_log WHERE phase = 2 AND kind = 'cancel' AND code = 'ok')" t
check "churn: every booking's status follows from the answers (cancelled, else confirmed when not held or confirmed, else pending)" \
	"SELECT count(*) FROM booking.bookings b JOIN stress_log r ON r.booking_id = b.id
	   AND r.phase = 2 AND r.kind = 'reserve' AND r.code = 'ok'
	 WHERE b.resource_id = $res2 AND b.status::text <> CASE
	   WHEN EXISTS (SELECT 1 FROM stress_log c WHERE c.phase = 2 AND c.kind = 'cancel' AND c.code = 'ok' AND c.booking_id = b.id) THEN 'cancelled'
	   WHEN NOT r.held OR EXISTS (SELECT 1 FROM stress_log c WHERE c.phase = 2 AND c.kind = 'confirm' AND c.code = 'ok' AND c.booking_id = b.id) THEN 'confirmed'
	   ELSE 'pending' END" 0
check "churn: every sold_out message names the resource, the asked quantity, an instant of the asked range and fewer free units than asked" \
	"$(well_formed_query 2 "$res2")" 0

stress_done
