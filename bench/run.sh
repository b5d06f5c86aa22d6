#!/usr/bin/env bash
# bench/run.sh [scenario ...]: side-by-side benchmarks on a private cluster with
# default durability (fsync and synchronous_commit on), pgbench -M prepared.
# Every figure is the median of 3 runs, and the runs of the things compared are
# interleaved (A B C, A B C, A B C) so that a noisy neighbour hits them alike:
# the ratios measured in the same run are the result, not the absolute numbers.
# docs/performance.md explains each scenario and shows the figures and the plot.
#
#   hot      one hot session: the bare single-row UPDATE (the ceiling) vs
#            reserve_seat vs the client-side flow (BEGIN; SELECT ... FOR
#            UPDATE; UPDATE; INSERT; COMMIT) vs the same logic as one PL/pgSQL
#            function vs reserve_seat on a striped resource (set_stripes 16),
#            at 1, 8, 32 and 64 clients; beside them two floors, the least
#            SQL that writes what a sale writes (one statement: counter bump
#            and booking row), on one row and on 16; writes
#            docs/img/throughput.png
#   stays    reserve_stay over 1,000 rooms vs a raw INSERT into an
#            exclusion-constrained table of the same shape and vs the same
#            logic as one PL/pgSQL function, at 32 clients
#   size     reserve_stay, reserve_seat and free_slots with 10,000 vs
#            1,000,000 existing bookings, and beside them the raw
#            exclusion-constrained INSERT and the free gaps read by hand
#            over plain tables of the same bookings (the floors)
#   keys     reserve_seat and reserve_stay with and without an idempotency key
#   limit    reserve_seat on sessions without a guest limit vs with one (never
#            reached) vs the same check written by hand in PL/pgSQL
#   events   NOTIFY's cost: reserve_stay over 1,000 rooms and reserve_seat on
#            one hot session with no consumer, with a consumer where each
#            transaction notifies, with a consumer where the expiry worker
#            notifies (booking preloaded; the cluster is restarted for it),
#            and the same with a session that LISTENs, and with a relay that
#            LISTENs and drains the events meanwhile
#   relays   the outbox drained at full speed: a backlog of BENCH_RELAY_EVENTS
#            (default 200,000) unnumbered events, half on one hot resource and
#            half over 1,000, drained by BENCH_RELAY_COUNTS relays (default
#            "1 4 10"; pgbench clients that claim 100 and acknowledge them)
#            vs the same rows in a plain FOR UPDATE SKIP LOCKED queue table
#            drained the same way (lease under a token, acknowledge under
#            it); events/s from the start to the last acknowledgement;
#            checked: every event acknowledged once, claimed once, and
#            numbered 1..n per resource
#   snapshot a held snapshot: 32 clients sell (snap_booking.pgb: seats held
#            for 1 minute under keys, confirmed seats, stays confirmed under
#            keys and held for 1 minute; a consumer, a relay that drains it;
#            booking preloaded, so the expiry worker expires the lapsed holds)
#            for BENCH_SNAPSHOT_SECONDS while one REPEATABLE READ transaction
#            stays open; the same for the floor of those writes on plain tables
#            with a plain SKIP LOCKED queue (snap_floor.pgb), and for that
#            queue alone at booking's event rate (snap_plain.pgb); the clients'
#            tps and the relay's acknowledgements per BENCH_SNAPSHOT_INTERVAL,
#            the sizes of the tables at each, and after the snapshot ends and
#            VACUUM runs; then booking's mix again in a fresh database with no
#            snapshot held (the control: what the lapsing holds cost alone)
#   hotsnap  reserve_seat on one hot session, as one row and as 16 stripes,
#            BENCH_SNAPSHOT_CLIENTS clients for BENCH_HOTSNAP_SECONDS (default
#            90) each while one REPEATABLE READ transaction stays open: the
#            sales of each 10 s, the last against the first
#   sellout  time to sell 2,000 seats with 64 clients, p50/p99 latency per
#            call: single-row vs striped; then p50, p99 and p99.9 over all
#            rounds' calls, and the same sell-outs with commit_delay
#            (BENCH_COMMIT_DELAY microseconds, default 100)
#   pooler   reserve_seat through Debian's pgbouncer in transaction mode
#            (pool of 20 server connections) at 200 clients vs 20 clients
#            connected directly, both -M extended (pgbouncer 1.18 passes no
#            named prepared statements in transaction mode); spread over
#            1,000 sessions, and on one hot session; exact totals: the
#            bookings equal the transactions of each side
#   memory   private RSS of one backend after 100,000 calls vs after 1,000
#   stats    reserve_seat on one hot session with booking.track_stats on vs
#            off (booking.stats(), src/1_ground/stats.c), at BENCH_STATS_CLIENTS
#            clients, in BENCH_STATS_ROUNDS rounds of both in alternating
#            order: the median of the rounds' ratios; the cluster is
#            restarted with shared_preload_libraries = 'booking' for it, and
#            without it afterwards
#
# With no argument every scenario runs.  Environment:
#   BENCH_SECONDS      seconds per pgbench run (default 10: about 20 minutes in
#                      all on 2 cores; 3 is a quick run of about 8 minutes)
#   BENCH_CLIENTS      clients for size and keys (default 8)
#   BENCH_HOT_CLIENTS  client counts of the hot scenario (default "1 8 32 64")
#   BENCH_STAY_CLIENTS clients of the stays scenario (default 32)
#   BENCH_STATS_CLIENTS clients of the stats scenario (default 8)
#   BENCH_STATS_ROUNDS rounds of the stats scenario, each on and off (default 8)
#   BENCH_THREADS      pgbench threads at most (default 2)
#   BENCH_SNAPSHOT_SECONDS, BENCH_SNAPSHOT_INTERVAL, BENCH_SNAPSHOT_CLIENTS
#                      the snapshot scenario's run, interval and clients
#                      (default 180, 60 and 32: about 13 minutes)
#   BENCH_BUILD=0      use the installed extension, do not build and install
#   BENCH_PLOT         where the plot goes (default docs/img/throughput.png)
#   BOOKING_BENCH_PORT port of the private cluster (default 54360)
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
. test/lib/cluster.sh

SECONDS_PER_RUN=${BENCH_SECONDS:-10}
CLIENTS=${BENCH_CLIENTS:-8}
HOT_CLIENTS=${BENCH_HOT_CLIENTS:-1 8 32 64}
STAY_CLIENTS=${BENCH_STAY_CLIENTS:-32}
STATS_CLIENTS=${BENCH_STATS_CLIENTS:-8}
STATS_ROUNDS=${BENCH_STATS_ROUNDS:-8}
THREADS=${BENCH_THREADS:-2}
COMMIT_DELAY=${BENCH_COMMIT_DELAY:-100}
PLOT=${BENCH_PLOT:-docs/img/throughput.png}
RELAY_EVENTS=${BENCH_RELAY_EVENTS:-200000}
RELAY_COUNTS=${BENCH_RELAY_COUNTS:-1 4 10}
SNAP_SECONDS=${BENCH_SNAPSHOT_SECONDS:-180}
SNAP_INTERVAL=${BENCH_SNAPSHOT_INTERVAL:-60}
SNAP_CLIENTS=${BENCH_SNAPSHOT_CLIENTS:-32}
HOTSNAP_SECONDS=${BENCH_HOTSNAP_SECONDS:-90}
ALL="hot stays size keys limit events relays snapshot hotsnap sellout pooler memory stats"
scenarios=${*:-$ALL}
for s in $scenarios; do
	case " $ALL " in
	*" $s "*) ;;
	*) echo "unknown scenario $s (known: $ALL)" >&2; exit 2 ;;
	esac
done

booking_need_packages gnuplot-nox
[ "${BENCH_BUILD:-1}" = 0 ] || booking_build_install
booking_cluster_start "${BOOKING_BENCH_PORT:-54360}"
work=$(mktemp -d /tmp/booking-bench.XXXXXX)
chmod 755 "$work"
trap 'booking_cluster_stop; rm -rf "$work"' EXIT

declare -A MED          # label -> median tps
declare -A DONE         # label -> transactions processed in all its runs
TARGETS=()              # lines of the closing PASS/FAIL table
STRIPES=0               # 1 when the installed extension has set_stripes

q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
qa() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

# target DESCRIPTION VALUE OP THRESHOLD: one line of the closing table,
# judged on the value as printed
target() {
	local verdict
	verdict=$(awk -v v="$2" -v op="$3" -v t="$4" \
		'BEGIN { ok = (op == ">=") ? (v + 0 >= t + 0) : (v + 0 <= t + 0); print ok ? "PASS" : "FAIL" }')
	TARGETS+=("$(printf "%-52s %7s  %s %-5s %s" "$1" "$2" "$3" "$4" "$verdict")")
}

# reference DESCRIPTION VALUE: a line of the closing table that is no target,
# a bound measured beside one (the floor no implementation can beat)
reference() {
	TARGETS+=("$(printf "%-52s %7s" "$1" "$2")")
}

# skip_target DESCRIPTION WHY
skip_target() {
	TARGETS+=("$(printf "%-52s %7s  %-8s SKIP (%s)" "$1" "-" "" "$2")")
}

# run_once DB SCRIPT CLIENTS [pgbench options]: "tps transactions" of one
# pgbench run after a checkpoint, so that no run pays for the previous one's
# dirty pages
run_once() {
	local db=$1 script=$2 c=$3 out j
	shift 3
	j=$((c < THREADS ? c : THREADS))
	q -d "$db" -c CHECKPOINT
	out=$(pgbench -n -M prepared -c "$c" -j "$j" -T "$SECONDS_PER_RUN" "$@" -f "$script" "$db" 2>&1) ||
		{ echo "$out" >&2; echo "pgbench failed: $script" >&2; return 1; }
	grep -q '^number of failed transactions: 0 ' <<<"$out" ||
		{ echo "$out" >&2; echo "failed transactions in $script" >&2; return 1; }
	echo "$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')" \
		"$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')"
}

