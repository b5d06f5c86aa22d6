#!/usr/bin/env bash
# striped_sale.sh: the flash sale of flash_sale.sh on a hot-inventory resource
# (booking.set_stripes(resource, 16)): 64 clients, 20,032 attempts, once one
# seat per attempt, once 1..4.  Exactly 2,000 seats sold, capacity minus the
# stripes' free seats equals the sum of blocking quantities, seats_left is 0,
# no transaction fails, and sold_out comes only once the whole resource is
# short (the last answers cannot leave seats behind).
set -u
cd "$(dirname "$0")"
. ./lib.bash

CLIENTS=64
PER_CLIENT=313
ATTEMPTS=$((CLIENTS * PER_CLIENT))
stress_db booking_stress_striped_sale

sql "CREATE TABLE stress_log (code text NOT NULL, quantity int NOT NULL DEFAULT 1, booking_id bigint)" || exit 1

for mode in one random; do
	sale=$(sql "SELECT booking.create_resource('striped sale $mode', 2000)")
	check "$mode: set_stripes answers ok" "SELECT code FROM booking.set_stripes($sale, 16)" ok
	check "$mode: 16 stripes hold the 2000 free seats" \
		"SELECT count(*) || ' ' || sum(free) FROM booking.resource_stripes WHERE resource_id = $sale" "16 2000"
	sql "TRUNCATE stress_log"
	run_pgbench "striped sale ($mode)" -c $CLIENTS -j 2 -t $PER_CLIENT -D sale="$sale" -f flash_sale_$mode.pgb

	check "$mode: every attempt answered" "SELECT count(*) FROM stress_log" "$ATTEMPTS"
	check "$mode: every answer is ok, sold_out or busy" \
		"SELECT count(*) FROM stress_log WHERE code NOT IN ('ok', 'sold_out', 'busy')" 0
	echo "# $mode: answers: $(sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_log GROUP BY code) s")"
	check "$mode: blocking seats sum to exactly 2000" \
		"SELECT coalesce(sum(quantity), 0) FROM booking.bookings WHERE resource_id = $sale AND status IN ('pending', 'confirmed')" 2000
	check "$mode: the stripes hold no free seat" \
		"SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = $sale" 0
	check "$mode: capacity - free equals the sum of blocking quantities" \
		"SELECT r.capacity - (SELECT sum(free) FROM booking.resource_stripes s WHERE s.resource_id = r.id)
		      = (SELECT sum(b.quantity) FROM booking.bookings b WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed'))
		   FROM booking.resources r WHERE r.id = $sale" t
	check "$mode: seats_left = 0" "SELECT booking.seats_left($sale)" 0
	check "$mode: one ok answer per booking row" \
		"SELECT (SELECT count(*) FROM stress_log WHERE code = 'ok') = (SELECT count(*) FROM booking.bookings WHERE resource_id = $sale)" t
	check "$mode: the ok answers' quantities sum to 2000" \
		"SELECT sum(quantity) FROM stress_log WHERE code = 'ok'" 2000
done

# give seats back through cancel and take them again: the counters stay exact
sale=$(sql "SELECT id FROM booking.resources WHERE name = 'striped sale one'")
check "cancel 100 bookings of a striped sale" \
	"SELECT count(*) FROM (SELECT (booking.cancel(id)).code AS c FROM booking.bookings
	   WHERE resource_id = $sale ORDER BY id LIMIT 100) s WHERE c = 'ok'" 100
check "the stripes hold the 100 freed seats" \
	"SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = $sale" 100
check "seats_left is 100" "SELECT booking.seats_left($sale)" 100

stress_done
