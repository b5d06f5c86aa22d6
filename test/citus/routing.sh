#!/usr/bin/env bash
# routing.sh (suite item 8): a single-resource call is served by one node in
# one round trip.  For each call of the API, made through the coordinator as
# a statement of its own, the workers' pg_stat_statements (top-level
# statements, reset for the script's database before the call) must show
# exactly one booking statement on the worker that holds the resource's
# shard (a call of a booking function, or for seats_left, free_slots and slots_left
# the read Citus routes to the shard), and none on the other worker; the
# rest must be transaction control only (BEGIN, SAVEPOINT,
# assign_distributed_transaction_id, RELEASE SAVEPOINT, COMMIT): the
# subtransaction in which the coordinator turns an unreachable node into
# busy (docs/scale-out.md says what it costs).  The statements of Citus's maintenance
# daemon (distributed deadlock detection, two-phase commit recovery) are
# not the call's and are left out.  Also shown, not checked: what Citus
# itself sends (citus.log_remote_commands); and checked: calls made on a
# worker (by a client role granted on the coordinator) run where their
# resource lives, hold_expire reaches both workers, a group over both
# workers touches both.  Nested statements
# are tracked too (pg_stat_statements.track = all for the script's database
# on the workers): no call may make Citus write an intermediate result there
# (an INSERT ... SELECT that Citus pulls through a file, a directory made and
# removed per transaction), and the checks above count top-level statements.
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

if rehearsal; then
	echo "# REHEARSAL: nothing to route"
	pass "rehearsal"
	citus_done
fi
citus_db booking_citus_routing
for node in w1 w2; do
	npsql "$node" -d postgres -c "SET client_min_messages = warning" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null ||
		{ fail "pg_stat_statements in database postgres of $node"; citus_done; }
	npsql "$node" -d postgres -c "ALTER DATABASE $CITUS_DB SET pg_stat_statements.track = 'all'" >/dev/null ||
		{ fail "track nested statements in $CITUS_DB on $node"; citus_done; }
done

# the call's statements on a worker: pg_stat_statements of the script's
# database, read from database postgres (so the reading is not counted)
MAINTENANCE="toplevel AND query !~ '(dump_local_wait_edges|get_all_active_transactions|get_global_active_transactions|pg_prepared_xacts|citus_internal)'"
stats_reset() {
	local node
	for node in w1 w2; do
		npsql "$node" -At -d postgres -c "SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = '$CITUS_DB'), 0)" >/dev/null
	done
}
# stats NODE: "<calls>" of the call's statements on NODE
stats_calls() {
	npsql "$1" -At -d postgres -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$CITUS_DB') AND $MAINTENANCE"
}
# NODE: calls of statements on NODE that are neither booking's nor
# transaction control nor the direct route's check that the node answers
# (citus_check_connection_to_node sends SELECT 1)
stats_other() {
	npsql "$1" -At -d postgres -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$CITUS_DB') AND $MAINTENANCE
		  AND query !~ '^(BEGIN|SAVEPOINT|RELEASE SAVEPOINT|COMMIT|SELECT assign_distributed_transaction_id)'
		  AND query !~ '^SELECT [$]1$'
		  AND query !~ 'booking[.]'"
}
# NODE: calls of transaction control on NODE: none on the direct route
stats_block() {
	npsql "$1" -At -d postgres -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$CITUS_DB') AND $MAINTENANCE
		  AND query ~ '^(BEGIN|SAVEPOINT|RELEASE SAVEPOINT|COMMIT)'"
}
stats_booking() {
	npsql "$1" -At -d postgres -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$CITUS_DB') AND $MAINTENANCE
		  AND query ~ 'booking[.]'"
}
# NODE: statements on NODE, at any level, that read an intermediate result
stats_intermediate() {
	npsql "$1" -At -d postgres -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$CITUS_DB')
		  AND query ~ 'read_intermediate_result'"
}
stats_text() {
	npsql "$1" -At -d postgres -c "SELECT string_agg(calls || 'x ' || regexp_replace(query, '\s+', ' ', 'g'), ' / ')
		FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$CITUS_DB') AND $MAINTENANCE"
}

