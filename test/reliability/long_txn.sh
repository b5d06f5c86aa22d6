#!/usr/bin/env bash
# long_txn.sh: long transactions and long sessions.
#  1. The cost per call does not grow inside one transaction, measured on a
#     fresh database, so that every row a call might read was written by the
#     measured transaction itself:
#     - 10,000 reserve_seat calls in ONE transaction on 10,000 resources, one
#       call each (one version of each counter row: what the extension itself
#       costs per call), all ok; then the same with an idempotency key per
#       call, all ok and 10,000 keys stored.  In each, the last 1,000 calls
#       take at most twice as long as the first 1,000.  Any per-call work
#       that grows with what the transaction already did fails this: a
#       sequential scan of the bookings or of the keys, a list of the
#       resources touched, a lock table that fills up.
#     - 10,000 calls on ONE resource in one transaction: the cost grows, as
#       PostgreSQL's own one-row UPDATE loop does (each call adds a version of
#       the counter row that the open transaction cannot prune), and no
#       faster than twice that loop's growth.
#     Times are per batch of 1,000 calls; "first" is the faster of the first
#     two batches and "last" the faster of the last two, so that a burst of
#     other load on a shared machine does not fail the check.
#  2. The 10,000 calls on one 10,000-seat session are all ok, the 10,001st
#     is sold_out, one transaction id holds all the rows, and after the
#     commit the counter and the rows say 10,000.  No subtransaction is
#     used: the pg_subtrans SLRU (pg_stat_slru 'Subtrans', touched by every
#     subtransaction that gets an xid) is not touched, while a control loop
#     of 1,000 plpgsql exception blocks that write touches it at least 1,000
#     times.
#  3. 100,000 calls in separate statements of ONE session (20,000 each of:
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

# 1 and 2: one transaction each.  Each loop raises a NOTICE with the time of
# each batch of 1,000 calls, in microseconds: "batches=b1,...,b10,".  The
# time is the backend's own CPU time (/proc/self/schedstat: time on a CPU,
# not waiting for one), so that other load on a shared machine does not
# count; wall-clock time where the kernel does not offer it.
clock="(pg_catalog.split_part(pg_catalog.pg_read_file('/proc/self/schedstat'), ' ', 1)::bigint / 1000)"
if [[ $(q "SELECT $clock" 2>/dev/null) =~ ^[0-9]+$ ]]; then
	echo "# timing the backend's CPU time (/proc/self/schedstat)"
else
	clock="(extract(epoch FROM pg_catalog.clock_timestamp()) * 1000000)::bigint"
	echo "# timing wall-clock time (no /proc/self/schedstat)"
fi
batch="IF i % 1000 = 0 THEN
            t1 := $clock;
            b := b || (t1 - t) || ',';
            t := t1;
        END IF;"
sale=$(q "SELECT booking.create_resource('long transaction', 10000)")
slru="(SELECT blks_zeroed + blks_hit + blks_read FROM pg_stat_slru WHERE name = 'Subtrans')"
out=$(rel_psql -At -d "$REL_DB" 2>&1 <<EOF
-- 10,000 resources, one call each; then 10,000 more, one keyed call each
DO \$\$
DECLARE t bigint; t1 bigint; b text := ''; r0 bigint; n_ok int := 0; c text;
BEGIN
    SELECT min(id) - 1 INTO r0 FROM (SELECT booking.create_resource('spread ' || g, 1000) AS id FROM generate_series(1, 10000) g) s;
    t := $clock;
    FOR i IN 1..10000 LOOP
        SELECT code INTO c FROM booking.reserve_seat(r0 + i, 'guest', 1);
        IF c = 'ok' THEN n_ok := n_ok + 1; END IF;
        $batch
    END LOOP;
    RAISE NOTICE 'spread ok=% batches=%', n_ok, b;
END
\$\$;
DO \$\$
DECLARE t bigint; t1 bigint; b text := ''; r0 bigint; n_ok int := 0; c text;
BEGIN
    SELECT min(id) - 1 INTO r0 FROM (SELECT booking.create_resource('keyed ' || g, 1000) AS id FROM generate_series(1, 10000) g) s;
    t := $clock;
    FOR i IN 1..10000 LOOP
        SELECT code INTO c FROM booking.reserve_seat(r0 + i, 'guest', 1, idempotency_key => 'long-' || i);
        IF c = 'ok' THEN n_ok := n_ok + 1; END IF;
        $batch
    END LOOP;
    RAISE NOTICE 'keyed ok=% keys=% batches=%', n_ok, (SELECT count(*) FROM booking.idempotency_keys), b;
END
\$\$;
-- 10,000 calls on one resource
SELECT 'subtrans_before', $slru;
DO \$\$
DECLARE t bigint; t1 bigint; b text := ''; c text; n_ok int := 0;
BEGIN
    t := $clock;
    FOR i IN 1..10000 LOOP
        SELECT code INTO c FROM booking.reserve_seat($sale, 'guest', 1);
        IF c = 'ok' THEN n_ok := n_ok + 1; END IF;
        $batch
    END LOOP;
    SELECT code INTO c FROM booking.reserve_seat($sale, 'guest', 1);
    RAISE NOTICE 'result ok=% next=% xacts=% batches=%', n_ok, c,
        (SELECT count(DISTINCT xmin::text) FROM booking.bookings WHERE resource_id = $sale), b;
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
-- what PostgreSQL itself charges for updating one row 10,000 times in one
-- transaction (the counter row is such a row)
DO \$\$
DECLARE t bigint; t1 bigint; b text := '';
BEGIN
    CREATE TEMP TABLE counter (id int PRIMARY KEY, n int) WITH (fillfactor = 50);
    INSERT INTO counter VALUES (1, 0);
    t := $clock;
    FOR i IN 1..10000 LOOP
        UPDATE counter SET n = n + 1 WHERE id = 1;
        $batch
    END LOOP;
    RAISE NOTICE 'plain batches=%', b;
END
\$\$;
EOF
)
field() { echo "$out" | sed -n "s/.*NOTICE:  $1 .*\b$2=\([^ ]*\).*/\1/p" | head -n 1; }
# first NAME / last NAME: the faster of the first two and of the last two
# batches of loop NAME, in microseconds
first() { field "$1" batches | awk -F, '{ print ($1 < $2 ? $1 : $2) }'; }
last() { field "$1" batches | awk -F, '{ print ($9 < $10 ? $9 : $10) }'; }
ms() { echo "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))"; }
s0=$(echo "$out" | sed -n 's/^subtrans_before|//p')
s1=$(echo "$out" | sed -n 's/^subtrans_after|//p')
s2=$(echo "$out" | sed -n 's/^subtrans_control|//p')
if [ -z "$(field plain batches)" ] || [ -z "$s2" ]; then
	fail "the transactions of 10,000 calls ran"
	echo "$out" | tail -n 10 | sed 's/^/#   /'
