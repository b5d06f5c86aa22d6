#!/usr/bin/env bash
# long_txn.sh: long transactions and long sessions.
#  1. 10,000 reserve_seat calls inside ONE transaction (a DO block) on a
#     10,000-seat session: all 10,000 are ok, the 10,001st is sold_out, and
#     after the commit the counter and the rows say 10,000.  The cost per
#     call does not grow: on 10,000 resources, one call each, the last 1,000
#     take at most twice as long as the first 1,000; on one resource it grows
#     no faster than PostgreSQL's own one-row UPDATE loop (each call adds a
#     version of the counter row that the open transaction cannot prune).
#     No subtransaction is used: the pg_subtrans SLRU
#     (pg_stat_slru 'Subtrans', touched by every subtransaction that gets an
#     xid) is not touched, while a control loop of 1,000 plpgsql exception
#     blocks that write touches it at least 1,000 times.
#  2. 100,000 calls in separate statements of ONE session (20,000 each of:
#     reserve_seat, reserve_seat with a hold and a key, confirm,
#     reserve_stay, and a refused reserve_stay whose message carries the
#     next free slot): exact totals, and the backend's memory after 100,000
#     calls is what it was after 1,000 (private RSS from /proc/self/status
#     and the total of pg_backend_memory_contexts, each within 5% or 2 MB).
set -u
cd "$(dirname "$0")" || exit 1
. ./lib.bash

rel_db booking_rel_long
q "ALTER DATABASE $REL_DB SET synchronous_commit = off" >/dev/null

# 1. one transaction
sale=$(q "SELECT booking.create_resource('long transaction', 10000)")
slru="(SELECT blks_zeroed + blks_hit + blks_read FROM pg_stat_slru WHERE name = 'Subtrans')"
out=$(rel_psql -At -d "$REL_DB" 2>&1 <<EOF
SELECT 'subtrans_before', $slru;
DO \$\$
DECLARE
    t0 timestamptz; t1 timestamptz; t9 timestamptz; t10 timestamptz;
    m1 bigint; m10 bigint; c text; n_ok int := 0;
BEGIN
    t0 := clock_timestamp();
    FOR i IN 1..10000 LOOP
        SELECT code INTO c FROM booking.reserve_seat($sale, 'guest', 1);
        IF c = 'ok' THEN n_ok := n_ok + 1; END IF;
        IF i = 1000 THEN
            t1 := clock_timestamp();
            SELECT sum(total_bytes) INTO m1 FROM pg_backend_memory_contexts;
        ELSIF i = 9000 THEN
            t9 := clock_timestamp();
        END IF;
    END LOOP;
    t10 := clock_timestamp();
    SELECT sum(total_bytes) INTO m10 FROM pg_backend_memory_contexts;
    SELECT code INTO c FROM booking.reserve_seat($sale, 'guest', 1);
    RAISE NOTICE 'result ok=% next=% first_ms=% last_ms=% mem1=% mem10=% xacts=%', n_ok, c,
        round(extract(epoch FROM t1 - t0) * 1000), round(extract(epoch FROM t10 - t9) * 1000), m1, m10,
        (SELECT count(DISTINCT xmin::text) FROM booking.bookings WHERE resource_id = $sale);
END
\$\$;
SELECT pg_stat_force_next_flush();
SELECT 'subtrans_after', $slru;
DO \$\$
BEGIN
    FOR i IN 1..1000 LOOP
        BEGIN
            PERFORM booking.create_resource('control ' || i, 1);
            PERFORM 1 / 0;
        EXCEPTION WHEN division_by_zero THEN NULL;
        END;
    END LOOP;
END
\$\$;
SELECT pg_stat_force_next_flush();
SELECT 'subtrans_control', $slru;
-- the same 10,000 calls on 10,000 resources (one row version each: what
-- the extension itself costs per call), and what PostgreSQL itself charges
-- for updating one row 10,000 times in one transaction (the counter row is
-- such a row)
DO \$\$
DECLARE t0 timestamptz; t1 timestamptz; t9 timestamptz; r0 bigint;
BEGIN
    SELECT min(id) - 1 INTO r0 FROM (SELECT booking.create_resource('spread ' || g, 1000) AS id FROM generate_series(1, 10000) g) s;
    t0 := clock_timestamp();
    FOR i IN 1..10000 LOOP
        PERFORM booking.reserve_seat(r0 + i, 'guest', 1);
        IF i = 1000 THEN t1 := clock_timestamp(); ELSIF i = 9000 THEN t9 := clock_timestamp(); END IF;
    END LOOP;
    RAISE NOTICE 'spread first_ms=% last_ms=%', round(extract(epoch FROM t1 - t0) * 1000),
        round(extract(epoch FROM clock_timestamp() - t9) * 1000);
END
\$\$;
DO \$\$
DECLARE t0 timestamptz; t1 timestamptz; t9 timestamptz;
BEGIN
    CREATE TEMP TABLE counter (id int PRIMARY KEY, n int) WITH (fillfactor = 50);
    INSERT INTO counter VALUES (1, 0);
    t0 := clock_timestamp();
    FOR i IN 1..10000 LOOP
        UPDATE counter SET n = n + 1 WHERE id = 1;
        IF i = 1000 THEN t1 := clock_timestamp(); ELSIF i = 9000 THEN t9 := clock_timestamp(); END IF;
    END LOOP;
    RAISE NOTICE 'plain first_ms=% last_ms=%', round(extract(epoch FROM t1 - t0) * 1000),
        round(extract(epoch FROM clock_timestamp() - t9) * 1000);
END
\$\$;
EOF
)
field() { echo "$out" | sed -n "s/.*NOTICE:  $1 .*\b$2=\([^ ]*\).*/\1/p" | head -n 1; }
n_ok=$(field result ok)
next=$(field result next)
first_ms=$(field result first_ms)
last_ms=$(field result last_ms)
mem1=$(field result mem1)
mem10=$(field result mem10)
xacts=$(field result xacts)
s0=$(echo "$out" | sed -n 's/^subtrans_before|//p')
s1=$(echo "$out" | sed -n 's/^subtrans_after|//p')
s2=$(echo "$out" | sed -n 's/^subtrans_control|//p')
if [ -z "$n_ok" ] || [ -z "$s2" ]; then
	fail "the 10,000-call transaction ran"
	echo "$out" | tail -n 10 | sed 's/^/#   /'