# one_trip LABEL RESOURCE SQL: SQL, a statement of its own on the
# coordinator, runs as one booking statement on the worker of RESOURCE and
# as nothing on the other
one_trip() {
	local label=$1 node other n_home n_other n_extra n_inter text
	node=$(worker_of "$2")
	other=w1
	[ "$node" = w1 ] && other=w2
	stats_reset
	if ! q "$3" >"$CITUS_TMP/call.out" 2>&1; then
		fail "$label: the call runs"
		sed 's/^/#   /' "$CITUS_TMP/call.out"
		return
	fi
	n_home=$(stats_booking "$node")
	n_extra=$(stats_other "$node")
	n_other=$(stats_calls "$other")
	n_inter=$(stats_intermediate "$node")
	n_block=$(stats_block "$node")
	text=$(stats_text "$node")
	echo "# $label -> $(head -c 60 "$CITUS_TMP/call.out" | tr '\n' ' '); on $node: ${text:-nothing}"
	if [ "$n_home" = 1 ] && [ "$n_extra" = 0 ] && [ "$n_other" = 0 ] && [ "$n_inter" = 0 ] && [ "$n_block" = 0 ]; then
		pass "$label: one booking statement on $node (which holds the shard) and no transaction block, none on $other, no intermediate result"
	else
		fail "$label: one booking statement on $node (which holds the shard) and no transaction block, none on $other, no intermediate result (got $n_home booking, $n_block transaction control and $n_extra other on $node, $n_other on $other, $n_inter reading an intermediate result)"
		[ "$n_other" != 0 ] && echo "#   on $other: $(stats_text "$other")"
		[ "$n_inter" != 0 ] && echo "#   intermediate: $(npsql "$node" -At -d postgres -c "SELECT string_agg(DISTINCT left(regexp_replace(query, '\s+', ' ', 'g'), 90), ' / ') FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$CITUS_DB') AND query ~ 'read_intermediate_result'")"
	fi
}

seat1=$(resource_on w1 'seats on w1' 100) && seat2=$(resource_on w2 'seats on w2' 100) &&
	striped=$(resource_on w2 'striped seats on w2' 100) &&
	room1=$(resource_on w1 'room on w1') && room2=$(resource_on w2 'room on w2') &&
	pool=$(resource_on w2 'pool on w2' 0) ||
	{ fail "resources on both workers"; citus_done; }
for i in 1 2 3; do q "SELECT booking.create_resource('unit $i', 1, $pool)" >/dev/null; done
check "the pool and its 3 units share one shard" \
	"SELECT count(*) || ' ' || count(DISTINCT get_shard_id_for_distribution_column('booking.resources', home))
	   FROM booking.resources WHERE id = $pool OR pool_id = $pool" "4 1"
v1=$(q "SELECT version FROM booking.resources WHERE id = $seat1")
held=$(q "SELECT booking_id FROM booking.reserve_seat($seat1, 'held', 1, hold => '1 hour')")
held2=$(q "SELECT booking_id FROM booking.reserve_stay($room2, 'held', tstzrange('2030-06-01', '2030-06-02'), hold => '1 hour')")
check "a seat hold on w1 and a stay hold on w2 to work on" \
	"SELECT count(*) FROM booking.bookings WHERE id IN ($held, $held2) AND status = 'pending'" 2
echo "# seats $seat1 (w1), $seat2 (w2), striped $striped (w2), rooms $room1 (w1), $room2 (w2), pool $pool (w2); holds $held, $held2"
stay="tstzrange('2030-07-01 14:00+00', '2030-07-03 10:00+00')"

