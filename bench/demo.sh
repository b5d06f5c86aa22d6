#!/usr/bin/env bash
# The live demo (README's first command): a flash sale of 2,000 seats with 64
# concurrent clients and 20,032 attempts (64 x 313), run three times on a
# private throwaway cluster: through naive check-then-act SQL, through
# booking.reserve_seat on a session with one counter row, and through
# booking.reserve_seat on a session striped over 16 counter rows (the
# setting for a flash sale).  Prints attempts, sold, refused, oversold and
# time for each.
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib/cluster.sh

CAPACITY=2000
CLIENTS=64
PER_CLIENT=313
ATTEMPTS=$((CLIENTS * PER_CLIENT))

booking_need_packages
booking_build_install
booking_cluster_start "${BOOKING_DEMO_PORT:-54350}"

psql -X -q -v ON_ERROR_STOP=1 -d postgres <<SQL
CREATE DATABASE demo;
\c demo
CREATE EXTENSION booking CASCADE;
CREATE TABLE naive_sessions (id int PRIMARY KEY, capacity int NOT NULL);
CREATE TABLE naive_bookings (id bigserial PRIMARY KEY, session_id int NOT NULL REFERENCES naive_sessions, guest text NOT NULL);
INSERT INTO naive_sessions VALUES (1, $CAPACITY);
SELECT booking.create_resource('flash sale', $CAPACITY) AS resource \gset
SELECT booking.create_resource('striped flash sale', $CAPACITY) AS striped \gset
SELECT code FROM booking.set_stripes(:striped, 16);
SQL
resource=$(psql -X -At -d demo -c "SELECT id FROM booking.resources WHERE name = 'flash sale'")
striped=$(psql -X -At -d demo -c "SELECT id FROM booking.resources WHERE name = 'striped flash sale'")

# run_sale NAME SCRIPT RESOURCE SOLD_QUERY -> one row of the table
run_sale() {
	local name=$1 script=$2 res=$3 sold_query=$4 out start end sold failed
	out=$(mktemp)
	start=$(date +%s.%N)
	pgbench -n -c $CLIENTS -j 2 -t $PER_CLIENT -D resource="$res" -f "$script" demo >"$out" 2>&1 || {
		cat "$out"; echo "pgbench failed for $name"; exit 1; }
	end=$(date +%s.%N)
	sold=$(psql -X -At -d demo -c "$sold_query")
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
	rm -f "$out"
	printf "%-24s %9d %7d %8d %9d %7d %8.2f s\n" "$name" $ATTEMPTS "$sold" \
		$((ATTEMPTS - sold)) $((sold > CAPACITY ? sold - CAPACITY : 0)) "${failed:-0}" \
		"$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
}

echo
echo "Flash sale: $CAPACITY seats, $CLIENTS concurrent clients, $ATTEMPTS attempts"
echo
printf "%-24s %9s %7s %8s %9s %7s %10s\n" "flow" "attempts" "sold" "refused" "oversold" "errors" "time"
run_sale "naive check-then-act" bench/naive_sale.pgb 1 \
	"SELECT count(*) FROM naive_bookings WHERE session_id = 1"
for r in "$resource" "$striped"; do
	name="booking.reserve_seat"
	[ "$r" = "$striped" ] && name="reserve_seat, 16 stripes"
	run_sale "$name" bench/booking_sale.pgb "$r" \
		"SELECT coalesce(sum(quantity), 0) FROM booking.bookings WHERE resource_id = $r AND status IN ('pending', 'confirmed')"
done
echo
psql -X -At -d demo -c "SELECT 'booking.seats_left: ' || booking.seats_left($resource) || ' (one counter row), '
	|| booking.seats_left($striped) || ' (16 stripes)'"
