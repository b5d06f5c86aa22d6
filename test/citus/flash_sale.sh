#!/usr/bin/env bash
# flash_sale.sh (suite item 2): a flash sale through the coordinator.  64
# pgbench clients make 20,032 attempts at one resource of 2,000 seats, once
# one seat per attempt on a plain resource (its counter row), once 1..4 seats
# per attempt on a striped one (set_stripes 16).  Exactly 2,000 seats are
# sold, every attempt gets an answer (ok, sold_out or busy), no transaction
# fails, the counter equals the bookings cluster-wide, and each ok answer
# names a booking of its resource with the quantity asked for.
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

CLIENTS=64
PER_CLIENT=${CITUS_SALE_PER_CLIENT:-313}	# 64 * 313 = 20,032 attempts
ATTEMPTS=$((CLIENTS * PER_CLIENT))
citus_db booking_citus_flash_sale

for mode in plain striped; do
	sale=$(q "SELECT booking.create_resource('flash sale $mode', 2000)")
	if [ "$mode" = striped ]; then
		check "striped: set_stripes answers ok" "SELECT code FROM booking.set_stripes($sale, 16)" ok
		check "striped: 16 stripes hold the 2000 free seats" \
			"SELECT count(*) || ' ' || sum(free) FROM booking.resource_stripes WHERE resource_id = $sale" "16 2000"
		script=sale_random.pgb
	else
		script=sale_one.pgb
	fi
	echo "# $mode: resource $sale on $(worker_of "$sale"), $CLIENTS clients, $ATTEMPTS attempts ($script)"
	run_pgbench "$mode sale" -c $CLIENTS -j 2 -t "$PER_CLIENT" -D sale="$sale" -f $script
	answers "$mode sale" "resource_id = $sale"
	snapshot

	check "$mode: every attempt answered" "SELECT count(*) FROM citus_log WHERE resource_id = $sale" "$ATTEMPTS"
	# busy (503: the lock wait ran out) is a legitimate answer under load;
	# anything else (retry, not_found, ...) is not
	check "$mode: every answer is ok, sold_out or busy" \
		"SELECT count(*) FROM citus_log WHERE resource_id = $sale AND code NOT IN ('ok', 'sold_out', 'busy')" 0
	check "$mode: the ok answers' quantities sum to exactly 2000" \
		"SELECT sum(quantity) FROM citus_log WHERE resource_id = $sale AND code = 'ok'" 2000
	# a distributed aggregate through the coordinator, not the snapshot
	check "$mode: blocking seats sum to exactly 2000 (cluster-wide)" \
		"SELECT coalesce(sum(quantity), 0) FROM booking.bookings WHERE resource_id = $sale AND status IN ('pending', 'confirmed')" 2000
	if [ "$mode" = plain ]; then
		check "plain: resources.taken = 2000" "SELECT taken FROM booking.resources WHERE id = $sale" 2000
		check "plain: exactly 2000 bookings of one seat" \
			"SELECT count(*) FROM booking.bookings WHERE resource_id = $sale AND quantity = 1" 2000
	else
		check "striped: the stripes hold no free seat" \
			"SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = $sale" 0
	fi
	check "$mode: seats_left = 0" "SELECT booking.seats_left($sale)" 0
	check "$mode: every booking is confirmed" \
		"SELECT count(*) FROM booking.bookings WHERE resource_id = $sale AND status <> 'confirmed'" 0
	check "$mode: one ok answer per booking row" \
		"SELECT (SELECT count(*) FROM citus_log WHERE resource_id = $sale AND code = 'ok')
		      = (SELECT count(*) FROM chk_bookings WHERE resource_id = $sale)" t
	check "$mode: each ok answer names a distinct booking of the resource with the quantity asked for" \
		"SELECT count(DISTINCT b.id) = (SELECT count(*) FROM citus_log WHERE resource_id = $sale AND code = 'ok')
		   FROM citus_log l JOIN chk_bookings b ON b.id = l.booking_id
		  WHERE l.resource_id = $sale AND l.code = 'ok' AND b.resource_id = $sale AND b.quantity = l.quantity" t
	check "$mode: booking ids are unique cluster-wide" \
		"SELECT count(*) = count(DISTINCT id) FROM booking.bookings" t
done

# give seats back through cancel (each its own statement) and take them again
sale=$(q "SELECT id FROM booking.resources WHERE name = 'flash sale striped'")
got=$(gexec "SELECT format('SELECT code FROM booking.cancel(%s)', id) FROM chk_bookings
	WHERE resource_id = $sale ORDER BY id LIMIT 100" | sort | uniq -c | sed 's/^ *//')
check_eq "striped: 100 cancels through the coordinator answer ok" "$got" "100 ok"
freed=$(q "SELECT sum(quantity) FROM (SELECT quantity FROM chk_bookings WHERE resource_id = $sale ORDER BY id LIMIT 100) s")
check "striped: the stripes hold the $freed freed seats" \
	"SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = $sale" "$freed"
check "striped: seats_left is $freed" "SELECT booking.seats_left($sale)" "$freed"
check_invariants "after both sales"

citus_done
