#!/usr/bin/env bash
# passes.sh: reserve_seats whose members live in shards on different
# workers, listed in descending id order (issue 24's gate: a pass routed by
# its first member instead of its members' nodes).  Every call through the
# coordinator.  Where a row is, is read on each worker in the shard tables
# themselves; what the coordinator sends where, from
# citus.log_remote_commands.
#  1. Two pairs of resources of 10 seats, lower id on w1 and higher on w2,
#     then the other way round.  On each pair: a pass listed descending with
#     quantities, one without, one ascending, a held one, a keyed one: each
#     answers ok 201 naming the lower member's booking; one row per member
#     with its own quantity, one group_id; each row in its resource's shard
#     on its resource's worker and nowhere else; the coordinator runs
#     shard_seat_member on the lower member's worker first, then on the
#     higher's; seats taken, seats_left and the blocking bookings exactly
#     what was sold.  The key is kept in the lower member's shard on its
#     worker; its replay listed either way answers replayed with the same
#     booking; the same key with the quantities swapped answers
#     idempotency_mismatch.  sold_out on the lower member (run first), on
#     the higher (run after the lower's row was written), and on a member
#     with no seat left: the lowest such id named, nothing written on
#     either worker, no seat taken; a keyed refusal replays.
#  2. Descending passes whose members share a shard (runs on that shard's
#     worker only, through shard_reserve_seats), share a worker but not a
#     shard (two shard_seat_member there), and a pass of three members over
#     both workers.
#  3. A race: 32 pgbench clients, 800 attempts (3 in 4 listed descending)
#     at two pairs of resources on different workers with 20 and 30 passes
#     of capacity: exactly 20 and 30 ok passes, each resource's seats taken
#     exactly (the binding one full, none over capacity), every ok pass
#     whole and named by its lower member, no row of a refused attempt,
#     every row in its resource's shard on its resource's worker, every
#     answer ok, sold_out or busy, no deadlock, no prepared transaction left.
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

if rehearsal; then
	echo "# REHEARSAL: passes.sh needs the workers"
	pass "rehearsal"
	citus_done
fi

citus_db booking_citus_passes
q "ALTER TABLE citus_log ADD COLUMN quantities int[]" >/dev/null

# 40 resources of 10 seats, made in one session; 40 ids in 32 shards, so
# two of them share a shard.  Each one's worker, its home and the shards of
# booking.bookings and booking.idempotency_keys that hold its rows.
q "CREATE TABLE pass_res (id bigint PRIMARY KEY, node text NOT NULL, home bigint NOT NULL,
	rshard bigint NOT NULL, bshard bigint NOT NULL, kshard bigint NOT NULL, used boolean NOT NULL DEFAULT false)" >/dev/null
gexec "SELECT format('SELECT booking.create_resource(%L, 10)', 'pass seats ' || i) FROM generate_series(1, 40) i" >/dev/null ||
	{ fail "40 resources"; citus_done; }
q "SELECT r.id, p.nodeport, r.home, p.shardid,
	      get_shard_id_for_distribution_column('booking.bookings', r.home),
	      get_shard_id_for_distribution_column('booking.idempotency_keys', r.home)
	 FROM booking.resources r
	 JOIN pg_dist_shard_placement p ON p.shardid = get_shard_id_for_distribution_column('booking.resources', r.home)" |
	awk -F'|' -v p1="$(citus_port w1)" -v p2="$(citus_port w2)" '{ n = $2 == p1 ? "w1" : $2 == p2 ? "w2" : "?"
		printf "INSERT INTO pass_res VALUES (%s, '\''%s'\'', %s, %s, %s, %s);\n", $1, n, $3, $4, $5, $6 }' |
	npsql coord -d "$CITUS_DB" >/dev/null
check "40 resources, on both workers, every one in its own id's shard" \
	"SELECT count(*) || ' ' || count(DISTINCT node) || ' ' || count(*) FILTER (WHERE node NOT IN ('w1', 'w2')) FROM pass_res" "40 2 0"
