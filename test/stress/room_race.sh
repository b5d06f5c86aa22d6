#!/usr/bin/env bash
# room_race.sh: range inventory under real concurrency (pgbench).
#  1. 64 clients book random 1..3 night stays on 3 rooms over a 30-day
#     window (with some cancellations so the calendar keeps changing):
#     no two blocking bookings of a room overlap, no transaction fails,
#     no deadlock is ever detected.
#  2. 32 clients book random subsets of 6 rooms, listed in random order, as
#     groups (reserve_stays): no failure, no deadlock, and every group is
#     all or nothing.
set -u
cd "$(dirname "$0")"
. ./lib.bash

SECONDS_PER_PHASE=${ROOM_RACE_SECONDS:-10}
stress_db booking_stress_room_race

sql "CREATE TABLE stress_log (kind text NOT NULL, code text NOT NULL, booking_id bigint, during tstzrange, rooms bigint[])
     ; CREATE TABLE stress_rooms (kind text NOT NULL, phase int NOT NULL, n int NOT NULL, id bigint NOT NULL)
     ; INSERT INTO stress_rooms SELECT 'stay', 1, n, booking.create_resource('room ' || n) FROM generate_series(1, 3) n
     ; INSERT INTO stress_rooms SELECT 'group', 2, n, booking.create_resource('family room ' || n) FROM generate_series(1, 6) n" >/dev/null || exit 1

deadlocks() {
	sql "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()"
}

# no two blocking bookings of the same room overlap
no_overlap_query="SELECT count(*) FROM booking.bookings a JOIN booking.bookings b
	ON a.resource_id = b.resource_id AND a.id < b.id AND a.during && b.during
	WHERE a.status IN ('pending', 'confirmed') AND b.status IN ('pending', 'confirmed')"

codes() {
	echo "# $1 answers: $(sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_log WHERE kind = '$1' GROUP BY code) s")"
}

########################################################################
# 1. single stays, 64 clients, 3 rooms
########################################################################
before=$(deadlocks)
run_pgbench "stays" -c 64 -j 2 -T "$SECONDS_PER_PHASE" -D phase=1 \
	-f room_race_stay.pgb@8 -f room_race_cancel.pgb@2
codes stay
codes cancel
after=$(deadlocks)
if [ "$before" = "$after" ]; then pass "stays: pg_stat_database.deadlocks unchanged ($after)"
else fail "stays: pg_stat_database.deadlocks unchanged (before $before, after $after)"; fi

check "stays: zero overlapping blocking pairs" "$no_overlap_query" 0
check_true "stays: some stays were booked and some refused" \
	"SELECT count(*) FILTER (WHERE code = 'ok') > 0 AND count(*) FILTER (WHERE code <> 'ok') > 0 FROM stress_log WHERE kind = 'stay'"
check "stays: every answer is ok, unavailable, just_taken or busy" \
	"SELECT count(*) FROM stress_log WHERE kind = 'stay' AND code NOT IN ('ok', 'unavailable', 'just_taken', 'busy')" 0
check "stays: every cancel answer is ok or invalid_state" \
	"SELECT count(*) FROM stress_log WHERE kind = 'cancel' AND code NOT IN ('ok', 'invalid_state')" 0
check "stays: one booking row per ok answer, with the requested range" \
	"SELECT (SELECT count(*) FROM booking.bookings b JOIN stress_rooms r ON r.id = b.resource_id AND r.kind = 'stay')
	      = (SELECT count(*) FROM stress_log l JOIN booking.bookings b ON b.id = l.booking_id AND b.during = l.during
	          WHERE l.kind = 'stay' AND l.code = 'ok')" t
check "stays: every booking is confirmed or cancelled" \
	"SELECT count(*) FROM booking.bookings WHERE status NOT IN ('confirmed', 'cancelled')" 0
check "stays: each cancelled booking was cancelled by exactly one ok cancel" \
	"SELECT (SELECT count(*) FROM booking.bookings WHERE status = 'cancelled')
	      = (SELECT count(DISTINCT booking_id) FROM stress_log WHERE kind = 'cancel' AND code = 'ok')
	    AND (SELECT count(DISTINCT booking_id) FROM stress_log WHERE kind = 'cancel' AND code = 'ok')
	      = (SELECT count(*) FROM stress_log WHERE kind = 'cancel' AND code = 'ok')" t
check "stays: every range is stored half-open" \
	"SELECT count(*) FROM booking.bookings WHERE NOT (lower_inc(during) AND NOT upper_inc(during))" 0

########################################################################
# 2. groups, 32 clients, 6 rooms
########################################################################
sql "DELETE FROM stress_log" >/dev/null
before=$(deadlocks)
run_pgbench "groups" -c 32 -j 2 -T "$SECONDS_PER_PHASE" -D phase=2 \
	-f room_race_group.pgb@8 -f room_race_cancel.pgb@2
codes group
codes cancel
after=$(deadlocks)
if [ "$before" = "$after" ]; then pass "groups: pg_stat_database.deadlocks unchanged ($after)"
else fail "groups: pg_stat_database.deadlocks unchanged (before $before, after $after)"; fi

group_rows="booking.bookings b JOIN stress_rooms r ON r.id = b.resource_id AND r.kind = 'group'"
check "groups: zero overlapping blocking pairs" "$no_overlap_query" 0
check_true "groups: some groups were booked and some refused" \
	"SELECT count(*) FILTER (WHERE code = 'ok') > 0 AND count(*) FILTER (WHERE code <> 'ok') > 0 FROM stress_log WHERE kind = 'group'"
check "groups: every answer is ok, unavailable, just_taken or busy" \
	"SELECT count(*) FROM stress_log WHERE kind = 'group' AND code NOT IN ('ok', 'unavailable', 'just_taken', 'busy')" 0
check "groups: every cancel answer is ok or invalid_state" \
	"SELECT count(*) FROM stress_log WHERE kind = 'cancel' AND code NOT IN ('ok', 'invalid_state')" 0
check "groups: every ok group has exactly its requested rooms, guest and range, and names the lowest room's booking" \
	"SELECT count(*) FROM stress_log l
	   LEFT JOIN booking.bookings first ON first.id = l.booking_id
	  WHERE l.kind = 'group' AND l.code = 'ok'
	    AND (first.id IS NULL OR first.group_id IS NULL
	         OR first.resource_id <> (SELECT min(x) FROM unnest(l.rooms) x)
	         OR (SELECT array_agg(m.resource_id ORDER BY m.resource_id) FROM booking.bookings m WHERE m.group_id = first.group_id)
	            IS DISTINCT FROM (SELECT array_agg(x ORDER BY x) FROM unnest(l.rooms) x)
	         OR EXISTS (SELECT 1 FROM booking.bookings m WHERE m.group_id = first.group_id
	                     AND (m.guest <> first.guest OR m.during <> l.during)))" 0
check "groups: no booking row outside an ok group (no partial group left behind)" \
	"SELECT (SELECT count(*) FROM $group_rows)
	      = (SELECT coalesce(sum(cardinality(rooms)), 0) FROM stress_log WHERE kind = 'group' AND code = 'ok')
	    AND (SELECT count(DISTINCT b.group_id) FROM $group_rows)
	      = (SELECT count(*) FROM stress_log WHERE kind = 'group' AND code = 'ok')
	    AND (SELECT count(*) FROM $group_rows WHERE b.group_id IS NULL) = 0" t
check "groups: every booking is confirmed or cancelled" \
	"SELECT count(*) FROM $group_rows WHERE b.status NOT IN ('confirmed', 'cancelled')" 0

stress_done