else
	echo "# one transaction: first 1,000 calls ${first_ms} ms, last 1,000 ${last_ms} ms; memory contexts ${mem1} -> ${mem10} bytes"
	echo "# the same calls on 10,000 resources: first 1,000 $(field spread first_ms) ms, last 1,000 $(field spread last_ms) ms"
	echo "# PostgreSQL alone, one row updated 10,000 times in one transaction: first 1,000 $(field plain first_ms) ms, last 1,000 $(field plain last_ms) ms"
	if [ "$n_ok" = 10000 ] && [ "$next" = sold_out ] && [ "$xacts" = 1 ]; then
		pass "10,000 reserve_seat calls in one transaction: 10,000 ok, the 10,001st sold_out, one transaction id"
	else
		fail "10,000 reserve_seat calls in one transaction: 10,000 ok, the 10,001st sold_out (got $n_ok ok, then $next, $xacts xids)"
	fi
	# Every call writes a new version of its counter row, and PostgreSQL
	# cannot prune versions of a row its own open transaction wrote: calls on
	# one resource in one transaction walk them (docs/guarantees.md).  The
	# extension must add no growth of its own: one call per resource, the
	# cost is flat; and on one resource it grows no faster than PostgreSQL's
	# own single-row UPDATE loop.
	sf=$(field spread first_ms); sl=$(field spread last_ms)
	pf=$(field plain first_ms); pl=$(field plain last_ms)
	if [ "$sl" -le $((2 * sf)) ]; then
		pass "the cost per call does not grow: on 10,000 resources, last 1,000 calls ${sl} ms <= 2 x first 1,000 (${sf} ms)"
	else
		fail "the cost per call does not grow: on 10,000 resources, last 1,000 calls ${sl} ms <= 2 x first 1,000 (${sf} ms)"
	fi
	if [ $((last_ms * pf)) -le $((2 * pl * first_ms)) ]; then
		pass "on one resource the cost grows no faster than a plain one-row UPDATE (x$((last_ms / (first_ms > 0 ? first_ms : 1))) vs x$((pl / (pf > 0 ? pf : 1))))"
	else
		fail "on one resource the cost grows no faster than a plain one-row UPDATE (${first_ms} -> ${last_ms} ms vs ${pf} -> ${pl} ms)"
	fi
	if [ $((s1 - s0)) -lt 50 ] && [ $((s2 - s1)) -ge 1000 ]; then
		pass "no subtransaction: pg_subtrans touched $((s1 - s0)) times by the 10,000 calls (a control of 1,000 exception blocks: $((s2 - s1)))"
	else
		fail "no subtransaction: pg_subtrans touched $((s1 - s0)) times by the 10,000 calls (< 50), $((s2 - s1)) by the control (>= 1,000)"
	fi
fi
check "after the commit: 10,000 bookings, counter 10,000, 0 seats left" \
	"SELECT count(*) || ' ' || (SELECT taken FROM booking.resources WHERE id = $sale) || ' ' || booking.seats_left($sale)
	   FROM booking.bookings WHERE resource_id = $sale" "10000 10000 0"

# 2. one session, 100,000 statements
seat=$(q "SELECT booking.create_resource('long session', 40000)")
room=$(q "SELECT booking.create_resource('long session room')")
busy=$(q "SELECT booking.create_resource('long session busy room')")
q "SELECT code FROM booking.reserve_stay($busy, 'first', '[2030-01-01 00:00+00, 2030-01-02 00:00+00)')" >/dev/null
script="$REL_TMP/session.sql"
memory="SELECT 'memory', sum(total_bytes), substring(pg_read_file('/proc/self/status') from 'RssAnon:\\s*(\\d+)'),
	substring(pg_read_file('/proc/self/status') from 'VmRSS:\\s*(\\d+)') FROM pg_backend_memory_contexts;"
