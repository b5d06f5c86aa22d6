#!/usr/bin/env bash
# pgbouncer.sh: booking through Debian's pgbouncer in transaction mode
# (docs/poolers.md).  A private pgbouncer (test/lib/pgbouncer.sh: pool_mode =
# transaction, default_pool_size 20, unix socket only) in front of the cluster
# named by PGHOST/PGPORT; without PGHOST, a private cluster of its own (port
# BOOKING_STRESS_PORT, default 54721).  pgbouncer listens on port
# BOOKING_PGBOUNCER_PORT (default 54720) in a directory of its own.
#
#  1. The sale: 64 clients x 20 attempts (-M simple) at one resource of 200
#     seats, half of them as BEGIN; SET LOCAL lock_timeout = '2s'; the call;
#     COMMIT, half as one autocommit statement passing lock_timeout => '2s'.
#     Exactly 200 ok, every other answer sold_out or busy, no error, the
#     counter equals the bookings, no oversell; at most 20 server backends ran
#     the 64 clients; no transaction saw another's SET LOCAL.
#  2. The spread: 64 clients x 40 attempts (-M extended: unnamed statements)
#     over 1,000 resources of 2 seats: on every resource ok = min(2, attempts
#     that were not busy), counters equal bookings.
#  3. Retries: 64 clients x 10 retries of random earlier attempts with their
#     idempotency keys, on whatever server the pool gives: every one replays
#     the stored answer and books nothing.
#  4. Session state through a pool of one server connection: a plain SET (of
#     lock_timeout, of booking.lock_timeout) and a PREPARE reach the next
#     client, SET LOCAL does not, and a notification to a LISTEN made through
#     the pool is dropped.  The per-call argument and SET LOCAL bound
#     the wait for a locked resource to 200 ms (busy).
#  5. Measured, not asserted: pgbench -M prepared (named prepared statements).
# pgbouncer is stopped and the database dropped on exit, also on failure.
set -u
cd "$(dirname "$0")"
. ./lib.bash
. ../lib/pgbouncer.sh

CLIENTS=64
PER_CLIENT=20			# 64 x 20 = 1,280 attempts for 200 seats
SEATS=200
SPREAD=1000			# resources of the spread run
SPREAD_SEATS=2
SPREAD_PER_CLIENT=40		# 64 x 40 = 2,560 attempts for 2,000 seats
REPLAY_PER_CLIENT=10
POOL=20
ATTEMPTS=$((CLIENTS * PER_CLIENT))
SPREAD_ATTEMPTS=$((CLIENTS * SPREAD_PER_CLIENT))
DB=booking_stress_pgbouncer
DB_ONE=${DB}_one		# the same database through a pool of one server connection
started=$SECONDS

pgbouncer_need || exit 1
echo "# pgbouncer $PGBOUNCER_VERSION ($PGBOUNCER_BIN)"

OWN_CLUSTER=
if [ -z "${PGHOST:-}" ]; then
	. ../lib/cluster.sh
	booking_need_packages || exit 1
	booking_cluster_start "${BOOKING_STRESS_PORT:-54721}" || exit 1
	OWN_CLUSTER=1
fi
export PGUSER=${PGUSER:-postgres}

# stress_db's EXIT trap calls stress_cleanup: this one also stops the lock
# holder, pgbouncer and the private cluster
eval "$(declare -f stress_cleanup | sed '1s/^stress_cleanup/lib_stress_cleanup/')"
HOLDER=
stress_cleanup() {
	if [ -n "$HOLDER" ]; then
		kill "$HOLDER" 2>/dev/null
		wait "$HOLDER" 2>/dev/null
		HOLDER=
	fi
	pgbouncer_stop
	lib_stress_cleanup
	[ -n "$OWN_CLUSTER" ] && booking_cluster_stop
}
trap stress_cleanup EXIT
stress_db $DB

pgbouncer_start "${BOOKING_PGBOUNCER_PORT:-54720}" "$PGUSER" \
	"$DB = host=$PGHOST port=$PGPORT dbname=$DB" \
	"$DB_ONE = host=$PGHOST port=$PGPORT dbname=$DB pool_size=1" ||
	{ fail "pgbouncer started"; stress_done; }
pass "pgbouncer $PGBOUNCER_VERSION started in transaction mode (pool $POOL) on $PGBOUNCER_DIR port $PGBOUNCER_PORT"

