#!/usr/bin/env bash
# amend.sh: the calls of 0.5.0 (set_guest_limit, reserve_seats, reduce,
# move_stay, set_buffer) on Citus, every call made through the coordinator.
#  1. distribute() registers their twins (shard_set_guest_limit,
#     shard_set_buffer, shard_reserve_seats, shard_seat_member, shard_reduce,
#     shard_move_stay) as distributed functions by home, co-located with the
#     tables, on the coordinator and the workers; a second distribute()
#     registers nothing.
#  2. A guest limit is exact under concurrency: 20 pgbench clients of one
#     guest make 60 attempts at a resource of 100 seats limited to 5 per
#     guest: 5 sold; the same on a striped resource (set_stripes 4).  Seats
#     booked before the limit was set count.
#  3. reserve_seats over resources on both workers: one row per member with
#     one group_id, each row in its resource's shard on its resource's
#     worker; sold_out, guest_limit or not_found on one member writes
#     nothing anywhere; a keyed pass replays; a held pass's members are
#     pending with one expires_at.  16 clients buy 2-resource
#     passes (one resource of each worker, random order, 1..3 seats each)
#     over 4 resources of 50 seats: nothing over capacity, every pass whole
#     (all or nothing), taken = blocking seats = the ok answers' seats per
#     resource, no deadlock, no prepared transaction left.
#  4. reduce and move_stay are routed to the worker of the booking and
#     answer as on one server: the same transcript of answers (codes,
#     messages, final rows; ids replaced by names) as on a single-node
#     database on the coordinator, and the codes the contract names; a move
#     refused keeps the old range.
#  5. set_buffer is routed and answers ok; a stay within the buffers is then
#     refused (the buffers add up), free_slots leaves them out, a set_buffer
#     that would make two footprints overlap changes nothing.  (When
#     set_buffer does not answer ok, the buffers are set by hand through the
#     coordinator, so that reserve_stay, move_stay and free_slots are still
#     tested.)
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

if rehearsal; then
	echo "# REHEARSAL: amend.sh needs the workers"
	pass "rehearsal"
	citus_done
fi

citus_db booking_citus_amend
q "ALTER TABLE citus_log ADD COLUMN quantities int[]" >/dev/null
SINGLE_DB=booking_citus_amend_single
CITUS_EXTRA_DBS="$CITUS_EXTRA_DBS $SINGLE_DB"

# db_run DB SQL: SQL on the coordinator in database DB; a raised error is
# printed as "ERROR <sqlstate>"
db_run() {
	"$CITUS_PGBIN/psql" -X -q -At -h "$CITUS_DIR/coord" -p "$(citus_port coord)" -U postgres -d "$1" \
		-v VERBOSITY=sqlstate -c "$2" 2>&1 | sed 's/^ERROR: */ERROR /'
}

# sqlstate SQL: the SQLSTATE that SQL raises on the coordinator (nothing
# when it does not raise)
sqlstate() {
	db_run "$CITUS_DB" "$1" | sed -n 's/^ERROR \([0-9A-Z]*\).*/\1/p'
}

# routed SQL: the twins that the call sends to the workers, as
# "twin@node", sorted (citus.log_remote_commands on the coordinator)
routed() {
	npsql coord -At -d "$CITUS_DB" -c "SET citus.log_remote_commands = on" -c "SET client_min_messages = notice" \
		-c "$1" 2>&1 >/dev/null |
		awk '/issuing .*booking\.shard_/ { match($0, /booking\.shard_[a-z_]+/); t = substr($0, RSTART + 8, RLENGTH - 8); getline
			if (match($0, /:[0-9]+ connectionId/)) print t " " substr($0, RSTART + 1, RLENGTH - 14) }' |
		while read -r twin port; do echo "$twin@$(node_of_port "$port")"; done | sort | paste -sd' ' -
}

# in_shard NODE RESOURCE CONDITION: rows of booking.bookings that meet
# CONDITION in the shard of RESOURCE, read on NODE from the shard table itself
in_shard() {
	local shard
	shard=$(q "SELECT get_shard_id_for_distribution_column('booking.bookings', (SELECT home FROM booking.resources WHERE id = $2))")
	qn "$1" "SELECT count(*) FROM booking.bookings_$shard WHERE $3" 2>&1
}

deadlocks() {
	local node sum=0 n
	for node in $CITUS_NODES; do
		n=$(qn "$node" "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
		sum=$((sum + n))
	done
	echo "$sum"
}

# the resources the script works on are made in a few sessions up front
# (a psql session per call costs ~0.1 s): N of each kind, then taken by
# worker with take; resource_on makes one more when a worker has none left
q "CREATE TABLE amend_pool (id bigint PRIMARY KEY, kind text NOT NULL, node text, used boolean NOT NULL DEFAULT false)" >/dev/null
for kind in 100 50 1; do
	gexec "SELECT format('SELECT booking.create_resource(%L, %s)', 'pool $kind ' || i, $kind) FROM generate_series(1, 16) i" |
		awk -v k="$kind" '{ print "INSERT INTO amend_pool (id, kind) VALUES (" $1 ", " k ");" }' | npsql coord -d "$CITUS_DB" >/dev/null
done
for node in w1 w2; do
	q "UPDATE amend_pool SET node = '$node' WHERE id IN (SELECT r.id FROM booking.resources r
		JOIN pg_dist_shard_placement p ON p.shardid = get_shard_id_for_distribution_column('booking.resources', r.home)
		WHERE p.nodeport = $(citus_port "$node"))" >/dev/null