else
	for loop in spread keyed result plain; do
		echo "# $loop: 1,000-call batches took $(field $loop batches | tr ',' ' ')us"
	done

	# 1. the cost per call does not grow
	sf=$(first spread); sl=$(last spread)
	if [ "$(field spread ok)" = 10000 ] && [ "$sl" -le $((2 * sf)) ]; then
		pass "10,000 calls in one transaction on 10,000 resources: all ok, and the last 1,000 took $(ms "$sl") ms <= 2 x the first 1,000 ($(ms "$sf") ms)"
	else
		fail "10,000 calls in one transaction on 10,000 resources: all ok ($(field spread ok)), and the last 1,000 took $(ms "$sl") ms <= 2 x the first 1,000 ($(ms "$sf") ms)"
	fi
	kf=$(first keyed); kl=$(last keyed)
	if [ "$(field keyed ok)" = 10000 ] && [ "$(field keyed keys)" = 10000 ] && [ "$kl" -le $((2 * kf)) ]; then
		pass "10,000 keyed calls in one transaction on 10,000 resources: all ok, 10,000 keys, and the last 1,000 took $(ms "$kl") ms <= 2 x the first 1,000 ($(ms "$kf") ms)"
	else
		fail "10,000 keyed calls in one transaction on 10,000 resources: all ok ($(field keyed ok)), 10,000 keys ($(field keyed keys)), and the last 1,000 took $(ms "$kl") ms <= 2 x the first 1,000 ($(ms "$kf") ms)"
	fi
	# on one resource every call writes a new version of its counter row,
	# and PostgreSQL cannot prune versions of a row its own open transaction
	# wrote: later calls walk them (docs/guarantees.md, Known limits)
	rf=$(first result); rl=$(last result)
	pf=$(first plain); pl=$(last plain)
	if [ $((rl * pf)) -le $((2 * pl * rf)) ]; then
		pass "on one resource the cost grows no faster than twice a plain one-row UPDATE's: x$((rl / (rf > 0 ? rf : 1))) ($(ms "$rf") -> $(ms "$rl") ms) vs x$((pl / (pf > 0 ? pf : 1))) ($(ms "$pf") -> $(ms "$pl") ms)"
	else
		fail "on one resource the cost grows no faster than twice a plain one-row UPDATE's: $(ms "$rf") -> $(ms "$rl") ms vs $(ms "$pf") -> $(ms "$pl") ms"
	fi

	# 2. one transaction on one resource
	n_ok=$(field result ok); next=$(field result next); xacts=$(field result xacts)
	if [ "$n_ok" = 10000 ] && [ "$next" = sold_out ] && [ "$xacts" = 1 ]; then
		pass "10,000 reserve_seat calls in one transaction: 10,000 ok, the 10,001st sold_out, one transaction id"
	else
		fail "10,000 reserve_seat calls in one transaction: 10,000 ok, the 10,001st sold_out (got $n_ok ok, then $next, $xacts xids)"
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

# 3. one session, 100,000 statements
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
	        (SELECT count(*) FROM booking.idempotency_keys WHERE key LIKE 'key-%')" "40000 40000 20000 1 20000"
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
