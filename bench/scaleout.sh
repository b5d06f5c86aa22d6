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
#   engine   booking against what a Citus user would write without it: a
#            PL/pgSQL function making the same sale's writes (the counter, the
#            booking row, the event row) in tables of the same shape,
#            registered with create_distributed_function and co-located, that
#            the client calls and Citus delegates.  reserve_seat over 1,000
#            sessions at 32 clients, and on one hot session at 64.  Both sides
#            read the session's id and home first from a reference table (the
#            same read on both), so that the delegated call gets constants.
#            booking's calls take the direct route (statements of their own);
#            also shown: the same with booking.direct_route = off (the guarded
#            route, a subtransaction per call), and booking's own twin called
#            by the client, which Citus delegates as it does the PL/pgSQL (no
#            answer busy for a node that is down); and (0.9.0) booking's calls
#            after booking.delegate_calls(), which Citus sends to their node
#            as it does the PL/pgSQL (a node that is down fails the call)
#   nodes    where the clients connect: reserve_seat over 1,000 sessions with
#            32 clients on the coordinator, against 16 on each worker (each
#            call routed from there to the node of its session), the same
#            after booking.delegate_calls(), and the delegated PL/pgSQL the
#            same way
#
# BENCH_PARTS (default all: "spread groups routing engine nodes") picks some.
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
PARTS=" ${BENCH_PARTS:-spread groups routing engine nodes} "
part() { [[ $PARTS == *" $1 "* ]]; }

# engine, nodes: the sessions' ids and homes on every node (a reference
# table), and the user's own sale: tables of the same shape as booking's,
# distributed by home with them, and a PL/pgSQL function Citus delegates
if part engine || part nodes; then
	q -p $((PORT + 1)) >/dev/null <<'EOF'
SET client_min_messages = warning;
CREATE TABLE bench_ref AS SELECT n, s.id, r.home FROM bench_sessions s JOIN booking.resources r USING (id);
SELECT create_reference_table('bench_ref');
SELECT truncate_local_data_after_distributing_table('bench_ref');
CREATE TABLE peer_resources (home bigint NOT NULL, id bigint NOT NULL, capacity int NOT NULL,
    taken int NOT NULL DEFAULT 0, PRIMARY KEY (home, id));
CREATE TABLE peer_bookings (home bigint NOT NULL, id bigserial, resource_id bigint NOT NULL,
    guest text NOT NULL, quantity int NOT NULL, status text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (home, id));
CREATE INDEX ON peer_bookings (home, resource_id);
CREATE TABLE peer_events (home bigint NOT NULL, id bigserial, resource_id bigint NOT NULL,
    booking_id bigint, kind text NOT NULL, payload jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(), PRIMARY KEY (home, id));
SELECT create_distributed_table(t, 'home', colocate_with := 'booking.resources')
  FROM unnest(ARRAY['peer_resources', 'peer_bookings', 'peer_events']) t;
-- the 1,000 sessions and the hot one
INSERT INTO peer_resources SELECT home, id, capacity, 0 FROM booking.resources WHERE capacity > 1;
CREATE FUNCTION peer_sale(p_home bigint, p_resource bigint, p_guest text) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
  bid bigint;
BEGIN
  UPDATE peer_resources SET taken = taken + 1
   WHERE home = p_home AND id = p_resource AND taken + 1 <= capacity;
  IF NOT FOUND THEN
    RETURN 'sold_out';
  END IF;
  INSERT INTO peer_bookings (home, resource_id, guest, quantity, status)
  VALUES (p_home, p_resource, p_guest, 1, 'confirmed') RETURNING id INTO bid;
  INSERT INTO peer_events (home, resource_id, booking_id, kind, payload)
  VALUES (p_home, p_resource, bid, 'reserved', '{"code": "ok", "quantity": 1}');
  RETURN 'ok';
END
$f$;
SELECT create_distributed_function('peer_sale(bigint,bigint,text)', 'p_home', colocate_with := 'peer_resources');
EOF
fi
cat >"$work/engine_booking.pgb" <<'EOF'
\set n random(1, 1000)
SELECT id, home FROM bench_ref WHERE n = :n \gset
SELECT code FROM booking.reserve_seat(:id, 'bench');
EOF
cat >"$work/engine_peer.pgb" <<'EOF'
\set n random(1, 1000)
SELECT id, home FROM bench_ref WHERE n = :n \gset
SELECT peer_sale(:home, :id, 'bench');
EOF
cat >"$work/engine_twin.pgb" <<'EOF'
\set n random(1, 1000)
SELECT id, home FROM bench_ref WHERE n = :n \gset
SELECT code FROM booking.shard_reserve_seat(:id, 'bench', 1, NULL, NULL, NULL, NULL, :home);
EOF
cat >"$work/hot_peer.pgb" <<'EOF'
SELECT peer_sale(:home, :hot, 'bench');
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

