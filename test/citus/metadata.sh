#!/usr/bin/env bash
# metadata.sh (0.8.0): the caller's metadata routed with its booking, read
# back by get_booking, and forget_guest over both workers.  Every call
# through the coordinator.
#  1. One seat resource and one room on each worker.  reserve_seat,
#     reserve_stay, join_waitlist with metadata: the row on the resource's
#     worker, in its shard, holds it; get_booking on the coordinator reads
#     it (one routed query), and no row for an unknown id.
#  2. reserve_seats and reserve_stays over both workers (the coordinator
#     runs each member on its worker through its twin): every member's row
#     holds the metadata.  A keyed pass replays with the same metadata and
#     answers idempotency_mismatch with other metadata.
#  3. The events of those bookings, on the workers' shards, carry it.
#  4. get_booking for a client role whose SELECT on the tables was revoked,
#     also right after its own reservation in the same transaction.
#  5. forget_guest of a guest with bookings on both workers: no row there
#     names it, one pseudonym, one guest_forgotten event per resource.
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

if rehearsal; then
	echo "# REHEARSAL: metadata.sh needs the workers"
	pass "rehearsal"
	citus_done
fi

citus_db booking_citus_metadata
q "SELECT booking.add_consumer('metadata')" >/dev/null

s1=$(resource_on w1 "seats one" 4) && s2=$(resource_on w2 "seats two" 4) &&
	r1=$(resource_on w1 "room one") && r2=$(resource_on w2 "room two") &&
	t1=$(resource_on w1 "one seat" 1) ||
	{ fail "resources on both workers"; citus_done; }
pass "a seat resource and a room on each worker, and one seat on w1 ($s1 $s2 $r1 $r2 $t1)"

# 1. one booking each, routed to its resource's worker
check "reserve_seat, reserve_stay and a full resource's join_waitlist with metadata: ok" \
	"SELECT code FROM booking.reserve_seat($s1, 'ann', 2, metadata => '{\"order\": \"S1\"}');
	 SELECT code FROM booking.reserve_stay($r2, 'ann', '[2031-01-01, 2031-01-03)', metadata => '{\"order\": \"R2\"}');
	 SELECT code FROM booking.reserve_seat($t1, 'dee');
	 SELECT code FROM booking.join_waitlist($t1, 'bea', 1, metadata => '{\"order\": \"W1\", \"note\": null}')" \
	"ok
ok
ok
waitlisted"
for spec in "$s1:S1" "$r2:R2" "$t1:W1"; do
	res=${spec%%:*}
	order=${spec#*:}
	node=$(worker_of "$res")
	shard=$(q "SELECT get_shard_id_for_distribution_column('booking.bookings', (SELECT home FROM booking.resources WHERE id = $res))")
	check_on "$node" "the booking of order $order is on $node, in its resource's shard, with its metadata" \
		"SELECT count(*) FROM booking.bookings_$shard WHERE resource_id = $res AND metadata ->> 'order' = '$order'" 1
done
ann_seat=$(q "SELECT id FROM booking.bookings WHERE resource_id = $s1 AND guest = 'ann'")
check "get_booking on the coordinator reads a worker's row, metadata with its null inside" \
	"SELECT guest, quantity, status, metadata FROM booking.get_booking($ann_seat)" \
	'ann|2|confirmed|{"order": "S1"}'
# a call inside a query over a distributed table would be pushed down to
# the shards: the id first, then the call as a statement of its own
bea=$(q "SELECT id FROM booking.bookings WHERE guest = 'bea'")
check "get_booking of the waitlist entry keeps the null inside its metadata" \
	"SELECT status, metadata FROM booking.get_booking($bea)" \
	'waiting|{"note": null, "order": "W1"}'
check "get_booking of an unknown id: no row" "SELECT count(*) FROM booking.get_booking(987654321)" 0

# 2. groups over both workers: each member's row on its worker holds it
check "reserve_seats over both workers, keyed, with metadata: ok" \
	"SELECT code FROM booking.reserve_seats(ARRAY[$s2, $s1], 'cal', ARRAY[1, 0 + 1],
	   idempotency_key => 'pass-1', metadata => '{\"order\": \"P\"}')" "ok"