one_trip "reserve_seat on w1" "$seat1" "SELECT code FROM booking.reserve_seat($seat1, 'ann', 2)"
one_trip "reserve_seat on w2" "$seat2" "SELECT code FROM booking.reserve_seat($seat2, 'ann', 2)"
one_trip "reserve_seat with an idempotency key" "$seat2" "SELECT code FROM booking.reserve_seat($seat2, 'bob', 1, idempotency_key => 'routing-1')"
one_trip "its replay" "$seat2" "SELECT code, replayed FROM booking.reserve_seat($seat2, 'bob', 1, idempotency_key => 'routing-1')"
one_trip "reserve_seat with a hold" "$seat1" "SELECT code FROM booking.reserve_seat($seat1, 'bo', 1, hold => '1 hour')"
one_trip "reserve_seats of one resource (a pass)" "$seat1" "SELECT code FROM booking.reserve_seats(ARRAY[$seat1], 'pat')"
limited=$(resource_on w1 'limited seats on w1' 100) || fail "a resource with a guest limit on w1"
q "SELECT code FROM booking.set_guest_limit($limited, 4)" >/dev/null
one_trip "reserve_seat with a guest limit" "$limited" "SELECT code FROM booking.reserve_seat($limited, 'lim', 2)"
one_trip "seats_left" "$seat1" "SELECT booking.seats_left($seat1)"
one_trip "set_capacity" "$seat1" "SELECT code FROM booking.set_capacity($seat1, 120, $v1)"
one_trip "set_stripes" "$striped" "SELECT code FROM booking.set_stripes($striped, 8)"
one_trip "reserve_seat on a striped resource" "$striped" "SELECT code FROM booking.reserve_seat($striped, 'cy', 3)"
one_trip "reserve_stay on w1" "$room1" "SELECT code FROM booking.reserve_stay($room1, 'dee', $stay)"
one_trip "reserve_stay on w2" "$room2" "SELECT code FROM booking.reserve_stay($room2, 'dee', $stay)"
one_trip "free_slots" "$room1" "SELECT count(*) FROM booking.free_slots($room1, tstzrange('2030-07-01', '2030-08-01'), '1 day')"
one_trip "reserve_stay_any" "$pool" "SELECT code FROM booking.reserve_stay_any($pool, 'eve', $stay)"
one_trip "extend_hold (a booking on w1)" "$seat1" "SELECT code FROM booking.extend_hold($held, '10 minutes')"
one_trip "extend_hold_until (a booking on w2)" "$room2" "SELECT code FROM booking.extend_hold_until($held2, now() + interval '2 hours')"
one_trip "confirm (a booking on w1)" "$seat1" "SELECT code FROM booking.confirm($held)"
one_trip "cancel (a booking on w1)" "$seat1" "SELECT code FROM booking.cancel($held)"
one_trip "cancel (a booking on w2)" "$room2" "SELECT code FROM booking.cancel($held2)"

# 0.9.0: local time, series and opening hours run on the resource's worker
one_trip "set_time_zone" "$room1" "SELECT code FROM booking.set_time_zone($room1, 'Europe/Paris')"
one_trip "set_check_times" "$room1" "SELECT code FROM booking.set_check_times($room1, '15:00', '11:00')"
one_trip "set_opening_hours" "$room2" "SELECT code FROM booking.set_opening_hours($room2, jsonb_build_object('mon', jsonb_build_array(jsonb_build_array('09:00', '18:00'))))"
one_trip "reserve_nights on w1" "$room1" "SELECT code FROM booking.reserve_nights($room1, 'gil', '2030-10-01', '2030-10-03')"
one_trip "reserve_series on w2" "$room2" "SELECT code FROM booking.reserve_series($room2, 'hal', tstzrange('2030-11-04 09:00+00', '2030-11-04 10:00+00'), '1 week', 4)"
one_trip "reserve_stay on w2 outside its opening hours" "$room2" "SELECT code FROM booking.reserve_stay($room2, 'ivy', tstzrange('2030-11-05 09:00+00', '2030-11-05 10:00+00'))"
home1=$(q "SELECT home FROM booking.resources WHERE id = $room1")
home2=$(q "SELECT home FROM booking.resources WHERE id = $room2")
check "the nights on w1 run from 15:00 to 11:00 Paris time, in the room's home (its shard)" \
	"SELECT lower(during) || ' ' || upper(during) || ' ' || (home = $home1) FROM booking.bookings WHERE guest = 'gil'" \
	"2030-10-01 13:00:00+00 2030-10-03 09:00:00+00 true"
check "the series on w2: 4 occurrences of one group, all in the room's home (its shard)" \
	"SELECT count(*) || ' ' || count(DISTINCT group_id) || ' ' || bool_and(home = $home2) FROM booking.bookings WHERE guest = 'hal'" \
	"4 1 true"
check "the stay outside the opening hours answered closed" \
	"SELECT code FROM booking.reserve_stay($room2, 'ivy', tstzrange('2030-11-05 09:00+00', '2030-11-05 10:00+00'))" closed

# 0.9.0: capacity over time runs on the resource's worker, and slots_left
# is one routed read (capacity, hours and use in one statement)
slots1=$(resource_on w1 'slots on w1' 20) || fail "a slotted resource on w1"
slot_range="tstzrange('2030-12-01 18:00+00', '2030-12-01 20:00+00')"
one_trip "reserve_slot on w1" "$slots1" "SELECT code FROM booking.reserve_slot($slots1, 'jo', $slot_range, 3)"
one_trip "slots_left on w1" "$slots1" "SELECT count(*) FROM booking.slots_left($slots1, tstzrange('2030-12-01', '2030-12-02'))"
slot_id=$(q "SELECT id FROM booking.bookings WHERE guest = 'jo'")
one_trip "move_stay of a slot booking on w1" "$slots1" "SELECT code FROM booking.move_stay($slot_id, tstzrange('2030-12-01 19:00+00', '2030-12-01 21:00+00'))"