# both_workers KEY SCRIPT [pgbench args]: half the clients on each worker at
# once; the sum of their transactions/s
both_workers() {
	local key=$1 script=$2 half=$((CLIENTS / 2)) a b
	shift 2
	run $((PORT + 2)) "$script" "$half" "$@" >"$work/w1.out" &
	a=$!
	run $((PORT + 3)) "$script" "$half" "$@" >"$work/w2.out" &
	b=$!
	wait "$a" && wait "$b" || return 1
	T[$key]="${T[$key]:-} $(awk '{ s += $1 } END { print s }' "$work/w1.out" "$work/w2.out")"
}

# warm up: every client's connections to the workers, and the caches
run $((PORT + 1)) "$work/spread.pgb" "$CLIENTS" >/dev/null
run "$PORT" "$work/spread.pgb" "$CLIENTS" >/dev/null
if part engine || part nodes; then
	run $((PORT + 1)) "$work/engine_peer.pgb" "$CLIENTS" >/dev/null
	both_workers warm "$work/engine_booking.pgb"
fi

echo
echo "$SECONDS_PER_RUN s per run, median of 3 alternating runs, fsync on, $(nproc) CPUs, all nodes on this machine"
for round in 1 2 3; do
	if part spread; then
		side spread_single "$PORT" "$work/spread.pgb" "$CLIENTS"
		side spread_citus $((PORT + 1)) "$work/spread.pgb" "$CLIENTS"
		side one_single "$PORT" "$work/spread.pgb" 1
		side one_citus $((PORT + 1)) "$work/spread.pgb" 1
	fi
	if part groups; then
		side group_same $((PORT + 1)) "$work/group.pgb" 8 -D kind=1
		side group_cross $((PORT + 1)) "$work/group.pgb" 8 -D kind=2
	fi
	if part routing; then
		side hot_public $((PORT + 1)) "$work/hot_public.pgb" 64 -D hot="$HOT"
		side hot_twin $((PORT + 1)) "$work/hot_twin.pgb" 64 -D hot="$HOT" -D home="$HOT_HOME"
		side hot1_public $((PORT + 1)) "$work/hot_public.pgb" 1 -D hot="$HOT"
		side hot1_twin $((PORT + 1)) "$work/hot_twin.pgb" 1 -D hot="$HOT" -D home="$HOT_HOME"
	fi
	if part engine || part nodes; then
		side eng_booking $((PORT + 1)) "$work/engine_booking.pgb" "$CLIENTS"
		side eng_peer $((PORT + 1)) "$work/engine_peer.pgb" "$CLIENTS"
	fi
	if part engine; then
		PGOPTIONS='-c booking.direct_route=off' side eng_guarded $((PORT + 1)) "$work/engine_booking.pgb" "$CLIENTS"
		PGOPTIONS='-c booking.direct_route=off' side eng_hot_guarded $((PORT + 1)) "$work/hot_public.pgb" 64 -D hot="$HOT"
		side eng_twin $((PORT + 1)) "$work/engine_twin.pgb" "$CLIENTS"
		side eng_hot_twin $((PORT + 1)) "$work/hot_twin.pgb" 64 -D hot="$HOT" -D home="$HOT_HOME"
		side eng_hot_booking $((PORT + 1)) "$work/hot_public.pgb" 64 -D hot="$HOT"
		side eng_hot_peer $((PORT + 1)) "$work/hot_peer.pgb" 64 -D hot="$HOT" -D home="$HOT_HOME"
	fi
	# booking.delegate_calls(): Citus sends the call itself to its node
	if part engine || part nodes; then
		q -p $((PORT + 1)) -c "SELECT booking.delegate_calls()" >/dev/null
	fi
	if part engine; then
		side eng_deleg $((PORT + 1)) "$work/engine_booking.pgb" "$CLIENTS"
		side eng_hot_deleg $((PORT + 1)) "$work/hot_public.pgb" 64 -D hot="$HOT"
	fi
	if part nodes; then
		both_workers nodes_deleg "$work/engine_booking.pgb"
	fi
	if part engine || part nodes; then
		q -p $((PORT + 1)) -c "SELECT booking.delegate_calls(false)" >/dev/null
	fi
	if part nodes; then
		both_workers nodes_booking "$work/engine_booking.pgb"
		both_workers nodes_peer "$work/engine_peer.pgb"
	fi
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { print a / b }'; }
verdict() { awk -v r="$1" -v t="$2" 'BEGIN { print (r >= t ? "PASS" : "FAIL") }'; }
if part spread; then
	ts=$(median ${T[spread_single]}); tc=$(median ${T[spread_citus]})
	ls=$(median ${L[one_single]}); lc=$(median ${L[one_citus]})
	printf "%-58s %10s %10s %7s\n" "" "one server" "Citus" ratio
	printf "%-58s %10.0f %10.0f %7.2f\n" "spread: reserve_seat on 1,000 sessions, $CLIENTS clients (tps)" "$ts" "$tc" "$(ratio "$tc" "$ts")"
	printf "%-58s %10.2f %10.2f %7.2f\n" "one client: time per call (ms)" "$ls" "$lc" "$(ratio "$lc" "$ls")"