declare -A NODE BSHARD KSHARD TAKEN CAP
while IFS='|' read -r id node bshard kshard; do
	NODE[$id]=$node BSHARD[$id]=$bshard KSHARD[$id]=$kshard TAKEN[$id]=0 CAP[$id]=10
done < <(q "SELECT id, node, bshard, kshard FROM pass_res")

# the shard tables of booking.bookings and booking.idempotency_keys on each
# worker, as one UNION ALL that tags each row with its shard
declare -A BOOKINGS_ON KEYS_ON
for node in w1 w2; do
	for t in bookings idempotency_keys; do
		cols="resource_id, quantity, guest, status, group_id, id"
		[ $t = idempotency_keys ] && cols="key, code, booking_id"
		sql=$(q "SELECT string_agg(format('SELECT %s AS shard, $cols FROM booking.${t}_%s', s.shardid, s.shardid), ' UNION ALL ' ORDER BY s.shardid)
			FROM pg_dist_shard s JOIN pg_dist_shard_placement p USING (shardid)
			WHERE s.logicalrelid = 'booking.$t'::regclass AND p.nodeport = $(citus_port $node)")
		if [ $t = bookings ]; then BOOKINGS_ON[$node]=$sql; else KEYS_ON[$node]=$sql; fi
	done
done
check "the bookings' and keys' shards: 16 of each on each worker" \
	"SELECT string_agg(p.nodeport::text || ':' || n, ' ' ORDER BY p.nodeport) FROM (SELECT p.nodeport, count(*) n FROM pg_dist_shard s
	   JOIN pg_dist_shard_placement p USING (shardid) WHERE s.logicalrelid IN ('booking.bookings'::regclass, 'booking.idempotency_keys'::regclass)
	  GROUP BY p.nodeport) p" "$(citus_port w1):32 $(citus_port w2):32"

# rows_on NODE CONDITION: the booking rows that meet CONDITION in the shard
# tables on NODE, as "resource:quantity@shard", by resource; "-" for none
rows_on() {
	qn "$1" "SELECT coalesce(string_agg(resource_id || ':' || quantity || '@' || shard, ' ' ORDER BY resource_id, quantity), '-')
		FROM (${BOOKINGS_ON[$1]}) b WHERE $2" 2>&1
}

# keys_on NODE KEY: the shards on NODE that hold the key, as "shard:code"
keys_on() {
	qn "$1" "SELECT coalesce(string_agg(shard || ':' || code, ' '), '-') FROM (${KEYS_ON[$1]}) k WHERE key = '$2'" 2>&1
}

# pick CONDITION: the lowest pair lo < hi of unused resources a (lo) and b
# (hi) that meets CONDITION; marks both used; prints "lo hi"
pick() {
	q "WITH p AS (SELECT a.id AS lo, b.id AS hi FROM pass_res a JOIN pass_res b ON a.id < b.id
	     WHERE NOT a.used AND NOT b.used AND $1 ORDER BY a.id, b.id LIMIT 1)
	   UPDATE pass_res SET used = true FROM p WHERE pass_res.id IN (p.lo, p.hi) RETURNING p.lo || ' ' || p.hi" | head -n 1
}

