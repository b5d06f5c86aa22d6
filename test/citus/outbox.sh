#!/usr/bin/env bash
# outbox.sh: the outbox, the waitlist and health() of 0.6.0 on Citus, every
# call made through the coordinator.
#  1. distribute() distributes booking.events, event_heads and deliveries by
#     home, co-located with resources (32 shards on both workers), makes
#     booking.consumers a reference table (a copy on every node), and
#     registers the twin shard_join_waitlist by home with force_delegation,
#     on every node; a second distribute() changes nothing.
#  2. A call's event lands in its resource's shard on its resource's worker
#     (read in the shard table on the worker), with the booking's home; it is
#     written in the call's transaction: inside BEGIN it is visible, and
#     after ROLLBACK there is no event anywhere (a reserve and a cancel, on
#     each worker); a refusal writes none.
#  3. 16 clients for 10 s through the coordinator: reserve_seat with and
#     without holds and reserve_stay with and without holds on resources of
#     both workers, confirm, cancel, and join_waitlist / cancel on one
#     sold-out session, while 2 relays of consumer "a" and 1 of consumer "b"
#     (pgbench clients running claim_events + ack_events, recording every
#     claimed row and every ack in local tables of the coordinator) drain.
#     Then drained to empty and checked exactly: every event numbered; per
#     kind, one event per state change (reserved = bookings made by a
#     reserve, waitlist_joined = waitlisted answers, cancelled = cancelled
#     bookings = ok answers of cancel, confirmed = ok answers of confirm,
#     expired = expired bookings); per booking, its events in seq order are
#     a chain of its state changes (the first one creates it, each one's
#     status_before is the previous one's status_after, the last one's
#     status_after is the booking's status); per resource seq is 1..n with
#     no gap and no head row written (only the purge writes one); each
#     consumer has exactly one acked delivery per event; the relays'
#     batches were disjoint (every event claimed once per consumer, every
#     ack counted its whole batch, the delivery keeps the token of the batch
#     that acked it, a batch's rows in (resource_id, seq) order); no
#     prepared transaction left on any node.
#  4. Fencing across nodes: a claim with a lease of 100 ms, then after it
#     lapsed a claim again (a new token, the same events, on both workers):
#     the old token's ack counts 0 and the new token's counts them all, a
#     second ack 0.
#  5. The waitlist: join_waitlist on a sold-out session answers waitlisted
#     202 and runs on the session's worker only; the cancel of a seat holder
#     offers the seat to the head (pending, a waitlist_offered event in the
#     session's shard on its worker); strict FIFO: a head that needs 2 seats
#     keeps the one seat freed and the line behind it waits, and a newcomer
#     is sold_out while anyone waits; hold_expire() on the coordinator
#     expires the lapsed offered hold and offers the seats to the next in
#     line.
#  6. health() on the coordinator: consumer_unacked per consumer (a backlog
#     of events on both workers), waitlist_length per resource with a line,
#     events_unsequenced, all equal to the tables.
#  7. The purge keeps the numbering: three events on a resource of each
#     worker, acknowledged and two days old, go with hold_expire, which
#     keeps their last number in event_heads; the next event is numbered 4.
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

if rehearsal; then
	echo "# REHEARSAL: outbox.sh needs the workers"
	pass "rehearsal"
	citus_done
fi

citus_db booking_citus_outbox

# routed SQL: the twins that the call sends to the workers, as
# "twin@node", sorted (citus.log_remote_commands on the coordinator)
routed() {
	npsql coord -At -d "$CITUS_DB" -c "SET citus.log_remote_commands = on" -c "SET client_min_messages = notice" \
		-c "$1" 2>&1 >/dev/null |
		awk '/issuing .*booking\.shard_/ { match($0, /booking\.shard_[a-z_]+/); t = substr($0, RSTART + 8, RLENGTH - 8); getline
			if (match($0, /:[0-9]+ connectionId/)) print t " " substr($0, RSTART + 1, RLENGTH - 14) }' |
		while read -r twin port; do echo "$twin@$(node_of_port "$port")"; done | sort | paste -sd' ' -
}

# in_shard NODE RESOURCE TABLE CONDITION: rows of booking.TABLE that meet
# CONDITION in the shard of RESOURCE, read on NODE from the shard table itself
# (the shard ids of a resource are read once, by shards_of, into a file)
shards_of() {
	q "SELECT $1, t, get_shard_id_for_distribution_column('booking.' || t, (SELECT home FROM booking.resources WHERE id = $1))
	     FROM unnest(ARRAY['events', 'deliveries', 'bookings']) t" | tr '|' ' ' >>"$CITUS_TMP/shards"
}
in_shard() {
	local shard
	shard=$(awk -v r="$2" -v t="$3" '$1 == r && $2 == t { print $3; exit }' "$CITUS_TMP/shards" 2>/dev/null)
	[ -n "$shard" ] || { shards_of "$2"; shard=$(awk -v r="$2" -v t="$3" '$1 == r && $2 == t { print $3; exit }' "$CITUS_TMP/shards"); }
	qn "$1" "SELECT count(*) FROM booking.$3_$shard WHERE $4" 2>&1
}

# qcheck DESCRIPTION QUERY EXPECTED: a check queued for qrun, which runs
# the queued queries (each one value) in one session on the coordinator
QC_DESC=()
QC_SQL=()
QC_EXP=()
qcheck() {
	QC_DESC+=("$1")
	QC_SQL+=("$2")
	QC_EXP+=("$3")
}
qrun() {
	local i got
	for i in "${!QC_SQL[@]}"; do
		printf "SELECT 'CHK%d:' || coalesce((%s)::text, 'NULL');\n" "$i" "${QC_SQL[$i]}"
	done >"$CITUS_TMP/batch.sql"
	npsql coord -At -d "$CITUS_DB" -v ON_ERROR_STOP=0 -f "$CITUS_TMP/batch.sql" >"$CITUS_TMP/batch.out" 2>"$CITUS_TMP/batch.err"
	for i in "${!QC_SQL[@]}"; do
		got=$(sed -n "s/^CHK$i://p" "$CITUS_TMP/batch.out")
		[ -n "$got" ] || got="no answer: $(grep -m1 ERROR "$CITUS_TMP/batch.err")"
		check_eq "${QC_DESC[$i]}" "$got" "${QC_EXP[$i]}"
	done
	QC_DESC=()
	QC_SQL=()
	QC_EXP=()
}