done
# take NODE CAPACITY: an unused resource of that capacity (100, 50 or 1) on NODE
take() {
	local id
	id=$(q "UPDATE amend_pool SET used = true WHERE id = (SELECT id FROM amend_pool WHERE NOT used AND node = '$1' AND kind = '$2'
		ORDER BY id LIMIT 1) RETURNING id")
	[ -n "$id" ] && { echo "$id"; return 0; }
	resource_on "$1" "more $2" "$2"
}

########################################################################
# 1. distribute() registers the new twins
########################################################################
NEW_TWINS="'shard_move_stay', 'shard_reduce', 'shard_reserve_seats', 'shard_seat_member', 'shard_set_buffer', 'shard_set_guest_limit'"
# name:home-is-the-distribution-argument:co-located-with-resources:force_delegation
twins_sql="SELECT string_agg(p.proname || ':' || (o.distribution_argument_index = p.pronargs - 1) || ':'
	       || (o.colocationid = (SELECT colocationid FROM pg_dist_partition WHERE logicalrelid = 'booking.resources'::regclass))
	       || ':' || coalesce(o.force_delegation, false), ' ' ORDER BY p.proname)
	  FROM pg_dist_object o JOIN pg_proc p ON o.classid = 'pg_proc'::regclass AND o.objid = p.oid
	 WHERE p.pronamespace = 'booking'::regnamespace AND p.proname IN ($NEW_TWINS)"
twins_expected="shard_move_stay:true:true:true shard_reduce:true:true:true shard_reserve_seats:true:true:true shard_seat_member:true:true:true shard_set_buffer:true:true:true shard_set_guest_limit:true:true:true"
check "the 6 new twins are distributed functions by home, co-located with the tables, force_delegation" "$twins_sql" "$twins_expected"
for node in w1 w2; do
	check_on "$node" "$node knows the 6 new twins as distributed functions by home" "$twins_sql" "$twins_expected"
done
all_objects="SELECT string_agg(p.oid::regprocedure::text || ':' || coalesce(o.distribution_argument_index::text, '-') || ':'
	|| coalesce(o.colocationid::text, '-'), ' ' ORDER BY p.oid::regprocedure::text)
	FROM pg_dist_object o JOIN pg_proc p ON o.classid = 'pg_proc'::regclass AND o.objid = p.oid
	WHERE p.pronamespace = 'booking'::regnamespace"
before=$(q "$all_objects")
echo "# booking functions known to Citus: $(q "SELECT count(*) FROM pg_dist_object o JOIN pg_proc p ON o.classid = 'pg_proc'::regclass AND o.objid = p.oid WHERE p.pronamespace = 'booking'::regnamespace AND o.distribution_argument_index IS NOT NULL") twins"
check "distribute() again registers nothing" "SELECT booking.distribute()" "booking is already distributed over 32 shards on 2 workers."
check_eq "... and Citus's distributed functions of booking are unchanged" "$(q "$all_objects")" "$before"

########################################################################
# 2. guest limit under concurrency
########################################################################
echo "# 2. guest limit (at $SECONDS s)"
lim1=$(take w1 100) && lim2=$(take w2 100) && seat1=$(take w1 100) && seat2=$(take w2 100) &&
	room2=$(take w2 1) && broom=$(take w1 1) ||
	{ fail "resources on both workers"; citus_done; }
echo "# limited $lim1 (w1), striped $lim2 (w2); seats $seat1 (w1), $seat2 (w2); rooms $room2 (w2), $broom (w1)"
check "set_stripes 4 on $lim2 answers ok" "SELECT code FROM booking.set_stripes($lim2, 4)" ok
for r in $lim1 $lim2; do
	check_eq "set_guest_limit($r, 5) runs on $(worker_of "$r") only" \
		"$(routed "SELECT code FROM booking.set_guest_limit($r, 5)")" "shard_set_guest_limit@$(worker_of "$r")"
	check "resource $r: guest_limit 5, version bumped" "SELECT guest_limit || ' ' || (version > 1) FROM booking.resources WHERE id = $r" "5 true"
done
check_eq "set_guest_limit(r, 0) raises 22023" "$(sqlstate "SELECT booking.set_guest_limit($lim1, 0)")" 22023
check "set_guest_limit of an unknown resource answers not_found" "SELECT code FROM booking.set_guest_limit(12345, 5)" not_found

