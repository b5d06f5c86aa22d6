#!/usr/bin/env bash
# bench/versus.sh OLD_BIN [clients ...]: one benchmark, two builds, side by side.
#
# Runs reserve_seat on one hot session striped over 16 rows (the "striped" row
# of bench/run.sh hot) against two installations of PostgreSQL 15 with the
# extension: OLD_BIN, the bin/ of a relocated copy holding an older build (see
# test/lib/cluster.sh), and the installed build (BOOKING_PG_BIN, default the
# system's).  Each has a private cluster of its own, with default durability;
# the runs alternate (old new, old new, ...) so that a noisy neighbour hits
# both alike, and the median per side is printed with the ratio new/old, and
# beside it what a transaction wrote on each side, over all its runs: WAL bytes
# per transaction and MultiXact ids used per 1,000 transactions (from
# pg_stat_wal and the checkpoint's next MultiXact id), which do not depend on
# the noise.
#
#   BENCH_SECONDS   seconds per pgbench run (default 10)
#   BENCH_SCRIPT    the pgbench script (default bench/scenarios/striped_seat.pgb;
#                   it may use :striped, a striped resource, and :hot, one with
#                   one counter row)
#   BENCH_THREADS   pgbench threads at most (default 2)
#   BENCH_ROUNDS    runs per side, alternating (default 3; odd, for a median)
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
rounds=${BENCH_ROUNDS:-3}
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

# what one run wrote: WAL records and bytes (pg_stat_wal) and MultiXact ids
# used (the checkpoint's next id), read after a checkpoint
counters() {
	psql_on "$1" -c CHECKPOINT -c "SELECT w.wal_records, w.wal_bytes, c.next_multixact_id::text::bigint
		FROM pg_stat_wal w, pg_control_checkpoint() c" | tr '|' ' '
}

# run SIDE CLIENTS: prints "tps transactions wal_records wal_bytes multixacts"
run() {
	local side=$1 c=$2 j out p=$port before after
	[ "$side" = new ] && p=$((port + 1))
	j=$((c < threads ? c : threads))
	before=$(counters "$side")
	out=$("$new_bin/pgbench" -n -M prepared -h "$work/$side" -p "$p" -U postgres -c "$c" -j "$j" \
		-T "$seconds" -D hot=1 -D striped=2 -f "$work/script.pgb" postgres 2>&1)
	grep -q '^number of failed transactions: 0 ' <<<"$out" || { echo "$out" >&2; return 1; }
	after=$(counters "$side")
	echo "$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')" \
		"$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')" \
		$(paste -d' ' <(echo "$after" | tr ' ' '\n') <(echo "$before" | tr ' ' '\n') | awk '{ print $1 - $2 }')
}

echo
echo "$(basename "$script"), $seconds s per run, median of $rounds alternating runs, fsync on, $(nproc) CPUs"
printf "%8s %10s %10s %8s   %-24s %-24s\n" clients "old tps" "new tps" new/old \
	"old WAL B/txn, mxid/1k" "new WAL B/txn, mxid/1k"
for c in $clients; do
	o="" n=""
	for ((round = 1; round <= rounds; round++)); do
		read -r t tx rec bytes mx <<<"$(run old "$c")"
		o="$o $t"; otx=$((${otx:-0} + tx)); obytes=$((${obytes:-0} + bytes)); omx=$((${omx:-0} + mx))
		read -r t tx rec bytes mx <<<"$(run new "$c")"
		n="$n $t"; ntx=$((${ntx:-0} + tx)); nbytes=$((${nbytes:-0} + bytes)); nmx=$((${nmx:-0} + mx))
	done
	om=$(printf "%s\n" $o | sort -n | sed -n "$(((rounds + 1) / 2))p")
	nm=$(printf "%s\n" $n | sort -n | sed -n "$(((rounds + 1) / 2))p")
	printf "%8s %10.0f %10.0f %8.2f   %-24s %-24s\n" "$c" "$om" "$nm" \
		"$(awk -v a="$nm" -v b="$om" 'BEGIN { print a / b }')" \
		"$(awk -v b="$obytes" -v m="$omx" -v t="$otx" 'BEGIN { printf "%.0f, %.1f", b / t, 1000 * m / t }')" \
		"$(awk -v b="$nbytes" -v m="$nmx" -v t="$ntx" 'BEGIN { printf "%.0f, %.1f", b / t, 1000 * m / t }')"
	otx=0 obytes=0 omx=0 ntx=0 nbytes=0 nmx=0
done