# bsql [DB] QUERY: psql through pgbouncer, unaligned tuples only
bsql() {
	local db=$DB
	[ $# -gt 1 ] && { db=$1; shift; }
	pgbouncer_psql -At -d "$db" -c "$1"
}
# bcheck DESCRIPTION DB QUERY EXPECTED: as check, through pgbouncer
bcheck() {
	local got
	got=$(bsql "$2" "$3" 2>&1)
	if [ "$got" = "$4" ]; then
		pass "$1"
	else
		fail "$1"
		echo "#   expected: $4"
		echo "#   got:      $got"
	fi
}
# bench LABEL pgbench-args...: pgbench through pgbouncer
bench() {
	local label=$1
	shift
	run_pgbench "$label" -h "$PGBOUNCER_DIR" -p "$PGBOUNCER_PORT" "$@"
}
# elapsed T0: seconds since T0 (date +%s%N), to a tenth
elapsed() {
	awk -v t="$1" -v n="$(date +%s%N)" 'BEGIN { printf "%.1f", (n - t) / 1e9 }'
}
# answers WHERE: the codes answered, counted
answers() {
	sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_log WHERE $1 GROUP BY code) s"
}

sql "CREATE TABLE stress_log (n bigint PRIMARY KEY, mode text NOT NULL, resource bigint NOT NULL, guest text NOT NULL,
                              code text NOT NULL, booking_id bigint, pid int NOT NULL, lock_timeout text NOT NULL)
     ; CREATE SEQUENCE stress_keys
     ; CREATE TABLE stress_replay (n bigint NOT NULL, code text NOT NULL, booking_id bigint, replayed boolean)
     ; CREATE TABLE stress_spread (i int PRIMARY KEY, id bigint NOT NULL)" >/dev/null || exit 1
bcheck "a query through pgbouncer reaches the database" $DB "SELECT current_database()" $DB

# -- 1. the sale --------------------------------------------------------------

sale=$(sql "SELECT booking.create_resource('pgbouncer sale', $SEATS)")
echo "# sale: resource $sale, $SEATS seats, $CLIENTS clients x $PER_CLIENT attempts, -M simple"
t0=$(date +%s%N)
bench "sale through pgbouncer" -M simple -c $CLIENTS -j 2 -t $PER_CLIENT -D sale="$sale" \
	-f pgbouncer_set_local.pgb@1 -f pgbouncer_argument.pgb@1
echo "# sale: $(elapsed "$t0") s; answers: $(answers "resource = $sale"); by mode: $(sql "SELECT string_agg(mode || '=' || n, ', ' ORDER BY mode) FROM (SELECT mode, count(*) n FROM stress_log WHERE resource = $sale GROUP BY mode) s")"
check "sale: every attempt answered" "SELECT count(*) FROM stress_log WHERE resource = $sale" $ATTEMPTS
check "sale: exactly $SEATS ok" "SELECT count(*) FROM stress_log WHERE resource = $sale AND code = 'ok'" $SEATS
check "sale: every other answer is sold_out or busy" \
	"SELECT count(*) FROM stress_log WHERE resource = $sale AND code NOT IN ('ok', 'sold_out', 'busy')" 0
check "sale: exactly $SEATS bookings, all confirmed, one seat each" \
	"SELECT count(*) FILTER (WHERE status = 'confirmed' AND quantity = 1) FROM booking.bookings WHERE resource_id = $sale" $SEATS
check "sale: no oversell: resources.taken = $SEATS = the sum of blocking quantities" \
	"SELECT r.taken || ' ' || (SELECT sum(b.quantity) FROM booking.bookings b WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed'))
	   FROM booking.resources r WHERE r.id = $sale" "$SEATS $SEATS"
check "sale: seats_left = 0" "SELECT booking.seats_left($sale)" 0
check "sale: each ok answer names a booking of its guest, each booking one ok answer" \
	"SELECT count(*) FROM stress_log l FULL JOIN (SELECT * FROM booking.bookings WHERE resource_id = $sale) b ON b.id = l.booking_id
	  WHERE (l.code = 'ok' OR b.id IS NOT NULL) AND (l.guest IS DISTINCT FROM b.guest OR l.resource IS DISTINCT FROM b.resource_id)" 0
check "sale: both ways ran (SET LOCAL, and the per-call argument)" \
	"SELECT count(DISTINCT mode) FROM stress_log WHERE resource = $sale" 2
check "sale: every SET LOCAL transaction saw lock_timeout = 2s" \
	"SELECT count(*) FROM stress_log WHERE resource = $sale AND mode = 'set_local' AND lock_timeout <> '2s'" 0
check "sale: no autocommit call saw a SET LOCAL of another transaction (lock_timeout = 0)" \
	"SELECT count(*) FROM stress_log WHERE resource = $sale AND mode = 'argument' AND lock_timeout <> '0'" 0
check_true "sale: $CLIENTS clients ran on at most $POOL server backends (pooled)" \
	"SELECT count(DISTINCT guest) = $CLIENTS AND count(DISTINCT pid) <= $POOL FROM stress_log WHERE resource = $sale"
echo "# sale: $(sql "SELECT count(DISTINCT pid) FROM stress_log WHERE resource = $sale") server backends for $CLIENTS clients"