for r in $lim1 $lim2; do
	mode=plain
	[ "$r" = "$lim2" ] && mode=striped
	run_pgbench "limit $mode" -c 20 -j 2 -t 3 -D res="$r" -D kind="limit-$mode" -f amend_limit.pgb
	answers "limit $mode" "kind = 'limit-$mode'"
	check "limit $mode: 60 attempts answered, every answer ok, guest_limit or busy" \
		"SELECT count(*) || ' ' || count(*) FILTER (WHERE code NOT IN ('ok', 'guest_limit', 'busy')) FROM citus_log WHERE kind = 'limit-$mode'" "60 0"
	check "limit $mode: exactly 5 ok answers" "SELECT count(*) FROM citus_log WHERE kind = 'limit-$mode' AND code = 'ok'" 5
	check "limit $mode: exactly 5 blocking seats of guest solo (cluster-wide)" \
		"SELECT coalesce(sum(quantity), 0) FROM booking.bookings WHERE resource_id = $r AND status IN ('pending', 'confirmed')" 5
	check "limit $mode: seats_left = 95" "SELECT booking.seats_left($r)" 95
	if [ "$mode" = striped ]; then
		check "limit striped: the 4 stripes hold 95 free seats" "SELECT count(*) || ' ' || sum(free) FROM booking.resource_stripes WHERE resource_id = $r" "4 95"
	fi
	check "limit $mode: another guest still buys" "SELECT code FROM booking.reserve_seat($r, 'other', 5)" ok
done

# bookings made before the limit count, and NULL removes it
check "seats $seat2: gus takes 2 before any limit" "SELECT code FROM booking.reserve_seat($seat2, 'gus', 2)" ok
check "seats $seat2: set_guest_limit 3" "SELECT code FROM booking.set_guest_limit($seat2, 3)" ok
check "seats $seat2: gus asks 2 more: guest_limit (409), no booking" \
	"SELECT code || ' ' || http_status || ' ' || coalesce(booking_id::text, 'null') FROM booking.reserve_seat($seat2, 'gus', 2)" "guest_limit 409 null"
check "seats $seat2: gus asks 1 more: ok" "SELECT code FROM booking.reserve_seat($seat2, 'gus', 1)" ok
check "seats $seat2: set_guest_limit NULL answers ok" "SELECT code FROM booking.set_guest_limit($seat2, NULL)" ok
check "seats $seat2: ... and removes the limit" "SELECT coalesce(guest_limit::text, 'null') FROM booking.resources WHERE id = $seat2" null
check "seats $seat2: then gus buys 2 more" "SELECT code FROM booking.reserve_seat($seat2, 'gus', 2)" ok

########################################################################
# 3. reserve_seats over both workers
########################################################################
echo "# 3. reserve_seats (at $SECONDS s)"
lo=$seat1 hi=$seat2
[ "$seat1" -gt "$seat2" ] && lo=$seat2 hi=$seat1
lo_node=$(worker_of "$lo") hi_node=$(worker_of "$hi")
echo "# passes over $lo ($lo_node) and $hi ($hi_node)"
check_eq "reserve_seats over both workers runs shard_seat_member on each" \
	"$(routed "SELECT code FROM booking.reserve_seats(ARRAY[$hi, $lo], 'route', ARRAY[1, 1])")" "shard_seat_member@w1 shard_seat_member@w2"
