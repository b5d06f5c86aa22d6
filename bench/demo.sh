#!/usr/bin/env bash
# The live demo (README's first command), on a private throwaway cluster.
#
# 1. A flash sale of 2,000 seats with 64 concurrent clients and 20,032
#    attempts (64 x 313), four times: the naive check-then-act SQL
#    (bench/naive_sale.pgb), the careful hand-written flow (SELECT ... FOR
#    UPDATE, then a count, then the insert: bench/careful_sale.pgb),
#    booking.reserve_seat on a session with one counter row, and
#    booking.reserve_seat on a session striped over 16 counter rows
#    (bench/booking_sale.pgb).
# 2. A room race: 50 rooms over 90 nights, 64 concurrent clients asking for 1
#    to 7 nights at random, twice: naive check-then-insert into a table
#    without an exclusion constraint (bench/naive_stay.pgb), and
#    booking.reserve_stay (bench/booking_stay.pgb).  Overlapping pairs are
#    counted with a self-join.
#
# Each row prints attempts, sold (booked), refused (by result code for the
# booking calls, from booking.stats(): the cluster preloads booking),
# oversold (overlapping pairs), pgbench's failed transactions and the time.
#
# Environment:
#   BOOKING_DEMO_PORT  the cluster's port (default 54350)
#   BENCH_BUILD=0      use the installed extension, do not build and install
#   BOOKING_PG_BIN     a relocated PostgreSQL 15 (see test/lib/cluster.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib/cluster.sh

CAPACITY=2000
CLIENTS=64
PER_CLIENT=313
ATTEMPTS=$((CLIENTS * PER_CLIENT))
ROOMS=50
NIGHTS=90
STAYS_PER_CLIENT=100
STAY_ATTEMPTS=$((CLIENTS * STAYS_PER_CLIENT))
STRIPES=16

booking_need_packages
[ "${BENCH_BUILD:-1}" = 0 ] || booking_build_install
# preloaded for booking.stats(), the refusals by code; the expiry worker
# has nothing to do here (no holds), so it gets no passes
booking_cluster_start "${BOOKING_DEMO_PORT:-54350}" \
	"shared_preload_libraries = 'booking'" "booking.expire_interval = '0'"

sql() { psql -X -q -At -v ON_ERROR_STOP=1 -d demo -c "$1"; }

psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE demo" >/dev/null
psql -X -q -v ON_ERROR_STOP=1 -d demo >/dev/null <<SQL
SET client_min_messages = warning;
CREATE EXTENSION booking CASCADE;
-- the application's own tables, for the hand-written flows
CREATE TABLE shop_sessions (id int PRIMARY KEY, capacity int NOT NULL);
CREATE TABLE shop_bookings (id bigserial PRIMARY KEY, session_id int NOT NULL REFERENCES shop_sessions, guest text NOT NULL);
CREATE INDEX ON shop_bookings (session_id);
INSERT INTO shop_sessions VALUES (1, $CAPACITY), (2, $CAPACITY);
CREATE TABLE naive_stays (id bigserial PRIMARY KEY, room_id int NOT NULL, guest text NOT NULL, during tstzrange NOT NULL);
CREATE INDEX ON naive_stays (room_id);
SQL
resource=$(sql "SELECT booking.create_resource('flash sale', $CAPACITY)")
striped=$(sql "SELECT booking.create_resource('striped flash sale', $CAPACITY)")
[ "$(sql "SELECT code FROM booking.set_stripes($striped, $STRIPES)")" = ok ] || { echo "set_stripes failed"; exit 1; }
first_room=$(sql "SELECT min(booking.create_resource('Room ' || n)) FROM generate_series(1, $ROOMS) n")
last_room=$((first_room + ROOMS - 1))
[ "$(sql "SELECT count(*) FROM booking.resources WHERE id BETWEEN $first_room AND $last_room AND name LIKE 'Room %'")" = $ROOMS ] ||
	{ echo "the rooms are not numbered $first_room to $last_room"; exit 1; }

elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f s", b - a }'; }
commas() { echo "$1" | sed ':a;s/\B[0-9]\{3\}\>/,&/;ta'; }

# pgbench_run NAME SCRIPT PER_CLIENT VAR=VALUE...: runs the script, sets
# FAILED (pgbench's failed transactions) and TIME
pgbench_run() {
	local name=$1 script=$2 per_client=$3 out start end d defs=()
	shift 3
	for d in "$@"; do defs+=(-D "$d"); done
	out=$(mktemp)
	sql "SELECT booking.stats_reset()" >/dev/null
	start=$(date +%s.%N)
	pgbench -n -c $CLIENTS -j 2 -t "$per_client" "${defs[@]}" -f "$script" demo >"$out" 2>&1 || {
		cat "$out"; echo "pgbench failed for $name"; exit 1; }
	end=$(date +%s.%N)
	FAILED=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
	FAILED=${FAILED:-0}
	TIME=$(elapsed "$start" "$end")
	rm -f "$out"
}

