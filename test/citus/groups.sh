#!/usr/bin/env bash
# groups.sh (suite item 4): group bookings across workers.  8 rooms, 4 on
# each worker; 32 pgbench clients book groups of 2..4 of them, listed in
# random order, through the coordinator (reserve_stays; a group over both
# workers is a distributed transaction, committed in two phases), with some
# cancellations.  Every group is all or nothing, no deadlock or raw error
# escapes (pgbench: no failed transaction, no aborted client; no deadlock
# counted on any node), no blocking stays overlap, and no prepared
# transaction is left behind.  Last, a held group over both workers: its
# members share one expires_at.
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

RUN_SECONDS=${CITUS_GROUPS_SECONDS:-15}
citus_db booking_citus_groups

# rooms until each worker holds 4 of them (ids hash to shards)
q "CREATE TABLE citus_rooms (id bigint PRIMARY KEY, node text NOT NULL)" >/dev/null
for i in $(seq 1 64); do
	[ "$(q "SELECT count(*) FILTER (WHERE node = 'w1') >= 4 AND count(*) FILTER (WHERE node = 'w2') >= 4 FROM citus_rooms")" = t ] && break
	room=$(q "SELECT booking.create_resource('family room $i')")
	node=$(worker_of "$room")
	[ "$(q "SELECT count(*) FROM citus_rooms WHERE node = '$node'")" -lt 4 ] &&
		q "INSERT INTO citus_rooms VALUES ($room, '$node')" >/dev/null
done
check "4 rooms on each worker" "SELECT string_agg(node || '=' || n, ' ' ORDER BY node) FROM (SELECT node, count(*) n FROM citus_rooms GROUP BY node) s" "w1=4 w2=4"
echo "# rooms: $(q "SELECT string_agg(id || '@' || node, ' ' ORDER BY id) FROM citus_rooms")"

deadlocks() {
	local node sum=0 n
	for node in $CITUS_NODES; do
		rehearsal && [ "$node" != coord ] && continue
		n=$(qn "$node" "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
		sum=$((sum + n))
	done
	echo "$sum"
}

before=$(deadlocks)
run_pgbench "groups" -c 32 -j 2 -T "$RUN_SECONDS" -D kind=group -f group.pgb@8 -f cancel.pgb@2
answers groups "kind = 'group'"
answers cancels "kind = 'cancel'"
check_eq "no deadlock counted on any node" "$(deadlocks)" "$before"
snapshot

check_true "some groups were booked and some refused" \
	"SELECT count(*) FILTER (WHERE code = 'ok') > 0 AND count(*) FILTER (WHERE code <> 'ok') > 0 FROM citus_log WHERE kind = 'group'"
check "every answer is ok, unavailable, just_taken or busy" \
	"SELECT count(*) FROM citus_log WHERE kind = 'group' AND code NOT IN ('ok', 'unavailable', 'just_taken', 'busy')" 0
check "every cancel answer is ok, invalid_state or busy (not_found only before any group)" \
	"SELECT count(*) FROM citus_log WHERE kind = 'cancel'
	   AND code NOT IN ('ok', 'invalid_state', 'busy') AND NOT (code = 'not_found' AND booking_id = 0)" 0
check_true "some ok groups span both workers" \
	"SELECT count(*) > 0 FROM citus_log l WHERE kind = 'group' AND code = 'ok'
	   AND (SELECT count(DISTINCT r.node) FROM citus_rooms r WHERE r.id = ANY (l.rooms)) = 2"
check "every ok group has exactly its requested rooms, guest and range, and names the lowest room's booking" \
	"SELECT count(*) FROM citus_log l
	   LEFT JOIN chk_bookings first ON first.id = l.booking_id
	  WHERE l.kind = 'group' AND l.code = 'ok'
	    AND (first.id IS NULL OR first.group_id IS NULL
	         OR first.resource_id <> (SELECT min(x) FROM unnest(l.rooms) x)
	         OR (SELECT array_agg(m.resource_id ORDER BY m.resource_id) FROM chk_bookings m WHERE m.group_id = first.group_id)
	            IS DISTINCT FROM (SELECT array_agg(x ORDER BY x) FROM unnest(l.rooms) x)
	         OR EXISTS (SELECT 1 FROM chk_bookings m WHERE m.group_id = first.group_id
	                     AND (m.guest <> l.guest OR m.during <> l.during)))" 0
check "no booking row outside an ok group (no partial group left behind)" \
	"SELECT (SELECT count(*) FROM chk_bookings)
	      = (SELECT coalesce(sum(cardinality(rooms)), 0) FROM citus_log WHERE kind = 'group' AND code = 'ok')
	    AND (SELECT count(DISTINCT group_id) FROM chk_bookings)
	      = (SELECT count(*) FROM citus_log WHERE kind = 'group' AND code = 'ok')
	    AND (SELECT count(*) FROM chk_bookings WHERE group_id IS NULL) = 0" t
check "no refused group left a row" \
	"SELECT count(*) FROM chk_bookings b JOIN citus_log l ON l.guest = b.guest WHERE l.code <> 'ok'" 0
check "every booking is confirmed or cancelled" \
	"SELECT count(*) FROM chk_bookings WHERE status NOT IN ('confirmed', 'cancelled')" 0
check_invariants "after the groups"
check_no_prepared "after the groups"

# a held group over both workers: every member lapses at the expiry the
# answer names (each node used to add the hold to its own clock)
w1=$(q "SELECT min(id) FROM citus_rooms WHERE node = 'w1'")
w2=$(q "SELECT min(id) FROM citus_rooms WHERE node = 'w2'")
held=$(q "SELECT booking_id FROM booking.reserve_stays(ARRAY[$w1, $w2], 'holder', '[2040-01-01, 2040-01-02)', '1 hour')")
check "a held group over both workers: 2 pending members with one expires_at" \
	"SELECT count(*) || ' ' || count(DISTINCT expires_at) FROM booking.bookings WHERE group_id = $held AND status = 'pending'" "2 1"

citus_done
