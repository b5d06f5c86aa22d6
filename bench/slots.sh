#!/usr/bin/env bash
# bench/slots.sh: the targets of booking.reserve_slot, side by side in one run
# on a private throwaway cluster (test/lib/cluster.sh: its own data dir,
# socket dir and port) with default durability, pgbench -M prepared.  Every
# figure is the median of BENCH_ROUNDS runs, and the runs compared alternate
# (A B, B A, A B, ...) so that drift and a noisy neighbour hit them alike:
# the ratios are the result, not the absolute numbers.
#
#   (a) throughput: reserve_slot vs reserve_stay at 32 clients, each over
#       1,000 resources of its own in one database (rooms of capacity 1;
#       slotted resources of capacity 20), the same shape of work: a random
#       resource, one random night in ten years (bench/slot_stay.pgb,
#       bench/slot_reserve.pgb), so that nearly every call books.  The ok
#       rate of each is printed beside it: bookings written per call.
#       Target: reserve_slot / reserve_stay >= 0.80.
#   (b) size: reserve_slot on a resource holding 1,000,000 slot bookings vs
#       one holding 10,000, each alone in a database of its own (so that the
#       table and its indexes differ in size too), at 4 clients
#       (bench/slot_size.pgb): the decision must be O(log n), not a scan.
#       Both hold bookings of one hour every 30 minutes from 2030 (two at
#       every instant, capacity 10), and each call asks for an hour among
#       them that overlaps four: only the finding may grow with n.  Beside
#       them, for reference, a resource of 10,000 in the 1M database (what
#       the table's size costs, apart from the resource's own bookings), and
#       the same calls asking for 9 units, which the same sweep refuses: the
#       decision without the insert, whose random index leaf page costs the
#       1M side a full-page image in WAL at its first write after a
#       checkpoint (the FPI/call column).  The calls that book run twice:
#       each run right after a checkpoint (the worst case: the 1M side
#       writes a full-page image on about every second call, the 10k side
#       almost never), and in the steady state between checkpoints, as a
#       server whose checkpoints are minutes apart runs (one checkpoint,
#       a warm-up of BENCH_WARMUP seconds per side, then runs with none;
#       the cluster's own checkpoints are an hour apart).  Target: 1M / 10k
#       >= 0.90 for the calls that book, in the steady state, on huge
#       pages (see below); the same steady state on 4 kB pages and the
#       ratio right after a checkpoint are printed beside it.
#       Before the runs, the plan of the sweep's read (use_plan in
#       src/4_inventory/capacity.c), as reserve_slot runs it on the 1M
#       resource, is shown by auto_explain and checked: it must read
#       bookings_slots_idx with home, resource_id and both bounds of
#       lower(during) as index conditions.
#
# Why (b) rolls back: BEGIN; reserve_slot; ROLLBACK keeps every resource at
# its n bookings for the whole run, so the 1M and 10k figures stay what they
# say.  Cancelling each booking instead would keep n too, but would time a
# second call under the same lock and a commit (a WAL flush) per booking,
# both the same on either side, so the ratio would show less of the decision.
# A rolled-back insert leaves a dead heap row and index entry; they are
# vacuumed before every run.  Within a run the 10k side meets its dead
# entries more often than the 1M side (they fall among 10k bookings, not
# 1M): a bias towards the 1M side of a few dead entries per scan at most by
# the end of a run.  The refused calls leave none.
#
# Environment:
#   BENCH_SECONDS       seconds per pgbench run (default 10: about 6 minutes
#                       in all on 2 cores, of which filling 1M bookings
#                       takes 20 to 40 seconds)
#   BENCH_ROUNDS        runs of each side, alternating (default 3; odd)
#   BENCH_STAY_CLIENTS  clients of (a) (default 32)
#   BENCH_SIZE_CLIENTS  clients of (b) (default 4)
#   BENCH_LARGE         bookings of the large resource (default 1000000)
#   BENCH_SMALL         bookings of the small one (default 10000)
#   BENCH_THREADS       pgbench threads at most (default 2)
#   BENCH_WARMUP        seconds of warm-up per side of (b)'s steady state
#                       (default 20)
#   BENCH_HUGE_PAGES=0  run on 4 kB pages only (default 1: raise the kernel's
#                       vm.nr_hugepages for the run when root may, and put
#                       it back at exit)
#   BENCH_BUILD=0       use the installed extension, do not build and install
#   BOOKING_PG_BIN      the PostgreSQL 15 bin/ to run (test/lib/cluster.sh;
#                       e.g. /opt/pgdev/usr/lib/postgresql/15/bin)
#   BOOKING_BENCH_PORT  port of the private cluster (default 54820)
#
# Exits non-zero when a target or a check fails.
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/.."
. test/lib/cluster.sh