# (0.9.0) The route a call takes: a call that is a statement of its own goes
# to its node directly (no transaction block there); anything else keeps
# the guard's subtransaction, whose SAVEPOINT the node sees, so that the
# statement or transaction stays all or nothing
# route_of RESOURCE SQL: direct, guarded, other or error
route_of() {
	local node
	node=$(worker_of "$1")
	stats_reset
	q "$2" >"$CITUS_TMP/route.out" 2>&1 || { echo error; sed 's/^/#   /' "$CITUS_TMP/route.out" >&2; return; }
	npsql "$node" -At -d postgres -c "SELECT CASE WHEN count(*) = 0 THEN 'direct'
		WHEN count(*) FILTER (WHERE query ~ '^SAVEPOINT') > 0 THEN 'guarded' ELSE 'other' END
		FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$CITUS_DB') AND $MAINTENANCE
		  AND query ~ '^(BEGIN|SAVEPOINT|RELEASE SAVEPOINT|COMMIT)'"
}
check_eq "route: SELECT ... FROM reserve_seat(...) alone is direct" \
	"$(route_of "$seat1" "SELECT code FROM booking.reserve_seat($seat1, 'route', 1)")" direct
check_eq "route: SELECT reserve_seat(...) alone, a stable argument, is direct" \
	"$(route_of "$seat1" "SELECT booking.reserve_seat($seat1, 'route ' || now()::date, 1)")" direct
check_eq "route: SELECT (reserve_seat(...)).* alone is direct" \
	"$(route_of "$seat1" "SELECT (booking.reserve_seat($seat1, 'route fields', 1)).*")" direct
check "route: ... and books one seat" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $seat1 AND guest = 'route fields'" 1
# (0.9.0) whether the node answers is read off Citus's connection to it
# (1_ground/citus_conn.c) where booking finds Citus's functions (a Citus
# built for PostgreSQL 15); elsewhere it is asked with a statement, SELECT 1
# questions_of RESOURCE SQL...: SELECT 1s on the worker of RESOURCE while
# one session on the coordinator runs each SQL as a statement of its own
questions_of() {
	local node sql args=()
	node=$(worker_of "$1")
	shift
	for sql in "$@"; do args+=(-c "$sql"); done
	stats_reset
	npsql coord -At -d "$CITUS_DB" "${args[@]}" >/dev/null 2>&1
	npsql "$node" -At -d postgres -c "SELECT coalesce(sum(calls), 0) FROM pg_stat_statements
		WHERE dbid = (SELECT oid FROM pg_database WHERE datname = '$CITUS_DB') AND $MAINTENANCE
		  AND query ~ '^SELECT [$]1$'"
}
questions=1
[ "$(q "SHOW server_version_num")" -lt 160000 ] && questions=0
check_eq "route: the direct route sends the node $questions statement(s) besides the call to ask whether it answers" \
	"$(questions_of "$seat1" "SELECT code FROM booking.reserve_seat($seat1, 'route question', 1)")" "$questions"
check_eq "route: ... and so after a call in the same session" \
	"$(questions_of "$seat1" "SELECT code FROM booking.reserve_seat($seat1, 'route question', 1)" "SELECT code FROM booking.reserve_seat($seat1, 'route question', 1)")" "$((2 * questions))"
check_eq "route: with booking.direct_route off, guarded" \
	"$(PGOPTIONS='-c booking.direct_route=off' route_of "$seat1" "SELECT code FROM booking.reserve_seat($seat1, 'route', 1)")" guarded
check_eq "route: in a transaction block, guarded" \
	"$(route_of "$seat1" "BEGIN; SELECT code FROM booking.reserve_seat($seat1, 'route', 1); COMMIT")" guarded
check_eq "route: a volatile argument, guarded" \
	"$(route_of "$seat1" "SELECT code FROM booking.reserve_seat($seat1, 'route ' || random(), 1)")" guarded
check_eq "route: a volatile output beside the call, guarded" \
	"$(route_of "$seat1" "SELECT code, random() FROM booking.reserve_seat($seat1, 'route', 1)")" guarded
