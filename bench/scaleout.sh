#!/usr/bin/env bash
# bench/scaleout.sh: the same load on one server and through a Citus coordinator
# with two workers, on this one machine, side by side (docs/scale-out.md).
#
#   spread   reserve_seat on one of 1,000 sessions at random, BENCH_CLIENTS clients
#            (default 32): one server against the coordinator
#   latency  the same call at 1 client: the time per call on each
#   groups   reserve_stays of two rooms on one worker against two rooms on
#            different workers (a distributed transaction with two-phase commit),
#            8 clients
#   routing  what the extension's own entry point costs on Citus against plain
#            delegation: reserve_seat (the coordinator calls the twin, and maps an
#            unreachable node to busy) against the twin booking.shard_reserve_seat
#            called by the client (Citus delegates it directly), on one hot
#            session at 64 clients and at 1 client
#
# Every figure is the median of 3 alternating runs of BENCH_SECONDS (default 10).
# Needs Citus installed (bash ../shared/vendor/citus/build.sh).  Ports:
# BOOKING_BENCH_PORT (default 54380) for the single server, the next three for
# the coordinator and the workers.
set -euo pipefail
cd "$(dirname "$0")/.."
. test/lib/cluster.sh

SECONDS_PER_RUN=${BENCH_SECONDS:-10}
CLIENTS=${BENCH_CLIENTS:-32}
PORT=${BOOKING_BENCH_PORT:-54380}
BIN=$BOOKING_PG_BIN
[ -f "$("$BIN/pg_config" --sharedir)/extension/citus.control" ] ||
	{ echo "Citus is not installed: bash ../shared/vendor/citus/build.sh" >&2; exit 2; }
booking_need_packages
[ "${BENCH_BUILD:-1}" = 0 ] || booking_build_install

work=$(mktemp -d /tmp/booking-scaleout.XXXXXX)
chmod 755 "$work"
chown postgres "$work"
NODES=""

# node NAME PORT [conf lines]: a private cluster listening on 127.0.0.1
node() {
	local name=$1 port=$2 dir=$work/$1
	shift 2
	mkdir -p "$dir" && chown postgres "$dir" && chmod 700 "$dir"
	runuser -u postgres -- "$BIN/initdb" -D "$dir/data" -U postgres --auth=trust --no-sync \
		-E UTF8 --locale=C.UTF-8 >/dev/null
	{
		echo "port = $port"
		echo "listen_addresses = '127.0.0.1'"
		echo "unix_socket_directories = '$dir'"
		echo "max_connections = 200"
		echo "shared_buffers = 128MB"
		echo "max_prepared_transactions = 200"
		echo "log_min_messages = warning"
		for line in "$@"; do echo "$line"; done
	} >>"$dir/data/postgresql.conf"
	runuser -u postgres -- "$BIN/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w start >/dev/null
	NODES="$NODES $dir"
}
stop_all() {
	for dir in $NODES; do
		runuser -u postgres -- "$BIN/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
	done
	rm -rf "$work"
}
trap stop_all EXIT
[ -n "${BENCH_KEEP:-}" ] && trap - EXIT