SECONDS_PER_RUN=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
STAY_CLIENTS=${BENCH_STAY_CLIENTS:-32}
SIZE_CLIENTS=${BENCH_SIZE_CLIENTS:-4}
LARGE=${BENCH_LARGE:-1000000}
SMALL=${BENCH_SMALL:-10000}
THREADS=${BENCH_THREADS:-2}
WARMUP=${BENCH_WARMUP:-20}
started=$SECONDS

booking_need_packages
[ "${BENCH_BUILD:-1}" = 0 ] || booking_build_install

# Huge pages for the cluster's shared memory, as PostgreSQL's manual advises
# for a large shared_buffers: with 4 kB pages every new backend takes a page
# fault at its first touch of each page of shared memory, so a side whose
# working set is 170 MB (the 1M resource's index and heap) pays a fault on
# nearly every call of a 10 s run, and the 10k side (2 MB) almost never.
# The kernel's reserve (vm.nr_hugepages) is raised for the run and put back
# at exit; BENCH_HUGE_PAGES=0 or a kernel that will not reserve them runs on
# 4 kB pages, and says so.  Either way (b) is measured on both, side by side.
HUGE_WANTED=${BENCH_HUGE_PAGES:-1}
HUGE_BEFORE=
HUGE=off
buffers_mb=$(echo "${BENCH_SHARED_BUFFERS:-1GB}" | awk '/GB$/ { print $0 * 1024; next } { print $0 + 0 }')
huge_kb=$(awk '/^Hugepagesize:/ { print $2 }' /proc/meminfo)
if [ "$HUGE_WANTED" = 1 ] && [ -n "$huge_kb" ] && [ -w /proc/sys/vm/nr_hugepages ]; then
	# shared_buffers and the rest of shared memory (a few hundred MB at most here)
	need=$(((buffers_mb + 256) * 1024 / huge_kb))
	HUGE_BEFORE=$(cat /proc/sys/vm/nr_hugepages)
	free_now=$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)
	[ "$free_now" -ge "$need" ] || echo $((HUGE_BEFORE + need - free_now)) >/proc/sys/vm/nr_hugepages || true
	[ "$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)" -lt "$need" ] || HUGE=on
fi
put_back_huge_pages() {
	[ -z "$HUGE_BEFORE" ] || echo "$HUGE_BEFORE" >/proc/sys/vm/nr_hugepages || true
}
# no checkpoint but the ones the script asks for: a run between two of them
# is the steady state of a server whose checkpoints are minutes apart
booking_cluster_start "${BOOKING_BENCH_PORT:-54820}" "checkpoint_timeout = 1h" "max_wal_size = 16GB" \
	"shared_buffers = ${BENCH_SHARED_BUFFERS:-1GB}" "huge_pages = $HUGE" ||
	{ put_back_huge_pages; exit 1; }
trap 'booking_cluster_stop; put_back_huge_pages' EXIT

declare -A MED          # label -> median tps
declare -A TXNS         # label -> transactions processed in all its runs
declare -A FPI WALB     # label -> full-page images, WAL bytes in all its runs
TARGETS=()              # lines of the closing PASS/FAIL table
FAILED=0

q() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
qa() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
# header, then row TEXT LABEL OK_RATE: a line of a result table, with the
# full-page images and WAL bytes per transaction of LABEL's runs
header() { printf "%-46s %8s %8s %8s %9s %10s\n" "" tps calls "ok rate" "FPI/call" "WAL B/call"; }
row() {
	printf "%-46s %8.0f %8s %8s %9s %10s\n" "$1" "${MED[$2]}" "${TXNS[$2]}" "$3" \
		"$(awk -v f="${FPI[$2]}" -v n="${TXNS[$2]}" 'BEGIN { printf "%.2f", f / n }')" \
		"$(awk -v w="${WALB[$2]}" -v n="${TXNS[$2]}" 'BEGIN { printf "%.0f", w / n }')"
}

# target DESCRIPTION VALUE OP THRESHOLD: judged on the value as printed
target() {
	local verdict
	verdict=$(awk -v v="$2" -v op="$3" -v t="$4" \
		'BEGIN { ok = (op == ">=") ? (v + 0 >= t + 0) : (v + 0 <= t + 0); print ok ? "PASS" : "FAIL" }')
	[ "$verdict" = PASS ] || FAILED=1
	TARGETS+=("$(printf "%-66s %7s  %s %-5s %s" "$1" "$2" "$3" "$4" "$verdict")")
}
reference() { TARGETS+=("$(printf "%-66s %7s" "$1" "$2")"); }
# check DESCRIPTION PASS|FAIL [why]
check() {
	[ "$2" = PASS ] || FAILED=1
	TARGETS+=("$(printf "%-66s %7s  %s" "$1" "" "$2${3:+ ($3)}")")
}

# run_once DB SCRIPT CLIENTS [pgbench options]: "tps transactions fpi
# wal_bytes" of one run, after a checkpoint (and, with VACUUM_FIRST=1, a
# vacuum of the bookings) so that no run pays for the previous one; fpi and
# wal_bytes are what the cluster wrote to WAL during the run (pg_stat_wal:
# full-page images and bytes)
run_once() {
	local db=$1 script=$2 c=$3 out j before after
	shift 3
	j=$((c < THREADS ? c : THREADS))
	[ "${VACUUM_FIRST:-0}" = 0 ] || q -d "$db" -c "VACUUM booking.bookings"
	[ "${CHECKPOINT_FIRST:-1}" = 0 ] || q -d "$db" -c CHECKPOINT
	before=$(qa -d "$db" -c "SELECT wal_fpi || ' ' || wal_bytes FROM pg_stat_wal")
	out=$(pgbench -n -M prepared -c "$c" -j "$j" -T "$SECONDS_PER_RUN" "$@" -f "$script" "$db" 2>&1) ||
		{ echo "$out" >&2; echo "pgbench failed: $script" >&2; return 1; }
	after=$(qa -d "$db" -c "SELECT wal_fpi || ' ' || wal_bytes FROM pg_stat_wal")
	grep -q '^number of failed transactions: 0 ' <<<"$out" ||
		{ echo "$out" >&2; echo "failed transactions in $script" >&2; return 1; }
	echo "$(echo "$out" | sed -n 's/^tps = \([0-9.]*\) .*/\1/p')" \
		"$(echo "$out" | sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p')" \
		"$(awk -v b="$before" -v a="$after" 'BEGIN { split(b, x, " "); split(a, y, " "); print y[1] - x[1], y[2] - x[2] }')"
}