awk -v seat="$seat" -v room="$room" -v busy="$busy" -v memory="$memory" 'BEGIN {
	print "PREPARE s1 AS SELECT (booking.reserve_seat(" seat ", '\''g'\'', 1)).code;"
	print "PREPARE s2(text) AS SELECT (booking.reserve_seat(" seat ", '\''k'\'', 1, hold => '\''1 hour'\'', idempotency_key => $1)).code;"
	print "PREPARE s3 AS SELECT (booking.confirm(currval('\''booking.bookings_id_seq'\''))).code;"
	print "PREPARE s4(int) AS SELECT (booking.reserve_stay(" room ", '\''g'\'', tstzrange(timestamptz '\''2030-01-01 00:00+00'\'' + make_interval(hours => $1), timestamptz '\''2030-01-01 00:00+00'\'' + make_interval(hours => $1 + 1)))).code;"
	print "PREPARE s5 AS SELECT (booking.reserve_stay(" busy ", '\''g'\'', '\''[2030-01-01 00:00+00, 2030-01-01 06:00+00)'\'')).code;"
	for (i = 1; i <= 20000; i++) {
		print "EXECUTE s1;"; print "EXECUTE s2('\''key-" i "'\'');"; print "EXECUTE s3;"; print "EXECUTE s4(" i ");"; print "EXECUTE s5;"
		if (i == 200) print memory
	}
	print memory
}' >"$script"
started=$SECONDS
rel_psql -At -d "$REL_DB" -f "$script" 2>&1 | awk '{ n[$0]++ } END { for (k in n) print n[k] " " k }' | sort -k2 >"$REL_TMP/session.out"
echo "# 100,000 calls in one session took $((SECONDS - started)) s"
answers=$(grep -v ' memory|' "$REL_TMP/session.out" | awk '{ print $2 "=" $1 }' | paste -sd' ')
if [ "$answers" = "ok=80000 unavailable=20000" ]; then
	pass "100,000 calls in one session: 80,000 ok, 20,000 unavailable"
else
	fail "100,000 calls in one session: 80,000 ok, 20,000 unavailable (got $answers)"
fi
check "... 40,000 confirmed seats (half of them holds confirmed), 20,000 stays, 20,000 keys" \
	"SELECT (SELECT count(*) FROM booking.bookings WHERE resource_id = $seat AND status = 'confirmed') || ' ' ||
	        (SELECT taken FROM booking.resources WHERE id = $seat) || ' ' ||
	        (SELECT count(*) FROM booking.bookings WHERE resource_id = $room AND status = 'confirmed') || ' ' ||
	        (SELECT count(*) FROM booking.bookings WHERE resource_id = $busy) || ' ' ||
	        (SELECT count(*) FROM booking.idempotency_keys)" "40000 40000 20000 1 20000"
read -r ctx1 anon1 rss1 <<<"$(grep ' memory|' "$REL_TMP/session.out" | sed -n 1p | cut -d' ' -f2 | awk -F'|' '{ print $2, $3, $4 }')"
read -r ctx2 anon2 rss2 <<<"$(grep ' memory|' "$REL_TMP/session.out" | sed -n 2p | cut -d' ' -f2 | awk -F'|' '{ print $2, $3, $4 }')"
if [ -z "${anon2:-}" ]; then
	fail "the backend's memory was measured after 1,000 and after 100,000 calls"
	cat "$REL_TMP/session.out" | head -n 5 | sed 's/^/#   /'
else
	echo "# backend memory after 1,000 calls: contexts $ctx1 B, RssAnon $anon1 kB, VmRSS $rss1 kB; after 100,000: $ctx2 B, $anon2 kB, $rss2 kB (VmRSS includes shared buffers touched)"
	allow=$((anon1 / 20 > 2048 ? anon1 / 20 : 2048))
	if [ $((anon2 - anon1)) -le "$allow" ]; then
		pass "private memory (RssAnon) is flat: $anon1 kB after 1,000 calls, $anon2 kB after 100,000 (allowed +$allow kB)"
	else
		fail "private memory (RssAnon) is flat: $anon1 kB after 1,000 calls, $anon2 kB after 100,000 (allowed +$allow kB)"
	fi
	allow=$((ctx1 / 20 > 2097152 ? ctx1 / 20 : 2097152))
	if [ $((ctx2 - ctx1)) -le "$allow" ]; then
		pass "memory contexts are flat: $ctx1 B after 1,000 calls, $ctx2 B after 100,000 (allowed +$allow B)"
	else
		fail "memory contexts are flat: $ctx1 B after 1,000 calls, $ctx2 B after 100,000 (allowed +$allow B)"
	fi
fi
check_invariants "after the long transaction and the long session"

rel_done