q() { "$BIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h 127.0.0.1 -U postgres -d postgres "$@"; }

node single "$PORT"
node coord $((PORT + 1)) "shared_preload_libraries = 'citus'"
node w1 $((PORT + 2)) "shared_preload_libraries = 'citus'"
node w2 $((PORT + 3)) "shared_preload_libraries = 'citus'"
for p in $((PORT + 1)) $((PORT + 2)) $((PORT + 3)); do q -p "$p" -c "CREATE EXTENSION citus"; done
q -p $((PORT + 1)) -c "SELECT citus_set_coordinator_host('127.0.0.1', $((PORT + 1)))" \
	-c "SELECT citus_add_node('127.0.0.1', $((PORT + 2)))" -c "SELECT citus_add_node('127.0.0.1', $((PORT + 3)))" >/dev/null
for p in "$PORT" $((PORT + 1)); do
	q -p "$p" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE"
done
q -p $((PORT + 1)) -c "SELECT booking.distribute()" >/dev/null

# 1,000 sessions and 64 rooms on each; on Citus, room pairs on one worker and
# across the two
for p in "$PORT" $((PORT + 1)); do
	q -p "$p" -c "SELECT booking.create_resource('session ' || g, 2000000000) FROM generate_series(1, 1000) g" >/dev/null
	q -p "$p" -c "SELECT booking.create_resource('room ' || g) FROM generate_series(1, 64) g" >/dev/null
	q -p "$p" -c "CREATE TABLE bench_sessions AS SELECT row_number() OVER (ORDER BY id) AS n, id FROM booking.resources WHERE capacity > 1"
done
# where each room lives: the node of its shard
q -p $((PORT + 1)) -c "CREATE TABLE bench_rooms AS
	SELECT r.id, n.nodeport FROM booking.resources r
	JOIN pg_dist_placement p ON p.shardid = get_shard_id_for_distribution_column('booking.resources', r.home)
	JOIN pg_dist_node n ON n.groupid = p.groupid WHERE r.capacity = 1"
q -p $((PORT + 1)) -c "CREATE TABLE bench_pairs AS
	SELECT 1 AS kind, row_number() OVER () AS n, a.id AS a, b.id AS b FROM bench_rooms a JOIN bench_rooms b
	  ON a.nodeport = b.nodeport AND a.id < b.id
	UNION ALL
	SELECT 2, row_number() OVER (), a.id, b.id FROM bench_rooms a JOIN bench_rooms b
	  ON a.nodeport < b.nodeport"

HOT=$(q -p $((PORT + 1)) -c "SELECT booking.create_resource('hot', 2000000000)")
HOT_HOME=$(q -p $((PORT + 1)) -c "SELECT home FROM booking.resources WHERE id = $HOT")
cat >"$work/hot_public.pgb" <<'EOF'
SELECT (booking.reserve_seat(:hot, 'bench')).code;
EOF
cat >"$work/hot_twin.pgb" <<'EOF'
SELECT code FROM booking.shard_reserve_seat(:hot, 'bench', 1, NULL, NULL, NULL, NULL, :home);
EOF
cat >"$work/spread.pgb" <<'EOF'
\set n random(1, 1000)
SELECT (booking.reserve_seat((SELECT id FROM bench_sessions WHERE n = :n), 'bench')).code;
EOF
cat >"$work/group.pgb" <<'EOF'
\set n random(1, 200)
\set night random(0, 20000)
SELECT (booking.reserve_stays(ARRAY[p.a, p.b], 'bench',
        tstzrange(timestamptz '2030-01-01' + :night * interval '1 day',
                  timestamptz '2030-01-01' + (:night + 1) * interval '1 day'))).code
  FROM bench_pairs p WHERE p.kind = :kind AND p.n = :n;
EOF
chmod 644 "$work"/*.pgb

# run PORT SCRIPT CLIENTS [pgbench args]: "tps latency_ms"
run() {
	local port=$1 script=$2 c=$3 out
	shift 3
	out=$("$BIN/pgbench" -n -h 127.0.0.1 -p "$port" -U postgres -c "$c" -j $((c < 2 ? c : 2)) \
		-T "$SECONDS_PER_RUN" "$@" -f "$script" postgres 2>&1)
	if ! grep -q '^number of failed transactions: 0 ' <<<"$out" || grep -q aborted <<<"$out"; then
		echo "$out" >&2
		return 1
	fi
	echo "$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')" \
		"$(echo "$out" | sed -n 's/^latency average = \([0-9.]*\) ms/\1/p')"
}
median() { printf "%s\n" "$@" | sort -n | sed -n 2p; }

# compare LABEL PORT_A ARGS_A... -- PORT_B ARGS_B...: alternating, 3 rounds
declare -A T L
side() {
	local key=$1
	shift
	read -r t l <<<"$(run "$@")"
	T[$key]="${T[$key]:-} $t"
	L[$key]="${L[$key]:-} $l"
}

# warm up: every client's connections to the workers, and the caches
run $((PORT + 1)) "$work/spread.pgb" "$CLIENTS" >/dev/null
run "$PORT" "$work/spread.pgb" "$CLIENTS" >/dev/null

echo
echo "$SECONDS_PER_RUN s per run, median of 3 alternating runs, fsync on, $(nproc) CPUs, all nodes on this machine"
for round in 1 2 3; do
	side spread_single "$PORT" "$work/spread.pgb" "$CLIENTS"
	side spread_citus $((PORT + 1)) "$work/spread.pgb" "$CLIENTS"
	side one_single "$PORT" "$work/spread.pgb" 1
	side one_citus $((PORT + 1)) "$work/spread.pgb" 1
	side group_same $((PORT + 1)) "$work/group.pgb" 8 -D kind=1
	side group_cross $((PORT + 1)) "$work/group.pgb" 8 -D kind=2
	side hot_public $((PORT + 1)) "$work/hot_public.pgb" 64 -D hot="$HOT"
	side hot_twin $((PORT + 1)) "$work/hot_twin.pgb" 64 -D hot="$HOT" -D home="$HOT_HOME"
	side hot1_public $((PORT + 1)) "$work/hot_public.pgb" 1 -D hot="$HOT"
	side hot1_twin $((PORT + 1)) "$work/hot_twin.pgb" 1 -D hot="$HOT" -D home="$HOT_HOME"
done
ts=$(median ${T[spread_single]}); tc=$(median ${T[spread_citus]})
ls=$(median ${L[one_single]}); lc=$(median ${L[one_citus]})
gs=$(median ${T[group_same]}); gc=$(median ${T[group_cross]})
printf "%-58s %10s %10s %7s\n" "" "one server" "Citus" ratio
printf "%-58s %10.0f %10.0f %7.2f\n" "spread: reserve_seat on 1,000 sessions, $CLIENTS clients (tps)" "$ts" "$tc" \
	"$(awk -v a="$tc" -v b="$ts" 'BEGIN { print a / b }')"
printf "%-58s %10.2f %10.2f %7.2f\n" "one client: time per call (ms)" "$ls" "$lc" \
	"$(awk -v a="$lc" -v b="$ls" 'BEGIN { print a / b }')"
printf "%-58s %10s %10s %7s\n" "" "one worker" "two" ratio
printf "%-58s %10.0f %10.0f %7.2f\n" "reserve_stays of 2 rooms, 8 clients (tps)" "$gs" "$gc" \
	"$(awk -v a="$gc" -v b="$gs" 'BEGIN { print a / b }')"
hp=$(median ${T[hot_public]}); ht=$(median ${T[hot_twin]})
lp=$(median ${L[hot1_public]}); lt=$(median ${L[hot1_twin]})
printf "%-58s %10s %10s %7s\n" "" "delegated" "routed" ratio
printf "%-58s %10.0f %10.0f %7.2f\n" "one hot session, 64 clients (tps)" "$ht" "$hp" \
	"$(awk -v a="$hp" -v b="$ht" 'BEGIN { print a / b }')"
printf "%-58s %10.2f %10.2f %7.2f\n" "one hot session, 1 client: time per call (ms)" "$lt" "$lp" \
	"$(awk -v a="$lp" -v b="$lt" 'BEGIN { print a / b }')"