left_sql="SELECT booking.seats_left($lo) || ' ' || booking.seats_left($hi)"
read -r left_lo left_hi <<<"$(q "$left_sql")"
res=$(q "SELECT code || ' ' || http_status || ' ' || booking_id FROM booking.reserve_seats(ARRAY[$hi, $lo], 'pia', ARRAY[2, 3])")
g=${res##* }
check_eq "reserve_seats([$hi, $lo], pia, [2, 3]) answers ok 201" "${res% *}" "ok 201"
# resource:quantity:group_id is the answer's booking:is the answer's booking:status
check "the group is 2 rows, one per member with its quantity, group_id = the answer's booking = the member on $lo" \
	"SELECT string_agg(resource_id || ':' || quantity || ':' || (group_id = $g) || ':' || (id = $g) || ':' || status, ' ' ORDER BY resource_id)
	   FROM booking.bookings WHERE guest = 'pia'" "$lo:3:true:true:confirmed $hi:2:true:false:confirmed"
check_eq "each member's home is its resource's home" \
	"$(q "SELECT string_agg(resource_id || ':' || home, ' ' ORDER BY resource_id) FROM booking.bookings WHERE guest = 'pia'")" \
	"$(q "SELECT string_agg(id || ':' || home, ' ' ORDER BY id) FROM booking.resources WHERE id IN ($lo, $hi)")"
check_eq "the member on $lo is in its resource's shard on $lo_node" "$(in_shard "$lo_node" "$lo" "guest = 'pia' AND group_id = $g")" 1
check_eq "the member on $hi is in its resource's shard on $hi_node" "$(in_shard "$hi_node" "$hi" "guest = 'pia' AND group_id = $g")" 1
check "seats_left of $lo and $hi: 3 and 2 fewer" "$left_sql" "$((left_lo - 3)) $((left_hi - 2))"
check "a keyed pass answers ok" "SELECT code FROM booking.reserve_seats(ARRAY[$lo, $hi], 'kim', idempotency_key => 'amend-pass-1')" ok
check "its replay answers ok, replayed" \
	"SELECT code || ' ' || replayed FROM booking.reserve_seats(ARRAY[$lo, $hi], 'kim', idempotency_key => 'amend-pass-1')" "ok true"
check "... and books nothing more" "SELECT count(*) FROM booking.bookings WHERE guest = 'kim'" 2
check "a pass with a hold over both workers answers ok" \
	"SELECT code FROM booking.reserve_seats(ARRAY[$lo, $hi], 'hana', hold => '1 hour')" ok
check "its two members are pending with one group_id and the same expires_at" \
	"SELECT count(*) || ' ' || count(DISTINCT group_id) || ' ' || count(DISTINCT expires_at) FROM booking.bookings WHERE guest = 'hana' AND status = 'pending'" "2 1 1"

# refusals on one member: nothing written on either worker
left_before=$(q "$left_sql")
check "sold_out on the higher member ($hi): sold_out 409, names $hi" \
	"SELECT code || ' ' || http_status || ' ' || coalesce(booking_id::text, 'null') || ' ' || (message LIKE '%of resource $hi, which has%nothing was booked.')
	   FROM booking.reserve_seats(ARRAY[$lo, $hi], 'sam', ARRAY[1, 500])" "sold_out 409 null true"
check "sold_out on the lower member ($lo): sold_out, names $lo" \
	"SELECT code || ' ' || (message LIKE '%of resource $lo, which has%') FROM booking.reserve_seats(ARRAY[$hi, $lo], 'sam', ARRAY[1, 500])" "sold_out true"
check "a member that does not exist: not_found" "SELECT code FROM booking.reserve_seats(ARRAY[$lo, $hi, 12345], 'sam')" not_found
check "set_guest_limit 2 on $hi" "SELECT code FROM booking.set_guest_limit($hi, 2)" ok
check "guest_limit on the member $hi: guest_limit 409" \
	"SELECT code || ' ' || http_status FROM booking.reserve_seats(ARRAY[$lo, $hi], 'sam', ARRAY[1, 3])" "guest_limit 409"
check "set_guest_limit NULL on $hi" "SELECT code FROM booking.set_guest_limit($hi, NULL)" ok
check "the refused passes wrote no row (cluster-wide)" "SELECT count(*) FROM booking.bookings WHERE guest = 'sam'" 0
check_eq "... none in the shard of $lo on $lo_node" "$(in_shard "$lo_node" "$lo" "guest = 'sam'")" 0
check_eq "... none in the shard of $hi on $hi_node" "$(in_shard "$hi_node" "$hi" "guest = 'sam'")" 0
check "... and took no seat" "$left_sql" "$left_before"
check_no_prepared "after the single passes"

# 16 clients, passes over 4 resources of 50 seats, 2 on each worker
q "CREATE TABLE amend_res (id bigint PRIMARY KEY, node text NOT NULL)" >/dev/null
for node in w1 w1 w2 w2; do
	r=$(take "$node" 50) || { fail "a pass resource on $node"; citus_done; }
	q "INSERT INTO amend_res VALUES ($r, '$node')" >/dev/null
done
check "pass resources: 2 on each worker" "SELECT string_agg(node || '=' || n, ' ' ORDER BY node) FROM (SELECT node, count(*) n FROM amend_res GROUP BY node) s" "w1=2 w2=2"
echo "# pass resources: $(q "SELECT string_agg(id || '@' || node, ' ' ORDER BY id) FROM amend_res")"
dl_before=$(deadlocks)
run_pgbench "passes" -c 16 -j 2 -t 8 -f amend_pass.pgb
answers passes "kind = 'pass'"
check_eq "passes: no deadlock counted on any node" "$(deadlocks)" "$dl_before"
snapshot
echo "# passes: seats taken $(q "SELECT string_agg(c.id || '=' || c.taken || '/' || c.capacity, ' ' ORDER BY c.id) FROM ($counters_sql) c JOIN amend_res a ON a.id = c.id")"
check "passes: 128 attempts, every answer ok, sold_out or busy" \
	"SELECT count(*) || ' ' || count(*) FILTER (WHERE code NOT IN ('ok', 'sold_out', 'busy')) FROM citus_log WHERE kind = 'pass'" "128 0"
check_true "passes: some passes sold and some sold out" \
	"SELECT count(*) FILTER (WHERE code = 'ok') > 0 AND count(*) FILTER (WHERE code = 'sold_out') > 0 FROM citus_log WHERE kind = 'pass'"
check "passes: no resource over its capacity" \
	"SELECT count(*) FROM ($counters_sql) c JOIN amend_res a ON a.id = c.id WHERE c.taken > c.capacity OR c.seats > c.capacity" 0
check "passes: per resource, taken = blocking seats = the seats of the ok answers" \
	"SELECT count(*) FROM ($counters_sql) c JOIN amend_res a ON a.id = c.id
	   LEFT JOIN (SELECT r, sum(n) AS s FROM citus_log, unnest(rooms, quantities) u(r, n)
	               WHERE kind = 'pass' AND code = 'ok' GROUP BY r) lg ON lg.r = c.id
	  WHERE c.taken <> c.seats OR c.seats <> coalesce(lg.s, 0)" 0
check "passes: every ok pass is whole: its 2 members, quantities and guest, confirmed, named by the lower member" \
	"SELECT count(*) FROM citus_log l WHERE kind = 'pass' AND code = 'ok' AND (
	    (SELECT array_agg(b.resource_id || ':' || b.quantity ORDER BY b.resource_id) FROM chk_bookings b
	      WHERE b.group_id = l.booking_id AND b.guest = l.guest AND b.status = 'confirmed')
	    IS DISTINCT FROM (SELECT array_agg(r || ':' || n ORDER BY r) FROM unnest(l.rooms, l.quantities) u(r, n))
	    OR (SELECT resource_id FROM chk_bookings WHERE id = l.booking_id) IS DISTINCT FROM (SELECT min(r) FROM unnest(l.rooms) r))" 0