# call SQL: one booking call through the coordinator, with
# citus.log_remote_commands on.  ANSWER: its row (code|http|booking|
# replayed|message) or its error; ROUTE: the twins it sent, in the order
# sent, as "twin(first argument)@node"; KEYS: the shards of
# idempotency_keys it read or wrote, as "shard@node"
call() {
	npsql coord -At -d "$CITUS_DB" -c "SET citus.log_remote_commands = on" -c "SET client_min_messages = notice" \
		-c "$1" >"$CITUS_TMP/call.out" 2>"$CITUS_TMP/call.err"
	ANSWER=$(cat "$CITUS_TMP/call.out"; grep '^ERROR' "$CITUS_TMP/call.err")
	ROUTE=$(awk '/issuing .*booking\.shard_/ { match($0, /booking\.shard_[a-z_]+\(/); twin = substr($0, RSTART + 8, RLENGTH - 9)
			arg = substr($0, RSTART + RLENGTH); sub(/::.*/, "", arg); gsub(/'\''/, "", arg); getline
			if (match($0, /:[0-9]+ connectionId/)) print twin "(" arg ") " substr($0, RSTART + 1, RLENGTH - 14) }' "$CITUS_TMP/call.err" |
		while read -r twin port; do echo "$twin@$(node_of_port "$port")"; done | paste -sd' ' -)
	KEYS=$(awk '/issuing .*idempotency_keys_[0-9]+/ { match($0, /idempotency_keys_[0-9]+/); s = substr($0, RSTART + 17, RLENGTH - 17); getline
			if (match($0, /:[0-9]+ connectionId/)) print s " " substr($0, RSTART + 1, RLENGTH - 14) }' "$CITUS_TMP/call.err" |
		while read -r s port; do echo "$s@$(node_of_port "$port")"; done | sort -u | paste -sd' ' -)
}

# reserve RESOURCES GUEST [QUANTITIES [MORE]]: call reserve_seats
reserve() {
	call "SELECT code, http_status, booking_id, replayed, message FROM booking.reserve_seats('{$1}', '$2'${3:+, '{$3}'}${4:-})"
}

# field N: field N of ANSWER; an error is all of field 1
field() {
	case $ANSWER in
	*'|'*) cut -d'|' -f"$1" <<<"$ANSWER" ;;
	*) [ "$1" = 1 ] && echo "$ANSWER" ;;
	esac
}

# members R:Q...: the members sorted by resource id
members() { printf '%s\n' "$@" | sort -t: -k1,1n; }

# expect_route LABEL R:Q...: ROUTE is one shard_seat_member per member, in
# ascending id order, each on its resource's worker
expect_route() {
	local label=$1 want="" m
	shift
	for m in $(members "$@"); do want="$want${want:+ }shard_seat_member(${m%%:*})@${NODE[${m%%:*}]}"; done
	check_eq "$label: the coordinator ran shard_seat_member on each member's worker, lowest id first" "$ROUTE" "$want"
}

# expect_seats LABEL R...: per resource, the seats taken (its counter),
# seats_left and the blocking seat bookings, as TAKEN says (seats_left is a
# call of its own: inside a query over a distributed table it would be
# pushed down to the shards)
expect_seats() {
	local label=$1 r want="" got="" sorted list left taken booked t b i=1
	shift
	sorted=$(printf '%s\n' "$@" | sort -n)
	list=$(paste -sd, - <<<"$sorted")
	for r in $sorted; do
		want="$want${want:+ }$r:${TAKEN[$r]}/$((CAP[$r] - TAKEN[$r]))/${TAKEN[$r]}"
	done
	taken=$(q "SELECT string_agg(id || ':' || taken, ' ' ORDER BY id) FROM booking.resources WHERE id IN ($list)" 2>&1)
	left=$(q "SELECT $(sed 's/[0-9][0-9]*/booking.seats_left(&)/g' <<<"$list")" 2>&1)
	booked=$(q "SELECT string_agg(resource_id || ':' || n, ' ') FROM (SELECT resource_id, sum(quantity) n FROM booking.bookings
		WHERE resource_id IN ($list) AND status IN ('pending', 'confirmed') GROUP BY resource_id) b" 2>&1)
	for r in $sorted; do
		t=$(tr ' ' '\n' <<<"$taken" | sed -n "s/^$r://p")
		b=$(tr ' ' '\n' <<<"$booked" | sed -n "s/^$r://p")
		got="$got${got:+ }$r:${t:-?}/$(cut -d'|' -f$i <<<"$left")/${b:-0}"
		i=$((i + 1))
	done
	check_eq "$label: seats taken / seats_left / blocking seats: $want" "$got" "$want"
}