# other NODE: the other worker
other() {
	if [ "$1" = w1 ]; then echo w2; else echo w1; fi
}

q "CREATE TABLE ob_res (id bigint PRIMARY KEY, kind text NOT NULL, node text)" >/dev/null
q "CREATE TABLE relay_log (relay text, consumer text, phase text, event_id bigint, lease_token bigint,
	resource_id bigint, seq bigint, booking_id bigint, kind text, ord bigint)" >/dev/null
q "CREATE TABLE relay_acks (relay text, consumer text, phase text, lease_token bigint, claimed int, tokens int, acked int)" >/dev/null

# the consumers are there before the first event: each gets every event
check "add_consumer a and b answer true" "SELECT booking.add_consumer('a') AND booking.add_consumer('b')" t
check "add_consumer a again answers false" "SELECT booking.add_consumer('a')" f

########################################################################
# 1. distribute()
########################################################################
echo "# 1. distribute() (at $SECONDS s)"
tables_sql="SELECT string_agg(logicalrelid::text || ':' || partmethod::text || ':' || coalesce(column_to_column_name(logicalrelid, partkey), '-')
	       || ':' || (colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'booking.resources'::regclass)),
	       ' ' ORDER BY logicalrelid::text)
	  FROM pg_dist_partition WHERE logicalrelid IN ('booking.events'::regclass, 'booking.event_heads'::regclass, 'booking.deliveries'::regclass)"
check "events, event_heads and deliveries are distributed by home, co-located with resources" "$tables_sql" \
	"booking.deliveries:h:home:true booking.event_heads:h:home:true booking.events:h:home:true"
check "... in 32 shards each, placed on both workers and not on the coordinator" \
	"SELECT string_agg(t || ':' || n || ':' || nodes, ' ' ORDER BY t) FROM (
	   SELECT s.logicalrelid::text AS t, count(*) AS n, string_agg(DISTINCT p.nodeport::text, ',' ORDER BY p.nodeport::text) AS nodes
	     FROM pg_dist_shard s JOIN pg_dist_shard_placement p USING (shardid)
	    WHERE s.logicalrelid IN ('booking.events'::regclass, 'booking.event_heads'::regclass, 'booking.deliveries'::regclass)
	    GROUP BY 1) x" \
	"booking.deliveries:32:$(citus_port w1),$(citus_port w2) booking.event_heads:32:$(citus_port w1),$(citus_port w2) booking.events:32:$(citus_port w1),$(citus_port w2)"
check "consumers is a reference table (partmethod n, replication t) with a copy on every node" \
	"SELECT p.partmethod::text || ':' || p.repmodel::text || ':' || (SELECT string_agg(n.nodeport::text, ',' ORDER BY n.nodeport)
	   FROM pg_dist_shard s JOIN pg_dist_placement pl USING (shardid) JOIN pg_dist_node n ON n.groupid = pl.groupid
	  WHERE s.logicalrelid = p.logicalrelid) FROM pg_dist_partition p WHERE p.logicalrelid = 'booking.consumers'::regclass" \
	"n:t:$(citus_port coord),$(citus_port w1),$(citus_port w2)"
twins_sql="SELECT string_agg(p.proname || ':' || (o.distribution_argument_index = p.pronargs - 1) || ':'
	       || (o.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'booking.resources'::regclass))
	       || ':' || coalesce(o.force_delegation, false), ' ' ORDER BY p.proname)
	  FROM pg_dist_object o JOIN pg_proc p ON o.classid = 'pg_proc'::regclass AND o.objid = p.oid
	 WHERE p.pronamespace = 'booking'::regnamespace AND p.proname = 'shard_join_waitlist'"
check "shard_join_waitlist is a distributed function by home, co-located with the tables, force_delegation" \
	"$twins_sql" "shard_join_waitlist:true:true:true"
for node in w1 w2; do
	check_on "$node" "$node knows shard_join_waitlist as a distributed function by home" "$twins_sql" "shard_join_waitlist:true:true:true"
	check_on "$node" "$node has the consumers a and b (the reference table's copy)" \
		"SELECT string_agg(name, ' ' ORDER BY name) FROM booking.consumers" "a b"
done
meta_sql="SELECT (SELECT string_agg(logicalrelid::text || ':' || partmethod::text || ':' || colocationid || ':' || repmodel::text, ' ' ORDER BY logicalrelid::text)
	          FROM pg_dist_partition) || ' / ' || (SELECT count(*) FROM pg_dist_shard) || ' / ' ||
	       (SELECT string_agg(p.oid::regprocedure::text || ':' || coalesce(o.distribution_argument_index::text, '-') || ':'
	               || coalesce(o.colocationid::text, '-'), ' ' ORDER BY p.oid::regprocedure::text)
	          FROM pg_dist_object o JOIN pg_proc p ON o.classid = 'pg_proc'::regclass AND o.objid = p.oid
	         WHERE p.pronamespace = 'booking'::regnamespace)"
before=$(q "$meta_sql")
check "distribute() again changes nothing" "SELECT booking.distribute()" "booking is already distributed over 32 shards on 2 workers."
check_eq "... the tables, shards and distributed functions are the same" "$(q "$meta_sql")" "$before"

# the resources, made in a few sessions up front (a psql session per call
# costs ~0.1 s), then sorted by worker
for spec in "seat 400 12" "room 1 12" "line 2 6" "part 10 12"; do
	read -r kind cap n <<<"$spec"
	gexec "SELECT format('SELECT booking.create_resource(%L, %s)', '$kind ' || i, $cap) FROM generate_series(1, $n) i" |
		awk -v k="$kind" '{ print "INSERT INTO ob_res (id, kind) VALUES (" $1 ", '\''" k "'\'');" }' | npsql coord -d "$CITUS_DB" >/dev/null