check "reserve_stays over both workers with metadata: ok" \
	"SELECT code FROM booking.reserve_stays(ARRAY[$r1, $r2], 'cal', '[2031-02-01, 2031-02-02)',
	   metadata => '{\"order\": \"G\"}')" "ok"
check "every member of both groups holds its metadata, on the two workers" \
	"SELECT metadata ->> 'order', count(*), count(DISTINCT group_id) FROM booking.bookings
	  WHERE guest = 'cal' GROUP BY 1 ORDER BY 1" "G|2|1
P|2|1"
check "the keyed pass replays with the same metadata, and not with other metadata" \
	"SELECT code, replayed FROM booking.reserve_seats(ARRAY[$s1, $s2], 'cal', ARRAY[1, 1],
	   idempotency_key => 'pass-1', metadata => '{\"order\": \"P\"}');
	 SELECT code, replayed FROM booking.reserve_seats(ARRAY[$s1, $s2], 'cal', ARRAY[1, 1],
	   idempotency_key => 'pass-1', metadata => '{\"order\": \"Q\"}')" \
	"ok|t
idempotency_mismatch|f"

# 3. the events, on the workers' shards, carry it
check "every event of a booking with metadata carries it, as given" \
	"SELECT count(*), count(*) FILTER (WHERE e.payload -> 'metadata' = b.metadata)
	   FROM booking.events e JOIN booking.bookings b ON b.home = e.home AND b.id = e.booking_id
	  WHERE b.metadata IS NOT NULL" "7|7"

# 4. a client without SELECT on the tables
q "CREATE ROLE booking_citus_meta NOLOGIN" >/dev/null 2>&1
q "SELECT booking.grant_client('booking_citus_meta')" >/dev/null
q "REVOKE SELECT ON booking.resources, booking.bookings FROM booking_citus_meta" >/dev/null
check "get_booking as a client whose SELECT on the tables was revoked" \
	"SET ROLE booking_citus_meta; SELECT guest, metadata ->> 'order' FROM booking.get_booking($ann_seat)" "ann|S1"

# Citus refuses a client's own read of a shard that a SECURITY DEFINER call
# wrote in the same transaction (25001, scale-out.md); get_booking runs as
# the owner too, so a client reads what it just booked
s3=$(resource_on w2 "seats three" 4)
got=$(printf '%s\n' "BEGIN;" "SET LOCAL ROLE booking_citus_meta;" \
	"SELECT booking_id AS bid FROM booking.reserve_seat(${s3:-0}, 'dan', 1, metadata => '{\"order\": \"T\"}') \\gset" \
	"SELECT guest || '|' || status || '|' || (metadata ->> 'order') FROM booking.get_booking(:bid);" "COMMIT;" |
	npsql coord -At -d "$CITUS_DB" 2>&1)
if [ "$got" = "dan|confirmed|T" ]; then
	pass "that client, in one transaction: reserve_seat on w2, then get_booking of it (no 25001)"
else fail "that client, in one transaction: reserve_seat on w2, then get_booking of it (no 25001)"; echo "#   got: $got"; fi

# 5. forget_guest over both workers
check "forget_guest of cal: 4 bookings, their 4 events and the stored request" \
	"SELECT booking.forget_guest('cal')" 9
check "no booking or event names cal any more, on any worker; one pseudonym" \
	"SELECT (SELECT count(*) FROM booking.bookings WHERE guest = 'cal') +
	        (SELECT count(*) FROM booking.events WHERE guest = 'cal'),
	        (SELECT count(DISTINCT guest) FROM booking.bookings WHERE guest LIKE 'forgotten-%')" "0|1"
check "one guest_forgotten event per resource touched (four, on both workers)" \
	"SELECT count(*), count(DISTINCT resource_id), count(DISTINCT home) > 1 FROM booking.events WHERE kind = 'guest_forgotten'" "4|4|t"

q "DROP OWNED BY booking_citus_meta" >/dev/null 2>&1
q "DROP ROLE booking_citus_meta" >/dev/null 2>&1
citus_done
