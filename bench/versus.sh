#!/usr/bin/env bash
# bench/versus.sh OLD_BIN [clients ...]: one benchmark, two builds, side by side.
#
# Runs reserve_seat on one hot session striped over 16 rows (the "striped" row
# of bench/run.sh hot) against two installations of PostgreSQL 15 with the
# extension: OLD_BIN, the bin/ of a relocated copy holding an older build (see
# test/lib/cluster.sh), and the installed build (BOOKING_PG_BIN, default the
# system's).  Each has a private cluster of its own, with default durability;
# the runs alternate (old new, old new, old new) so that a noisy neighbour hits
# both alike, and the median of 3 per side is printed with the ratio new/old.
#
#   BENCH_SECONDS   seconds per pgbench run (default 10)
#   BENCH_SCRIPT    the pgbench script (default bench/scenarios/striped_seat.pgb;
#                   it may use :striped, a striped resource, and :hot, one with
#                   one counter row)
#   BENCH_THREADS   pgbench threads at most (default 2)
#   BOOKING_BENCH_PORT  the first of two ports (default 54370)
#
# Example, the striped sale before and after 0.3.0 dropped the foreign key
# from bookings to resources (docs/performance.md):
#   bash bench/versus.sh /opt/pg-0.2.0/usr/lib/postgresql/15/bin 8 32 64
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { sed -n '2,22p' "$0"; exit 2; }
old_bin=$1
shift
clients=${*:-8 32 64}
seconds=${BENCH_SECONDS:-10}
script=${BENCH_SCRIPT:-bench/scenarios/striped_seat.pgb}
threads=${BENCH_THREADS:-2}
port=${BOOKING_BENCH_PORT:-54370}
new_bin=${BOOKING_PG_BIN:-/usr/lib/postgresql/15/bin}
[ -x "$old_bin/postgres" ] || { echo "no postgres in $old_bin" >&2; exit 2; }

work=$(mktemp -d /tmp/booking-versus.XXXXXX)
chmod 755 "$work"
chown postgres "$work"
cp "$script" "$work/script.pgb"
chmod 644 "$work/script.pgb"

# start SIDE BIN PORT: a private cluster of that installation
start() {
	local dir=$work/$1
	mkdir -p "$dir" && chown postgres "$dir" && chmod 700 "$dir"
	runuser -u postgres -- "$2/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync \
		-E UTF8 --locale=C.UTF-8 >/dev/null
	cat >>"$dir/data/postgresql.conf" <<EOF
port = $3
listen_addresses = ''
unix_socket_directories = '$dir'
max_connections = 200
shared_buffers = 256MB
log_min_messages = warning
EOF
	runuser -u postgres -- "$2/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
}
stop() {
	for side in old new; do
		[ -d "$work/$side/data" ] &&
			runuser -u postgres -- "$new_bin/pg_ctl" -D "$work/$side/data" -m fast -w stop >/dev/null 2>&1
	done
	rm -rf "$work"
}
trap stop EXIT

start old "$old_bin" "$port"
start new "$new_bin" $((port + 1))

# psql_on SIDE ARGS...: psql of that side's installation on its cluster
psql_on() {
	local bin=$old_bin p=$port
	[ "$1" = new ] && { bin=$new_bin; p=$((port + 1)); }
	"$bin/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$work/$1" -p "$p" -U postgres -d postgres "${@:2}"
}
for side in old new; do
	psql_on "$side" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE" \
		-c "SELECT booking.create_resource('hot', 2000000000)" \
		-c "SELECT booking.create_resource('striped', 2000000000)" \
		-c "SELECT (booking.set_stripes(2, 16)).code" >/dev/null
	echo "$side: booking $(psql_on "$side" -c "SELECT extversion FROM pg_extension WHERE extname = 'booking'")" \
		"from $([ "$side" = old ] && echo "$old_bin" || echo "$new_bin")"
done

run() {
	local side=$1 c=$2 j out p=$port
	[ "$side" = new ] && p=$((port + 1))
	j=$((c < threads ? c : threads))
	psql_on "$side" -c CHECKPOINT >/dev/null
	out=$("$new_bin/pgbench" -n -M prepared -h "$work/$side" -p "$p" -U postgres -c "$c" -j "$j" \
		-T "$seconds" -D hot=1 -D striped=2 -f "$work/script.pgb" postgres 2>&1)
	echo "$out" | grep -q '^number of failed transactions: 0 ' || { echo "$out" >&2; return 1; }
	echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
}

echo
echo "$(basename "$script"), $seconds s per run, median of 3 alternating runs, fsync on, $(nproc) CPUs"
printf "%8s %12s %12s %8s\n" clients "old tps" "new tps" new/old
for c in $clients; do
	o="" n=""
	for round in 1 2 3; do
		o="$o $(run old "$c")"
		n="$n $(run new "$c")"
	done
	om=$(printf "%s\n" $o | sort -n | sed -n 2p)
	nm=$(printf "%s\n" $n | sort -n | sed -n 2p)
	printf "%8s %12.0f %12.0f %8.2f\n" "$c" "$om" "$nm" "$(awk -v a="$nm" -v b="$om" 'BEGIN { print a / b }')"
done