done
for node in w1 w2; do
	q "UPDATE ob_res SET node = '$node' WHERE id IN (SELECT r.id FROM booking.resources r
		JOIN pg_dist_shard_placement p ON p.shardid = get_shard_id_for_distribution_column('booking.resources', r.home)
		WHERE p.nodeport = $(citus_port "$node"))" >/dev/null
done
# keep: two resources of a kind per worker for the load (one line session),
# the rest are removed from ob_res (they stay in booking.resources, unused)
q "DELETE FROM ob_res o WHERE o.kind IN ('seat', 'room') AND o.id NOT IN (
	SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY kind, node ORDER BY id) n FROM ob_res WHERE kind = o.kind) x WHERE n <= 2)" >/dev/null
echo "# load resources: $(q "SELECT string_agg(kind || ' ' || id || '@' || node, ', ' ORDER BY kind, node, id) FROM ob_res WHERE kind IN ('seat', 'room')")"
# pick KIND NODE: an unused resource of that kind on NODE (removed from ob_res)
pick() {
	q "DELETE FROM ob_res WHERE id = (SELECT id FROM ob_res WHERE kind = '$1' AND node = '$2' ORDER BY id LIMIT 1) RETURNING id"
}
check "the load has 2 seat resources and 2 rooms on each worker" \
	"SELECT count(*) FILTER (WHERE kind = 'seat' AND node = 'w1') || ' ' || count(*) FILTER (WHERE kind = 'seat' AND node = 'w2') || ' '
	     || count(*) FILTER (WHERE kind = 'room' AND node = 'w1') || ' ' || count(*) FILTER (WHERE kind = 'room' AND node = 'w2')
	   FROM ob_res" "2 2 2 2"

########################################################################
# 2. events in their shard, in the call's transaction
########################################################################
echo "# 2. events in their shard (at $SECONDS s)"
p1=$(pick part w1) && p2=$(pick part w2) && [ -n "$p1" ] && [ -n "$p2" ] || { fail "a resource on each worker for part 2"; citus_done; }
echo "# resources $p1 (w1), $p2 (w2)"
for r in $p1 $p2; do
	node=$(worker_of "$r")
	o=$(other "$node")
	b=$(q "SELECT booking_id FROM booking.reserve_seat($r, 'p2-$r', 2)")
	home=$(q "SELECT home FROM booking.bookings WHERE id = ${b:-0}")
	check "$r ($node): reserve_seat writes one reserved event, with the booking's home and resource" \
		"SELECT count(*) || ' ' || bool_and(e.kind = 'reserved' AND e.resource_id = $r AND e.guest = 'p2-$r'
		        AND e.home = ${home:-0} AND e.payload->>'status_after' = 'confirmed'
		        AND (e.payload->>'quantity')::int = 2 AND NOT e.payload ? 'status_before')
		   FROM booking.events e WHERE e.booking_id = ${b:-0}" "1 true"
	check_eq "$r ($node): the event is in the resource's shard of booking.events on $node" \
		"$(in_shard "$node" "$r" events "booking_id = ${b:-0} AND kind = 'reserved'")" 1
	check_eq "$r ($node): ... and $o has no shard of it (the event is nowhere else)" \
		"$(qn "$o" "SELECT count(*) FROM pg_class WHERE relname = 'events_$(awk -v r="$r" '$1 == r && $2 == "events" { print $3; exit }' "$CITUS_TMP/shards")'")" 0
	check "$r ($node): cancel answers ok" "SELECT code FROM booking.cancel(${b:-0})" ok
	check_eq "$r ($node): its cancelled event (status_before confirmed) is in the shard on $node" \
		"$(in_shard "$node" "$r" events "booking_id = ${b:-0} AND kind = 'cancelled' AND payload->>'status_before' = 'confirmed' AND payload->>'status_after' = 'cancelled'")" 1

	# rolled back: a reserve, then a cancel of a booking that stays
	keep=$(q "SELECT booking_id FROM booking.reserve_seat($r, 'keep-$r', 1)")
	got=$(npsql coord -At -d "$CITUS_DB" 2>&1 <<EOF
BEGIN;
SELECT booking_id FROM booking.reserve_seat($r, 'rb-$r', 1) \gset
SELECT count(*) FROM booking.events WHERE booking_id = :booking_id AND kind = 'reserved';
SELECT code FROM booking.cancel(${keep:-0});
SELECT count(*) FROM booking.events WHERE booking_id = ${keep:-0} AND kind = 'cancelled';
ROLLBACK;
EOF
)
	check_eq "$r ($node): inside BEGIN the reserve's event is visible, the cancel answers ok and its event is visible" \
		"$(echo "$got" | sed -n '1,3p' | paste -sd' ')" "1 ok 1"
	check "$r ($node): after ROLLBACK no event of the rolled-back reserve anywhere (cluster-wide)" \
		"SELECT count(*) FROM booking.events WHERE guest = 'rb-$r'" 0
	check_eq "$r ($node): ... none in the shard on $node" "$(in_shard "$node" "$r" events "guest = 'rb-$r'")" 0
	check_eq "$r ($node): after ROLLBACK the booking kept is confirmed with only its reserved event" \
		"$(q "SELECT status FROM booking.bookings WHERE id = ${keep:-0}") $(q "SELECT string_agg(kind, ',') FROM booking.events WHERE booking_id = ${keep:-0}")" \
		"confirmed reserved"
	check_eq "$r ($node): ... no cancelled event of it in the shard on $node" "$(in_shard "$node" "$r" events "booking_id = ${keep:-0} AND kind = 'cancelled'")" 0
	check "$r ($node): a refusal (sold_out) writes no event" \
		"SELECT (SELECT code FROM booking.reserve_seat($r, 'big-$r', 500)) || ' ' || (SELECT count(*) FROM booking.events WHERE guest = 'big-$r')" "sold_out 0"
done

