#!/usr/bin/env bash
# keys_txn.sh: idempotency keys scale inside one transaction.
#
# A cluster of its own with max_connections = 20 and the default
# max_locks_per_transaction (64), so its shared lock table has room for only
# a few thousand locks.  ONE transaction (a DO block) makes 100,000 keyed
# reserve_stay calls: 1,000 rooms x 100 distinct nights, each call its own
# key, so no row is updated over and over.  Every call must answer ok, and
# the transaction must commit.  Afterwards a sample of 1,000 keys, one per
# room, replays (replayed, the booking of that room and night, nothing
# written), and the totals are exact: 100,000 bookings written by one
# transaction, 100 per room, 100,000 stored keys.
#
# 0.2.0 took a heavyweight advisory lock per key and held it to commit: the
# transaction failed with "out of shared memory" after about 5,000 calls.
#
# Its port: BOOKING_KEYS_PORT, default PGPORT + 7.
set -u
cd "$(dirname "$0")" || exit 1
. ./lib.bash

KEYS_PORT=${BOOKING_KEYS_PORT:-$((${PGPORT:-54329} + 7))}
CALLS=100000
ROOMS=1000
NIGHTS=$((CALLS / ROOMS))

rel_cluster_start keys "$KEYS_PORT" "max_connections = 20" "shared_buffers = 128MB" \
	"fsync = off" "synchronous_commit = off" "full_page_writes = off" ||
	{ fail "start a cluster of its own on port $KEYS_PORT"; rel_done; }
check "a cluster of its own on port $KEYS_PORT: max_connections = 20, max_locks_per_transaction = 64 (the default)" \
	"SELECT current_setting('max_connections') || ' ' || current_setting('max_locks_per_transaction') || ' ' ||
	        (SELECT boot_val FROM pg_settings WHERE name = 'max_locks_per_transaction')" "20 64 64"
rel_db booking_rel_keys

q "SELECT count(booking.create_resource('room ' || g)) FROM generate_series(1, $ROOMS) g" >/dev/null
# counts the calls made, whatever happens to the transaction (a sequence
# is not rolled back)
q "CREATE SEQUENCE public.keys_calls" >/dev/null

started=$(date +%s%N)
out=$(rel_psql -At -d "$REL_DB" 2>&1 <<EOF
SET client_min_messages = notice;
DO \$\$
DECLARE
    day0  timestamptz := '2031-01-01 00:00+00';
    room  bigint;
    n_ok  int := 0;
    c     text;
    t0    timestamptz := clock_timestamp();
BEGIN
    FOR room IN 1..$ROOMS LOOP
        FOR night IN 0..$((NIGHTS - 1)) LOOP
            PERFORM nextval('public.keys_calls');
            SELECT code INTO c FROM booking.reserve_stay(room, 'guest',
                tstzrange(day0 + make_interval(days => night), day0 + make_interval(days => night + 1)),
                idempotency_key => format('stay-%s-%s', room, night));
            IF c = 'ok' THEN n_ok := n_ok + 1; END IF;
        END LOOP;
    END LOOP;
    RAISE NOTICE 'calls ok=% ms=%', n_ok, round(extract(epoch FROM clock_timestamp() - t0) * 1000);
END
\$\$;
EOF
)
rc=$?
took=$(( ($(date +%s%N) - started) / 1000000 ))
made=$(q "SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM public.keys_calls")
n_ok=$(echo "$out" | sed -n 's/.*NOTICE:  calls ok=\([0-9]*\) .*/\1/p')
ms=$(echo "$out" | sed -n 's/.*NOTICE:  calls ok=[0-9]* ms=\([0-9]*\).*/\1/p')
if [ "$rc" -eq 0 ] && [ "$n_ok" = "$CALLS" ]; then
	echo "# $CALLS keyed calls in one transaction: ${ms} ms in the DO block, ${took} ms with the commit"
	pass "$CALLS keyed reserve_stay calls in one transaction ($ROOMS rooms x $NIGHTS nights): all ok, committed"
else
	echo "# the transaction made $made calls in ${took} ms"
	echo "$out" | grep -m 1 -A 1 'ERROR' | sed 's/^/#   /'
	fail "$CALLS keyed reserve_stay calls in one transaction: all ok, committed (got ${n_ok:-no result} ok, psql rc $rc, after $made calls)"
fi

# every booking and every key, written by that one transaction
check "after the commit: $CALLS bookings, each of the $ROOMS rooms has $NIGHTS, all from one transaction; $CALLS keys" \
	"SELECT count(*) || ' ' || count(DISTINCT xmin::text) || ' ' ||
	        (SELECT count(*) FROM (SELECT resource_id FROM booking.bookings GROUP BY 1 HAVING count(*) = $NIGHTS) r) || ' ' ||
	        (SELECT count(*) FROM booking.idempotency_keys)
	   FROM booking.bookings" "$CALLS 1 $ROOMS $CALLS"

# replays of one key per room: the night varies with the room
sample="SELECT room, room % $NIGHTS AS night,
	       tstzrange(timestamptz '2031-01-01 00:00+00' + make_interval(days => (room % $NIGHTS)::int),
	                 timestamptz '2031-01-01 00:00+00' + make_interval(days => (room % $NIGHTS)::int + 1)) AS during
	  FROM generate_series(1, $ROOMS) room"
check "1,000 of the keys replay after the commit: ok, replayed, the booking of that room and night" \
	"SELECT count(*) FILTER (WHERE r.code = 'ok' AND r.replayed AND r.booking_id = b.id) || ' of ' || count(*)
	   FROM ($sample) s
	   CROSS JOIN LATERAL booking.reserve_stay(s.room, 'guest', s.during,
	                                           idempotency_key => format('stay-%s-%s', s.room, s.night)) r
	   LEFT JOIN booking.bookings b ON b.resource_id = s.room AND b.during = s.during AND b.status = 'confirmed'" \
	"1000 of 1000"
check "... and wrote nothing: still $CALLS bookings and $CALLS keys" \
	"SELECT (SELECT count(*) FROM booking.bookings) || ' ' || (SELECT count(*) FROM booking.idempotency_keys)" \
	"$CALLS $CALLS"
check "a new key for a booked night is refused as unavailable, not replayed" \
	"SELECT code || ' ' || replayed FROM booking.reserve_stay(1, 'guest',
	        '[2031-01-01 00:00+00, 2031-01-02 00:00+00)', idempotency_key => 'stay-new')" "unavailable false"
check_invariants "after $CALLS keyed calls in one transaction"

rel_done
