#!/usr/bin/env bash
# bench/run.sh [scenario ...]: side-by-side benchmarks on a private cluster with
# default durability (fsync and synchronous_commit on).  Each figure is the
# median of 3 pgbench runs (-M prepared); the result is the ratio measured in
# the same run, not the absolute numbers.
#   size  reserve_stay, reserve_seat and free_slots with 10,000 vs 1,000,000
#         existing bookings (cost must stay flat: ratio >= 0.9)
#   keys  reserve_seat and reserve_stay with and without an idempotency key
#         (a key may cost at most 15%)
# Environment: BENCH_SECONDS (default 10), BENCH_CLIENTS (default 8).
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib/cluster.sh

SECONDS_PER_RUN=${BENCH_SECONDS:-10}
CLIENTS=${BENCH_CLIENTS:-8}
scenarios=${*:-size keys}
work=$(mktemp -d /tmp/booking-bench.XXXXXX)
chmod 755 "$work"

booking_need_packages
booking_build_install
booking_cluster_start "${BOOKING_BENCH_PORT:-54360}"

# tps DB SCRIPT: median tps of 3 runs
tps() {
	local db=$1 script=$2 i out
	for i in 1 2 3; do
		out=$(pgbench -n -M prepared -c "$CLIENTS" -j 2 -T "$SECONDS_PER_RUN" -f "$script" "$db" 2>&1) ||
			{ echo "$out" >&2; return 1; }
		echo "$out" | grep -q 'number of failed transactions: 0 ' ||
			{ echo "$out" >&2; echo "failed transactions in $script" >&2; return 1; }
		echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
	done | sort -n | sed -n 2p
}

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# make_db NAME BULK: 1,000 rooms, 1,000 seat resources, the same bookings in
# the 2029 query window, plus BULK bookings elsewhere (2031 on)
make_db() {
	local db=$1 bulk=$2
	psql -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE $db" >/dev/null
	psql -X -q -v ON_ERROR_STOP=1 -d "$db" >/dev/null <<SQL
CREATE EXTENSION booking CASCADE;
SELECT booking.create_resource('room ' || i, 1) FROM generate_series(1, 1000) i;
SELECT booking.create_resource('session ' || i, 1000000000) FROM generate_series(1, 1000) i;
-- every other night of January 2029 is booked in every room
INSERT INTO booking.bookings (resource_id, guest, quantity, during, status, created_at, validity)
SELECT r, 'seed', 1, tstzrange(d, d + interval '1 day'), 'confirmed', now(), tstzrange(now(), NULL)
FROM generate_series(1, 1000) r,
     generate_series(timestamptz '2029-01-01', '2029-01-31', interval '2 days') d;
-- the bulk, spread evenly over the rooms
INSERT INTO booking.bookings (resource_id, guest, quantity, during, status, created_at, validity)
SELECT 1 + (g % 1000), 'bulk', 1,
       tstzrange(timestamptz '2031-01-01' + (g / 1000) * interval '1 day',
                 timestamptz '2031-01-01' + (g / 1000 + 1) * interval '1 day'),
       'confirmed', now(), tstzrange(now(), NULL)
FROM generate_series(0, $bulk - 1) g;
VACUUM ANALYZE booking.bookings;
SQL
}

cat >"$work/stay.pgb" <<'EOF2'
\set room random(1, 1000)
\set night random(0, 364)
SELECT (booking.reserve_stay(:room, 'bench', tstzrange(timestamptz '2028-01-01' + :night * interval '1 day', timestamptz '2028-01-01' + (:night + 1) * interval '1 day'))).code;
EOF2
cat >"$work/seat.pgb" <<'EOF2'
\set session random(1001, 2000)
SELECT (booking.reserve_seat(:session, 'bench')).code;
EOF2
cat >"$work/slots.pgb" <<'EOF2'
\set room random(1, 1000)
SELECT count(*) FROM booking.free_slots(:room, '[2029-01-01,2029-02-01)', '1 day');
EOF2
cat >"$work/stay_key.pgb" <<'EOF2'
\set room random(1, 1000)
\set night random(0, 364)
\set k random(1, 2000000000)
SELECT (booking.reserve_stay(:room, 'bench', tstzrange(timestamptz '2028-01-01' + :night * interval '1 day', timestamptz '2028-01-01' + (:night + 1) * interval '1 day'), idempotency_key => 'stay-' || :client_id || '-' || :k)).code;
EOF2
cat >"$work/seat_key.pgb" <<'EOF2'
\set session random(1001, 2000)
\set k random(1, 2000000000)
SELECT (booking.reserve_seat(:session, 'bench', idempotency_key => 'seat-' || :client_id || '-' || :k)).code;
EOF2
chmod 644 "$work"/*.pgb

echo
echo "clients: $CLIENTS, $SECONDS_PER_RUN s per run, median of 3"
for s in $scenarios; do
	case $s in
	size)
		echo "== size: cost against table size"
		make_db bench_small 10000
		make_db bench_large 1000000
		printf "%-14s %12s %12s %8s\n" call "10k tps" "1M tps" "1M/10k"
		for call in stay seat slots; do
			small=$(tps bench_small "$work/$call.pgb")
			large=$(tps bench_large "$work/$call.pgb")
			printf "%-14s %12.0f %12.0f %8s\n" "$call" "$small" "$large" "$(ratio "$large" "$small")"
		done
		;;
	keys)
		echo "== keys: the same calls with and without an idempotency key"
		make_db bench_keys 10000
		printf "%-14s %12s %12s %8s\n" call "no key tps" "key tps" "key/none"
		for call in seat stay; do
			plain=$(tps bench_keys "$work/$call.pgb")
			keyed=$(tps bench_keys "$work/${call}_key.pgb")
			printf "%-14s %12.0f %12.0f %8s\n" "$call" "$plain" "$keyed" "$(ratio "$keyed" "$plain")"
		done
		;;
	*) echo "unknown scenario $s" >&2; exit 2 ;;
	esac
done
rm -rf "$work"