check_eq "route: two calls in one statement, guarded" \
	"$(route_of "$seat1" "SELECT (SELECT code FROM booking.reserve_seat($seat1, 'route', 1)), (SELECT code FROM booking.reserve_seat($seat1, 'route', 1))")" guarded
check_eq "route: the same call written twice, guarded" \
	"$(route_of "$seat1" "SELECT booking.reserve_seat($seat1, 'route', 1), booking.reserve_seat($seat1, 'route', 1)")" guarded
check_eq "route: from a DO block, guarded" \
	"$(route_of "$seat1" "DO \$\$ BEGIN PERFORM booking.reserve_seat($seat1, 'route', 1); END \$\$")" guarded
# all or nothing: the second call fails, and the first is not kept
q "SELECT booking.reserve_seat($seat1, 'all or nothing', 1), booking.reserve_seat($seat1, 'all or nothing', 0)" >/dev/null 2>&1
check "route: a statement whose second call fails keeps nothing of the first" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $seat1 AND guest = 'all or nothing'" 0
home_s=$(q "SELECT home FROM booking.resources WHERE id = $slots1")
check "the slot booking on w1: 3 units, moved, in the resource's home (its shard)" \
	"SELECT quantity || ' ' || lower(during) || ' ' || (home = $home_s) FROM booking.bookings WHERE guest = 'jo'" \
	"3 2030-12-01 19:00:00+00 true"
check "slots_left through the coordinator: 20, then 17 over the booking, then 20" \
	"SELECT string_agg(free::text, ' ' ORDER BY during) FROM booking.slots_left($slots1, tstzrange('2030-12-01', '2030-12-02'))" \
	"20 17 20"
check "reserve_slot of 18 more units answers sold_out, naming 19:00" \
	"SELECT code || ': ' || message FROM booking.reserve_slot($slots1, 'kim', $slot_range, 18)" \
	"sold_out: Resource $slots1 has 17 units free at 2030-12-01 19:00:00+00; 18 were asked for."

# what Citus itself sends for one call, for the record
echo "# citus.log_remote_commands for reserve_seat on w1:"
npsql coord -d "$CITUS_DB" -c "SET citus.log_remote_commands = on" -c "SET client_min_messages = notice" \
	-c "SELECT code FROM booking.reserve_seat($seat1, 'fay', 1)" 2>&1 | grep -E 'issuing|DETAIL' | sed 's/^/#   /'

# calls made on a worker: a client connected to a worker calls the same
# function; Citus runs the twin where the resource lives, on that worker
# itself or on the other one.  A role granted on the coordinator may call
# there (Citus copies the grants of the extension's functions to the workers)
# the role is the cluster's: dropped on every node after the database
trap 'citus_drop_roles "$CITUS_DB" routing_app; citus_cleanup' EXIT
q "CREATE ROLE routing_app LOGIN" >/dev/null 2>&1
q "SELECT booking.grant_client('routing_app')" >/dev/null ||
	fail "grant_client on the coordinator"
# on_worker NODE LABEL RESOURCE SQL: SQL made on NODE as routing_app runs the
# call's one booking statement on NODE and, when RESOURCE lives on the other
# worker, the twin's one there
on_worker() {
	local from=$1 label=$2 node other out n_from n_node
	node=$(worker_of "$3")
	other=w1
	[ "$from" = w1 ] && other=w2
	stats_reset
	if ! out=$("$CITUS_PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$CITUS_DIR/$from" -p "$(citus_port "$from")" \
		-U routing_app -d "$CITUS_DB" -c "$4" 2>&1); then
		fail "$label: the call made on $from runs"
		echo "#   $out"
		return
	fi
	n_from=$(stats_booking "$from")
	n_node=$(stats_booking "$other")
	echo "# $label -> $out; on $from: $(stats_text "$from"); on $other: $(stats_text "$other")"
	if [ "$node" = "$from" ]; then
		check_true "$label: answered ok, one booking statement on $from (which holds the shard), nothing on $other" \
			"SELECT '$out' = 'ok' AND $n_from = 1 AND $(stats_calls "$other") = 0"
	else
		check_true "$label: answered ok, the call on $from, its twin on $node (which holds the shard)" \
			"SELECT '$out' = 'ok' AND $n_from = 1 AND $n_node = 1"
	fi
}
on_worker w1 "reserve_seat made on w1 for a resource on w1" "$seat1" "SELECT code FROM booking.reserve_seat($seat1, 'from-w1', 1)"
on_worker w1 "reserve_seat made on w1 for a resource on w2" "$seat2" "SELECT code FROM booking.reserve_seat($seat2, 'from-w1', 1)"
on_worker w2 "reserve_stay made on w2 for a room on w1" "$room1" "SELECT code FROM booking.reserve_stay($room1, 'from-w2', tstzrange('2031-01-01', '2031-01-02'))"
check "the three bookings made on workers, read through the coordinator" \
	"SELECT count(*) FROM booking.bookings WHERE guest IN ('from-w1', 'from-w2') AND status = 'confirmed'" 3