fi
if part groups; then
	gs=$(median ${T[group_same]}); gc=$(median ${T[group_cross]})
	printf "%-58s %10s %10s %7s\n" "" "one worker" "two" ratio
	printf "%-58s %10.0f %10.0f %7.2f\n" "reserve_stays of 2 rooms, 8 clients (tps)" "$gs" "$gc" "$(ratio "$gc" "$gs")"
fi
if part routing; then
	hp=$(median ${T[hot_public]}); ht=$(median ${T[hot_twin]})
	lp=$(median ${L[hot1_public]}); lt=$(median ${L[hot1_twin]})
	printf "%-58s %10s %10s %7s\n" "" "delegated" "routed" ratio
	printf "%-58s %10.0f %10.0f %7.2f\n" "one hot session, 64 clients (tps)" "$ht" "$hp" "$(ratio "$hp" "$ht")"
	printf "%-58s %10.2f %10.2f %7.2f\n" "one hot session, 1 client: time per call (ms)" "$lt" "$lp" "$(ratio "$lp" "$lt")"
fi
if part engine; then
	eb=$(median ${T[eng_booking]}); ep=$(median ${T[eng_peer]}); et=$(median ${T[eng_twin]})
	hb=$(median ${T[eng_hot_booking]}); hq=$(median ${T[eng_hot_peer]}); htw=$(median ${T[eng_hot_twin]})
	eg=$(median ${T[eng_guarded]}); hg=$(median ${T[eng_hot_guarded]})
	echo "booking: the direct route (a call that is a statement of its own); guarded: booking.direct_route = off"
	printf "%-38s %9s %9s %6s %-6s %9s %6s %9s %6s\n" "" "PL/pgSQL" "booking" ratio ">=0.90" "guarded" ratio "its twin" ratio
	printf "%-38s %9.0f %9.0f %6.2f %-6s %9.0f %6.2f %9.0f %6.2f\n" "over 1,000 sessions, $CLIENTS clients (tps)" "$ep" "$eb" \
		"$(ratio "$eb" "$ep")" "$(verdict "$(ratio "$eb" "$ep")" 0.9)" "$eg" "$(ratio "$eg" "$ep")" "$et" "$(ratio "$et" "$ep")"
	printf "%-38s %9.0f %9.0f %6.2f %-6s %9.0f %6.2f %9.0f %6.2f\n" "one hot session, 64 clients (tps)" "$hq" "$hb" \
		"$(ratio "$hb" "$hq")" "$(verdict "$(ratio "$hb" "$hq")" 0.9)" "$hg" "$(ratio "$hg" "$hq")" "$htw" "$(ratio "$htw" "$hq")"
	ed=$(median ${T[eng_deleg]}); hd=$(median ${T[eng_hot_deleg]})
	echo "delegated: the same calls after booking.delegate_calls() (Citus sends each to its node; a dead node fails it)"
	printf "%-38s %9s %9s %6s %-6s\n" "" "PL/pgSQL" delegated ratio ">=0.90"
	printf "%-38s %9.0f %9.0f %6.2f %-6s\n" "over 1,000 sessions, $CLIENTS clients (tps)" "$ep" "$ed" \
		"$(ratio "$ed" "$ep")" "$(verdict "$(ratio "$ed" "$ep")" 0.9)"
	printf "%-38s %9.0f %9.0f %6.2f %-6s\n" "one hot session, 64 clients (tps)" "$hq" "$hd" \
		"$(ratio "$hd" "$hq")" "$(verdict "$(ratio "$hd" "$hq")" 0.9)"
fi
if part nodes; then
	eb=$(median ${T[eng_booking]}); ep=$(median ${T[eng_peer]})
	nb=$(median ${T[nodes_booking]}); np=$(median ${T[nodes_peer]})
	printf "%-58s %10s %10s %7s\n" "" "coordinator" "workers" ratio
	printf "%-58s %10.0f %10.0f %7.2f\n" "booking.reserve_seat, 1,000 sessions, $CLIENTS clients (tps)" "$eb" "$nb" "$(ratio "$nb" "$eb")"
	nd=$(median ${T[nodes_deleg]})
	printf "%-58s %10.0f %10.0f %7.2f\n" "delegated PL/pgSQL, the same (tps)" "$ep" "$np" "$(ratio "$np" "$ep")"
	printf "%-58s %10s %10.0f %7.2f\n" "booking after delegate_calls(), workers (tps; ratio to PL/pgSQL)" "" "$nd" "$(ratio "$nd" "$np")"
fi