# expect_pass LABEL GUEST STATUS R:Q...: ANSWER is ok 201 and names the
# lowest member's booking; GUEST has one row per member with its quantity
# and STATUS, all with that group_id, each in its resource's shard on its
# resource's worker and on no other.  Adds the seats to TAKEN.
expect_pass() {
	local label=$1 guest=$2 status=$3 g m r want="" node onnode lo
	shift 3
	lo=$(members "$@" | head -n 1)
	lo=${lo%%:*}
	check_eq "$label: ok 201" "$(field 1)|$(field 2)" "ok|201"
	g=$(field 3)
	[[ "$g" =~ ^[0-9]+$ ]] || g=0
	for m in $(members "$@"); do
		r=${m%%:*}
		want="$want${want:+ }$m:$status:true:$([ "$r" = "$lo" ] && echo true || echo false)"
		TAKEN[$r]=$((TAKEN[$r] + ${m#*:}))
	done
	check "$label: one row per member, its quantity, $status, one group_id: the answer's booking, the row of $lo" \
		"SELECT coalesce(string_agg(resource_id || ':' || quantity || ':' || status || ':' || (group_id = $g) || ':' || (id = $g), ' ' ORDER BY resource_id), '-')
		   FROM booking.bookings WHERE guest = '$guest'" "$want"
	for node in w1 w2; do
		onnode=""
		for m in $(members "$@"); do
			r=${m%%:*}
			[ "${NODE[$r]}" = "$node" ] && onnode="$onnode${onnode:+ }$m@${BSHARD[$r]}"
		done
		check_eq "$label: on $node, in the shard tables: ${onnode:-nothing}" "$(rows_on "$node" "guest = '$guest'")" "${onnode:--}"
	done
}

# expect_refused LABEL GUEST CODE HTTP NAMED: ANSWER is the refusal, its
# message names resource NAMED (when given); GUEST has no row anywhere
expect_refused() {
	local label=$1 guest=$2 node
	check_eq "$label: $3 $4, no booking" "$(field 1)|$(field 2)|$(field 3)" "$3|$4|"
	if [ -n "${5:-}" ]; then
		check_eq "$label: the message names $5 and says nothing was booked" \
			"$(field 5 | grep -c "of resource $5, which has .*nothing was booked\.$")" 1
	fi
	check "$label: no row for $guest (cluster-wide)" "SELECT count(*) FROM booking.bookings WHERE guest = '$guest'" 0
	for node in w1 w2; do
		check_eq "$label: ... none on $node either" "$(rows_on "$node" "guest = '$guest'")" "-"
	done
}

########################################################################
# 1. two members on different workers, listed both ways
########################################################################
echo "# 1. passes over two workers (at $SECONDS s)"
for P in P1 P2; do
	if [ $P = P1 ]; then cond="a.node = 'w1' AND b.node = 'w2'"; else cond="a.node = 'w2' AND b.node = 'w1'"; fi
	read -r lo hi <<<"$(pick "$cond")"
	[ -n "${hi:-}" ] || { fail "$P: a pair of resources, the lower on one worker, the higher on the other"; continue; }
	echo "# $P: $lo on ${NODE[$lo]} (bookings shard ${BSHARD[$lo]}), $hi on ${NODE[$hi]} (bookings shard ${BSHARD[$hi]})"

	reserve "$hi,$lo" "$P-desc" "2,3"
	expect_pass "$P [$hi, $lo] quantities [2, 3]" "$P-desc" confirmed "$hi:2" "$lo:3"
	expect_route "$P [$hi, $lo] quantities [2, 3]" "$hi:2" "$lo:3"
	check_eq "$P [$hi, $lo] quantities [2, 3]: the message counts 5 seats on 2 resources" \
		"$(field 5)" "Reserved 5 seats on 2 resources as group $(field 3)."
	expect_seats "$P after [$hi, $lo]" "$lo" "$hi"

	reserve "$hi,$lo" "$P-desc1"
	expect_pass "$P [$hi, $lo] without quantities" "$P-desc1" confirmed "$hi:1" "$lo:1"
	expect_route "$P [$hi, $lo] without quantities" "$hi:1" "$lo:1"

	reserve "$lo,$hi" "$P-asc" "1,2"
	expect_pass "$P [$lo, $hi] quantities [1, 2]" "$P-asc" confirmed "$lo:1" "$hi:2"
	expect_route "$P [$lo, $hi] quantities [1, 2]" "$lo:1" "$hi:2"

	reserve "$hi,$lo" "$P-hold" "" ", hold => '1 hour'"
	expect_pass "$P [$hi, $lo] held" "$P-hold" pending "$hi:1" "$lo:1"
	check "$P [$hi, $lo] held: both members expire at one instant, an hour away" \
		"SELECT count(DISTINCT expires_at) || ' ' || bool_and(expires_at BETWEEN now() + interval '59 minutes' AND now() + interval '61 minutes')
		   FROM booking.bookings WHERE guest = '$P-hold'" "1 true"
	expect_seats "$P after 4 passes" "$lo" "$hi"

	# the key
	key="passes-$P-key"
	reserve "$hi,$lo" "$P-key" "2,1" ", idempotency_key => '$key'"
	expect_pass "$P [$hi, $lo] keyed" "$P-key" confirmed "$hi:2" "$lo:1"
	g=$(field 3)
	check_eq "$P [$hi, $lo] keyed: not a replay" "$(field 4)" f
	check_eq "$P keyed: the key is read and written in the shard of $lo on ${NODE[$lo]} only" "$KEYS" "${KSHARD[$lo]}@${NODE[$lo]}"
	check_eq "$P keyed: ${NODE[$lo]} keeps the key in the shard of $lo" "$(keys_on "${NODE[$lo]}" "$key")" "${KSHARD[$lo]}:ok"
	check_eq "$P keyed: ${NODE[$hi]} keeps no copy of it" "$(keys_on "${NODE[$hi]}" "$key")" "-"
	reserve "$hi,$lo" "$P-key" "2,1" ", idempotency_key => '$key'"
	check_eq "$P keyed, replayed as listed: ok 201, replayed, the same booking" "$(field 1)|$(field 2)|$(field 3)|$(field 4)" "ok|201|$g|t"
	check_eq "... and sent no twin" "$ROUTE" ""
	reserve "$lo,$hi" "$P-key" "1,2" ", idempotency_key => '$key'"
	check_eq "$P keyed, replayed listed ascending ([$lo, $hi], [1, 2]): ok, replayed, the same booking" "$(field 1)|$(field 3)|$(field 4)" "ok|$g|t"
	reserve "$lo,$hi" "$P-key" "2,1" ", idempotency_key => '$key'"
	check_eq "$P the key with the quantities swapped ([$lo, $hi], [2, 1]): idempotency_mismatch 422" "$(field 1)|$(field 2)|$(field 4)" "idempotency_mismatch|422|f"
	check_eq "$P the replays booked nothing more: still on ${NODE[$lo]}" \
		"$(rows_on "${NODE[$lo]}" "guest = '$P-key'")" "$lo:1@${BSHARD[$lo]}"
	check_eq "... and on ${NODE[$hi]}" "$(rows_on "${NODE[$hi]}" "guest = '$P-key'")" "$hi:2@${BSHARD[$hi]}"
	expect_seats "$P after the key" "$lo" "$hi"

	# refusals: lo has 3 seats left, hi 2
	reserve "$hi,$lo" "$P-out-lo" "1,4"
	expect_refused "$P [$hi, $lo] [1, 4], $lo short" "$P-out-lo" sold_out 409 "$lo"
	check_eq "$P [$hi, $lo] [1, 4]: only $lo's member ran (it runs first)" "$ROUTE" "shard_seat_member($lo)@${NODE[$lo]}"
	reserve "$hi,$lo" "$P-out-hi" "3,1"
	expect_refused "$P [$hi, $lo] [3, 1], $hi short" "$P-out-hi" sold_out 409 "$hi"
	expect_route "$P [$hi, $lo] [3, 1] (refused after $lo's member was booked, and rolled back)" "$hi:3" "$lo:1"
	reserve "$hi,$lo" "$P-out-both" "5,5"
	expect_refused "$P [$hi, $lo] [5, 5], both short: the lowest named" "$P-out-both" sold_out 409 "$lo"
	expect_seats "$P after the refusals" "$lo" "$hi"
	reserve "$hi,$lo" "$P-fill" "2,1"
	expect_pass "$P [$hi, $lo] [2, 1], the last seats of $hi" "$P-fill" confirmed "$hi:2" "$lo:1"
	reserve "$hi,$lo" "$P-gone"
	expect_refused "$P [$hi, $lo], $hi sold out, $lo with 2 left" "$P-gone" sold_out 409 "$hi"
	key="passes-$P-gone"
	reserve "$hi,$lo" "$P-gone-key" "" ", idempotency_key => '$key'"
	expect_refused "$P [$hi, $lo] keyed, $hi sold out" "$P-gone-key" sold_out 409 "$hi"
	check_eq "$P the refusal's key is kept in the shard of $lo on ${NODE[$lo]}" "$(keys_on "${NODE[$lo]}" "$key")" "${KSHARD[$lo]}:sold_out"
	reserve "$lo,$hi" "$P-gone-key" "" ", idempotency_key => '$key'"
	check_eq "$P the keyed refusal replays listed ascending: sold_out, replayed" "$(field 1)|$(field 3)|$(field 4)" "sold_out||t"
	expect_seats "$P at the end" "$lo" "$hi"
	check "$P at the end: $hi is sold out, $lo has 2 seats" \
		"SELECT code || ' ' || (SELECT code FROM booking.reserve_seat($lo, '$P-probe', 3)) FROM booking.reserve_seat($hi, '$P-probe', 1)" "sold_out sold_out"
done
check_no_prepared "after the passes over two workers"

########################################################################
# 2. members in one shard, on one worker, on three resources
########################################################################
echo "# 2. one shard, one worker, three members (at $SECONDS s)"
read -r lo hi <<<"$(pick "a.rshard = b.rshard")"
if [ -n "${hi:-}" ]; then
	echo "# $lo and $hi share shard ${BSHARD[$lo]} on ${NODE[$lo]}"
	reserve "$hi,$lo" "one-shard" "2,1"
	expect_pass "one shard [$hi, $lo] [2, 1]" "one-shard" confirmed "$hi:2" "$lo:1"
	check_eq "one shard [$hi, $lo]: one call, shard_reserve_seats on ${NODE[$lo]}" "$ROUTE" "shard_reserve_seats({$hi,$lo})@${NODE[$lo]}"
	expect_seats "one shard" "$lo" "$hi"
else
	fail "two of 40 resources in one shard"
fi
read -r lo hi <<<"$(pick "a.node = b.node AND a.rshard <> b.rshard")"
echo "# $lo (shard ${BSHARD[$lo]}) and $hi (shard ${BSHARD[$hi]}) on ${NODE[$lo]}"
reserve "$hi,$lo" "one-node" "1,2"
expect_pass "one worker, two shards [$hi, $lo] [1, 2]" "one-node" confirmed "$hi:1" "$lo:2"
expect_route "one worker, two shards [$hi, $lo] [1, 2]" "$hi:1" "$lo:2"
expect_seats "one worker, two shards" "$lo" "$hi"
# three members over both workers, listed in descending order
three=$(q "(SELECT id FROM pass_res WHERE NOT used AND node = 'w1' ORDER BY id LIMIT 1)
	UNION ALL (SELECT id FROM pass_res WHERE NOT used AND node = 'w2' ORDER BY id LIMIT 2)" | sort -rn | paste -sd' ' -)
read -r a b c <<<"$three"
q "UPDATE pass_res SET used = true WHERE id IN ($a, $b, $c)" >/dev/null
echo "# three: $a (${NODE[$a]}), $b (${NODE[$b]}), $c (${NODE[$c]})"
reserve "$a,$b,$c" "three" "3,2,1"
expect_pass "three [$a, $b, $c] [3, 2, 1]" "three" confirmed "$a:3" "$b:2" "$c:1"
expect_route "three [$a, $b, $c] [3, 2, 1]" "$a:3" "$b:2" "$c:1"
check_eq "three: the message counts 6 seats on 3 resources" "$(field 5)" "Reserved 6 seats on 3 resources as group $(field 3)."
expect_seats "three" "$a" "$b" "$c"
check_invariants "after the single passes"

########################################################################
# 3. the race: passes over two workers for the last seats
########################################################################
echo "# 3. the race (at $SECONDS s)"
read -r lo1 hi1 <<<"$(pick "a.node = 'w1' AND b.node = 'w2'")"
read -r lo2 hi2 <<<"$(pick "a.node = 'w2' AND b.node = 'w1'")"
[ -n "${hi1:-}" ] && [ -n "${hi2:-}" ] || { fail "two pairs of resources for the race"; citus_done; }
# pair 1: 1 seat of lo1 (50) and 2 of hi1 (40): hi1, run second, binds: 20 passes
# pair 2: 1 seat of lo2 (30) and 2 of hi2 (90): lo2, run first, binds: 30 passes
for rc in "$lo1:50" "$hi1:40" "$lo2:30" "$hi2:90"; do
	r=${rc%%:*}
	CAP[$r]=${rc#*:}
	v=$(q "SELECT version FROM booking.resources WHERE id = $r")
	check "race: set_capacity($r, ${CAP[$r]}) answers ok" "SELECT code FROM booking.set_capacity($r, ${CAP[$r]}, $v)" ok
done
echo "# race pair 1: $lo1 (${NODE[$lo1]}, 50 seats, 1 a pass) and $hi1 (${NODE[$hi1]}, 40 seats, 2 a pass)"
echo "# race pair 2: $lo2 (${NODE[$lo2]}, 30 seats, 1 a pass) and $hi2 (${NODE[$hi2]}, 90 seats, 2 a pass)"
deadlocks() {
	local node sum=0 n
	for node in $CITUS_NODES; do
		n=$(qn "$node" "SELECT deadlocks FROM pg_stat_database WHERE datname = current_database()")
		sum=$((sum + n))
	done
	echo "$sum"
}
dl_before=$(deadlocks)
t0=$SECONDS
run_pgbench "race" -c 32 -j 2 -t 25 -D lo1="$lo1" -D hi1="$hi1" -D qlo1=1 -D qhi1=2 \
	-D lo2="$lo2" -D hi2="$hi2" -D qlo2=1 -D qhi2=2 --failures-detailed -f passes_race.pgb
echo "# race: $((SECONDS - t0)) s; $(grep -E '^number of (serialization|deadlock) failures' "$CITUS_TMP/pgbench.race.out" | sed 's/^number of //' | paste -sd, -)"
answers "race pair 1" "kind = 'race1'"
answers "race pair 2" "kind = 'race2'"
check_eq "race: no deadlock counted on any node" "$(deadlocks)" "$dl_before"
check "race: 800 attempts answered, every answer ok, sold_out or busy" \
	"SELECT count(*) || ' ' || count(*) FILTER (WHERE code NOT IN ('ok', 'sold_out', 'busy')) FROM citus_log WHERE kind LIKE 'race_'" "800 0"
check "race: exactly 20 ok passes on pair 1 and 30 on pair 2" \
	"SELECT count(*) FILTER (WHERE kind = 'race1' AND code = 'ok') || ' ' || count(*) FILTER (WHERE kind = 'race2' AND code = 'ok') FROM citus_log" "20 30"
check_true "race: passes listed descending were sold on both pairs, and some refused sold_out" \
	"SELECT count(DISTINCT kind) FILTER (WHERE code = 'ok' AND rooms[1] > rooms[2]) = 2 AND count(*) FILTER (WHERE code = 'sold_out') > 0
	   FROM citus_log WHERE kind LIKE 'race_'"
TAKEN[$lo1]=20 TAKEN[$hi1]=40 TAKEN[$lo2]=30 TAKEN[$hi2]=60
expect_seats "race" "$lo1" "$hi1" "$lo2" "$hi2"
snapshot
check "race: no resource over its capacity" \
	"SELECT count(*) FROM ($counters_sql) c WHERE c.id IN ($lo1, $hi1, $lo2, $hi2) AND (c.taken > c.capacity OR c.seats > c.capacity)" 0
check "race: per resource, taken = blocking seats = the seats of the ok answers" \
	"SELECT count(*) FROM ($counters_sql) c
	   LEFT JOIN (SELECT r, sum(n) AS s FROM citus_log, unnest(rooms, quantities) u(r, n)
	               WHERE kind LIKE 'race_' AND code = 'ok' GROUP BY r) lg ON lg.r = c.id
	  WHERE c.id IN ($lo1, $hi1, $lo2, $hi2) AND (c.taken <> c.seats OR c.seats <> coalesce(lg.s, 0))" 0
check "race: every ok pass is whole: its 2 members and quantities, confirmed, one group named by the lower member" \
	"SELECT count(*) FROM citus_log l WHERE kind LIKE 'race_' AND code = 'ok' AND (
	    (SELECT array_agg(b.resource_id || ':' || b.quantity ORDER BY b.resource_id) FROM chk_bookings b
	      WHERE b.group_id = l.booking_id AND b.guest = l.guest AND b.status = 'confirmed')
	    IS DISTINCT FROM (SELECT array_agg(r || ':' || n ORDER BY r) FROM unnest(l.rooms, l.quantities) u(r, n))
	    OR (SELECT resource_id FROM chk_bookings WHERE id = l.booking_id) IS DISTINCT FROM (SELECT min(r) FROM unnest(l.rooms) r))" 0
check "race: rows = 2 x ok passes, one group_id per ok pass, no refused attempt left a row" \
	"SELECT (SELECT count(*) || ' ' || count(DISTINCT group_id) FROM chk_bookings WHERE guest LIKE 'race-%')
	     || ' ' || (SELECT count(*) FROM chk_bookings b JOIN citus_log l ON l.guest = b.guest WHERE l.kind LIKE 'race_' AND l.code <> 'ok')" "100 50 0"
for node in w1 w2; do
	want=""
	for r in $(printf '%s\n' "$lo1" "$hi1" "$lo2" "$hi2" | sort -n); do
		[ "${NODE[$r]}" = "$node" ] && want="$want${want:+ }$r:${TAKEN[$r]}@${BSHARD[$r]}"
	done
	check_eq "race: on $node, the race's rows are its own resources' seats, in their shards: $want" \
		"$(qn "$node" "SELECT coalesce(string_agg(x, ' ' ORDER BY r), '-') FROM (SELECT resource_id AS r, resource_id || ':' || sum(quantity) || '@' || shard AS x
			FROM (${BOOKINGS_ON[$node]}) b WHERE guest LIKE 'race-%' GROUP BY resource_id, shard) s" 2>&1)" "$want"
done
check_invariants "at the end"
check_no_prepared "at the end"

citus_done