check "passes: no row outside an ok pass (no partial pass): rows = 2 x ok, one group_id per ok" \
	"SELECT (SELECT count(*) || ' ' || count(DISTINCT group_id) || ' ' || count(*) FILTER (WHERE group_id IS NULL)
	           FROM chk_bookings WHERE resource_id IN (SELECT id FROM amend_res))
	      = (SELECT 2 * count(*) || ' ' || count(*) || ' 0' FROM citus_log WHERE kind = 'pass' AND code = 'ok')" t
check "passes: no refused pass left a row" \
	"SELECT count(*) FROM chk_bookings b JOIN citus_log l ON l.guest = b.guest WHERE l.kind = 'pass' AND l.code <> 'ok'" 0
check "passes: every row's home is its resource's home" \
	"SELECT count(*) FROM chk_bookings b JOIN chk_resources r ON r.id = b.resource_id WHERE b.home <> r.home" 0
check_no_prepared "after the passes"

########################################################################
# 4. reduce and move_stay: routed, and answering as on one server
########################################################################
echo "# 4. reduce and move_stay (at $SECONDS s)"
check_eq "reduce runs on the worker of the booking only" \
	"$(routed "SELECT code FROM booking.reduce($(q "SELECT booking_id FROM booking.reserve_seat($seat1, 'rita', 3)"), 1)")" "shard_reduce@$(worker_of "$seat1")"
check_eq "move_stay runs on the worker of the booking only" \
	"$(routed "SELECT code FROM booking.move_stay($(q "SELECT booking_id FROM booking.reserve_stay($room2, 'moe', '[2031-01-01, 2031-01-03)')"), '[2031-01-02, 2031-01-04)')")" "shard_move_stay@$(worker_of "$room2")"

