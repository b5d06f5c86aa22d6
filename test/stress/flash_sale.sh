#!/usr/bin/env bash
# flash_sale.sh: 64 clients, about 20,000 attempts on one session of 2,000
# seats through booking.reserve_seat, with real connections (pgbench).
# Once one seat per attempt, once a random 1..4 seats per attempt: exactly
# 2,000 seats sold, the counter equals the sum of blocking quantities,
# seats_left is 0, and no transaction fails.
set -u
cd "$(dirname "$0")"
. ./lib.bash

CLIENTS=64
PER_CLIENT=313	# 64 * 313 = 20,032 attempts
ATTEMPTS=$((CLIENTS * PER_CLIENT))
stress_db booking_stress_flash_sale

sql "CREATE TABLE stress_log (code text NOT NULL, quantity int NOT NULL DEFAULT 1, booking_id bigint)" || exit 1

for mode in one random; do
	sale=$(sql "SELECT booking.create_resource('flash sale $mode', 2000)")
	echo "# mode $mode: resource $sale, $CLIENTS clients, $ATTEMPTS attempts"
	sql "TRUNCATE stress_log"
	run_pgbench "flash sale ($mode)" -c $CLIENTS -j 2 -t $PER_CLIENT -D sale="$sale" -f flash_sale_$mode.pgb

	check "$mode: every attempt answered" "SELECT count(*) FROM stress_log" "$ATTEMPTS"
	# busy (503: the 3 s lock wait ran out) is a legitimate answer under load;
	# anything else (retry, an error) is not
	check "$mode: every answer is ok, sold_out or busy" \
		"SELECT count(*) FROM stress_log WHERE code NOT IN ('ok', 'sold_out', 'busy')" 0
	echo "# $mode: answers: $(sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_log GROUP BY code) s")"
	check "$mode: blocking seats sum to exactly 2000" \
		"SELECT coalesce(sum(quantity), 0) FROM booking.bookings WHERE resource_id = $sale AND status IN ('pending', 'confirmed')" 2000
	check "$mode: resources.taken = 2000" "SELECT taken FROM booking.resources WHERE id = $sale" 2000
	check "$mode: resources.taken equals the sum of blocking quantities" \
		"SELECT r.taken = (SELECT sum(b.quantity) FROM booking.bookings b WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed')) FROM booking.resources r WHERE r.id = $sale" t
	check "$mode: seats_left = 0" "SELECT booking.seats_left($sale)" 0
	check "$mode: every booking is confirmed" \
		"SELECT count(*) FROM booking.bookings WHERE resource_id = $sale AND status <> 'confirmed'" 0
	check "$mode: one ok answer per booking row" \
		"SELECT (SELECT count(*) FROM stress_log WHERE code = 'ok') = (SELECT count(*) FROM booking.bookings WHERE resource_id = $sale)" t
	if [ "$mode" = one ]; then
		check "one: exactly 2000 bookings of one seat" \
			"SELECT count(*) FROM booking.bookings WHERE resource_id = $sale AND quantity = 1" 2000
		check "one: exactly 2000 ok answers" \
			"SELECT count(*) FROM stress_log WHERE code = 'ok'" 2000
	else
		check "random: each ok answer's quantity is the quantity booked" \
			"SELECT count(*) FROM stress_log l JOIN booking.bookings b ON b.id = l.booking_id WHERE l.code = 'ok' AND b.quantity <> l.quantity" 0
		check "random: the ok answers' quantities sum to 2000" \
			"SELECT sum(quantity) FROM stress_log WHERE code = 'ok'" 2000
	fi
done

stress_done