# -- 2. the spread over 1,000 resources ------------------------------------------

sql "INSERT INTO stress_spread SELECT i, booking.create_resource('pgbouncer spread ' || i, $SPREAD_SEATS) FROM generate_series(1, $SPREAD) i" >/dev/null
echo "# spread: $SPREAD resources of $SPREAD_SEATS seats, $CLIENTS clients x $SPREAD_PER_CLIENT attempts, -M extended"
t0=$(date +%s%N)
bench "spread through pgbouncer" -M extended -c $CLIENTS -j 2 -t $SPREAD_PER_CLIENT -f pgbouncer_spread.pgb
echo "# spread: $(elapsed "$t0") s; answers: $(answers "mode = 'spread'")"
check "spread: every attempt answered" "SELECT count(*) FROM stress_log WHERE mode = 'spread'" $SPREAD_ATTEMPTS
check "spread: every answer is ok, sold_out or busy" \
	"SELECT count(*) FROM stress_log WHERE mode = 'spread' AND code NOT IN ('ok', 'sold_out', 'busy')" 0
check "spread: on every resource, ok = min($SPREAD_SEATS, attempts not busy) and taken = ok = its bookings" \
	"SELECT count(*) FROM stress_spread s JOIN booking.resources r ON r.id = s.id
	   LEFT JOIN (SELECT resource, count(*) FILTER (WHERE code = 'ok') AS ok, count(*) FILTER (WHERE code <> 'busy') AS tried
	                FROM stress_log WHERE mode = 'spread' GROUP BY resource) l ON l.resource = s.id
	   LEFT JOIN (SELECT resource_id, count(*) AS n FROM booking.bookings GROUP BY resource_id) b ON b.resource_id = s.id
	  WHERE coalesce(l.ok, 0) <> least($SPREAD_SEATS, coalesce(l.tried, 0))
	     OR r.taken <> coalesce(l.ok, 0) OR r.taken <> coalesce(b.n, 0) OR r.taken > r.capacity" 0
check_true "spread: the totals agree (ok answers = bookings = seats taken, at most $((SPREAD * SPREAD_SEATS)))" \
	"SELECT o = b AND b = t AND t <= $((SPREAD * SPREAD_SEATS)) FROM
	   (SELECT count(*) o FROM stress_log WHERE mode = 'spread' AND code = 'ok') x,
	   (SELECT count(*) b FROM booking.bookings k JOIN stress_spread s ON s.id = k.resource_id) y,
	   (SELECT sum(taken) t FROM booking.resources r JOIN stress_spread s ON s.id = r.id) z"
check "spread: no call saw a leaked lock_timeout" \
	"SELECT count(*) FROM stress_log WHERE mode = 'spread' AND lock_timeout <> '0'" 0
echo "# spread: $(sql "SELECT count(*) FILTER (WHERE code = 'ok') FROM stress_log WHERE mode = 'spread'") seats sold, $(sql "SELECT count(DISTINCT pid) FROM stress_log WHERE mode = 'spread'") server backends"

# -- 3. retries with idempotency keys through the pool ----------------------------

TOTALS="SELECT (SELECT count(*) FROM booking.bookings) || ' ' || (SELECT sum(taken) FROM booking.resources)"
before=$(sql "$TOTALS")
total=$(sql "SELECT max(n) FROM stress_log")
bench "retries through pgbouncer" -M simple -c $CLIENTS -j 2 -t $REPLAY_PER_CLIENT -D attempts="$total" -f pgbouncer_replay.pgb
echo "# retries: $(sql "SELECT count(*) FROM stress_replay") of $((CLIENTS * REPLAY_PER_CLIENT)) picked an attempt that was not busy; $(sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_replay GROUP BY code) s")"
check_true "retries: some ran" "SELECT count(*) > 0 FROM stress_replay"
check "retries: every one replayed the stored answer (same code and booking, replayed = true)" \
	"SELECT count(*) FROM stress_replay r JOIN stress_log l USING (n)
	  WHERE r.replayed IS NOT TRUE OR r.code <> l.code OR r.booking_id IS DISTINCT FROM l.booking_id" 0
check "retries: nothing was booked again (bookings, seats taken: $before)" "$TOTALS" "$before"

# -- 4. session state through one server connection --------------------------------

# the one server connection loads the library first (the stress stage's
# cluster preloads it; a private cluster does not)
bsql $DB_ONE "SELECT booking.seats_left($sale)" >/dev/null
bsql $DB_ONE "SET lock_timeout = '150ms'" >/dev/null
bcheck "a plain SET lock_timeout reaches the next client of the server connection (session state)" $DB_ONE \
	"SHOW lock_timeout" 150ms
bsql $DB_ONE "SET booking.lock_timeout = '0'" >/dev/null
bcheck "a plain SET booking.lock_timeout = '0' does too: the next client would never wait" $DB_ONE \
	"SHOW booking.lock_timeout" 0