# the transcript: one scenario of reduce and move_stay, run in one psql
# session on a database, on resources S (100 seats), R (a room) and H (10
# seats, for a hold that lapses).  Each step is a statement of its own with
# constant arguments; "@call LABEL :: CALL" prints
# "LABEL|ok|code|booking_id|http_status|message|replayed", "@row LABEL ::
# SQL" prints "LABEL|" and SQL's value, and a step that raises prints
# "LABEL|ERROR <sqlstate>".  "#id ID NAME" lines name the ids, so that the
# transcripts of two databases compare.
scenario_sql() {
	awk '
	/^@call / { split(substr($0, 7), a, / :: /)
		printf "SELECT %s || r.ok || %s || r.code || %s || coalesce(r.booking_id::text, %s) || %s || r.http_status || %s || r.message || %s || r.replayed AS out FROM %s r \\gset\n",
			"'\''" a[1] "|'\''", "'\''|'\''", "'\''|'\''", "'\'''\''", "'\''|'\''", "'\''|'\''", "'\''|'\''", a[2]
		printf "\\if :ERROR\n\\echo '\''%s|ERROR'\'' :SQLSTATE\n\\else\n\\echo :out\n\\endif\n", a[1]; next }
	/^@row / { split(substr($0, 6), a, / :: /)
		printf "SELECT '\''%s|'\'' || coalesce((%s)::text, '\''NULL'\'') AS out \\gset\n", a[1], a[2]
		printf "\\if :ERROR\n\\echo '\''%s|ERROR'\'' :SQLSTATE\n\\else\n\\echo :out\n\\endif\n", a[1]; next }
	{ print }' <<'EOF'
\set ON_ERROR_STOP 0
SELECT booking.create_resource('H', 10) AS "H" \gset
\echo '#id' :S S
\echo '#id' :R R
\echo '#id' :H H
SELECT booking_id AS bh FROM booking.reserve_seat(:H, 'hal', 2, hold => '1 second') \gset
SELECT booking_id AS sh FROM booking.reserve_stay(:R, 'hal', '[2031-03-01, 2031-03-02)', hold => '1 second') \gset
SELECT booking_id AS b1 FROM booking.reserve_seat(:S, 'ann', 5) \gset
SELECT booking_id AS s1 FROM booking.reserve_stay(:R, 'dee', '[2030-07-01 14:00+00, 2030-07-03 10:00+00)') \gset
SELECT booking_id AS s2 FROM booking.reserve_stay(:R, 'eve', '[2030-07-05 14:00+00, 2030-07-07 10:00+00)') \gset
SELECT booking_id AS s3 FROM booking.reserve_stay(:R, 'cal', '[2030-09-01, 2030-09-02)') \gset
SELECT booking_id AS p FROM booking.reserve_stay(:R, 'pam', '[2030-08-01, 2030-08-03)', hold => '1 hour') \gset
\echo '#id' :bh bh
\echo '#id' :sh sh
\echo '#id' :b1 b1
\echo '#id' :s1 s1
\echo '#id' :s2 s2
\echo '#id' :s3 s3
\echo '#id' :p p
SELECT code AS cancelled FROM booking.cancel(:s3) \gset
@call reduce 2 of 5 :: booking.reduce(:b1, 2)
@row its row :: SELECT quantity || ' ' || status FROM booking.bookings WHERE id = :b1
@row seats_left :: SELECT booking.seats_left(:S)
@call reduce 4 of 3 :: booking.reduce(:b1, 4)
@call reduce 1 keyed :: booking.reduce(:b1, 1, 'amend-red-' || :'KEY')
@call its replay :: booking.reduce(:b1, 1, 'amend-red-' || :'KEY')
@row the row after the replay :: SELECT quantity || ' ' || status FROM booking.bookings WHERE id = :b1
@call reduce 2 of 2 :: booking.reduce(:b1, 2)
@row cancelled, quantity kept :: SELECT quantity || ' ' || status FROM booking.bookings WHERE id = :b1
@row seats_left after it :: SELECT booking.seats_left(:S)
@call reduce a cancelled booking :: booking.reduce(:b1, 1)
@call reduce an unknown booking :: booking.reduce(12345, 1)
@call reduce a stay :: booking.reduce(:s1, 1)
@call reduce quantity NULL :: booking.reduce(:b1, NULL)
@call reduce quantity 0 :: booking.reduce(:b1, 0)
@call reduce booking NULL :: booking.reduce(NULL, 1)
@call move over its own range :: booking.move_stay(:s1, '[2030-07-02 14:00+00, 2030-07-04 10:00+00)')
@call move onto another stay :: booking.move_stay(:s1, '[2030-07-04 14:00+00, 2030-07-06 10:00+00)')
@row the refused move kept the range :: SELECT during || ' ' || status FROM booking.bookings WHERE id = :s1
@call move keyed :: booking.move_stay(:s2, '[2030-07-08 14:00+00, 2030-07-09 10:00+00)', 'amend-mv-' || :'KEY')
@call its replay :: booking.move_stay(:s2, '[2030-07-08 14:00+00, 2030-07-09 10:00+00)', 'amend-mv-' || :'KEY')
@call into the freed range :: booking.move_stay(:s1, '[2030-07-05 14:00+00, 2030-07-07 10:00+00)')
SELECT expires_at AS exp FROM booking.bookings WHERE id = :p \gset
@call move a pending stay :: booking.move_stay(:p, '[2030-08-10, 2030-08-12)')
@row still pending, same expires_at :: SELECT status || ' ' || (expires_at = :'exp') || ' ' || during FROM booking.bookings WHERE id = :p
@call move a seat booking :: booking.move_stay(:b1, '[2030-10-01, 2030-10-02)')
@call move a cancelled stay :: booking.move_stay(:s3, '[2030-10-01, 2030-10-02)')
@call move an unknown booking :: booking.move_stay(12345, '[2030-10-01, 2030-10-02)')
@call move during NULL :: booking.move_stay(:s1, NULL)
@call move during empty :: booking.move_stay(:s1, 'empty')
@call move during unbounded :: booking.move_stay(:s1, '[2030-10-01,)')
-- wait until the holds of 1 s made first have lapsed
SELECT max(expires_at) AS lapse FROM booking.bookings WHERE id IN (:bh, :sh) \gset
SELECT pg_sleep(greatest(0, extract(epoch FROM :'lapse'::timestamptz - clock_timestamp()) + 0.1)) AS slept \gset
@call reduce a lapsed hold :: booking.reduce(:bh, 1)
@call move a lapsed hold :: booking.move_stay(:sh, '[2031-03-05, 2031-03-06)')
@row the rows at the end :: SELECT string_agg(x, ', ' ORDER BY x) FROM (SELECT guest || ' ' || status || ' ' || quantity || ' ' || coalesce(during::text, '-') AS x FROM booking.bookings WHERE resource_id IN (:S, :R, :H)) s
@row seats_left at the end :: SELECT booking.seats_left(:S) || ' ' || booking.seats_left(:H)
EOF
}

# transcript DB S R KEY OUT: the scenario in DB on S and R (keys suffixed
# KEY); OUT gets its lines with the ids replaced by their names and the
# instants of the run (timestamps with fractions of a second) by T
transcript() {
	local script
	scenario_sql >"$5.sql"
	"$CITUS_PGBIN/psql" -X -q -At -h "$CITUS_DIR/coord" -p "$(citus_port coord)" -U postgres -d "$1" \
		-v S="$2" -v R="$3" -v KEY="$4" -f "$5.sql" >"$5.raw" 2>"$5.err"
	script=$(awk '$1 == "#id" { printf "s/\\<%s\\>/%s/g; ", $2, $3 }' "$5.raw")
	grep -v '^#id ' "$5.raw" | sed -E "$script s/[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]+\\+00/T/g" >"$5"
}
# the contract's part of a transcript: label|code|booking|http|replayed for
# an answer, the line itself otherwise
project() {
	awk -F'|' 'NF == 7 { print $1 "|" $3 "|" $4 "|" $5 "|" $7; next } { print }'
}