# side_by_side CLIENTS LABEL DB SCRIPT OPTIONS [LABEL DB SCRIPT OPTIONS ...]:
# BENCH_ROUNDS rounds, each running every script once, in turn forwards and
# backwards; MED[LABEL] is the median tps, TXNS[LABEL] the transactions,
# FPI[LABEL] and WALB[LABEL] the full-page images and WAL bytes of its runs
side_by_side() {
	local c=$1 round i r tps n fpi walb
	shift
	local -a spec=("$@") order
	declare -A got=()
	for ((round = 1; round <= ROUNDS; round++)); do
		order=()
		for ((i = 0; i < ${#spec[@]}; i += 4)); do order+=("$i"); done
		[ $((round % 2)) = 1 ] || mapfile -t order < <(printf "%s\n" "${order[@]}" | tac)
		for i in "${order[@]}"; do
			r=$(run_once "${spec[i + 1]}" "${spec[i + 2]}" "$c" ${spec[i + 3]})
			read -r tps n fpi walb <<<"$r"
			got[${spec[i]}]="${got[${spec[i]}]:-} $tps"
			TXNS[${spec[i]}]=$((${TXNS[${spec[i]}]:-0} + n))
			FPI[${spec[i]}]=$((${FPI[${spec[i]}]:-0} + fpi))
			WALB[${spec[i]}]=$((${WALB[${spec[i]}]:-0} + walb))
		done
	done
	for ((i = 0; i < ${#spec[@]}; i += 4)); do
		MED[${spec[i]}]=$(printf "%s\n" ${got[${spec[i]}]} | sort -n | sed -n "$(((ROUNDS + 1) / 2))p")
		echo "  ${spec[i]} tps:${got[${spec[i]}]}"
	done
}

new_db() {
	q -d postgres -c "CREATE DATABASE $1"
	q -d "$1" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE"
}

# fill DB RESOURCE N: N confirmed slot bookings of RESOURCE, one hour each,
# one every 30 minutes from 2030-01-01 (two at every instant), written
# directly with the columns reserve_slot writes (insert_plan in
# src/4_inventory/capacity.c); the resource is marked slotted, with its
# longest slot, as reserve_slot marks it (BookingSlotMark)
fill() {
	q -d "$1" >/dev/null <<SQL
UPDATE booking.resources SET slotted = true, longest_slot = '1 hour' WHERE home = 0 AND id = $2;
INSERT INTO booking.bookings (home, resource_id, guest, quantity, during, status, expires_at,
                              created_at, validity, limited, blocked)
SELECT 0, $2, 'fill', 1, tstzrange(t, t + interval '1 hour'), 'confirmed', NULL,
       now(), tstzrange(now(), NULL), false, NULL
FROM generate_series(0, $3 - 1) g,
     LATERAL (SELECT timestamptz '2030-01-01 00:00+00' + g * interval '30 minutes' AS t) s;
SQL
}

# ok_rate DB RESOURCE N QUANTITY: the share of 200 calls like
# slot_size.pgb's that book, made in one transaction that is rolled back
ok_rate() {
	qa -d "$1" <<SQL
BEGIN;
SELECT round(100.0 * count(*) FILTER (WHERE (r).code = 'ok') / count(*), 1)
FROM (SELECT booking.reserve_slot($2, 'check',
          tstzrange(timestamptz '2030-01-01 00:15+00' + k * interval '30 minutes',
                    timestamptz '2030-01-01 01:15+00' + k * interval '30 minutes'), $4) AS r
      FROM (SELECT floor(random() * ($3 - 2))::int AS k FROM generate_series(1, 200)) s) c;
ROLLBACK;
SQL
}

echo
echo "$SECONDS_PER_RUN s per pgbench run, -M prepared, median of $ROUNDS alternating runs;" \
	"fsync $(qa -c 'SHOW fsync'), synchronous_commit $(qa -c 'SHOW synchronous_commit');" \
	"$(nproc) CPUs; PostgreSQL $(qa -c 'SHOW server_version') from $BOOKING_PG_BIN;" \
	"shared_buffers $(qa -c 'SHOW shared_buffers'); load average $(cut -d' ' -f1-3 /proc/loadavg)"

# ---- (a) reserve_slot vs reserve_stay over 1,000 resources each
echo
echo "== (a) reserve_slot vs reserve_stay, $STAY_CLIENTS clients, 1,000 resources each"
new_db bench_slot_mix
q -d bench_slot_mix >/dev/null <<'SQL'
SELECT booking.create_resource('room ' || i, 1) FROM generate_series(1, 1000) i;
SELECT booking.create_resource('class ' || i, 20) FROM generate_series(1, 1000) i;
-- in the steady state: the first reserve_slot of a resource marks it
-- (slot_reserve.pgb books one night)
UPDATE booking.resources SET slotted = true, longest_slot = '1 day' WHERE name LIKE 'class %';
VACUUM ANALYZE;
SQL
first_room=$(qa -d bench_slot_mix -c "SELECT min(id) FROM booking.resources WHERE name LIKE 'room %'")
first_class=$(qa -d bench_slot_mix -c "SELECT min(id) FROM booking.resources WHERE name LIKE 'class %'")
side_by_side "$STAY_CLIENTS" \
	stay bench_slot_mix bench/slot_stay.pgb "-D first=$first_room -D resources=1000" \
	slot bench_slot_mix bench/slot_reserve.pgb "-D first=$first_class -D resources=1000"
read -r booked_stays booked_slots <<<"$(qa -d bench_slot_mix -F ' ' -c "SELECT
	count(*) FILTER (WHERE resource_id < $first_class), count(*) FILTER (WHERE resource_id >= $first_class)
	FROM booking.bookings WHERE guest = 'bench'")"
overfull=$(qa -d bench_slot_mix -c "SELECT count(*) FROM (SELECT resource_id, lower(during)
	FROM booking.bookings WHERE resource_id >= $first_class AND guest = 'bench'
	GROUP BY 1, 2 HAVING sum(quantity) > 20) o")
ok_stay=$(awk -v a="$booked_stays" -v b="${TXNS[stay]}" 'BEGIN { printf "%.1f%%", 100 * a / b }')
ok_slot=$(awk -v a="$booked_slots" -v b="${TXNS[slot]}" 'BEGIN { printf "%.1f%%", 100 * a / b }')
header
row "reserve_stay, 1,000 rooms (capacity 1)" stay "$ok_stay"
row "reserve_slot, 1,000 resources (capacity 20)" slot "$ok_slot"
echo "ratio reserve_slot / reserve_stay: $(ratio "${MED[slot]}" "${MED[stay]}")"
target "(a) reserve_slot / reserve_stay, $STAY_CLIENTS clients" "$(ratio "${MED[slot]}" "${MED[stay]}")" ">=" 0.80
reference "  ok rate reserve_stay" "$ok_stay"
reference "  ok rate reserve_slot" "$ok_slot"
# the nights are whole days from 2034, so a night over capacity shows as a group
if [ "$overfull" = 0 ]; then
	check "(a) no night of a resource over its capacity" PASS
else
	check "(a) no night of a resource over its capacity" FAIL "$overfull nights"
fi

# ---- (b) 1M vs 10k slot bookings on a resource
echo
echo "== (b) reserve_slot on a resource with $LARGE vs $SMALL slot bookings, $SIZE_CLIENTS clients"
fill_started=$SECONDS
new_db bench_slot_small
new_db bench_slot_large
small=$(qa -d bench_slot_small -c "SELECT booking.create_resource('small', 10)")
large=$(qa -d bench_slot_large -c "SELECT booking.create_resource('large', 10)")
near=$(qa -d bench_slot_large -c "SELECT booking.create_resource('small beside large', 10)")
fill bench_slot_small "$small" "$SMALL"
fill bench_slot_large "$large" "$LARGE"
fill bench_slot_large "$near" "$SMALL"
for db in bench_slot_small bench_slot_large; do q -d $db -c "VACUUM ANALYZE"; done
echo "filled in $((SECONDS - fill_started)) s; bookings table and bookings_slots_idx:" \
	"$(qa -d bench_slot_small -c "SELECT pg_size_pretty(pg_relation_size('booking.bookings')) || ' and ' || pg_size_pretty(pg_relation_size('booking.bookings_slots_idx'))") with $SMALL," \
	"$(qa -d bench_slot_large -c "SELECT pg_size_pretty(pg_relation_size('booking.bookings')) || ' and ' || pg_size_pretty(pg_relation_size('booking.bookings_slots_idx'))") with $LARGE + $SMALL"

# the sweep's read as reserve_slot runs it on the large resource: its sixth
# call in a session (the plan cache has by then chosen its generic plan or
# kept custom ones), logged by auto_explain to the client
plan=$(q -d bench_slot_large 2>&1 <<SQL
LOAD 'auto_explain';
SET auto_explain.log_nested_statements = on;
SET auto_explain.log_level = notice;
SET auto_explain.log_analyze = on;
SET auto_explain.log_buffers = on;
SET auto_explain.log_min_duration = -1;
BEGIN;
\o /dev/null
SELECT booking.reserve_slot($large, 'plan', tstzrange(timestamptz '2030-01-01 00:15+00' + k * interval '30 minutes',
	timestamptz '2030-01-01 01:15+00' + k * interval '30 minutes'))
FROM (VALUES (1000), (200000), (400000), (600000), (800000)) v(k);
SET auto_explain.log_min_duration = 0;
SELECT booking.reserve_slot($large, 'plan', tstzrange(timestamptz '2031-01-01 00:15+00', timestamptz '2031-01-01 01:15+00'));
\o
ROLLBACK;
SQL
)
use=$(awk 'BEGIN { RS = "NOTICE:  " } /Query Text: SELECT pg_catalog.lower\(b.during\)/ { print }' <<<"$plan")
echo "the sweep's read (use_plan) on the $LARGE resource, sixth call of a session:"
sed '1,2d; /^ *$/d; s/^/  /' <<<"$use"
if awk '/Index Scan on bookings_slots_idx|Index Scan using bookings_slots_idx/ { on = 1; next }
	on && /Index Cond:/ { if ($0 ~ /home = / && $0 ~ /resource_id = / && $0 ~ /lower\(during\) >= / &&
		$0 ~ /lower\(during\) < /) found = 1; on = 0 }
	END { exit !found }' <<<"$use"; then
	check "(b) the sweep reads bookings_slots_idx (home, resource_id, lower(during)) from both ends" PASS
else
	check "(b) the sweep reads bookings_slots_idx (home, resource_id, lower(during)) from both ends" FAIL "see the plan above"
fi

rate_small=$(ok_rate bench_slot_small "$small" "$SMALL" 1)
rate_large=$(ok_rate bench_slot_large "$large" "$LARGE" 1)
rate_near=$(ok_rate bench_slot_large "$near" "$SMALL" 1)
rate_small_no=$(ok_rate bench_slot_small "$small" "$SMALL" 9)
rate_large_no=$(ok_rate bench_slot_large "$large" "$LARGE" 9)
VACUUM_FIRST=1 side_by_side "$SIZE_CLIENTS" \
	small bench_slot_small bench/slot_size.pgb "-D resource=$small -D n=$SMALL -D quantity=1" \
	large bench_slot_large bench/slot_size.pgb "-D resource=$large -D n=$LARGE -D quantity=1" \
	near bench_slot_large bench/slot_size.pgb "-D resource=$near -D n=$SMALL -D quantity=1"
# steady_state SMALL_LABEL LARGE_LABEL: the steady state between
# checkpoints: one checkpoint, a warm-up of WARMUP seconds per side (it pays
# the full-page images of the pages it touches first, as a server does once
# per checkpoint cycle), then the runs without a checkpoint before each
steady_state() {
	local spec db res n
	q -d postgres -c CHECKPOINT
	for spec in "bench_slot_small $small $SMALL" "bench_slot_large $large $LARGE"; do
		read -r db res n <<<"$spec"
		pgbench -n -M prepared -c "$SIZE_CLIENTS" -j "$THREADS" -T "$WARMUP" -D resource="$res" -D n="$n" \
			-D quantity=1 -f bench/slot_size.pgb "$db" >/dev/null 2>&1
	done
	VACUUM_FIRST=1 CHECKPOINT_FIRST=0 side_by_side "$SIZE_CLIENTS" \
		"$1" bench_slot_small bench/slot_size.pgb "-D resource=$small -D n=$SMALL -D quantity=1" \
		"$2" bench_slot_large bench/slot_size.pgb "-D resource=$large -D n=$LARGE -D quantity=1"
}
steady_state small_warm large_warm
# the same steady state on 4 kB pages (the server restarted without huge
# pages), where each new backend faults in every page it touches first
if [ "$HUGE" = on ]; then
	runuser -u postgres -- "$BOOKING_PG_BIN/pg_ctl" -D "$BOOKING_DIR/data" -l "$BOOKING_DIR/server.log" -w \
		-o "-c huge_pages=off" restart >/dev/null
	steady_state small_4k large_4k
	# (restart alone would keep the last -o, from postmaster.opts)
	runuser -u postgres -- "$BOOKING_PG_BIN/pg_ctl" -D "$BOOKING_DIR/data" -l "$BOOKING_DIR/server.log" -w \
		-o "-c huge_pages=on" restart >/dev/null
fi
# the decision alone: 9 units do not fit beside the 2 held, so each call
# sweeps the same bookings and is refused, and inserts nothing
VACUUM_FIRST=1 side_by_side "$SIZE_CLIENTS" \
	small_no bench_slot_small bench/slot_size.pgb "-D resource=$small -D n=$SMALL -D quantity=9" \
	large_no bench_slot_large bench/slot_size.pgb "-D resource=$large -D n=$LARGE -D quantity=9"
header
row "reserve_slot, $SMALL bookings (own database)" small "${rate_small}%"
row "reserve_slot, $LARGE bookings" large "${rate_large}%"
row "reserve_slot, $SMALL beside the $LARGE" near "${rate_near}%"
row "steady state: reserve_slot, $SMALL bookings" small_warm "${rate_small}%"
row "steady state: reserve_slot, $LARGE bookings" large_warm "${rate_large}%"
if [ "$HUGE" = on ]; then
	row "steady state, 4 kB pages: $SMALL bookings" small_4k "${rate_small}%"
	row "steady state, 4 kB pages: $LARGE bookings" large_4k "${rate_large}%"
fi
row "refused (9 units), $SMALL bookings" small_no "${rate_small_no}%"
row "refused (9 units), $LARGE bookings" large_no "${rate_large_no}%"
echo "(ok rate: of 200 calls of the same kind made before the runs; every call is rolled back;" \
	"huge pages $HUGE but where 4 kB pages are said)"
echo "ratio $LARGE / $SMALL: $(ratio "${MED[large_warm]}" "${MED[small_warm]}") in the steady state, $(ratio "${MED[large]}" "${MED[small]}") right after a checkpoint"
target "(b) reserve_slot, $LARGE bookings / $SMALL, steady state, huge pages $HUGE" \
	"$(ratio "${MED[large_warm]}" "${MED[small_warm]}")" ">=" 0.90
[ "$HUGE" = off ] ||
	reference "  the same on 4 kB pages (each new backend faults pages in)" "$(ratio "${MED[large_4k]}" "${MED[small_4k]}")"
reference "  right after a checkpoint (every run starts with one)" "$(ratio "${MED[large]}" "${MED[small]}")"
reference "  $SMALL beside $LARGE / $SMALL alone" "$(ratio "${MED[near]}" "${MED[small]}")"
reference "  $LARGE / $SMALL in the same table" "$(ratio "${MED[large]}" "${MED[near]}")"
reference "  refused calls (the decision, no insert): $LARGE / $SMALL" "$(ratio "${MED[large_no]}" "${MED[small_no]}")"
counts="$(qa -d bench_slot_small -c "SELECT count(*) FROM booking.bookings") $(qa -d bench_slot_large -c "SELECT count(*) FROM booking.bookings")"
if [ "$counts" = "$SMALL $((LARGE + SMALL))" ]; then
	check "(b) the bookings stayed $SMALL and $LARGE + $SMALL" PASS
else
	check "(b) the bookings stayed $SMALL and $LARGE + $SMALL" FAIL "$counts"
fi

echo
echo "== targets (ratios from this run; $((SECONDS - started)) s in all; load average now $(cut -d' ' -f1-3 /proc/loadavg))"
printf "%s\n" "${TARGETS[@]}"
exit $FAILED