########################################################################
# 3. the load with relays
########################################################################
echo "# 3. load and relays (at $SECONDS s)"
# the line session: 2 seats, sold to two holders, on w1 or w2
wl=$(q "SELECT id FROM ob_res WHERE kind = 'line' ORDER BY id LIMIT 1")
q "UPDATE ob_res SET kind = 'line2' WHERE kind = 'line' AND id <> $wl" >/dev/null
for g in h1 h2; do
	gexec "SELECT format('INSERT INTO citus_log (kind, code, booking_id, quantity, resource_id, guest) VALUES (''line'', %L, %s, 1, $wl, ''$g'')',
	       code, coalesce(booking_id, 0)) FROM booking.reserve_seat($wl, '$g', 1)" >/dev/null
done
check "the line session $wl ($(worker_of "$wl")) is sold out to two holders" \
	"SELECT count(*) FILTER (WHERE code = 'ok') || ' ' || booking.seats_left($wl) FROM citus_log WHERE kind = 'line'" "2 0"

relay_out=$CITUS_TMP/relay
citus_pgbench --verbose-errors -c 2 -j 2 -T 10 -D consumer=a -D phase=load -f outbox_relay.pgb >"$relay_out.a" 2>&1 &
pid_a=$!
citus_pgbench --verbose-errors -c 1 -j 1 -T 10 -D consumer=b -D phase=load -f outbox_relay.pgb >"$relay_out.b" 2>&1 &
pid_b=$!
CITUS_BG_PIDS="$CITUS_BG_PIDS $pid_a $pid_b"
run_pgbench "load" -c 16 -j 4 -T 10 -f outbox_sale.pgb@6 -f outbox_stay.pgb@4 -f outbox_confirm.pgb@2 \
	-f outbox_cancel.pgb@3 -f outbox_wait.pgb@3
wait "$pid_a"
rc_a=$?
wait "$pid_b"
rc_b=$?
check_pgbench "relays of a" "$relay_out.a" "$rc_a"
check_pgbench "relay of b" "$relay_out.b" "$rc_b"
# what failed in a relay, with its statement
grep -h -A3 'got an error\|ERROR' "$relay_out.a" "$relay_out.b" | head -n 12 | sed 's/^/#   /'
answers "reserve_seat" "kind IN ('seat', 'hold')"
answers "reserve_stay" "kind IN ('stay', 'stayhold')"
answers "confirm" "kind = 'confirm'"
answers "cancel" "kind IN ('cancel', 'wcancel')"
answers "join_waitlist" "kind = 'wait'"
check "every answer is a documented code" \
	"SELECT count(*) FROM citus_log WHERE NOT (
	    (kind IN ('seat', 'hold') AND code IN ('ok', 'sold_out', 'busy'))
	 OR (kind IN ('stay', 'stayhold') AND code IN ('ok', 'unavailable', 'just_taken', 'busy'))
	 OR (kind = 'confirm' AND code IN ('ok', 'invalid_state', 'not_found', 'busy'))
	 OR (kind IN ('cancel', 'wcancel') AND code IN ('ok', 'invalid_state', 'not_found', 'busy'))
	 OR (kind = 'wait' AND code IN ('waitlisted', 'seats_available', 'busy'))
	 OR (kind = 'line' AND code IN ('ok', 'sold_out', 'busy')))" 0
check "the load made seat, stay and line bookings, confirms, cancels and waitlist entries" \
	"SELECT bool_and(n > 0) FROM (SELECT count(*) FILTER (WHERE kind = k AND code IN ('ok', 'waitlisted')) n
	   FROM citus_log, unnest(ARRAY['seat', 'hold', 'stay', 'stayhold', 'confirm', 'cancel', 'wcancel', 'wait']) k GROUP BY k) s" t
echo "# during the load the relays acked: $(q "SELECT coalesce(string_agg(relay || '=' || n, ', ' ORDER BY relay), 'none') FROM (SELECT relay, sum(acked) n FROM relay_acks WHERE phase = 'load' GROUP BY relay) s")"
check "during the load both relays of a and the relay of b acked batches" \
	"SELECT count(DISTINCT relay) FROM relay_acks WHERE phase = 'load' AND acked > 0" 3

# drain: one relay per consumer, rounds of 40 transactions until nothing is
# left to number or to acknowledge
left_sql="SELECT (SELECT count(*) FROM booking.events WHERE seq IS NULL) + (SELECT count(*) FROM booking.deliveries WHERE acked_at IS NULL)"
for round in $(seq 1 20); do
	[ "$(q "$left_sql")" = 0 ] && break
	citus_pgbench -c 1 -t 40 -D consumer=a -D phase=drain -f outbox_relay.pgb >"$relay_out.drain" 2>&1 &&
		citus_pgbench -c 1 -t 40 -D consumer=b -D phase=drain -f outbox_relay.pgb >>"$relay_out.drain" 2>&1 ||
		{ fail "drain: a relay round failed"; sed 's/^/#   /' "$relay_out.drain" | tail -n 5; break; }
done
echo "# drained after $round rounds"
check "drained: every event numbered, every delivery acked" "$left_sql" 0
check "a last claim of a and of b finds nothing" \
	"SELECT (SELECT count(*) FROM booking.claim_events('a', 10000)) + (SELECT count(*) FROM booking.claim_events('b', 10000))" 0

q "SET client_min_messages = warning;
   DROP TABLE IF EXISTS chk_events, chk_deliveries, chk_heads;
   CREATE TABLE chk_events AS SELECT * FROM booking.events;
   CREATE TABLE chk_deliveries AS SELECT * FROM booking.deliveries;
   CREATE TABLE chk_heads AS SELECT * FROM booking.event_heads;
   CREATE INDEX ON chk_events (booking_id);
   ANALYZE chk_events, chk_deliveries, chk_heads" >/dev/null