# the three transcripts run side by side: a single-node database on the
# coordinator, and on Citus the seats on w1 with the room on w2, then the
# other way round
npsql coord -d postgres -c "DROP DATABASE IF EXISTS $SINGLE_DB WITH (FORCE)" >/dev/null 2>&1
if npsql coord -d postgres -c "CREATE DATABASE $SINGLE_DB" >/dev/null &&
	npsql coord -d "$SINGLE_DB" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE" \
		-c "SELECT setval('booking.resources_id_seq', 7000000), setval('booking.bookings_id_seq', 8000000)" >/dev/null; then
	transcript "$SINGLE_DB" "$(db_run "$SINGLE_DB" "SELECT booking.create_resource('S', 100)")" \
		"$(db_run "$SINGLE_DB" "SELECT booking.create_resource('R', 1)")" s "$CITUS_TMP/tr.single" &
	tr_pids=$!
else
	fail "a single-node database $SINGLE_DB on the coordinator"
	: >"$CITUS_TMP/tr.single"
	tr_pids=
fi
S1=$(take w1 100) && R2=$(take w2 1) && S2=$(take w2 100) && R1=$(take w1 1) ||
	{ fail "seats and a room on each worker for the transcripts"; citus_done; }
transcript "$CITUS_DB" "$S1" "$R2" a "$CITUS_TMP/tr.citus.a" &
tr_pids="$tr_pids $!"
transcript "$CITUS_DB" "$S2" "$R1" b "$CITUS_TMP/tr.citus.b" &
tr_pids="$tr_pids $!"
CITUS_BG_PIDS="$CITUS_BG_PIDS $tr_pids"
for p in $tr_pids; do wait "$p"; done

cat >"$CITUS_TMP/tr.expected" <<'EOF'
reduce 2 of 5|ok|b1|200|false
its row|3 confirmed
seats_left|97
reduce 4 of 3|invalid_state|b1|409|false
reduce 1 keyed|ok|b1|200|false
its replay|ok|b1|200|true
the row after the replay|2 confirmed
reduce 2 of 2|ok|b1|200|false
cancelled, quantity kept|2 cancelled
seats_left after it|100
reduce a cancelled booking|invalid_state|b1|409|false
reduce an unknown booking|not_found||404|false
reduce a stay|invalid_state|s1|409|false
reduce quantity NULL|ERROR 22004
reduce quantity 0|ERROR 22023
reduce booking NULL|ERROR 22004
move over its own range|ok|s1|200|false
move onto another stay|unavailable||409|false
the refused move kept the range|["2030-07-02 14:00:00+00","2030-07-04 10:00:00+00") confirmed
move keyed|ok|s2|200|false
its replay|ok|s2|200|true
into the freed range|ok|s1|200|false
move a pending stay|ok|p|200|false
still pending, same expires_at|pending true ["2030-08-10 00:00:00+00","2030-08-12 00:00:00+00")
move a seat booking|invalid_state|b1|409|false
move a cancelled stay|invalid_state|s3|409|false
move an unknown booking|not_found||404|false
move during NULL|ERROR 22004
move during empty|ERROR 22023
move during unbounded|ERROR 22023
reduce a lapsed hold|hold_expired|bh|410|false
move a lapsed hold|hold_expired|sh|410|false
the rows at the end|ann cancelled 2 -, cal cancelled 1 ["2030-09-01 00:00:00+00","2030-09-02 00:00:00+00"), dee confirmed 1 ["2030-07-05 14:00:00+00","2030-07-07 10:00:00+00"), eve confirmed 1 ["2030-07-08 14:00:00+00","2030-07-09 10:00:00+00"), hal expired 1 ["2031-03-01 00:00:00+00","2031-03-02 00:00:00+00"), hal expired 2 -, pam pending 1 ["2030-08-10 00:00:00+00","2030-08-12 00:00:00+00")
seats_left at the end|100 10
EOF
project <"$CITUS_TMP/tr.single" | diff "$CITUS_TMP/tr.expected" - >"$CITUS_TMP/tr.single.diff"
if [ -s "$CITUS_TMP/tr.single.diff" ]; then
	echo "# the single server differs from the contract's transcript (the script's own expectations):"
	sed 's/^/#   /' "$CITUS_TMP/tr.single.diff"
fi

for run in a b; do
	if [ $run = a ]; then where="seats on w1, room on w2"; else where="seats on w2, room on w1"; fi
	cp "$CITUS_TMP/tr.citus.$run" "$CITUS_TMP/tr.citus"
	if project <"$CITUS_TMP/tr.citus" | diff "$CITUS_TMP/tr.expected" - >"$CITUS_TMP/tr.diff"; then
		pass "$where: reduce and move_stay answer the codes of the contract ($(wc -l <"$CITUS_TMP/tr.expected") steps; a refused move keeps its range)"
	else
		fail "$where: reduce and move_stay answer the codes of the contract (< expected, > got)"
		sed 's/^/#   /' "$CITUS_TMP/tr.diff" | head -n 30
	fi
	check_eq "$where: the cancelling reduce says so" "$(grep '^reduce 2 of 2|' "$CITUS_TMP/tr.citus" | cut -d'|' -f6)" \
		"Booking b1 is cancelled: all its 2 seats were given back."
	if diff "$CITUS_TMP/tr.single" "$CITUS_TMP/tr.citus" >"$CITUS_TMP/tr.diff"; then
		pass "$where: the same answers, messages and rows as on a single server"
	else
		fail "$where: the same answers, messages and rows as on a single server (< single, > Citus)"
		sed 's/^/#   /' "$CITUS_TMP/tr.diff" | head -n 30
	fi
done