# refused_by_code FUNCTION: "18032 sold_out" or "17990 sold_out, 42 busy",
# from booking.stats() since the pgbench_run's reset
refused_by_code() {
	sql "SELECT coalesce(string_agg(calls || ' ' || code, ', ' ORDER BY calls DESC, code), '0')
	       FROM booking.stats() WHERE function = '$1' AND code <> 'ok'"
}

ROW="%-26s %9s %7s  %-30s %11s %7s %9s\n"

# seat_row NAME SCRIPT RESOURCE SOLD_QUERY [FUNCTION]: one row of the sale;
# without FUNCTION, the refusals are the flow's own "none left"
seat_row() {
	local name=$1 script=$2 res=$3 sold_query=$4 fn=${5:-} sold refused
	pgbench_run "$name" "$script" $PER_CLIENT resource="$res"
	sold=$(sql "$sold_query")
	if [ -n "$fn" ]; then
		refused=$(refused_by_code "$fn")
	else
		refused="$((ATTEMPTS - sold - FAILED)) by its own check"
	fi
	# shellcheck disable=SC2059
	printf "$ROW" "$name" $ATTEMPTS "$sold" "$refused" $((sold > CAPACITY ? sold - CAPACITY : 0)) "$FAILED" "$TIME"
}

# stay_row NAME SCRIPT FIRST_ROOM BOOKED_QUERY OVERLAP_QUERY [FUNCTION]
stay_row() {
	local name=$1 script=$2 first=$3 booked_query=$4 overlap_query=$5 fn=${6:-} booked refused
	pgbench_run "$name" "$script" $STAYS_PER_CLIENT first_room="$first" rooms=$ROOMS nights=$NIGHTS
	booked=$(sql "$booked_query")
	if [ -n "$fn" ]; then
		refused=$(refused_by_code "$fn")
	else
		refused="$((STAY_ATTEMPTS - booked - FAILED)) by its own check"
	fi
	# shellcheck disable=SC2059
	printf "$ROW" "$name" $STAY_ATTEMPTS "$booked" "$refused" "$(sql "$overlap_query")" "$FAILED" "$TIME"
}

LIVE="status IN ('pending', 'confirmed')"
echo
echo "Flash sale: $(commas $CAPACITY) seats, $CLIENTS concurrent clients, $(commas $ATTEMPTS) attempts"
echo
# shellcheck disable=SC2059
printf "$ROW" "flow" "attempts" "sold" "refused" "oversold" "errors" "time"
seat_row "naive check-then-act" bench/naive_sale.pgb 1 \
	"SELECT count(*) FROM shop_bookings WHERE session_id = 1"
seat_row "careful FOR UPDATE flow" bench/careful_sale.pgb 2 \
	"SELECT count(*) FROM shop_bookings WHERE session_id = 2"
seat_row "booking.reserve_seat" bench/booking_sale.pgb "$resource" \
	"SELECT coalesce(sum(quantity), 0) FROM booking.bookings WHERE resource_id = $resource AND $LIVE" reserve_seat
seat_row "reserve_seat, $STRIPES stripes" bench/booking_sale.pgb "$striped" \
	"SELECT coalesce(sum(quantity), 0) FROM booking.bookings WHERE resource_id = $striped AND $LIVE" reserve_seat

echo
echo "Room race: $ROOMS rooms over $NIGHTS nights, $CLIENTS concurrent clients, $(commas $STAY_ATTEMPTS) attempts of 1 to 7 nights"
echo
# shellcheck disable=SC2059
printf "$ROW" "flow" "attempts" "booked" "refused" "overlapping" "errors" "time"
stay_row "naive check-then-insert" bench/naive_stay.pgb 1 \
	"SELECT count(*) FROM naive_stays" \
	"SELECT count(*) FROM naive_stays a JOIN naive_stays b
	   ON b.room_id = a.room_id AND b.id > a.id AND b.during && a.during"
stay_row "booking.reserve_stay" bench/booking_stay.pgb "$first_room" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id BETWEEN $first_room AND $last_room AND $LIVE" \
	"SELECT count(*) FROM booking.bookings a JOIN booking.bookings b
	   ON b.resource_id = a.resource_id AND b.id > a.id AND b.during && a.during
	WHERE a.resource_id BETWEEN $first_room AND $last_room AND a.$LIVE AND b.$LIVE" reserve_stay
echo
echo "refused: by the flow's own check (hand-written rows) or by result code (booking rows,"
echo "from booking.stats()); overlapping: pairs of stays of one room that overlap."