snapshot
echo "# events: $(q "SELECT count(*) || ' (' || string_agg(kind || '=' || n, ', ' ORDER BY kind) || ')' FROM (SELECT kind, count(*) n FROM chk_events GROUP BY kind) s" | sed 's/^\([0-9]*\) /\1 /') over $(q "SELECT count(DISTINCT resource_id) FROM chk_events") resources"
echo "# total events: $(q "SELECT count(*) FROM chk_events")"
entries="(SELECT booking_id FROM citus_log WHERE kind = 'wait' AND code = 'waitlisted')"
read -r n_ev n_res n_wait n_canc n_conf <<<"$(q "SELECT (SELECT count(*) FROM chk_events), (SELECT count(*) FROM chk_bookings WHERE id NOT IN $entries),
	(SELECT count(*) FROM citus_log WHERE kind = 'wait' AND code = 'waitlisted'), (SELECT count(*) FROM chk_bookings WHERE status = 'cancelled'),
	(SELECT count(DISTINCT booking_id) FROM citus_log WHERE kind = 'confirm' AND code = 'ok')" | tr '|' ' ')"
qcheck "reserved events = bookings made by a reserve (every booking that is not a waitlist entry)" \
	"SELECT (SELECT count(*) FROM chk_events WHERE kind = 'reserved') || ' ' || (SELECT count(*) FROM chk_bookings WHERE id NOT IN $entries)" \
	"$n_res $n_res"
qcheck "waitlist_joined events = waitlisted answers = waitlist entries" \
	"SELECT (SELECT count(*) FROM chk_events WHERE kind = 'waitlist_joined') || ' ' || (SELECT count(*) FROM citus_log WHERE kind = 'wait' AND code = 'waitlisted')
	   || ' ' || (SELECT count(*) FROM chk_bookings WHERE id IN $entries)" \
	"$n_wait $n_wait $n_wait"
qcheck "cancelled events = cancelled bookings = ok answers of cancel (+2 in part 2)" \
	"SELECT (SELECT count(*) FROM chk_events WHERE kind = 'cancelled') || ' ' || (SELECT count(*) FROM chk_bookings WHERE status = 'cancelled')
	   || ' ' || (SELECT count(*) + 2 FROM citus_log WHERE kind IN ('cancel', 'wcancel') AND code = 'ok')" \
	"$n_canc $n_canc $n_canc"
# a confirm of a confirmed booking answers ok and changes nothing
qcheck "confirmed events = bookings that a confirm answered ok for (all of them holds) = confirmed holds" \
	"SELECT (SELECT count(*) FROM chk_events WHERE kind = 'confirmed') || ' ' || (SELECT count(DISTINCT booking_id) FROM citus_log WHERE kind = 'confirm' AND code = 'ok')" \
	"$n_conf $n_conf"
qcheck "expired events = expired bookings (holds of 1 hour: none)" \
	"SELECT (SELECT count(*) FROM chk_events WHERE kind = 'expired') || ' ' || (SELECT count(*) FROM chk_bookings WHERE status = 'expired')" "0 0"
qcheck "waitlist_offered events = entries whose events say they left the line as a hold (some were offered)" \
	"SELECT (SELECT count(*) FROM chk_events WHERE kind = 'waitlist_offered') = (SELECT count(*) FROM chk_bookings WHERE id IN $entries
	   AND (status IN ('pending', 'confirmed') OR EXISTS (SELECT 1 FROM chk_events e WHERE e.booking_id = chk_bookings.id AND e.payload->>'status_before' = 'pending')))
	   AND (SELECT count(*) FROM chk_events WHERE kind = 'waitlist_offered') > 0" true
qcheck "no other kind of event" \
	"SELECT count(*) FROM chk_events WHERE kind NOT IN ('reserved', 'waitlist_joined', 'cancelled', 'confirmed', 'waitlist_offered')" 0
qcheck "every event names a booking that exists, of its resource and with its home and guest" \
	"SELECT count(*) FROM chk_events e LEFT JOIN chk_bookings b ON b.id = e.booking_id
	  WHERE b.id IS NULL OR b.resource_id <> e.resource_id OR b.home <> e.home OR b.guest <> e.guest" 0
# the chain of each booking: kind, status_before -> status_after in seq order
chain_sql="SELECT b.id, b.status::text AS status, e.n, e.first_kind, e.first_before, e.last_after, e.links
	FROM chk_bookings b LEFT JOIN (
	  SELECT booking_id, count(*) n,
	         (array_agg(kind ORDER BY seq))[1] AS first_kind,
	         (array_agg(payload->>'status_before' ORDER BY seq))[1] AS first_before,
	         (array_agg(payload->>'status_after' ORDER BY seq DESC))[1] AS last_after,
	         bool_and(ok) AS links
	    FROM (SELECT booking_id, seq, kind, payload,
	                 (lag(payload->>'status_after') OVER w IS NULL AND row_number() OVER w = 1)
	                 OR (lag(payload->>'status_after') OVER w = payload->>'status_before') AS ok
	            FROM chk_events WINDOW w AS (PARTITION BY booking_id ORDER BY seq)) x
	   GROUP BY booking_id) e ON e.booking_id = b.id"
qcheck "every booking's events in seq order are the chain of its state changes (one creating event, each status_before the previous status_after, the last status_after its status)" \
	"SELECT count(*) FROM ($chain_sql) c WHERE c.n IS NULL OR NOT c.links OR c.first_before IS NOT NULL
	   OR c.first_kind <> CASE WHEN c.id IN $entries THEN 'waitlist_joined' ELSE 'reserved' END OR c.last_after <> c.status" 0
q "SELECT * FROM ($chain_sql) c WHERE c.n IS NULL OR NOT c.links OR c.first_before IS NOT NULL OR c.last_after <> c.status LIMIT 5" | sed 's/^/#   /'
qcheck "no two events of a booking repeat a transition (kind, status_before, status_after)" \
	"SELECT count(*) FROM (SELECT booking_id, kind, payload->>'status_before', payload->>'status_after' FROM chk_events
	   GROUP BY 1, 2, 3, 4 HAVING count(*) > 1) d" 0