########################################################################
# 5. set_buffer
########################################################################
echo "# 5. set_buffer (at $SECONDS s)"
R=$broom
node=$(worker_of "$R")
s=$(q "SELECT booking_id FROM booking.reserve_stay($R, 'bea', '[2030-07-01 14:00+00, 2030-07-03 10:00+00)')")
check_eq "set_buffer runs on the worker of the resource only" \
	"$(routed "SELECT code FROM booking.set_buffer($R, '1 hour', '1 hour')")" "shard_set_buffer@$node"
got=$(db_run "$CITUS_DB" "SELECT code || ' ' || http_status FROM booking.set_buffer($R, '2 hours', '1 day')")
check_eq "set_buffer($R, 2 hours, 1 day) answers ok 200" "$got" "ok 200"
if [ "$got" != "ok 200" ]; then
	# so that what follows still tests reserve_stay, move_stay and free_slots
	echo "# set_buffer failed: the buffers are set by hand through the coordinator for the checks below"
	q "UPDATE booking.resources SET buffer_before = '2 hours', buffer_after = '24 hours' WHERE id = $R" >/dev/null
	q "UPDATE booking.bookings SET blocked = tstzrange('2030-07-01 12:00+00', '2030-07-04 10:00+00') WHERE id = $s" >/dev/null
fi
check "resource $R: buffers stored as hours" "SELECT buffer_before || ' ' || buffer_after FROM booking.resources WHERE id = $R" "02:00:00 24:00:00"
check "the stay not begun gets both buffers as its footprint" \
	"SELECT blocked FROM booking.bookings WHERE id = $s" '["2030-07-01 12:00:00+00","2030-07-04 10:00:00+00")'
check "free_slots leaves out the footprint and the new stay's buffers" \
	"SELECT string_agg(f::text, ' ' ORDER BY f) FROM booking.free_slots($R, '[2030-06-25, 2030-07-10)', '1 day') f" \
	'["2030-06-25 00:00:00+00","2030-06-30 12:00:00+00") ["2030-07-04 12:00:00+00","2030-07-10 00:00:00+00")'
check "a stay in the buffer after it: unavailable" \
	"SELECT code FROM booking.reserve_stay($R, 'x', '[2030-07-03 14:00+00, 2030-07-04 08:00+00)')" unavailable
check "a stay whose own buffer before reaches it (start 11:00 < 10:00 + 2 h): unavailable" \
	"SELECT code FROM booking.reserve_stay($R, 'x', '[2030-07-04 11:00+00, 2030-07-05 08:00+00)')" unavailable
check "a stay before it whose buffer after reaches it: unavailable" \
	"SELECT code FROM booking.reserve_stay($R, 'x', '[2030-06-29 14:00+00, 2030-06-30 14:00+00)')" unavailable
check "nothing booked by the refusals" "SELECT count(*) FROM booking.bookings WHERE resource_id = $R AND guest = 'x'" 0
check "a stay before it that ends when both buffers fit between them: ok" \
	"SELECT code FROM booking.reserve_stay($R, 'bo', '[2030-06-29 14:00+00, 2030-06-30 12:00+00)')" ok
s2=$(q "SELECT booking_id FROM booking.reserve_stay($R, 'ben', '[2030-07-04 12:00+00, 2030-07-05 10:00+00)')")
check "a stay that starts when both buffers have passed: ok" "SELECT status FROM booking.bookings WHERE id = ${s2:-0}" confirmed
check "move_stay into the buffer: unavailable, the range kept" \
	"SELECT code || ' ' || (SELECT during FROM booking.bookings WHERE id = ${s2:-0}) FROM booking.move_stay(${s2:-0}, '[2030-07-04 11:00+00, 2030-07-05 10:00+00)')" \
	'unavailable ["2030-07-04 12:00:00+00","2030-07-05 10:00:00+00")'
check "set_buffer that would make two footprints overlap: unavailable 409" \
	"SELECT code || ' ' || http_status FROM booking.set_buffer($R, '3 hours', '1 day')" "unavailable 409"
check_eq "... the buffers and footprints unchanged" \
	"$(q "SELECT buffer_before || ' ' || buffer_after FROM booking.resources WHERE id = $R") $(q "SELECT string_agg(blocked::text, ' ' ORDER BY blocked)
	   FROM booking.bookings WHERE resource_id = $R AND status = 'confirmed'")" \
	'02:00:00 24:00:00 ["2030-06-29 12:00:00+00","2030-07-01 12:00:00+00") ["2030-07-01 12:00:00+00","2030-07-04 10:00:00+00") ["2030-07-04 10:00:00+00","2030-07-06 10:00:00+00")'
check_eq "set_buffer before NULL raises 22004" "$(sqlstate "SELECT booking.set_buffer($R, NULL, '0')")" 22004
check_eq "set_buffer negative raises 22023" "$(sqlstate "SELECT booking.set_buffer($R, '-1 hour', '0')")" 22023
check_eq "set_buffer in months raises 22023" "$(sqlstate "SELECT booking.set_buffer($R, '0', '1 month')")" 22023
check_eq "set_buffer over 366 days raises 22023" "$(sqlstate "SELECT booking.set_buffer($R, '367 days', '0')")" 22023
check_invariants "at the end"
check_no_prepared "at the end"

citus_done