# side_by_side CLIENTS LABEL DB SCRIPT [LABEL DB SCRIPT ...]: three rounds,
# each running every script once in turn; MED[LABEL] is the median
side_by_side() {
	local c=$1 round i r tps n
	shift
	local -a spec=("$@")
	declare -A got=()
	for round in 1 2 3; do
		for ((i = 0; i < ${#spec[@]}; i += 3)); do
			r=$(run_once "${spec[i + 1]}" "${spec[i + 2]}" "$c" ${PGB_OPTS:-})
			read -r tps n <<<"$r"
			got[${spec[i]}]="${got[${spec[i]}]:-} $tps"
			DONE[${spec[i]}]=$((${DONE[${spec[i]}]:-0} + n))
		done
	done
	for ((i = 0; i < ${#spec[@]}; i += 3)); do
		MED[${spec[i]}]=$(printf "%s\n" ${got[${spec[i]}]} | sort -n | sed -n 2p)
	done
}

# new_db NAME: an empty database with the extension
new_db() {
	q -d postgres -c "CREATE DATABASE $1"
	q -d "$1" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE"
}

# has_stripes DB: the installed extension offers hot-inventory stripes
has_stripes() {
	[ "$(qa -d "$1" -c "SELECT 1 FROM pg_proc WHERE proname = 'set_stripes'")" = 1 ]
}

# set_stripes DB RESOURCE N: stripes a resource or stops the benchmark
set_stripes() {
	local r
	r=$(qa -d "$1" -c "SELECT (r).ok || ' ' || (r).code || ' ' || coalesce((r).message, '')
		FROM (SELECT booking.set_stripes($2, $3) AS r) s")
	case $r in
	"true "*) ;;
	*) echo "booking.set_stripes($2, $3) refused: $r" >&2; return 1 ;;
	esac
}

# plain_tables PREFIX: PREFIX_resources and PREFIX_bookings, plain tables of
# the same shape as the extension's (columns, defaults, checks, indexes and
# the exclusion constraint; since 0.3.0 no foreign key from bookings to
# resources, as in the extension), own sequences.  The column home is there
# too (0 on one server), so the contestants' statements say home = 0 and use
# the same (home, id) keys as the extension's.
plain_tables() {
	q <<SQL
CREATE TABLE ${1}_resources (LIKE booking.resources INCLUDING ALL) WITH (fillfactor = 50);
CREATE SEQUENCE ${1}_resources_id_seq OWNED BY ${1}_resources.id;
ALTER TABLE ${1}_resources ALTER id SET DEFAULT nextval('${1}_resources_id_seq');
CREATE TABLE ${1}_bookings (LIKE booking.bookings INCLUDING ALL);
CREATE SEQUENCE ${1}_bookings_id_seq OWNED BY ${1}_bookings.id;
ALTER TABLE ${1}_bookings ALTER id SET DEFAULT nextval('${1}_bookings_id_seq');
SQL
}

# plain_copy DB PREFIX: plain_tables PREFIX in DB, holding the 1,000 rooms
# and all the bookings of the extension's tables
plain_copy() {
	PGDATABASE=$1 plain_tables "$2"
	q -d "$1" >/dev/null <<SQL
INSERT INTO ${2}_resources SELECT * FROM booking.resources WHERE id <= 1000;
SELECT setval('${2}_resources_id_seq', 1000);
INSERT INTO ${2}_bookings SELECT * FROM booking.bookings;
SELECT setval('${2}_bookings_id_seq', (SELECT max(id) FROM ${2}_bookings));
VACUUM ANALYZE ${2}_bookings;
SQL
}

# make_db NAME BULK: 1,000 rooms, 1,000 seat resources, the same bookings in
# the 2029 query window, plus BULK bookings elsewhere (2031 on)
make_db() {
	local db=$1 bulk=$2
	new_db "$db"
	q -d "$db" >/dev/null <<SQL
SELECT booking.create_resource('room ' || i, 1) FROM generate_series(1, 1000) i;
SELECT booking.create_resource('session ' || i, 1000000000) FROM generate_series(1, 1000) i;
-- every other night of January 2029 is booked in every room
INSERT INTO booking.bookings (resource_id, guest, quantity, during, blocked, status, created_at, validity)
SELECT r, 'seed', 1, tstzrange(d, d + interval '1 day'), tstzrange(d, d + interval '1 day'), 'confirmed', now(), tstzrange(now(), NULL)
FROM generate_series(1, 1000) r,
     generate_series(timestamptz '2029-01-01', '2029-01-31', interval '2 days') d;
-- the bulk, spread evenly over the rooms
INSERT INTO booking.bookings (resource_id, guest, quantity, during, blocked, status, created_at, validity)
SELECT 1 + (g % 1000), 'bulk', 1, s, s, 'confirmed', now(), tstzrange(now(), NULL)
FROM generate_series(0, $bulk - 1) g,
     LATERAL (SELECT tstzrange(timestamptz '2031-01-01' + (g / 1000) * interval '1 day',
                               timestamptz '2031-01-01' + (g / 1000 + 1) * interval '1 day') AS s) d;
VACUUM ANALYZE booking.bookings;
SQL
}

cp bench/scenarios/*.pgb "$work/"
chmod 644 "$work"/*.pgb

echo
echo "$SECONDS_PER_RUN s per pgbench run, -M prepared, median of 3 interleaved runs;"
echo "fsync $(qa -c 'SHOW fsync'), synchronous_commit $(qa -c 'SHOW synchronous_commit')," \
	"wal_sync_method $(qa -c 'SHOW wal_sync_method'); $(nproc) CPUs;" \
	"data on $(df --output=fstype "$BOOKING_DIR" | tail -1); PostgreSQL $(qa -c 'SHOW server_version')"

scenario_hot() {
	local c v hot striped_id
	echo
	echo "== hot: one hot session at clients $HOT_CLIENTS"
	new_db bench_hot
	q -d bench_hot >/dev/null <<'SQL'
-- the ceiling: one counter row, nothing else
CREATE TABLE t (id int PRIMARY KEY, n bigint NOT NULL);
INSERT INTO t VALUES (1, 0);
SQL
	PGDATABASE=bench_hot plain_tables cs
	PGDATABASE=bench_hot plain_tables pl
	PGDATABASE=bench_hot plain_tables fl
	PGDATABASE=bench_hot plain_tables sf
	q -d bench_hot >/dev/null <<'SQL'
INSERT INTO cs_resources (name, capacity) VALUES ('hot session', 2000000000);
INSERT INTO pl_resources (name, capacity) VALUES ('hot session', 2000000000);
INSERT INTO fl_resources (name, capacity) VALUES ('hot session', 2000000000);
INSERT INTO sf_resources (name, capacity) VALUES ('striped session', 2000000000);
-- the striped floor's 16 counter rows, of the extension's shape
CREATE TABLE sf_stripes (LIKE booking.resource_stripes INCLUDING ALL) WITH (fillfactor = 50);
INSERT INTO sf_stripes SELECT 1, s, 125000000 FROM generate_series(0, 15) s;
-- reserve_seat's logic as one PL/pgSQL function over plain tables
CREATE FUNCTION pl_reserve_seat(resource bigint, guest text, quantity integer DEFAULT 1)
    RETURNS booking.result LANGUAGE plpgsql AS $$
DECLARE
    cap integer;
    tk integer;
    id bigint;
    ts timestamptz := clock_timestamp();
BEGIN
    SELECT r.capacity, r.taken INTO cap, tk FROM pl_resources r WHERE r.home = 0 AND r.id = resource FOR UPDATE;
    IF NOT FOUND THEN
        RETURN ROW(false, 'not_found', NULL, 404, 'No such resource.', false)::booking.result;
    END IF;
    IF tk + quantity > cap THEN
        RETURN ROW(false, 'sold_out', NULL, 409, 'Sold out.', false)::booking.result;
    END IF;
    UPDATE pl_resources r SET taken = tk + quantity WHERE r.home = 0 AND r.id = resource;
    INSERT INTO pl_bookings (resource_id, guest, quantity, status, created_at, validity)
    VALUES (resource, guest, quantity, 'confirmed', ts, tstzrange(ts, NULL))
    RETURNING pl_bookings.id INTO id;
    RETURN ROW(true, 'ok', id, 201, 'Booked.', false)::booking.result;
END
$$;
SQL
	hot=$(qa -d bench_hot -c "SELECT booking.create_resource('hot session', 2000000000)")
	if has_stripes bench_hot; then
		STRIPES=1
		striped_id=$(qa -d bench_hot -c "SELECT booking.create_resource('striped session', 2000000000)")
		set_stripes bench_hot "$striped_id" 16
	else
		echo "note: booking.set_stripes is not in the installed extension: the striped runs are skipped"
	fi
	printf "%s\n" "clients ceiling reserve_seat client-side plpgsql floor$([ $STRIPES = 1 ] && echo ' striped striped-floor')" >"$work/throughput.dat"
	for c in $HOT_CLIENTS; do
		local -a spec=(ceiling bench_hot "$work/ceiling.pgb"
			seat bench_hot "$work/hot_seat.pgb"
			client bench_hot "$work/client_flow.pgb"
			plpgsql bench_hot "$work/plpgsql_seat.pgb"
			floor bench_hot "$work/floor_seat.pgb")
		[ $STRIPES = 1 ] && spec+=(striped bench_hot "$work/striped_seat.pgb"
			sfloor bench_hot "$work/floor_striped.pgb")
		PGB_OPTS="-D hot=$hot -D striped=${striped_id:-0}" side_by_side "$c" "${spec[@]}"
		for v in ceiling seat client plpgsql floor striped sfloor; do MED[$v@$c]=${MED[$v]:-}; done
		echo "$c ${MED[ceiling]} ${MED[seat]} ${MED[client]} ${MED[plpgsql]} ${MED[floor]}$([ $STRIPES = 1 ] && echo " ${MED[striped]} ${MED[sfloor]}")" >>"$work/throughput.dat"
	done
	# every transaction did its work: a booking each, or one increment
	local rows want=
	rows="$(qa -d bench_hot -c "SELECT n FROM t") $(qa -d bench_hot -c "SELECT count(*) FROM booking.bookings WHERE resource_id = $hot")"
	rows="$rows $(qa -d bench_hot -c "SELECT count(*) FROM cs_bookings") $(qa -d bench_hot -c "SELECT count(*) FROM pl_bookings")"
	rows="$rows $(qa -d bench_hot -c "SELECT count(*) FROM fl_bookings")"
	want="${DONE[ceiling]} ${DONE[seat]} ${DONE[client]} ${DONE[plpgsql]} ${DONE[floor]}"
	if [ $STRIPES = 1 ]; then
		rows="$rows $(qa -d bench_hot -c "SELECT count(*) FROM booking.bookings WHERE resource_id = $striped_id")"
		rows="$rows $(qa -d bench_hot -c "SELECT count(*) FROM sf_bookings")"
		want="$want ${DONE[striped]} ${DONE[sfloor]}"
	fi
	if [ "$rows" = "$want" ]; then
		echo "checked: one increment or one booking per transaction ($rows)"
	else
		echo "rows written ($rows) differ from the transactions run ($want)"
		TARGETS+=("hot: one booking per transaction: FAIL (rows $rows, transactions $want)")
	fi
	echo
	printf "%-8s %10s %13s %12s %10s %10s %10s %14s\n" clients ceiling reserve_seat client-side plpgsql floor striped striped-floor
	for c in $HOT_CLIENTS; do
		printf "%-8s %10.0f %13.0f %12.0f %10.0f %10.0f %10s %14s\n" "$c" "${MED[ceiling@$c]}" "${MED[seat@$c]}" \
			"${MED[client@$c]}" "${MED[plpgsql@$c]}" "${MED[floor@$c]}" \
			"$([ $STRIPES = 1 ] && printf "%.0f" "${MED[striped@$c]}" || echo skipped)" \
			"$([ $STRIPES = 1 ] && printf "%.0f" "${MED[sfloor@$c]}" || echo skipped)"
	done
	echo "ratios (same run):"
	printf "%-8s %13s %13s %13s %12s %14s %15s %15s\n" clients seat/ceiling seat/client seat/plpgsql seat/floor floor/ceiling striped/ceiling sfloor/ceiling
	for c in $HOT_CLIENTS; do
		printf "%-8s %13s %13s %13s %12s %14s %15s %15s\n" "$c" "$(ratio "${MED[seat@$c]}" "${MED[ceiling@$c]}")" \
			"$(ratio "${MED[seat@$c]}" "${MED[client@$c]}")" \
			"$(ratio "${MED[seat@$c]}" "${MED[plpgsql@$c]}")" \
			"$(ratio "${MED[seat@$c]}" "${MED[floor@$c]}")" \
			"$(ratio "${MED[floor@$c]}" "${MED[ceiling@$c]}")" \
			"$([ $STRIPES = 1 ] && ratio "${MED[striped@$c]}" "${MED[ceiling@$c]}" || echo -)" \
			"$([ $STRIPES = 1 ] && ratio "${MED[sfloor@$c]}" "${MED[ceiling@$c]}" || echo -)"
	done
	# the targets of issue 16: against what a user would write, and against
	# the floors; the ceiling is a reference
	for c in $HOT_CLIENTS; do
		[ -n "${MED[seat@$c]:-}" ] || continue
		target "reserve_seat / plpgsql at $c clients" "$(ratio "${MED[seat@$c]}" "${MED[plpgsql@$c]}")" ">=" 1.00
		target "reserve_seat / client-side flow at $c clients" "$(ratio "${MED[seat@$c]}" "${MED[client@$c]}")" ">=" 1.30
		target "reserve_seat / floor at $c clients" "$(ratio "${MED[seat@$c]}" "${MED[floor@$c]}")" ">=" 0.90
		reference "  reference: reserve_seat / ceiling at $c clients" "$(ratio "${MED[seat@$c]}" "${MED[ceiling@$c]}")"
	done
	for c in $HOT_CLIENTS; do
		[ "$c" -ge 8 ] && [ -n "${MED[ceiling@$c]:-}" ] || continue
		if [ $STRIPES = 1 ]; then
			target "striped reserve_seat / striped floor at $c clients" "$(ratio "${MED[striped@$c]}" "${MED[sfloor@$c]}")" ">=" 0.85
			reference "  reference: striped reserve_seat / ceiling at $c clients" "$(ratio "${MED[striped@$c]}" "${MED[ceiling@$c]}")"
		else
			skip_target "striped reserve_seat / striped floor at $c clients" "no set_stripes"
		fi
	done
	mkdir -p "$(dirname "$PLOT")"
	gnuplot -e "datafile='$work/throughput.dat'; outfile='$PLOT'; seconds=$SECONDS_PER_RUN" bench/plot.gp
	echo "plot: $PLOT"
}

scenario_stays() {
	echo
	echo "== stays: reserve_stay vs a raw exclusion-constrained INSERT and the same logic in PL/pgSQL over 1,000 rooms, $STAY_CLIENTS clients"
	make_db bench_stays 0
	# the same rooms and the same seed bookings in the raw and PL/pgSQL tables
	plain_copy bench_stays raw
	plain_copy bench_stays pls
	q -d bench_stays >/dev/null <<'SQL'
-- reserve_stay's logic as one PL/pgSQL function over plain tables: the room
-- exists, a friendly pre-check, the room's lock, an insert that the
-- exclusion constraint guards
CREATE FUNCTION pl_reserve_stay(room bigint, guest text, want tstzrange)
    RETURNS booking.result LANGUAGE plpgsql AS $$
DECLARE
    ts timestamptz := clock_timestamp();
    id bigint;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pls_resources r WHERE r.home = 0 AND r.id = room) THEN
        RETURN ROW(false, 'not_found', NULL, 404, 'No such resource.', false)::booking.result;
    END IF;
    IF EXISTS (SELECT 1 FROM pls_bookings b WHERE b.home = 0 AND b.resource_id = room
               AND b.blocked && want AND b.validity && tstzrange(ts, NULL)
               AND b.blocked IS NOT NULL AND b.status IN ('pending', 'confirmed')) THEN
        RETURN ROW(false, 'unavailable', NULL, 409, 'Already booked.', false)::booking.result;
    END IF;
    PERFORM 1 FROM pls_resources r WHERE r.home = 0 AND r.id = room FOR NO KEY UPDATE;
    INSERT INTO pls_bookings (resource_id, guest, quantity, during, blocked, status, created_at, validity)
    VALUES (room, guest, 1, want, want, 'confirmed', ts, tstzrange(ts, NULL))
    ON CONFLICT DO NOTHING RETURNING pls_bookings.id INTO id;
    IF id IS NULL THEN
        RETURN ROW(false, 'just_taken', NULL, 409, 'Just taken.', false)::booking.result;
    END IF;
    RETURN ROW(true, 'ok', id, 201, 'Booked.', false)::booking.result;
END
$$;
VACUUM ANALYZE;
SQL
	side_by_side "$STAY_CLIENTS" stay bench_stays "$work/wide_stay.pgb" raw bench_stays "$work/raw_stay.pgb" \
		plstay bench_stays "$work/plpgsql_stay.pgb"
	printf "%-14s %14s %14s %14s %10s %10s\n" clients reserve_stay "raw insert" plpgsql stay/raw stay/plpgsql
	printf "%-14s %14.0f %14.0f %14.0f %10s %10s\n" "$STAY_CLIENTS" "${MED[stay]}" "${MED[raw]}" "${MED[plstay]}" \
		"$(ratio "${MED[stay]}" "${MED[raw]}")" "$(ratio "${MED[stay]}" "${MED[plstay]}")"
	echo "booked: $(qa -d bench_stays -c "SELECT count(*) FROM booking.bookings WHERE guest = 'bench'") stays," \
		"$(qa -d bench_stays -c "SELECT count(*) FROM raw_bookings WHERE guest = 'bench'") raw rows," \
		"$(qa -d bench_stays -c "SELECT count(*) FROM pls_bookings WHERE guest = 'bench'") PL/pgSQL stays"
	target "reserve_stay / raw insert at $STAY_CLIENTS clients" "$(ratio "${MED[stay]}" "${MED[raw]}")" ">=" 0.90
	target "reserve_stay / PL/pgSQL at $STAY_CLIENTS clients" "$(ratio "${MED[stay]}" "${MED[plstay]}")" ">=" 1.00
}

scenario_size() {
	local call
	echo
	echo "== size: cost against table size, $CLIENTS clients"
	make_db bench_small 10000
	make_db bench_large 1000000
	# the floors run on the same bookings in plain tables
	plain_copy bench_small raw
	plain_copy bench_large raw
	printf "%-14s %12s %12s %8s\n" call "10k tps" "1M tps" "1M/10k"
	for call in stay raw_stay seat slots raw_slots; do
		side_by_side "$CLIENTS" small bench_small "$work/$call.pgb" large bench_large "$work/$call.pgb"
		printf "%-14s %12.0f %12.0f %8s\n" "$call" "${MED[small]}" "${MED[large]}" "$(ratio "${MED[large]}" "${MED[small]}")"
		if [ "$call" = raw_stay ]; then
			echo "  (the floor of stay: a raw exclusion-constrained INSERT into plain tables of the same bookings)"
		elif [ "$call" = raw_slots ]; then
			echo "  (the floor of slots: the same gaps read by hand from those plain tables)"
		else
			target "$call: 1M bookings / 10k bookings" "$(ratio "${MED[large]}" "${MED[small]}")" ">=" 0.95
		fi
	done
}

scenario_keys() {
	local call
	echo
	echo "== keys: the same calls with and without an idempotency key, $CLIENTS clients"
	make_db bench_keys 10000
	printf "%-14s %12s %12s %8s\n" call "no key tps" "key tps" "key/none"
	for call in seat stay; do
		side_by_side "$CLIENTS" plain bench_keys "$work/$call.pgb" keyed bench_keys "$work/${call}_key.pgb"
		printf "%-14s %12.0f %12.0f %8s\n" "$call" "${MED[plain]}" "${MED[keyed]}" "$(ratio "${MED[keyed]}" "${MED[plain]}")"
		target "$call: with a key / without (cost <= 10%)" "$(ratio "${MED[keyed]}" "${MED[plain]}")" ">=" 0.90
	done
}

scenario_limit() {
	echo
	echo "== limit: reserve_seat without and with a guest limit, and the limit by hand in PL/pgSQL, $CLIENTS clients"
	make_db bench_limit 0
	PGDATABASE=bench_limit plain_tables pll
	q -d bench_limit >/dev/null <<'SQL'
SELECT booking.create_resource('limited session ' || i, 1000000000) FROM generate_series(1, 1000) i;
SELECT count(*) FROM booking.resources r, LATERAL booking.set_guest_limit(r.id, 1000000000) s
 WHERE r.id > 2000 AND s.ok;
INSERT INTO pll_resources (name, capacity, guest_limit)
SELECT 'session ' || i, 1000000000, 1000000000 FROM generate_series(1, 1000) i;
-- what a user would add for the count
CREATE INDEX ON pll_bookings (home, resource_id, guest) WHERE status IN ('pending', 'confirmed');
-- reserve_seat with a per-guest limit as one PL/pgSQL function: the row
-- lock, the guest's holding counted under it, the counter, the row
CREATE FUNCTION pll_reserve_seat(resource bigint, guest text, quantity integer DEFAULT 1)
    RETURNS booking.result LANGUAGE plpgsql AS $$
DECLARE
    cap integer;
    tk integer;
    lim integer;
    held bigint;
    id bigint;
    ts timestamptz := clock_timestamp();
BEGIN
    SELECT r.capacity, r.taken, r.guest_limit INTO cap, tk, lim
      FROM pll_resources r WHERE r.home = 0 AND r.id = resource FOR UPDATE;
    IF NOT FOUND THEN
        RETURN ROW(false, 'not_found', NULL, 404, 'No such resource.', false)::booking.result;
    END IF;
    IF lim IS NOT NULL THEN
        SELECT coalesce(sum(b.quantity), 0) INTO held FROM pll_bookings b
         WHERE b.home = 0 AND b.resource_id = resource AND b.guest = pll_reserve_seat.guest
           AND b.status IN ('pending', 'confirmed') AND (b.expires_at IS NULL OR b.expires_at > ts);
        IF held + quantity > lim THEN
            RETURN ROW(false, 'guest_limit', NULL, 409, 'Guest limit.', false)::booking.result;
        END IF;
    END IF;
    IF tk + quantity > cap THEN
        RETURN ROW(false, 'sold_out', NULL, 409, 'Sold out.', false)::booking.result;
    END IF;
    UPDATE pll_resources r SET taken = tk + quantity WHERE r.home = 0 AND r.id = resource;
    INSERT INTO pll_bookings (resource_id, guest, quantity, status, created_at, validity)
    VALUES (resource, guest, quantity, 'confirmed', ts, tstzrange(ts, NULL))
    RETURNING pll_bookings.id INTO id;
    RETURN ROW(true, 'ok', id, 201, 'Booked.', false)::booking.result;
END
$$;
VACUUM ANALYZE;
SQL
	side_by_side "$CLIENTS" none bench_limit "$work/limit_none.pgb" limited bench_limit "$work/limit_set.pgb" \
		plpgsql bench_limit "$work/limit_plpgsql.pgb"
	printf "%-8s %12s %12s %14s %14s %16s\n" clients "no limit" "limit" "plpgsql limit" "limit/none" "limit/plpgsql"
	printf "%-8s %12.0f %12.0f %14.0f %14s %16s\n" "$CLIENTS" "${MED[none]}" "${MED[limited]}" "${MED[plpgsql]}" \
		"$(ratio "${MED[limited]}" "${MED[none]}")" "$(ratio "${MED[limited]}" "${MED[plpgsql]}")"
	# the counters agree with the rows, and the limited rows were counted
	if [ "$(qa -d bench_limit -c "SELECT count(*) FROM booking.resources r WHERE r.taken <> (SELECT coalesce(sum(quantity), 0)
		FROM booking.bookings b WHERE b.resource_id = r.id AND b.during IS NULL AND b.status IN ('pending', 'confirmed'))")" != 0 ] ||
		[ "$(qa -d bench_limit -c "SELECT count(*) FROM booking.bookings WHERE (resource_id > 2000) <> limited")" != 0 ]; then
		echo "limit: the counters or the limited marks are wrong" >&2
		return 1
	fi
	target "reserve_seat with a guest limit / PL/pgSQL limit" "$(ratio "${MED[limited]}" "${MED[plpgsql]}")" ">=" 1.00
	reference "reserve_seat with a guest limit / without" "$(ratio "${MED[limited]}" "${MED[none]}")"
}

scenario_events() {
	local db cfg round r tps n relay
	declare -A got=()
	echo
	echo "== events: the outbox and NOTIFY; reserve_stay over 1,000 rooms at $STAY_CLIENTS clients, reserve_seat on one hot session at $CLIENTS"
	# none: no consumer, so no events; quiet: a consumer, booking.notify off
	# (the events' own cost); self: a consumer, and each transaction that
	# wrote events notifies; worker: a consumer, and the expiry worker
	# notifies (booking.database); listen: the same with a session that
	# LISTENs; relay: with a relay that LISTENs and drains meanwhile
	for db in bench_ev_none bench_ev_quiet bench_ev_self bench_ev_worker; do
		new_db $db
		q -d $db >/dev/null <<'SQL'
SELECT booking.create_resource('room ' || i, 1) FROM generate_series(1, 1000) i;
SELECT booking.create_resource('hot session', 2000000000);
SQL
	done
	qa -d bench_ev_quiet -c "SELECT booking.add_consumer('relay')" >/dev/null
	q -d postgres -c "ALTER DATABASE bench_ev_quiet SET booking.notify = off" >/dev/null
	qa -d bench_ev_self -c "SELECT booking.add_consumer('relay')" >/dev/null
	qa -d bench_ev_worker -c "SELECT booking.add_consumer('relay')" >/dev/null
	echo "booking.database = 'bench_ev_worker'" >>"$BOOKING_DIR/data/postgresql.conf"
	restart_preloaded on
	for ((n = 0; n < 100; n++)); do
		[ "$(qa -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker'")" = 1 ] && break
		sleep 0.1
	done
	# the relay: one session that LISTENs, and claims and acknowledges a
	# batch every 200 ms (psql reads the notifications after each command)
	# start_relay drain|listen: with drain, it also claims and acknowledges
	start_relay() {
		local step="SELECT 1;"
		[ "$1" = drain ] && step="SELECT booking.ack_events('relay', t, a) FROM (SELECT max(lease_token) AS t, array_agg(event_id) AS a FROM booking.claim_events('relay', 10000)) c WHERE t IS NOT NULL;"
		touch "$work/relay.on"
		( echo "LISTEN booking_events;"
		  while [ -e "$work/relay.on" ]; do
			echo "$step"
			sleep 0.2
		  done ) | psql -X -q -d bench_ev_worker >/dev/null 2>&1 &
		relay=$!
	}
	stop_relay() { rm -f "$work/relay.on"; wait "$relay" || true; }
	for round in 1 2 3; do
		for cfg in none quiet self worker listen relay; do
			db=bench_ev_$cfg
			case $cfg in
			listen) db=bench_ev_worker; start_relay listen ;;
			relay) db=bench_ev_worker; start_relay drain ;;
			esac
			r=$(run_once $db "$work/wide_stay.pgb" "$STAY_CLIENTS")
			read -r tps n <<<"$r"
			got[stay_$cfg]="${got[stay_$cfg]:-} $tps"
			r=$(run_once $db "$work/hot_seat.pgb" "$CLIENTS" -D hot=1001)
			read -r tps n <<<"$r"
			got[seat_$cfg]="${got[seat_$cfg]:-} $tps"
			case $cfg in listen | relay) stop_relay ;; esac
		done
	done
	for cfg in none quiet self worker listen relay; do
		MED[stay_$cfg]=$(printf "%s\n" ${got[stay_$cfg]} | sort -n | sed -n 2p)
		MED[seat_$cfg]=$(printf "%s\n" ${got[seat_$cfg]} | sort -n | sed -n 2p)
	done
	echo "(each against no consumer, in parentheses; then against a consumer without NOTIFY)"
	printf "%-26s %8s %14s %14s %14s %14s %14s\n" "" "none" "no-notify" "self-notify" "worker-notify" "and listener" "and relay"
	for w in stay seat; do
		printf "%-26s %8.0f" "$([ $w = stay ] && echo "reserve_stay, $STAY_CLIENTS clients" || echo "reserve_seat, $CLIENTS clients")" \
			"${MED[${w}_none]}"
		for cfg in quiet self worker listen relay; do
			printf " %14s" "$(printf "%.0f (%s)" "${MED[${w}_$cfg]}" "$(ratio "${MED[${w}_$cfg]}" "${MED[${w}_none]}")")"
		done
		echo
	done
	for db in bench_ev_quiet bench_ev_self bench_ev_worker; do
		v=$(qa -d $db -c "SELECT (SELECT count(*) FROM booking.bookings) = (SELECT count(*) FROM booking.events WHERE kind = 'reserved')")
		[ "$v" = t ] || { echo "$db: the bookings and their reserved events differ"; TARGETS+=("events: one event per booking in $db: FAIL"); }
	done
	[ "$(qa -d bench_ev_none -c "SELECT count(*) FROM booking.events")" = 0 ] ||
		{ echo "bench_ev_none: events without a consumer"; TARGETS+=("events: none without a consumer: FAIL"); }
	echo "checked: one reserved event per booking with a consumer, none without;" \
		"the relay acknowledged $(qa -d bench_ev_worker -c "SELECT count(*) FROM booking.deliveries WHERE acked_at IS NOT NULL") events"
	sed -i "/^booking.database = 'bench_ev_worker'\$/d" "$BOOKING_DIR/data/postgresql.conf"
	restart_preloaded off
	# issue 29: a sale that writes its event (a consumer is registered) at
	# 0.9 of one that writes none
	target "events: stays, events without NOTIFY / no consumer" "$(ratio "${MED[stay_quiet]}" "${MED[stay_none]}")" ">=" 0.90
	target "events: hot seat, events without NOTIFY / none" "$(ratio "${MED[seat_quiet]}" "${MED[seat_none]}")" ">=" 0.90
	reference "events: stays, transactions notify / no NOTIFY" "$(ratio "${MED[stay_self]}" "${MED[stay_quiet]}")"
	target "events: stays, worker notifies / no NOTIFY" "$(ratio "${MED[stay_worker]}" "${MED[stay_quiet]}")" ">=" 0.90
	target "events: stays, worker and a listener / no NOTIFY" "$(ratio "${MED[stay_listen]}" "${MED[stay_quiet]}")" ">=" 0.90
	reference "events: stays, worker and a draining relay / none" "$(ratio "${MED[stay_relay]}" "${MED[stay_none]}")"
	reference "events: hot seat, worker and a draining relay / none" "$(ratio "${MED[seat_relay]}" "${MED[seat_none]}")"
}

# sell_once MODE ROUND: a flash sale of a fresh 2,000-seat resource.  64
# clients connect and warm up with one call on a resource of the same layout
# (not timed), as an application's pooled connections have served calls before
# a sale opens, and wait for the opening, 2 s after the start; then each makes
# 48 calls (3,072 attempts for 2,000 seats: demand exceeds supply).  Prints
# "seconds p50_ms p99_ms calls": the time from the opening to the last sale
# (the last booking row's created_at, taken when it is written), and the
# nearest-rank percentiles of the latencies of the calls that started before
# that last sale.  Clients that have made all their calls disconnect, so a
# fixed number of calls just covering the seats would time the clients'
# leaving as much as the sale.
sell_once() {
	local mode=$1 round=$2 res warm sold left opens last span late
	res=$(qa -d bench_sellout -c "SELECT booking.create_resource('sale $mode $round', 2000)")
	warm=$(qa -d bench_sellout -c "SELECT booking.create_resource('warm-up $mode $round', 1000000)")
	[ "${mode%_delay}" = single ] || { set_stripes bench_sellout "$res" 16; set_stripes bench_sellout "$warm" 16; }
	q -d bench_sellout -c CHECKPOINT
	opens=$(qa -d bench_sellout -c "SELECT round(extract(epoch FROM pg_catalog.clock_timestamp()) + 2, 3)")
	PGOPTIONS="${SELL_PGOPTIONS:-}" pgbench -n -M prepared -c 64 -j "$THREADS" -t 49 -l --log-prefix="$work/sell.$mode.$round" \
		-D resource="$res" -D warm="$warm" -D warmed=0 -D opens="$opens" \
		-f "$work/sellout.pgb" bench_sellout >"$work/sell.out" 2>&1 ||
		{ cat "$work/sell.out" >&2; echo "pgbench failed in the sell-out" >&2; return 1; }
	sold=$(qa -d bench_sellout -c "SELECT coalesce(sum(quantity), 0) FROM booking.bookings
		WHERE resource_id = $res AND status IN ('pending', 'confirmed')")
	left=$(qa -d bench_sellout -c "SELECT booking.seats_left($res)")
	if [ "$sold" != 2000 ] || [ "$left" != 0 ]; then
		echo "sell-out $mode: sold $sold and $left left, expected 2000 and 0" >&2
		echo "$mode round $round: sold $sold, $left left" >>"$work/sellout.wrong"
	fi
	# the last sale: microseconds since the epoch, and seconds after the opening
	read -r last span <<<"$(qa -d bench_sellout -F ' ' -c "SELECT
		(extract(epoch FROM max(created_at)) * 1000000)::bigint, round(extract(epoch FROM max(created_at)) - $opens, 3)
		FROM booking.bookings WHERE resource_id = $res")"
	# a log line: client_id transaction_no latency_us script_no epoch_s epoch_us;
	# transaction 1 of each client is its warm-up and the wait for the opening
	late=$(cat "$work/sell.$mode.$round".* | awk -v opens="$opens" '$2 == 1 && $5 + $6 / 1e6 > opens + 0.25 { n++ } END { print n + 0 }')
	if [ "$late" != 0 ]; then
		echo "sell-out $mode: $late clients were not ready at the opening" >&2
		return 1
	fi
	# the calls until the last sale, kept for the percentiles over all rounds
	cat "$work/sell.$mode.$round".* | awk -v last="$last" '$2 > 1 && $5 * 1000000 + $6 - $3 <= last { print $3 }' |
		tee -a "$work/latencies.$mode" | sort -n | awk -v span="$span" '
		{ l[NR] = $1 } END {
		p50 = l[int(NR * 0.50 + 0.999999)]; p99 = l[int(NR * 0.99 + 0.999999)]
		printf "%s %.2f %.2f %d\n", span, p50 / 1000, p99 / 1000, NR }'
	rm -f "$work/sell.$mode.$round".*
}

# sellout_tail MODES SUFFIX: p50, p99 and p99.9 per call over the calls of
# all three rounds of each mode (up to the last sale), and the reference lines
sellout_tail() {
	local mode f n p50 p99 p999
	printf "%-16s %8s %8s %8s %8s  (all rounds' calls until the last sale)\n" mode calls "p50 ms" "p99 ms" "p99.9 ms"
	for mode in $1; do
		f=$work/latencies.$mode$2
		read -r n p50 p99 p999 <<<"$(sort -n "$f" | awk '{ l[NR] = $1 } END {
			printf "%d %.2f %.2f %.2f", NR, l[int(NR * 0.50 + 0.999999)] / 1000,
				l[int(NR * 0.99 + 0.999999)] / 1000, l[int(NR * 0.999 + 0.999999)] / 1000 }')"
		printf "%-16s %8s %8s %8s %8s\n" "$mode$2" "$n" "$p50" "$p99" "$p999"
		reference "sell-out $mode$2: p50 / p99 / p99.9 ms" "$p50 / $p99 / $p999"
	done
}

scenario_sellout() {
	local mode round modes=single r secs p50 p99 calls
	declare -A s=() p=() n=()
	rm -f "$work/sellout.wrong"
	echo
	echo "== sellout: 2,000 seats, 64 warm clients x 48 calls from the opening"
	new_db bench_sellout
	if has_stripes bench_sellout; then
		STRIPES=1
		modes="single striped"
	else
		echo "note: booking.set_stripes is not in the installed extension: the striped sell-out is skipped"
	fi
	for round in 1 2 3; do
		for mode in $modes; do
			r=$(sell_once "$mode" "$round")
			read -r secs p50 p99 calls <<<"$r"
			[ "$calls" -ge 2000 ] || { echo "sell-out $mode: $calls calls before the last sale, expected at least 2000" >&2; return 1; }
			s[$mode]="${s[$mode]:-} $secs"; p[$mode]="${p[$mode]:-} $p50"; n[$mode]="${n[$mode]:-} $p99"
		done
	done
	printf "%-10s %10s %10s %10s\n" mode seconds "p50 ms" "p99 ms"
	for mode in $modes; do
		MED[sell_$mode]=$(printf "%s\n" ${s[$mode]} | sort -n | sed -n 2p)
		printf "%-10s %10s %10s %10s\n" "$mode" "${MED[sell_$mode]}" \
			"$(printf "%s\n" ${p[$mode]} | sort -n | sed -n 2p)" "$(printf "%s\n" ${n[$mode]} | sort -n | sed -n 2p)"
	done
	sellout_tail "$modes" ""
	# the same with the WAL flush of one commit delayed for others to join it
	# (commit_delay, a superuser's setting, per connection here; commit_siblings
	# stays 5, always reached at 64 clients)
	for round in 1 2 3; do
		for mode in $modes; do
			r=$(SELL_PGOPTIONS="-c commit_delay=$COMMIT_DELAY" sell_once "${mode}_delay" "$round")
			read -r secs p50 p99 calls <<<"$r"
			[ "$calls" -ge 2000 ] || { echo "sell-out ${mode}_delay: $calls calls before the last sale, expected at least 2000" >&2; return 1; }
			s[${mode}_delay]="${s[${mode}_delay]:-} $secs"
		done
	done
	sellout_tail "$modes" _delay
	for mode in $modes; do
		MED[sell_${mode}_delay]=$(printf "%s\n" ${s[${mode}_delay]} | sort -n | sed -n 2p)
		echo "commit_delay $COMMIT_DELAY us, $mode: sold out in ${MED[sell_${mode}_delay]} s against ${MED[sell_$mode]} s"
		reference "sell-out $mode: time with commit_delay $COMMIT_DELAY / without" \
			"$(ratio "${MED[sell_${mode}_delay]}" "${MED[sell_$mode]}")"
	done
	if [ -f "$work/sellout.wrong" ]; then
		TARGETS+=("sell-out: exact totals FAIL: $(paste -sd ';' "$work/sellout.wrong")")
	fi
	if [ "$modes" = "single striped" ]; then
		echo "ratio single/striped time: $(ratio "${MED[sell_single]}" "${MED[sell_striped]}")"
		target "sell-out: single-row time / striped time" "$(ratio "${MED[sell_single]}" "${MED[sell_striped]}")" ">=" 2.50
	else
		skip_target "sell-out: single-row time / striped time" "no set_stripes"
	fi
}

scenario_pooler() {
	local first hot round i r tps n label want got_n
	local -a order spec
	declare -A got=()
	echo
	echo "== pooler: reserve_seat through pgbouncer (transaction mode, pool 20) at 200 clients vs 20 direct"
	. test/lib/pgbouncer.sh
	pgbouncer_need || return 1
	new_db bench_pool
	first=$(qa -d bench_pool -c "SELECT min(booking.create_resource('session ' || i, 2000000000)) FROM generate_series(1, 1000) i")
	hot=$(qa -d bench_pool -c "SELECT booking.create_resource('hot session', 2000000000)")
	pgbouncer_start "$((BOOKING_PORT + 1))" postgres \
		"bench_pool = host=$BOOKING_DIR port=$BOOKING_PORT dbname=bench_pool" || return 1
	trap 'pgbouncer_stop; booking_cluster_stop; rm -rf "$work"' EXIT
	echo "pgbouncer $PGBOUNCER_VERSION, pool_mode transaction, default_pool_size 20"
	# LABEL CLIENTS HOST PORT SESSIONS FIRST
	spec=(direct_spread 20 "$BOOKING_DIR" "$BOOKING_PORT" 1000 "$first"
		pooled_spread 200 "$PGBOUNCER_DIR" "$PGBOUNCER_PORT" 1000 "$first"
		direct_hot 20 "$BOOKING_DIR" "$BOOKING_PORT" 1 "$hot"
		pooled_hot 200 "$PGBOUNCER_DIR" "$PGBOUNCER_PORT" 1 "$hot")
	for round in 1 2 3; do
		order=(0 6 12 18)
		[ "$round" = 2 ] && order=(18 12 6 0)
		for i in "${order[@]}"; do
			r=$(PGHOST=${spec[i + 2]} PGPORT=${spec[i + 3]} run_once bench_pool "$work/pool_seat.pgb" \
				"${spec[i + 1]}" -M extended -D first="${spec[i + 5]}" -D n="${spec[i + 4]}")
			read -r tps n <<<"$r"
			got[${spec[i]}]="${got[${spec[i]}]:-} $tps"
			DONE[${spec[i]}]=$((${DONE[${spec[i]}]:-0} + n))
		done
	done
	printf "%-32s %10s %12s\n" "" "tps" "transactions"
	for ((i = 0; i < ${#spec[@]}; i += 6)); do
		label=${spec[i]}
		MED[$label]=$(printf "%s\n" ${got[$label]} | sort -n | sed -n 2p)
		printf "%-32s %10.0f %12s\n" "$label (${spec[i + 1]} clients)" "${MED[$label]}" "${DONE[$label]}"
	done
	pgbouncer_stop
	trap 'booking_cluster_stop; rm -rf "$work"' EXIT
	# every transaction booked one seat: nothing lost, nothing doubled
	want=$((DONE[direct_spread] + DONE[pooled_spread]))
	got_n=$(qa -d bench_pool -c "SELECT count(*) || ' ' || (SELECT sum(taken) FROM booking.resources WHERE id BETWEEN $first AND $((first + 999)))
		FROM booking.bookings WHERE resource_id BETWEEN $first AND $((first + 999)) AND status = 'confirmed'")
	[ "$got_n" = "$want $want" ] ||
		TARGETS+=("pooler: spread: bookings and taken = transactions ($want): FAIL ($got_n)")
	want=$((DONE[direct_hot] + DONE[pooled_hot]))
	got_n=$(qa -d bench_pool -c "SELECT count(*) || ' ' || (SELECT taken FROM booking.resources WHERE id = $hot)
		FROM booking.bookings WHERE resource_id = $hot AND status = 'confirmed'")
	[ "$got_n" = "$want $want" ] ||
		TARGETS+=("pooler: hot: bookings and taken = transactions ($want): FAIL ($got_n)")
	target "pooler: 200 via pgbouncer / 20 direct, 1,000 sessions" "$(ratio "${MED[pooled_spread]}" "${MED[direct_spread]}")" ">=" 0.90
	target "pooler: 200 via pgbouncer / 20 direct, hot session" "$(ratio "${MED[pooled_hot]}" "${MED[direct_hot]}")" ">=" 0.90
}

# plain_queue DB: the floor of an outbox, the columns of an event and of its
# delivery in one table, drained by relay_plain.pgb
plain_queue() {
	q -d "$1" >/dev/null <<'SQL'
CREATE TABLE plain_queue (
    id          bigserial PRIMARY KEY,
    resource_id bigint NOT NULL,
    booking_id  bigint,
    guest       text,
    kind        text NOT NULL,
    payload     jsonb NOT NULL,
    created_at  timestamptz NOT NULL,
    lease_token bigint,
    lease_until timestamptz,
    attempts    integer NOT NULL DEFAULT 0,
    acked_at    timestamptz
);
CREATE INDEX plain_queue_open_idx ON plain_queue (id) WHERE acked_at IS NULL;
CREATE SEQUENCE plain_token_seq;
SQL
}

# relay_backlog SIDE: the backlog of RELAY_EVENTS event rows, half on the hot
# resource and half over the 1,000 others, as sales write them while no
# relay runs (unnumbered: a default install numbers at the claim); for the
# plain side the same rows in plain_queue.  Then VACUUM ANALYZE, as a table
# a relay drains has been vacuumed by autovacuum meanwhile.
relay_backlog() {
	local rows="SELECT CASE WHEN g % 2 = 0 THEN $RELAY_HOT ELSE $RELAY_FIRST + (g / 2) % 1000 END AS r,
		g AS b, 'guest ' || g AS guest, 'reserved' AS kind,
		jsonb_build_object('quantity', 1, 'during', tstzrange(now(), now() + interval '1 day')::text,
			'status_after', 'confirmed', 'code', 'ok') AS payload
		FROM generate_series(1, $RELAY_EVENTS) g"
	if [ "$1" = booking ]; then
		q -d bench_relay >/dev/null <<SQL
TRUNCATE booking.events, booking.deliveries, booking.event_heads;
INSERT INTO booking.events (home, id, resource_id, booking_id, guest, kind, payload, created_at)
SELECT 0, nextval('booking.events_id_seq'), r, b, guest, kind, payload, clock_timestamp() FROM ($rows) s;
VACUUM ANALYZE booking.events, booking.deliveries, booking.event_heads;
SQL
	else
		q -d bench_relay >/dev/null <<SQL
TRUNCATE plain_queue;
INSERT INTO plain_queue (resource_id, booking_id, guest, kind, payload, created_at)
SELECT r, b, guest, kind, payload, clock_timestamp() FROM ($rows) s;
VACUUM ANALYZE plain_queue;
SQL
	fi
}

# relay_drain SIDE RELAYS: drains the backlog with RELAYS pgbench clients
# (each a relay: claim 100, acknowledge them, again) and prints the seconds
# from the start to the last acknowledgement.  pgbench runs until a poll
# (every 0.25 s) finds nothing left, then is killed (a background job
# ignores SIGINT): the time is read off
# the rows, so the clients' idle claims after the end do not count; their
# connecting (a few milliseconds each) does, on both sides alike.  The
# poll reads the open rows' partial indexes (enable_seqscan off): planned
# from the statistics of the backlog, the booking side's look for an
# unnumbered event was a scan of the whole events table (44 ms, ten times
# a second), which took a fifth of the 2 cores from booking's relays alone.
relay_drain() {
	local side=$1 c=$2 pid started left done_q last_q
	if [ "$side" = booking ]; then
		done_q="SELECT NOT EXISTS (SELECT 1 FROM booking.events WHERE seq IS NULL)
			AND NOT EXISTS (SELECT 1 FROM booking.deliveries WHERE acked_at IS NULL)"
		last_q="SELECT max(acked_at) FROM booking.deliveries"
	else
		done_q="SELECT NOT EXISTS (SELECT 1 FROM plain_queue WHERE acked_at IS NULL)"
		last_q="SELECT max(acked_at) FROM plain_queue"
	fi
	q -d bench_relay -c CHECKPOINT
	started=$(qa -d bench_relay -c "SELECT clock_timestamp()")
	pgbench -n -M prepared -c "$c" -j "$((c < THREADS ? c : THREADS))" -T 600 \
		-f "$work/relay_$side.pgb" bench_relay >"$work/relay.out" 2>&1 &
	pid=$!
	for ((left = 1200; left > 0; left--)); do
		sleep 0.25
		[ "$(qa -d bench_relay -c "SET enable_seqscan = off" -c "$done_q")" = t ] && break
		kill -0 "$pid" 2>/dev/null || break
	done
	kill -TERM "$pid" 2>/dev/null || true
	wait "$pid" || true
	if [ "$(qa -d bench_relay -c "$done_q")" != t ] || grep -q 'aborted\|ERROR' "$work/relay.out"; then
		cat "$work/relay.out" >&2
		echo "relays: $side with $c relays did not drain the backlog" >&2
		return 1
	fi
	qa -d bench_relay -c "SELECT round(extract(epoch FROM ($last_q) - '$started'::timestamptz), 3)"
}

# relay_check SIDE RELAYS: every event acknowledged once, claimed once (no
# lease lapsed), and on the booking side numbered 1..n per resource
relay_check() {
	local v want="$RELAY_EVENTS 1 0"
	if [ "$1" = booking ]; then
		v=$(qa -d bench_relay -F ' ' -c "SELECT count(*) FILTER (WHERE acked_at IS NOT NULL), max(attempts),
			(SELECT count(*) FROM (SELECT resource_id FROM booking.events GROUP BY resource_id
				HAVING min(seq) <> 1 OR max(seq) <> count(*) OR count(DISTINCT seq) <> count(*)) g)
			FROM booking.deliveries WHERE consumer = 'relay'")
	else
		v=$(qa -d bench_relay -F ' ' -c "SELECT count(*) FILTER (WHERE acked_at IS NOT NULL), max(attempts), 0 FROM plain_queue")
	fi
	[ "$v" = "$want" ] ||
		TARGETS+=("relays: $1 with $2 relays: acknowledged, max attempts, resources with gaps = $want: FAIL ($v)")
}

scenario_relays() {
	local round c side secs
	declare -A got=()
	echo
	echo "== relays: a backlog of $RELAY_EVENTS events (half on one hot resource, half over 1,000), drained by 1, 4 and 10 relays (batch 100) vs a plain SKIP LOCKED queue"
	new_db bench_relay
	RELAY_FIRST=$(qa -d bench_relay -c "SELECT min(booking.create_resource('session ' || i, 1000000)) FROM generate_series(1, 1000) i")
	RELAY_HOT=$(qa -d bench_relay -c "SELECT booking.create_resource('hot session', 1000000)")
	qa -d bench_relay -c "SELECT booking.add_consumer('relay')" >/dev/null
	plain_queue bench_relay
	for round in 1 2 3; do
		for c in $RELAY_COUNTS; do
			for side in booking plain; do
				relay_backlog "$side"
				secs=$(relay_drain "$side" "$c")
				relay_check "$side" "$c"
				got[${side}_$c]="${got[${side}_$c]:-} $secs"
				echo "round $round, $c relays, $side: $secs s"
			done
		done
	done
	printf "%-10s %16s %16s %8s\n" relays "booking ev/s" "plain ev/s" ratio
	for c in $RELAY_COUNTS; do
		for side in booking plain; do
			secs=$(printf "%s\n" ${got[${side}_$c]} | sort -n | sed -n 2p)
			MED[relay_${side}_$c]=$(awk -v n="$RELAY_EVENTS" -v s="$secs" 'BEGIN { printf "%.0f", n / s }')
		done
		printf "%-10s %16s %16s %8s\n" "$c" "${MED[relay_booking_$c]}" "${MED[relay_plain_$c]}" \
			"$(ratio "${MED[relay_booking_$c]}" "${MED[relay_plain_$c]}")"
		target "relays: $c, events/s / plain SKIP LOCKED queue" \
			"$(ratio "${MED[relay_booking_$c]}" "${MED[relay_plain_$c]}")" ">=" 0.70
	done
}

# interval_tps PREFIX OUTPUT COUNT SECONDS: the transactions/s of each of
# COUNT intervals of SECONDS, one a line, from pgbench's aggregate logs
# PREFIX.* (a line per interval and thread: start, transactions, ...) and
# its output OUTPUT.  The last interval is pgbench's own count less the
# others: a thread's log may lack its last line (seen on a slow machine,
# which stopped the scenario with an empty sum)
interval_tps() {
	local prefix=$1 out=$2 count=$3 secs=$4 i n f sum=0 total
	total=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
	for ((i = 1; i < count; i++)); do
		n=0
		for f in "$prefix".*; do
			n=$((n + $(sed -n "${i}p" "$f" | awk 'BEGIN { v = 0 } { v = $2 + 0 } END { print v }')))
		done
		sum=$((sum + n))
		echo $((n / secs))
	done
	echo $(((${total:-0} - sum) / secs))
}

# the tables whose sizes each side of the snapshot scenario reports
declare -A SNAP_RELS=(
	[booking]="booking.resources booking.bookings booking.idempotency_keys booking.events booking.deliveries"
	[control]="booking.resources booking.bookings booking.idempotency_keys booking.events booking.deliveries"
	[floor]="pl_resources pl_bookings plain_queue"
	[queue]="plain_queue")

# snap_sample DB SIDE LABEL: appends to $work/snap.SIDE one line: LABEL, the
# table/index sizes in MB of SNAP_RELS[SIDE], the events written but not
# yet acknowledged, and the lapsed holds the expiry worker has not expired
# yet (- where nothing expires)
snap_sample() {
	local rels backlog lapsed="'-'"
	rels=$(printf "'%s'," ${SNAP_RELS[$2]})
	if [ "$2" = booking ] || [ "$2" = control ]; then
		backlog="(SELECT count(*) FROM booking.events) - (SELECT count(*) FROM booking.deliveries WHERE acked_at IS NOT NULL)"
		lapsed="(SELECT count(*) FROM booking.bookings WHERE status = 'pending' AND expires_at < now())"
	else
		backlog="(SELECT count(*) FROM plain_queue WHERE acked_at IS NULL)"
	fi
	qa -d "$1" -c "SELECT '$3 ' || string_agg(round(pg_table_size(r::regclass) / 1048576.0, 1)
			|| '/' || round(pg_indexes_size(r::regclass) / 1048576.0, 1), ' ' ORDER BY o) || ' ' || ($backlog)
			|| ' ' || $lapsed
		FROM unnest(ARRAY[${rels%,}]) WITH ORDINALITY AS u(r, o)" >>"$work/snap.$2"
}

# held_snapshots DB: the sessions of DB idle in a transaction that holds a
# snapshot
held_snapshots() {
	qa -c "SELECT count(*) FROM pg_stat_activity WHERE datname = '$1'
		AND state = 'idle in transaction' AND backend_xmin IS NOT NULL"
}

# hold_snapshot DB FLAG: a REPEATABLE READ transaction of DB reads once and
# stays open, as pg_dump's or a long report's does, while the file FLAG
# exists; returns once it holds its snapshot.  Sets HOLDER (its pid).
hold_snapshot() {
	local db=$1 flag=$2 n
	touch "$flag"
	( echo "BEGIN ISOLATION LEVEL REPEATABLE READ;"
	  echo "SELECT count(*) FROM pg_class;"
	  while [ -e "$flag" ]; do sleep 0.5; done
	  echo "COMMIT;" ) | psql -X -q -d "$db" >/dev/null &
	HOLDER=$!
	for ((n = 0; n < 100; n++)); do
		[ "$(held_snapshots "$db")" = 1 ] && break
		sleep 0.1
	done
}

# snap_run SIDE DB SCRIPT RELAY_SCRIPT [RATE]: SNAP_CLIENTS clients run SCRIPT
# (at RATE transactions/s in all, if given) and one relay RELAY_SCRIPT for
# SNAP_SECONDS while one REPEATABLE READ transaction of DB stays open, as
# pg_dump's or a long report's does (none with SNAP_HOLD=0); sizes sampled
# every SNAP_INTERVAL, then the snapshot ends, VACUUM runs and they are
# sampled again.  Sets SNAP_TPS[SIDE@i] (the clients' transactions/s of
# interval i), SNAP_ACKED[SIDE@i] (the relay's acknowledgements/s) and
# SNAP_HELD[SIDE] (the snapshots held at the end: 1, or 0 without one).
snap_run() {
	local side=$1 db=$2 script=$3 relay_script=$4 rate=${5:-} holder= relay sampler started t i n f
	rm -f "$work"/snap_log.* "$work/snap.$side"
	q -d "$db" -c CHECKPOINT
	if [ "${SNAP_HOLD:-1}" = 1 ]; then
		hold_snapshot "$db" "$work/snap.on"
		holder=$HOLDER
	fi
	snap_sample "$db" "$side" 0s
	started=$(qa -c "SELECT clock_timestamp()")
	pgbench -n -M prepared -c 1 -j 1 -T "$SNAP_SECONDS" -f "$work/$relay_script" "$db" >"$work/snap_relay.out" 2>&1 &
	relay=$!
	( for ((t = SNAP_INTERVAL; t <= SNAP_SECONDS; t += SNAP_INTERVAL)); do
		sleep "$SNAP_INTERVAL"
		snap_sample "$db" "$side" "${t}s"
	  done ) &
	sampler=$!
	pgbench -n -M prepared -c "$SNAP_CLIENTS" -j "$THREADS" -T "$SNAP_SECONDS" ${rate:+-R "$rate"} \
		-l --aggregate-interval="$SNAP_INTERVAL" --log-prefix="$work/snap_log" \
		-f "$work/$script" "$db" >"$work/snap.out" 2>&1 ||
		{ cat "$work/snap.out" >&2; echo "pgbench failed: $script" >&2; return 1; }
	wait "$relay" || { cat "$work/snap_relay.out" >&2; echo "the relay failed: $relay_script" >&2; return 1; }
	wait "$sampler"
	SNAP_HELD[$side]=$(held_snapshots "$db")
	rm -f "$work/snap.on"
	[ -z "$holder" ] || wait "$holder"
	i=1
	for n in $(interval_tps "$work/snap_log" "$work/snap.out" $((SNAP_SECONDS / SNAP_INTERVAL)) "$SNAP_INTERVAL"); do
		SNAP_TPS[$side@$i]=$n
		i=$((i + 1))
	done
	if [ "$side" = booking ] || [ "$side" = control ]; then
		f="SELECT acked_at FROM booking.deliveries WHERE acked_at IS NOT NULL"
	else
		f="SELECT acked_at FROM plain_queue WHERE acked_at IS NOT NULL"
	fi
	while read -r i n; do
		SNAP_ACKED[$side@$i]=$n
	done < <(qa -d "$db" -F ' ' -c "SELECT 1 + floor(extract(epoch FROM acked_at - '$started'::timestamptz) / $SNAP_INTERVAL)::int,
		count(*) / $SNAP_INTERVAL FROM ($f) a GROUP BY 1 ORDER BY 1")
	q -d "$db" -c "VACUUM $(echo ${SNAP_RELS[$side]} | sed 's/ /, /g')"
	snap_sample "$db" "$side" vacuumed
}

# snap_db DB: a database for booking's side of the snapshot scenario: 1,000
# rooms, 100 sessions, a consumer
snap_db() {
	new_db "$1"
	q -d "$1" >/dev/null <<'SQL'
SELECT booking.create_resource('room ' || i, 1) FROM generate_series(1, 1000) i;
SELECT booking.create_resource('session ' || i, 2000000000) FROM generate_series(1, 100) i;
SELECT booking.add_consumer('relay');
SQL
}

# snap_worker DB: the expiry worker serves DB (booking preloaded, restarted)
snap_worker() {
	sed -i "/^booking.database = /d" "$BOOKING_DIR/data/postgresql.conf"
	echo "booking.database = '$1'" >>"$BOOKING_DIR/data/postgresql.conf"
	restart_preloaded on
}

scenario_snapshot() {
	local i last rate side rel
	declare -gA SNAP_TPS=() SNAP_ACKED=() SNAP_HELD=()
	echo
	echo "== snapshot: $SNAP_CLIENTS clients sell for $SNAP_SECONDS s while a REPEATABLE READ transaction stays open and a relay drains:"
	echo "   booking, its floor on plain tables, and a plain SKIP LOCKED queue at booking's event rate;"
	echo "   then booking's mix in a fresh database with no snapshot held (the control)"
	snap_db bench_snap
	PGDATABASE=bench_snap plain_tables pl
	q -d bench_snap -c "INSERT INTO pl_resources SELECT * FROM booking.resources" -c "VACUUM ANALYZE pl_resources"
	plain_queue bench_snap
	# the expiry worker expires the lapsed holds and numbers the events, as
	# in production (booking preloaded)
	snap_worker bench_snap
	snap_run booking bench_snap snap_booking.pgb relay_booking.pgb
	snap_run floor bench_snap snap_floor.pgb relay_plain.pgb
	rate=$(qa -d bench_snap -c "SELECT count(*) / $SNAP_SECONDS FROM booking.events")
	q -d bench_snap -c "TRUNCATE plain_queue"
	snap_run queue bench_snap snap_plain.pgb relay_plain.pgb "$rate"
	# the control: the same mix from the same start, with nothing held, so
	# that what the lapsing holds cost is told apart from the snapshot's
	snap_db bench_snap_control
	snap_worker bench_snap_control
	SNAP_HOLD=0 snap_run control bench_snap_control snap_booking.pgb relay_booking.pgb
	sed -i "/^booking.database = /d" "$BOOKING_DIR/data/postgresql.conf"
	restart_preloaded off
	last=$((SNAP_SECONDS / SNAP_INTERVAL))
	echo "(the queue's clients run at booking's event rate, $rate events/s; the floor's without a limit;"
	echo " the control is booking with no snapshot held)"
	printf "%-8s %-10s %12s %14s\n" side interval "clients tps" "relay acked/s"
	for side in booking floor queue control; do
		for ((i = 1; i <= last; i++)); do
			printf "%-8s %-10s %12s %14s\n" "$side" "$(((i - 1) * SNAP_INTERVAL))-$((i * SNAP_INTERVAL))s" \
				"${SNAP_TPS[$side@$i]}" "${SNAP_ACKED[$side@$i]:-0}"
		done
	done
	echo "sizes in MB (table/indexes), the events written but not acknowledged, and the lapsed holds not yet expired, at each sample:"
	for side in booking floor queue control; do
		printf "%-9s" "$side"
		for rel in ${SNAP_RELS[$side]}; do printf " %18s" "${rel#booking.}"; done
		printf " %9s %9s\n" backlog lapsed
		awk '{ printf "%-9s", $1; for (i = 2; i < NF - 1; i++) printf " %18s", $i; printf " %9s %9s\n", $(NF - 1), $NF }' "$work/snap.$side"
	done
	for side in booking floor queue; do
		[ "${SNAP_HELD[$side]}" = 1 ] ||
			TARGETS+=("snapshot: $side: the REPEATABLE READ snapshot was held to the end: FAIL")
	done
	[ "${SNAP_HELD[control]}" = 0 ] ||
		TARGETS+=("snapshot: control: no snapshot was held: FAIL")
	target "snapshot: booking sales, last interval / first" \
		"$(ratio "${SNAP_TPS[booking@$last]}" "${SNAP_TPS[booking@1]}")" ">=" 0.90
	reference "snapshot: the floor's sales, last interval / first" \
		"$(ratio "${SNAP_TPS[floor@$last]}" "${SNAP_TPS[floor@1]}")"
	reference "snapshot: booking sales / the floor's, last interval" \
		"$(ratio "${SNAP_TPS[booking@$last]}" "${SNAP_TPS[floor@$last]}")"
	reference "snapshot: booking, no snapshot held, last / first" \
		"$(ratio "${SNAP_TPS[control@$last]}" "${SNAP_TPS[control@1]}")"
	reference "snapshot: booking with the snapshot / without, last" \
		"$(ratio "${SNAP_TPS[booking@$last]}" "${SNAP_TPS[control@$last]}")"
	reference "snapshot: booking relay, acked/s last / first" \
		"$(ratio "${SNAP_ACKED[booking@$last]:-0}" "${SNAP_ACKED[booking@1]:-1}")"
	reference "snapshot: queue relay, acked/s last / first" \
		"$(ratio "${SNAP_ACKED[queue@$last]:-0}" "${SNAP_ACKED[queue@1]:-1}")"
}

# hotsnap_run DB SCRIPT: SNAP_CLIENTS clients run SCRIPT for HOTSNAP_SECONDS
# while one REPEATABLE READ transaction of DB stays open; prints the sales of
# each 10 s and sets HOTSNAP_TPS (a list, one per 10 s) and HOTSNAP_DONE
hotsnap_run() {
	local db=$1 script=$2 n f i
	rm -f "$work"/hotsnap_log.*
	q -d "$db" -c CHECKPOINT
	hold_snapshot "$db" "$work/hotsnap.on"
	pgbench -n -M prepared -c "$SNAP_CLIENTS" -j "$THREADS" -T "$HOTSNAP_SECONDS" \
		-l --aggregate-interval=10 --log-prefix="$work/hotsnap_log" \
		-f "$work/$script" "$db" >"$work/hotsnap.out" 2>&1 ||
		{ cat "$work/hotsnap.out" >&2; echo "pgbench failed: $script" >&2; return 1; }
	[ "$(held_snapshots "$db")" = 1 ] ||
		TARGETS+=("hotsnap: $script: the REPEATABLE READ snapshot was held to the end: FAIL")
	rm -f "$work/hotsnap.on"
	wait "$HOLDER"
	HOTSNAP_TPS=" $(interval_tps "$work/hotsnap_log" "$work/hotsnap.out" $((HOTSNAP_SECONDS / 10)) 10 | tr '\n' ' ')"
	# the aggregate log leaves out the last instants; pgbench's count has them
	HOTSNAP_DONE=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/hotsnap.out")
}

scenario_hotsnap() {
	local layout id first last seats taken booked
	echo
	echo "== hotsnap: reserve_seat on one hot session, one row and 16 stripes, $SNAP_CLIENTS clients for $HOTSNAP_SECONDS s each"
	echo "   while a REPEATABLE READ transaction stays open (sales/s per 10 s)"
	new_db bench_hotsnap
	for layout in row striped; do
		id=$(qa -d bench_hotsnap -c "SELECT booking.create_resource('$layout session', 2000000000)")
		[ "$layout" = row ] || set_stripes bench_hotsnap "$id" 16
		echo "SELECT (booking.reserve_seat($id, 'g')).code;" >"$work/hotsnap_$layout.pgb"
		hotsnap_run bench_hotsnap "hotsnap_$layout.pgb"
		printf "%-8s %s\n" "$layout" "$HOTSNAP_TPS"
		first=$(echo $HOTSNAP_TPS | awk '{ print $1 }')
		last=$(echo $HOTSNAP_TPS | awk '{ print $NF }')
		target "hotsnap: $layout, last 10 s / first, snapshot held" "$(ratio "$last" "$first")" ">=" 0.90
		# every sale is a booking, and the counter agrees with them
		booked=$(qa -d bench_hotsnap -c "SELECT count(*) FROM booking.bookings WHERE resource_id = $id")
		taken=$(qa -d bench_hotsnap -c "SELECT CASE WHEN r.stripes > 1
			THEN r.capacity - (SELECT sum(free) FROM booking.resource_stripes s WHERE s.resource_id = r.id)
			ELSE r.taken END FROM booking.resources r WHERE r.id = $id")
		if [ "$booked" = "$HOTSNAP_DONE" ] && [ "$taken" = "$HOTSNAP_DONE" ]; then
			echo "checked: $HOTSNAP_DONE sales, $booked bookings, $taken seats taken"
		else
			TARGETS+=("hotsnap: $layout: sales $HOTSNAP_DONE, bookings $booked, seats taken $taken differ: FAIL")
		fi
	done
}

scenario_memory() {
	local out errors
	echo
	echo "== memory: one backend, 100,000 calls (seat, seat with key, stay, free_slots in turn)"
	make_db bench_memory 0
	# calls 0..999 and 1000..99999; a stay repeats its room and night every
	# 13,000 stays, so both the booked and the just_taken paths run
	awk -v from=0 -v to=1000 -f bench/scenarios/memory_calls.awk >"$work/calls_1k.sql"
	awk -v from=1000 -v to=100000 -f bench/scenarios/memory_calls.awk >"$work/calls_99k.sql"
	# the figure is memory, not speed: this one session does not wait for
	# its WAL flushes, so 100,000 calls take seconds rather than minutes.
	# A call that raises an error is counted (and fails the scenario), but
	# the session goes on so that the memory figures still come out.
	out=$(psql -X -q -At -v ON_ERROR_STOP=0 -d bench_memory 2>"$work/memory.err" <<SQL
SET synchronous_commit = off;
SELECT pg_backend_pid() AS pid \gset
\setenv BENCH_PID :pid
\o /dev/null
\i $work/calls_1k.sql
\o
SELECT 'ctx 1000 ' || sum(total_bytes) FROM pg_backend_memory_contexts;
\! awk '/^(VmRSS|RssAnon|RssShmem):/ { print "rss 1000", \$1, \$2 }' /proc/\$BENCH_PID/status
\o /dev/null
\i $work/calls_99k.sql
\o
SELECT 'ctx 100000 ' || sum(total_bytes) FROM pg_backend_memory_contexts;
\! awk '/^(VmRSS|RssAnon|RssShmem):/ { print "rss 100000", \$1, \$2 }' /proc/\$BENCH_PID/status
SQL
	) || { cat "$work/memory.err" >&2; return 1; }
	errors=$(grep -c ': ERROR: ' "$work/memory.err" || true)
	if [ "$errors" != 0 ]; then
		echo "$errors of the 100,000 calls raised an error; the first:"
		grep -m1 -A1 ': ERROR: ' "$work/memory.err"
	fi
	get() { echo "$out" | awk -v a="$1" -v b="$2" -v c="$3" '$1 == a && $2 == b && $3 == c { print $4 }'; }
	printf "%-34s %12s %12s %8s\n" "kB" "1,000 calls" "100,000" ratio
	local k a b
	for k in RssAnon: VmRSS: RssShmem:; do
		a=$(get rss 1000 "$k"); b=$(get rss 100000 "$k")
		printf "%-34s %12s %12s %8s\n" "${k%:}" "$a" "$b" "$(ratio "$b" "$a")"
	done
	a=$(echo "$out" | awk '$1 == "ctx" && $2 == 1000 { print int($3 / 1024) }')
	b=$(echo "$out" | awk '$1 == "ctx" && $2 == 100000 { print int($3 / 1024) }')
	printf "%-34s %12s %12s %8s\n" "memory contexts (total)" "$a" "$b" "$(ratio "$b" "$a")"
	echo "(VmRSS also counts the shared buffers this backend has touched: RssShmem)"
	target "memory: calls that raised an error" "$errors" "<=" 0
	target "memory: private RSS after 100,000 calls / after 1,000" \
		"$(ratio "$(get rss 100000 RssAnon:)" "$(get rss 1000 RssAnon:)")" "<=" 1.05
}

# restart_preloaded on|off: the cluster with or without booking in
# shared_preload_libraries (the counters of booking.stats() need it)
restart_preloaded() {
	sed -i "/^shared_preload_libraries = 'booking'\$/d" "$BOOKING_DIR/data/postgresql.conf"
	[ "$1" = on ] && echo "shared_preload_libraries = 'booking'" >>"$BOOKING_DIR/data/postgresql.conf"
	runuser -u postgres -- "$BOOKING_PG_BIN/pg_ctl" -D "$BOOKING_DIR/data" -l "$BOOKING_DIR/server.log" \
		-w -t 60 restart >/dev/null
}

scenario_stats() {
	local hot round t r tps n counted ratios="" i
	local -a order
	declare -A got=()
	echo
	echo "== stats: reserve_seat on one hot session, booking.track_stats on vs off, $STATS_CLIENTS clients, $STATS_ROUNDS rounds"
	restart_preloaded on
	new_db bench_stats
	hot=$(qa -d bench_stats -c "SELECT booking.create_resource('hot session', 2000000000)")
	# warm-up, not timed: the first run after a restart pays for cold caches
	PGOPTIONS="-c booking.track_stats=off" run_once bench_stats "$work/hot_seat.pgb" "$STATS_CLIENTS" -D hot="$hot" >/dev/null
	qa -d bench_stats -c "SELECT booking.stats_reset()" >/dev/null
	# the same session, the setting per connection; each round runs both,
	# in alternating order (on off, off on, ...), and its ratio on/off is
	# taken within the round, so that drift and a noisy neighbour cancel
	for ((round = 1; round <= STATS_ROUNDS; round++)); do
		order=(on off)
		[ $((round % 2)) = 0 ] && order=(off on)
		for t in "${order[@]}"; do
			r=$(PGOPTIONS="-c booking.track_stats=$t" run_once bench_stats "$work/hot_seat.pgb" "$STATS_CLIENTS" -D hot="$hot")
			read -r tps n <<<"$r"
			got[$t]="${got[$t]:-} $tps"
			got[$t@$round]=$tps
			DONE[stats_$t]=$((${DONE[stats_$t]:-0} + n))
		done
		ratios="$ratios $(ratio "${got[on@$round]}" "${got[off@$round]}")"
	done
	for t in on off; do
		MED[stats_$t]=$(printf "%s\n" ${got[$t]} | sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	done
	MED[stats_ratio]=$(printf "%s\n" $ratios | sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	echo "rounds' ratios on/off:$ratios"
	printf "%-8s %16s %16s %24s\n" clients "on tps (median)" "off tps (median)" "on/off (median of rounds)"
	printf "%-8s %16.0f %16.0f %24s\n" "$STATS_CLIENTS" "${MED[stats_on]}" "${MED[stats_off]}" "${MED[stats_ratio]}"
	counted=$(qa -d bench_stats -c "SELECT coalesce(sum(calls), 0) FROM booking.stats() WHERE function = 'reserve_seat'")
	echo "counted: $counted calls of reserve_seat; transactions run with track_stats on: ${DONE[stats_on]}, off: ${DONE[stats_off]}"
	qa -d bench_stats -F ' ' -c "SELECT function, code, calls, round((total_ms / calls)::numeric, 3) AS mean_ms,
		round(max_ms::numeric, 1) AS max_ms, round((lock_wait_ms / calls)::numeric, 3) AS mean_lock_wait_ms
		FROM booking.stats() ORDER BY function, code" | sed 's/^/  stats() function code calls mean_ms max_ms mean_lock_wait_ms: /'
	if [ "$counted" != "${DONE[stats_on]}" ]; then
		TARGETS+=("stats: one count per call with track_stats on, none off: FAIL (counted $counted, transactions on ${DONE[stats_on]})")
	fi
	target "reserve_seat track_stats on / off at $STATS_CLIENTS clients" "${MED[stats_ratio]}" ">=" 0.97
	restart_preloaded off
}

for s in $scenarios; do
	started=$SECONDS
	"scenario_$s"
	echo "($s took $((SECONDS - started)) s)"
done

echo
echo "== targets (ratios from this run)"
printf "%s\n" "${TARGETS[@]}"