qcheck "per resource, seq is 1..n without gap or repeat" \
	"SELECT count(*) FROM (SELECT resource_id, count(*) n, count(DISTINCT seq) d, min(seq) lo, max(seq) hi FROM chk_events GROUP BY resource_id) s
	  WHERE NOT (n = d AND lo = 1 AND hi = n)" 0
qcheck "the numbering wrote no head row (a resource's head is its last numbered event)" \
	"SELECT count(*) FROM chk_heads WHERE resource_id <> 0" 0
qcheck "each event's home is its resource's home" \
	"SELECT count(*) FROM chk_events e JOIN chk_resources r ON r.id = e.resource_id WHERE r.home <> e.home" 0
for c in a b; do
	qcheck "consumer $c: exactly one acked delivery per event" \
		"SELECT count(*) || ' ' || count(d.event_id) || ' ' || count(d.acked_at) || ' ' || count(DISTINCT d.event_id)
		   FROM chk_events e LEFT JOIN chk_deliveries d ON d.consumer = '$c' AND d.home = e.home AND d.event_id = e.id" \
		"$n_ev $n_ev $n_ev $n_ev"
	qcheck "consumer $c: every event claimed once by the relays (disjoint batches), and every claimed row an event" \
		"SELECT (SELECT count(*) FROM relay_log WHERE consumer = '$c') || ' ' || (SELECT count(DISTINCT event_id) FROM relay_log WHERE consumer = '$c')
		   || ' ' || (SELECT count(*) FROM relay_log l JOIN chk_events e ON e.id = l.event_id AND e.resource_id = l.resource_id AND e.seq = l.seq
		              WHERE l.consumer = '$c')" \
		"$n_ev $n_ev $n_ev"
	qcheck "consumer $c: every ack counted its whole batch, a batch has one token, tokens never shared" \
		"SELECT count(*) FILTER (WHERE acked <> claimed OR tokens <> 1) || ' ' || sum(acked) || ' ' || (count(*) - count(DISTINCT lease_token))
		   FROM relay_acks WHERE consumer = '$c'" "0 $n_ev 0"
	qcheck "consumer $c: each delivery keeps the token of the one batch that acked it" \
		"SELECT count(*) FROM chk_deliveries d LEFT JOIN relay_log l ON l.consumer = d.consumer AND l.event_id = d.event_id
		  WHERE d.consumer = '$c' AND l.lease_token IS DISTINCT FROM d.lease_token" 0
done
qcheck "no event acked under two tokens (relay_log: one token per consumer and event)" \
	"SELECT count(*) FROM (SELECT consumer, event_id FROM relay_log GROUP BY 1, 2 HAVING count(DISTINCT lease_token) > 1) s" 0
qcheck "in each batch a resource's events came in seq order" \
	"SELECT count(*) FROM (SELECT ord, row_number() OVER (PARTITION BY lease_token, resource_id ORDER BY seq) rn,
	   row_number() OVER (PARTITION BY lease_token, resource_id ORDER BY ord) rn2 FROM relay_log) s WHERE rn <> rn2" 0
echo "# batches over several homes: $(q "SELECT count(*) FROM (SELECT lease_token FROM relay_log l JOIN chk_events e ON e.id = l.event_id AND e.resource_id = l.resource_id
	GROUP BY lease_token HAVING count(DISTINCT e.home) > 1) s") of $(q "SELECT count(DISTINCT lease_token) FROM relay_log")"
qcheck "each batch's rows came in (resource_id, seq) order (the contract's order for a claim)" \
	"SELECT count(DISTINCT lease_token) FROM (SELECT lease_token, ord, row_number() OVER (PARTITION BY lease_token ORDER BY resource_id, seq) rn FROM relay_log) s WHERE ord <> rn" 0
qcheck "the two relays of a each claimed a share" \
	"SELECT count(DISTINCT relay) FROM relay_log WHERE consumer = 'a' AND phase = 'load'" 2
