#!/usr/bin/env bash
# stats.sh: booking.stats() on a cluster of its own that preloads the library
# (test/run.sh's test cluster preloads it too, and its regress stage runs the
# stats test there; this cluster keeps the counters of the load below apart
# from everything else the suite calls).
#  1. The pg_regress files setup and stats give exactly expected/stats.out:
#     exact counts per function and code, twins under their public name,
#     track_stats off, an error caught by a savepoint, the reset.
#  2. 8 clients make 2,000 reserve_seat calls for 1,000 seats: stats() counts
#     exactly 1,000 ok and 1,000 sold_out (no update of a counter is lost:
#     they are atomic adds), the ok calls waited for the row (lock_wait_ms >
#     0), and with booking.track_stats off the same load counts nothing.
# The cluster listens on BOOKING_STATS_PORT (default PGPORT + 8).
set -u
cd "$(dirname "$0")" || exit 1
. ./lib.bash

REPO=$(cd ../.. && pwd)
S_PORT=${BOOKING_STATS_PORT:-$((${PGPORT:-54329} + 8))}

rel_cluster_start stats "$S_PORT" "shared_preload_libraries = 'booking'" "max_connections = 30" ||
	{ fail "start a cluster with shared_preload_libraries = 'booking' on port $S_PORT"; rel_done; }
pass "a cluster with shared_preload_libraries = 'booking' on port $S_PORT"

# 1. the regress test, its results apart from the test cluster's
mkdir -p "$REL_TMP/regress/sql"
cp "$REPO/test/sql/setup.sql" "$REPO/test/sql/stats.sql" "$REL_TMP/regress/sql/"
chmod -R a+rwX "$REL_TMP/regress"
"$("$REL_PGBIN/pg_config" --pkglibdir)/pgxs/src/test/regress/pg_regress" \
	--inputdir="$REPO" --outputdir="$REL_TMP/regress" --bindir="$REL_PGBIN" \
	--host="$REL_HOST" --port="$REL_PORT" --user=postgres --dbname=booking_rel_stats_regress \
	setup stats >"$REL_TMP/regress.log" 2>&1
rc=$?
sed 's/^/#   /' "$REL_TMP/regress.log" | grep -E 'test |tests' 
if [ "$rc" -eq 0 ] && cmp -s "$REPO/expected/stats.out" "$REL_TMP/regress/results/stats.out"; then
	pass "pg_regress setup stats matches expected/stats.out (the preloaded output, exact counts)"
else
	fail "pg_regress setup stats matches expected/stats.out (pg_regress exit $rc)"
	diff -u "$REPO/expected/stats.out" "$REL_TMP/regress/results/stats.out" 2>&1 | head -n 40 | sed 's/^/#   /'
fi
rel_psql -d postgres -c "DROP DATABASE IF EXISTS booking_rel_stats_regress" >/dev/null 2>&1

# 2. counts under load
rel_db booking_rel_stats
seat=$(q "SELECT booking.create_resource('stats sale', 1000)")
echo "SELECT (booking.reserve_seat(:seat, 'buyer', 1)).code;" >"$REL_TMP/buy.pgb"
chmod 644 "$REL_TMP/buy.pgb"
q "SELECT booking.stats_reset()" >/dev/null
if "$REL_PGBIN/pgbench" -n -h "$REL_HOST" -p "$REL_PORT" -U postgres -c 8 -j 2 -t 250 -D seat="$seat" \
	-f "$REL_TMP/buy.pgb" "$REL_DB" >"$REL_TMP/pgbench.out" 2>&1; then
	pass "8 clients made 2,000 reserve_seat calls for 1,000 seats"
else
	fail "8 clients made 2,000 reserve_seat calls for 1,000 seats"
	tail -n 5 "$REL_TMP/pgbench.out" | sed 's/^/#   /'
fi
check "stats() counts exactly 1,000 ok and 1,000 sold_out" \
	"SELECT string_agg(code || ' ' || calls, ', ' ORDER BY code) FROM booking.stats() WHERE function = 'reserve_seat'" \
	"ok 1000, sold_out 1000"
check "the bookings agree: 1,000 seats sold" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $seat" 1000
check "every row's times are consistent (total >= max >= 0, total >= lock_wait >= 0)" \
	"SELECT count(*) FROM booking.stats() WHERE NOT (total_ms >= max_ms AND max_ms >= 0 AND total_ms >= lock_wait_ms AND lock_wait_ms >= 0)" 0
check "8 buyers of one row waited for it: lock_wait_ms of the ok calls > 0" \
	"SELECT lock_wait_ms > 0 FROM booking.stats() WHERE function = 'reserve_seat' AND code = 'ok'" t

q "SELECT booking.stats_reset()" >/dev/null
PGOPTIONS="-c booking.track_stats=off" "$REL_PGBIN/pgbench" -n -h "$REL_HOST" -p "$REL_PORT" -U postgres \
	-c 8 -j 2 -t 50 -D seat="$seat" -f "$REL_TMP/buy.pgb" "$REL_DB" >"$REL_TMP/pgbench.out" 2>&1 ||
	{ tail -n 5 "$REL_TMP/pgbench.out" | sed 's/^/#   /'; }
check "with booking.track_stats off, 400 more calls count nothing" \
	"SELECT count(*) FROM booking.stats()" 0

rel_done