# Memory of a worker's session that serves many calls: Citus (13.2) adds a
# plan of the shard's query to a kept generic plan at every run of it, so a
# session grew by about 60 kB per call, without end (32 MB after these 500
# calls); the calls now plan each statement for its run
out=$("$CITUS_PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$CITUS_DIR/w1" -p "$(citus_port w1)" -U postgres -d "$CITUS_DB" \
	-c "DO \$\$ BEGIN FOR i IN 1..500 LOOP PERFORM booking.reserve_seat($seat1, 'memory', 1); END LOOP; END \$\$" \
	-c "SELECT coalesce(sum(total_bytes), 0) FROM pg_backend_memory_contexts WHERE name = 'CachedPlan'" 2>&1)
echo "# kept plans of a w1 session after 500 calls: $out bytes"
if [[ $out =~ ^[0-9]+$ ]] && [ "$out" -lt 1000000 ]; then
	pass "500 calls in one session on w1 keep under 1 MB of plans"
else
	fail "500 calls in one session on w1 keep under 1 MB of plans (got: $out)"
fi

# Ids on Citus are drawn in C, once per row: a statement that also named
# nextval() (behind a COALESCE) had Citus draw a second one, unused, before
# sending it (2 booking ids and 2 event ids per sale)
ids=$(resource_on w1 'ids on w1' 10) || fail "a resource on w1 for the ids"
out=$("$CITUS_PGBIN/psql" -X -q -At -v ON_ERROR_STOP=1 -h "$CITUS_DIR/w1" -p "$(citus_port w1)" -U postgres -d "$CITUS_DB" \
	-c "CREATE TEMP TABLE seq_before AS SELECT (SELECT last_value FROM booking.bookings_id_seq) AS b, (SELECT last_value FROM booking.events_id_seq) AS e" \
	-c "SELECT code FROM booking.reserve_seat($ids, 'ids', 1)" \
	-c "SELECT (SELECT last_value FROM booking.bookings_id_seq) - b || ' ' || (SELECT last_value FROM booking.events_id_seq) - e FROM seq_before" 2>&1 | tr '\n' ' ')
if [ "$out" = "ok 1 1 " ]; then
	pass "a seat sale made on w1 draws one booking id and one event id there"
else
	fail "a seat sale made on w1 draws one booking id and one event id there (got: $out)"
fi

# calls that are meant to reach more than one node
stats_reset
q "SELECT booking.hold_expire()" >/dev/null
check_true "hold_expire on the coordinator reaches both workers" \
	"SELECT $(stats_calls w1) > 0 AND $(stats_calls w2) > 0"
stats_reset
check "reserve_stays over a room of each worker answers ok" \
	"SELECT code FROM booking.reserve_stays(ARRAY[$room1, $room2], 'group', tstzrange('2030-09-02 09:00+00', '2030-09-02 10:00+00'))" ok
echo "# reserve_stays over both workers: on w1 $(stats_text w1); on w2 $(stats_text w2)"
check_true "a group over both workers touches both" \
	"SELECT $(stats_calls w1) > 0 AND $(stats_calls w2) > 0"
group=$(q "SELECT group_id FROM booking.bookings WHERE guest = 'group' LIMIT 1")
stats_reset
check "cancel_group of that group (0.9.0) cancels both members" \
	"SELECT code || ': ' || message FROM booking.cancel_group($group)" "ok: Cancelled 2 bookings of group $group."
check_true "cancel_group touched both workers" \
	"SELECT $(stats_calls w1) > 0 AND $(stats_calls w2) > 0"
check "both members are cancelled, each with its worker's row" \
	"SELECT string_agg(status::text, ' ') FROM booking.bookings WHERE group_id = $group" "cancelled cancelled"

citus_done