qrun
check_invariants "after the load"
check "the line session: capacity = confirmed + live holds; waiting = its waiting entries" \
	"SELECT (SELECT coalesce(sum(quantity), 0) FROM chk_bookings WHERE resource_id = $wl AND status IN ('pending', 'confirmed')) || ' '
	     || (SELECT waiting FROM chk_resources WHERE id = $wl) || ' ' || (SELECT count(*) FROM chk_bookings WHERE resource_id = $wl AND status = 'waiting')" \
	"$(q "SELECT CASE WHEN waiting > 0 THEN 2 ELSE (SELECT coalesce(sum(quantity), 0) FROM chk_bookings WHERE resource_id = $wl AND status IN ('pending', 'confirmed')) END
	     || ' ' || waiting || ' ' || waiting FROM chk_resources WHERE id = $wl")"
check_no_prepared "after the load"

########################################################################
# 4. fencing across nodes
########################################################################
echo "# 4. fencing (at $SECONDS s)"
f1=$(pick part w1) && f2=$(pick part w2) && [ -n "$f1" ] && [ -n "$f2" ] || { fail "a resource on each worker for part 4"; citus_done; }
for r in $f1 $f2; do
	gexec "SELECT format('SELECT code FROM booking.reserve_seat($r, %L, 1)', 'f-' || i) FROM generate_series(1, 3) i" >/dev/null
done
q "SELECT count(*) FROM booking.claim_events('b', 10000)" >/dev/null	# b's share is not the point
got=$(npsql coord -At -d "$CITUS_DB" -F ' ' <<EOF
SELECT count(*), max(lease_token), min(lease_token), string_agg(event_id::text, ',' ORDER BY event_id),
       count(DISTINCT resource_id) FILTER (WHERE resource_id IN ($f1, $f2))
  FROM booking.claim_events('a', 10000, '100 milliseconds');
SELECT pg_sleep(0.3);
SELECT count(*), max(lease_token), min(lease_token), string_agg(event_id::text, ',' ORDER BY event_id)
  FROM booking.claim_events('a', 10000, '30 seconds');
EOF
)
read -r n1 t1 t1min ids1 both <<<"$(echo "$got" | sed -n 1p)"
read -r n2 t2 t2min ids2 <<<"$(echo "$got" | sed -n 3p)"
echo "# first claim: $n1 events under token $t1; second: $n2 under token $t2"
check_eq "the first claim (lease 100 ms) gets the 6 events, one token, on both workers" "$n1 $([ "$t1" = "$t1min" ] && echo one) $both" "6 one 2"
check_eq "the claim after the lease lapsed gets the same events under a new token" \
	"$n2 $([ "$t2" = "$t2min" ] && echo one) $([ "$ids1" = "$ids2" ] && echo same) $([ "${t1:-0}" != "${t2:-0}" ] && echo new)" "6 one same new"
check "the old token's ack counts 0" "SELECT booking.ack_events('a', ${t1:-0}, '{$ids1}')" 0
check "the new token's ack counts 6" "SELECT booking.ack_events('a', ${t2:-0}, '{$ids2}')" 6
check "a second ack of the new token counts 0" "SELECT booking.ack_events('a', ${t2:-0}, '{$ids2}')" 0
check "the deliveries keep the new token, acked, 2 attempts" \
	"SELECT count(*) FILTER (WHERE lease_token = ${t2:-0} AND acked_at IS NOT NULL AND attempts = 2) FROM booking.deliveries
	  WHERE consumer = 'a' AND event_id IN ($ids2)" 6
for r in $f1 $f2; do
	node=$(worker_of "$r")
	check_eq "$r ($node): its 3 deliveries to a, acked under the new token, are in its shard on $node" \
		"$(in_shard "$node" "$r" deliveries "consumer = 'a' AND lease_token = ${t2:-0} AND acked_at IS NOT NULL")" 3
done

########################################################################
# 5. the waitlist
########################################################################
echo "# 5. waitlist (at $SECONDS s)"
# offers of 5 s, on every node (an offer is made where the call runs)
for node in $CITUS_NODES; do
	npsql "$node" -d postgres -c "ALTER DATABASE $CITUS_DB SET booking.waitlist_offer = '5s'" >/dev/null ||
		fail "ALTER DATABASE $CITUS_DB SET booking.waitlist_offer on $node"
done
# on the other worker than the load's line session
W=$(pick line2 "$(other "$(worker_of "$wl")")")
[ -n "$W" ] || W=$(resource_on "$(other "$(worker_of "$wl")")" "line 5" 2)
wn=$(worker_of "$W")
echo "# session $W on $wn"
a=$(q "SELECT booking_id FROM booking.reserve_seat($W, 'ann', 1)")
b=$(q "SELECT booking_id FROM booking.reserve_seat($W, 'bob', 1)")
check "$W: sold out" "SELECT booking.seats_left($W)" 0
# line_state: guest:status of q1..q3, waiting, seats_left
line_state="SELECT (SELECT string_agg(guest || ':' || status, ' ' ORDER BY guest) FROM booking.bookings WHERE resource_id = $W AND guest LIKE 'q_')
	|| ' waiting=' || (SELECT waiting FROM booking.resources WHERE id = $W) || ' left=' || booking.seats_left($W)"
check_eq "join_waitlist runs on $wn only (shard_join_waitlist)" \
	"$(routed "SELECT code FROM booking.join_waitlist($W, 'q1', 1)")" "shard_join_waitlist@$wn"
check "q1 is in line: waiting, resources.waiting 1" "$line_state" "q1:waiting waiting=1 left=0"
check "join_waitlist q2 for 2 seats answers waitlisted 202, ok, with its entry" \
	"SELECT code || ' ' || http_status || ' ' || ok || ' ' || (booking_id IS NOT NULL) FROM booking.join_waitlist($W, 'q2', 2)" "waitlisted 202 true true"
check "join_waitlist q3 answers waitlisted" "SELECT code FROM booking.join_waitlist($W, 'q3', 1)" waitlisted
q1=$(q "SELECT id FROM booking.bookings WHERE resource_id = $W AND guest = 'q1'")
check "q1 again answers already_waiting 409 with its entry" \
	"SELECT code || ' ' || http_status || ' ' || (booking_id = ${q1:-0}) FROM booking.join_waitlist($W, 'q1', 1)" "already_waiting 409 true"
check_eq "the 3 waitlist_joined events are in the session's shard on $wn" \
	"$(in_shard "$wn" "$W" events "kind = 'waitlist_joined' AND payload->>'status_after' = 'waiting'")" 3
# the offers last 5 s: the steps that need q1's offer live run in one session
got=$(npsql coord -At -d "$CITUS_DB" 2>&1 <<EOF
SELECT code FROM booking.cancel(${a:-0});
$line_state;
SELECT (expires_at > now() AND expires_at <= now() + interval '5.5 s') FROM booking.bookings WHERE id = ${q1:-0};
SELECT code FROM booking.cancel(${b:-0});
$line_state;
SELECT code || ' ' || http_status FROM booking.reserve_seat($W, 'newcomer', 1);
SELECT (expires_at > clock_timestamp()) FROM booking.bookings WHERE id = ${q1:-0};
EOF
)
echo "$got" | sed 's/^/#   /'
check_eq "cancel of ann answers ok; the head q1 is offered the seat (pending, a hold of 5 s), the line is 2" \
	"$(echo "$got" | sed -n '1,3p' | paste -sd'|')" "ok|q1:pending q2:waiting q3:waiting waiting=2 left=0|t"
check_eq "q1's waitlist_offered event (waiting -> pending) is in the session's shard on $wn" \
	"$(in_shard "$wn" "$W" events "kind = 'waitlist_offered' AND booking_id = ${q1:-0} AND payload->>'status_before' = 'waiting' AND payload->>'status_after' = 'pending'")" 1
check_eq "strict FIFO: cancel of bob answers ok; q2 (2 seats) keeps its place with 1 seat free, q3 waits behind it" \
	"$(echo "$got" | sed -n '4,5p' | paste -sd'|')" "ok|q1:pending q2:waiting q3:waiting waiting=2 left=1"
check_eq "a newcomer is sold_out (409) while someone waits, though a seat is free (q1's offer still live)" \
	"$(echo "$got" | sed -n '6,7p' | paste -sd'|')" "sold_out 409|t"
check "... and books nothing" "SELECT count(*) FROM booking.bookings WHERE guest = 'newcomer'" 0
# q1's offer lapses
sleep_s=$(q "SELECT greatest(0, extract(epoch FROM expires_at - clock_timestamp()) + 0.2) FROM booking.bookings WHERE id = ${q1:-0}")
sleep "${sleep_s:-5}"
check "hold_expire() on the coordinator expires the lapsed offer (1 hold)" "SELECT booking.hold_expire()" 1
check "q1 expired; q2 is offered the 2 free seats (pending); q3 still waits; the line is 1" \
	"$line_state" "q1:expired q2:pending q3:waiting waiting=1 left=0"
check_eq "q1's expired and q2's waitlist_offered events are in the session's shard on $wn" \
	"$(in_shard "$wn" "$W" events "(kind = 'expired' AND guest = 'q1' AND payload->>'status_before' = 'pending') OR (kind = 'waitlist_offered' AND guest = 'q2')")" 2

########################################################################
# 6. health()
########################################################################
echo "# 6. health (at $SECONDS s)"
# a backlog: events on both workers, numbered and not acked
for r in $f1 $f2; do
	gexec "SELECT format('SELECT code FROM booking.reserve_seat($r, %L, 1)', 'h-' || i) FROM generate_series(1, 2) i" >/dev/null
done
q "SELECT count(*) FROM booking.claim_events('a', 10000)" >/dev/null
health=$(q "SELECT metric || ':' || coalesce(subject, '') || ':' || value FROM booking.health() ORDER BY 1")
echo "$health" | sed 's/^/#   /'
check_eq "health() reports consumer_unacked for a and b equal to their open deliveries" \
	"$(echo "$health" | grep '^consumer_unacked:' | paste -sd' ')" \
	"$(q "SELECT string_agg('consumer_unacked:' || consumer || ':' || n, ' ' ORDER BY consumer) FROM (SELECT consumer, count(*) n FROM booking.deliveries WHERE acked_at IS NULL GROUP BY consumer) s")"
check "... which are the events since the last drain (a and b each more than 0)" \
	"SELECT count(*) FROM (SELECT consumer FROM booking.deliveries WHERE acked_at IS NULL GROUP BY consumer HAVING count(*) > 0) s" 2
check_eq "health() reports waitlist_length per resource with a line, equal to its waiting entries" \
	"$(echo "$health" | grep '^waitlist_length:' | paste -sd' ')" \
	"$(q "SELECT string_agg('waitlist_length:' || resource_id || ':' || n, ' ' ORDER BY resource_id::text) FROM (SELECT resource_id, count(*) n FROM booking.bookings WHERE status = 'waiting' GROUP BY resource_id) s")"
check_eq "... including $W with its line" "$(echo "$health" | grep "^waitlist_length:$W:")" "waitlist_length:$W:$(q "SELECT waiting FROM booking.resources WHERE id = $W")"
check_eq "health() reports events_unsequenced 0 (the claim numbered them all)" \
	"$(echo "$health" | grep -E '^events_unsequenced:' | paste -sd' ')" "events_unsequenced::0"
check "health() is not delegated to a worker (not a distributed function)" \
	"SELECT count(*) FROM pg_dist_object o JOIN pg_proc p ON o.classid = 'pg_proc'::regclass AND o.objid = p.oid
	  WHERE p.oid = 'booking.health()'::regprocedure AND o.distribution_argument_index IS NOT NULL" 0
check_no_prepared "at the end"

########################################################################
# 7. the purge keeps each resource's numbering
########################################################################
echo "# 7. the purge keeps the numbering (at $SECONDS s)"
g1=$(pick part w1) && g2=$(pick part w2) && [ -n "$g1" ] && [ -n "$g2" ] || { fail "a resource on each worker for part 7"; citus_done; }
lo=$((g1 < g2 ? g1 : g2)) hi=$((g1 < g2 ? g2 : g1))
for r in $g1 $g2; do
	gexec "SELECT format('SELECT code FROM booking.reserve_seat($r, %L, 1)', 'p-' || i) FROM generate_series(1, 3) i" >/dev/null
done
q "SELECT count(*) FROM booking.claim_events('a', 10000)" >/dev/null
q "SELECT count(*) FROM booking.claim_events('b', 10000)" >/dev/null
# every delivery acknowledged, and these events two days old: past the
# default retention of a day
q "UPDATE booking.deliveries SET acked_at = now(), lease_until = NULL WHERE acked_at IS NULL" >/dev/null
q "UPDATE booking.events SET created_at = now() - interval '2 days' WHERE resource_id IN ($g1, $g2)" >/dev/null
check "three events numbered 1..3 on a resource of each worker" \
	"SELECT string_agg(resource_id || ':' || n, ' ' ORDER BY resource_id) FROM (SELECT resource_id, max(seq) n FROM booking.events
	   WHERE resource_id IN ($g1, $g2) GROUP BY 1) s" "$lo:3 $hi:3"
q "SELECT booking.hold_expire()" >/dev/null
check "hold_expire purged them" "SELECT count(*) FROM booking.events WHERE resource_id IN ($g1, $g2)" 0
check "... and kept each resource's last number in event_heads" \
	"SELECT string_agg(resource_id || ':' || last_seq, ' ' ORDER BY resource_id) FROM booking.event_heads
	  WHERE resource_id IN ($g1, $g2)" "$lo:3 $hi:3"
for r in $g1 $g2; do
	q "SELECT code FROM booking.reserve_seat($r, 'p-after', 1)" >/dev/null
done
check "the next event of each is numbered 4, after the purged ones" \
	"SELECT string_agg(resource_id || ':' || seq, ' ' ORDER BY resource_id) FROM booking.claim_events('a', 10000)
	  WHERE resource_id IN ($g1, $g2)" "$lo:4 $hi:4"
check_no_prepared "after the purge"

citus_done