bsql $DB_ONE "PREPARE stress_p AS SELECT 42" >/dev/null
bcheck "a PREPAREd statement is there for the next client" $DB_ONE "EXECUTE stress_p" 42
# LISTEN is session state too: the listening backend goes back to the pool
# with the client's transaction, and pgbouncer drops a notification that
# reaches a server connection no client holds
bsql $DB_ONE "LISTEN stress_channel" >/dev/null
sql "NOTIFY stress_channel" >/dev/null
sleep 0.3
got=$(bsql $DB_ONE "SELECT 'after the notify'" 2>&1)
if [ "$got" = "after the notify" ] && grep -q "got packet 'A' from server when not linked" "$PGBOUNCER_DIR/pgbouncer.log"; then
	pass "a LISTEN through the pool: the notification is lost (pgbouncer: got packet 'A' from server when not linked)"
else
	fail "a LISTEN through the pool: the notification is lost (pgbouncer: got packet 'A' from server when not linked)"
	echo "#   got: $got"
	tail -n 5 "$PGBOUNCER_DIR/pgbouncer.log" | sed 's/^/#   /'
fi
bsql $DB_ONE "DISCARD ALL" >/dev/null
bsql $DB_ONE "BEGIN; SET LOCAL lock_timeout = '150ms'; SET LOCAL booking.lock_timeout = '0'; COMMIT" >/dev/null
bcheck "SET LOCAL ends with its transaction: the next client sees lock_timeout 0, booking.lock_timeout 3s" $DB_ONE \
	"SELECT current_setting('lock_timeout') || ' ' || current_setting('booking.lock_timeout')" "0 3s"

locked=$(sql "SELECT booking.create_resource('pgbouncer locked', 5)")
"$STRESS_PGBIN/psql" -X -q -d "$STRESS_DB" -c "SET application_name = 'pgbouncer.sh holder'" -c "BEGIN" \
	-c "SELECT 1 FROM booking.resources WHERE id = $locked FOR UPDATE" -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
HOLDER=$!
for _ in $(seq 1 100); do
	[ "$(sql "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'pgbouncer.sh holder' AND query LIKE '%pg_sleep%' AND state = 'active'")" = 1 ] && break
	sleep 0.05
done
# busy_within DESCRIPTION QUERY: the call answers busy after 150 ms to 1.5 s
# (booking.lock_timeout, 3 s, would be later), naming 200 ms
busy_within() {
	local t0 got ms
	t0=$(date +%s%N)
	got=$(bsql "$2" 2>&1)
	ms=$((($(date +%s%N) - t0) / 1000000))
	echo "# $1: $got after $ms ms"
	if [ "${got%%|*}" = busy ] && [[ $got == *"200 ms"* ]] && [ $ms -ge 150 ] && [ $ms -lt 1500 ]; then
		pass "$1: busy after the 200 ms asked for"
	else
		fail "$1: busy after the 200 ms asked for"
	fi
}
busy_within "SET LOCAL lock_timeout = '200ms' through pgbouncer" \
	"BEGIN; SET LOCAL lock_timeout = '200ms'; SELECT code, message FROM booking.reserve_seat($locked, 'waiter', 1); COMMIT"
busy_within "lock_timeout => '200ms' through pgbouncer" \
	"SELECT code, message FROM booking.reserve_seat($locked, 'waiter', 1, lock_timeout => '200ms')"
sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'pgbouncer.sh holder'" >/dev/null
wait "$HOLDER" 2>/dev/null
HOLDER=
check "busy wrote nothing" "SELECT count(*) FROM booking.bookings WHERE resource_id = $locked" 0

# -- 5. measured only: named prepared statements ------------------------------------

prep=$(sql "SELECT booking.create_resource('pgbouncer prepared', 100000)")
"$STRESS_PGBIN/pgbench" -n -h "$PGBOUNCER_DIR" -p "$PGBOUNCER_PORT" -M prepared -c 16 -j 2 -t 20 -D res="$prep" \
	-f pgbouncer_prepared.pgb "$STRESS_DB" >"$STRESS_TMP/prepared.out" 2>&1
rc=$?
echo "# -M prepared through pgbouncer $PGBOUNCER_VERSION: pgbench exit $rc, $(grep -c 'aborted in command' "$STRESS_TMP/prepared.out") of 16 clients aborted, $(sql "SELECT count(*) FROM booking.bookings WHERE resource_id = $prep") of 320 calls booked"
grep -oE 'prepared statement "[^"]*" (does not exist|already exists)' "$STRESS_TMP/prepared.out" |
	sed -E 's/"[^"]*"/"P_n"/' | sort | uniq -c | sed 's/^ */#   /'

echo "# pgbouncer.sh took $((SECONDS - started)) s"
stress_done
