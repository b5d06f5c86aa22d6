#!/usr/bin/env bash
# room_race.sh (suite item 3): range inventory through the coordinator.
#  1. 64 pgbench clients book random 1..3 night stays on 3 rooms over a
#     30-day window, with some cancellations so the calendar keeps changing.
#  2. 64 clients book any unit of a pool of 5 rooms (reserve_stay_any), with
#     cancellations.
# Checked cluster-wide: zero overlapping blocking pairs, no transaction
# fails, no deadlock on any node, every answer is a documented code, one
# booking per ok answer with the range asked for, and a pool booking is on a
# unit of its pool.  The pool's units live in the pool's shard (a pool call
# is served by one worker).
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

SECONDS_PER_PHASE=${CITUS_ROOM_RACE_SECONDS:-10}
citus_db booking_citus_room_race

room1=$(q "SELECT booking.create_resource('room 1')")
room2=$(q "SELECT booking.create_resource('room 2')")
room3=$(q "SELECT booking.create_resource('room 3')")
pool=$(q "SELECT booking.create_resource('double rooms', 0)")
units=$(for i in 1 2 3 4 5; do q "SELECT booking.create_resource('double $i', 1, $pool)"; done | paste -sd, -)
echo "# rooms $room1 ($(worker_of "$room1")), $room2 ($(worker_of "$room2")), $room3 ($(worker_of "$room3")); pool $pool ($(worker_of "$pool")) with units $units"

# pg_stat_database.deadlocks of the script's database on every node
deadlocks() {
	local node sum=0 n
	for node in $CITUS_NODES; do
		rehearsal && [ "$node" != coord ] && continue
		n=$(qn "$node" "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
		sum=$((sum + n))
	done
	echo "$sum"
}

if ! rehearsal; then
	check "the pool's units are in the pool's shard" \
		"SELECT count(DISTINCT get_shard_id_for_distribution_column('booking.resources', home))
		   FROM booking.resources WHERE id IN ($pool, $units)" 1
fi

########################################################################
# 1. single stays, 64 clients, 3 rooms
########################################################################
before=$(deadlocks)
run_pgbench "stays" -c 64 -j 2 -T "$SECONDS_PER_PHASE" \
	-D room1="$room1" -D room2="$room2" -D room3="$room3" -D kind=stay \
	-f stay.pgb@8 -f cancel.pgb@2
answers stays "kind = 'stay'"
answers cancels "kind = 'cancel'"
check_eq "stays: no deadlock on any node" "$(deadlocks)" "$before"
snapshot
check "stays: zero overlapping blocking pairs (cluster-wide)" "$overlap_sql" 0
check_true "stays: some stays were booked and some refused" \
	"SELECT count(*) FILTER (WHERE code = 'ok') > 0 AND count(*) FILTER (WHERE code <> 'ok') > 0 FROM citus_log WHERE kind = 'stay'"
check "stays: every answer is ok, unavailable, just_taken or busy" \
	"SELECT count(*) FROM citus_log WHERE kind = 'stay' AND code NOT IN ('ok', 'unavailable', 'just_taken', 'busy')" 0
check "stays: every cancel answer is ok, invalid_state or busy (not_found only before any stay)" \
	"SELECT count(*) FROM citus_log WHERE kind = 'cancel'
	   AND code NOT IN ('ok', 'invalid_state', 'busy') AND NOT (code = 'not_found' AND booking_id = 0)" 0
check "stays: one booking row per ok answer, on the room and with the range asked for" \
	"SELECT (SELECT count(*) FROM chk_bookings WHERE resource_id IN ($room1, $room2, $room3))
	      = (SELECT count(DISTINCT b.id) FROM citus_log l JOIN chk_bookings b
	           ON b.id = l.booking_id AND b.resource_id = l.resource_id AND b.during = l.during
	          WHERE l.kind = 'stay' AND l.code = 'ok')
	    AND (SELECT count(*) FROM citus_log WHERE kind = 'stay' AND code = 'ok')
	      = (SELECT count(*) FROM chk_bookings WHERE resource_id IN ($room1, $room2, $room3))" t
check "stays: each cancelled booking was cancelled by exactly one ok cancel" \
	"SELECT (SELECT count(*) FROM chk_bookings WHERE status = 'cancelled')
	      = (SELECT count(*) FROM citus_log WHERE kind = 'cancel' AND code = 'ok')
	    AND (SELECT count(*) FROM citus_log WHERE kind = 'cancel' AND code = 'ok')
	      = (SELECT count(DISTINCT booking_id) FROM citus_log WHERE kind = 'cancel' AND code = 'ok')" t
check "stays: every booking is confirmed or cancelled" \
	"SELECT count(*) FROM booking.bookings WHERE status NOT IN ('confirmed', 'cancelled')" 0

########################################################################
# 2. any unit of a pool, 64 clients
########################################################################
q "DELETE FROM citus_log WHERE kind = 'cancel'" >/dev/null
before=$(deadlocks)
run_pgbench "pool" -c 64 -j 2 -T "$SECONDS_PER_PHASE" -D pool="$pool" -D kind=any \
	-f stay_any.pgb@8 -f cancel.pgb@2
answers pool "kind = 'any'"
answers cancels "kind = 'cancel'"
check_eq "pool: no deadlock on any node" "$(deadlocks)" "$before"
snapshot
check "pool: zero overlapping blocking pairs (cluster-wide)" "$overlap_sql" 0
check_true "pool: some stays were booked and some refused" \
	"SELECT count(*) FILTER (WHERE code = 'ok') > 0 AND count(*) FILTER (WHERE code <> 'ok') > 0 FROM citus_log WHERE kind = 'any'"
check "pool: every answer is ok, sold_out or busy" \
	"SELECT count(*) FROM citus_log WHERE kind = 'any' AND code NOT IN ('ok', 'sold_out', 'busy')" 0
check "pool: every cancel answer is ok, invalid_state or busy (not_found only before any stay)" \
	"SELECT count(*) FROM citus_log WHERE kind = 'cancel'
	   AND code NOT IN ('ok', 'invalid_state', 'busy') AND NOT (code = 'not_found' AND booking_id = 0)" 0
check "pool: each ok answer names a booking on a unit of the pool with the range asked for" \
	"SELECT count(*) FROM citus_log l LEFT JOIN chk_bookings b ON b.id = l.booking_id
	  WHERE l.kind = 'any' AND l.code = 'ok'
	    AND (b.id IS NULL OR b.during <> l.during OR b.resource_id NOT IN ($units))" 0
check "pool: one booking row per ok answer, none on the pool row itself" \
	"SELECT (SELECT count(*) FROM chk_bookings WHERE resource_id IN ($pool, $units))
	      = (SELECT count(DISTINCT booking_id) FROM citus_log WHERE kind = 'any' AND code = 'ok')
	    AND (SELECT count(*) FROM citus_log WHERE kind = 'any' AND code = 'ok')
	      = (SELECT count(DISTINCT booking_id) FROM citus_log WHERE kind = 'any' AND code = 'ok')
	    AND (SELECT count(*) FROM chk_bookings WHERE resource_id = $pool) = 0" t
check "pool: every unit is booked at some time (the pool spreads over its units)" \
	"SELECT count(DISTINCT resource_id) FROM chk_bookings WHERE resource_id IN ($units)" 5
check_invariants "after both phases"

citus_done
