#!/usr/bin/env bash
# holds_keys.sh (suite item 5): holds and idempotency keys through the
# coordinator, on resources of both workers.
#  1. Lapsed holds never block: seats held for 4 s sell again once the holds
#     lapsed, and a room held for 4 s books again, without hold_expire; a
#     lapsed hold answers hold_expired to confirm and extend_hold.
#  2. hold_expire() on the coordinator reaches every shard: it moves the
#     lapsed holds of both workers to expired and frees their seats.
#  3. 200 holds of 1-2 s on two resources (one per worker), 4 pgbench
#     sessions running hold_expire and 4 confirming at random: every booking
#     ends confirmed or expired, every answer matches the final state, the
#     counters equal the bookings.
#  4. Idempotent replay on each worker, refusals replayed too, a key reused
#     for another request of the same shard answers idempotency_mismatch
#     (keys live in the shard of their call: across shards it is not seen).
#  5. A second caller with the same key waits for the first: it replays the
#     first's result once that commits, does the work itself when the first
#     rolls back, and answers busy (stored nowhere) when its lock_timeout
#     runs out first.  32 callers released at once with one key: one
#     booking, 31 replays.
#  6. A backlog of lapsed holds on one shard does not hold back the others:
#     9 lapsed holds on a resource of each worker, hold_expire(3) twice in
#     one session (as the worker calls it): each resource lost 3, where a
#     pass that always started at the first shard took 6 from one and none
#     from the other.
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

citus_db booking_citus_holds_keys

# call SQL: one call as a statement of its own; prints its result row
call() {
	q "$1"
}

seat1=$(resource_on w1 'held seats w1' 5) && seat2=$(resource_on w2 'held seats w2' 5) &&
	room1=$(resource_on w1 'held room w1') && room2=$(resource_on w2 'held room w2') ||
	{ fail "a seat resource and a room on each worker"; citus_done; }
echo "# seats $seat1 (w1), $seat2 (w2); rooms $room1 (w1), $room2 (w2)"
during="tstzrange('2030-03-01 14:00+00', '2030-03-03 10:00+00')"

########################################################################
# 1. lapsed holds never block
########################################################################
for s in $seat1 $seat2; do
	got=$(for i in 1 2 3 4 5; do call "SELECT code FROM booking.reserve_seat($s, 'holder $i', 1, hold => '4 seconds')"; done | sort | uniq -c | sed 's/^ *//')
	check_eq "resource $s: 5 holds of 4 s answer ok" "$got" "5 ok"
	check "resource $s: held seats are taken (sold_out)" "SELECT code FROM booking.reserve_seat($s, 'early', 1)" sold_out
done
for r in $room1 $room2; do
	check "room $r: a hold of 4 s answers ok" "SELECT code FROM booking.reserve_stay($r, 'room holder', $during, hold => '4 seconds')" ok
	check "room $r: the held range is unavailable" "SELECT code FROM booking.reserve_stay($r, 'early', $during)" unavailable
done
# the checks above must run before the first hold lapses: 4 s leave room on
# a loaded machine (2 s did not, with another cluster busy beside it)
sleep 4.3
for s in $seat1 $seat2; do
	got=$(for i in 1 2 3 4 5; do call "SELECT code FROM booking.reserve_seat($s, 'late $i', 1)"; done | sort | uniq -c | sed 's/^ *//')
	check_eq "resource $s: once the holds lapsed, 5 seats sell again with no hold_expire" "$got" "5 ok"
	check "resource $s: and then it is sold out" "SELECT code FROM booking.reserve_seat($s, 'too late', 1)" sold_out
done
for r in $room1 $room2; do
	check "room $r: once the hold lapsed, the range books again with no hold_expire" \
		"SELECT code FROM booking.reserve_stay($r, 'late guest', $during)" ok
	held=$(q "SELECT id FROM booking.bookings WHERE resource_id = $r AND guest = 'room holder'")
	check "room $r: confirm of the lapsed hold answers hold_expired (410)" \
		"SELECT code || ' ' || http_status FROM booking.confirm($held)" "hold_expired 410"
	check "room $r: extend_hold of the lapsed hold answers hold_expired" \
		"SELECT code FROM booking.extend_hold($held, '1 hour')" hold_expired
done
check_invariants "after lapsed holds"

########################################################################
# 2. hold_expire on the coordinator reaches every shard
########################################################################
for s in $seat1 $seat2; do
	# the version is read first, as the docs do: inside a query over a
	# distributed table a call is pushed down to the shards
	v=$(q "SELECT version FROM booking.resources WHERE id = $s")
	check "resource $s: set_capacity to 8 answers ok" "SELECT code FROM booking.set_capacity($s, 8, $v)" ok
	got=$(for i in 1 2 3; do call "SELECT code FROM booking.reserve_seat($s, 'short $i', 1, hold => '1 second')"; done | sort | uniq -c | sed 's/^ *//')
	check_eq "resource $s: 3 more holds of 1 s" "$got" "3 ok"
done
for r in $room1 $room2; do
	check "room $r: another hold of 1 s" \
		"SELECT code FROM booking.reserve_stay($r, 'short holder', tstzrange('2030-04-01 14:00+00', '2030-04-02 10:00+00'), hold => '1 second')" ok
done
sleep 1.3
check "the lapsed holds are still pending before hold_expire (8, on both workers)" \
	"SELECT count(*) FROM booking.bookings WHERE status = 'pending' AND guest LIKE 'short%'" 8
check "hold_expire() on the coordinator moves all 8 lapsed holds" "SELECT booking.hold_expire()" 8
check "no lapsed hold is left pending on any shard" \
	"SELECT count(*) FROM booking.bookings WHERE status = 'pending' AND expires_at <= clock_timestamp()" 0
check "the 8 holds are expired" "SELECT count(*) FROM booking.bookings WHERE status = 'expired' AND guest LIKE 'short%'" 8
for s in $seat1 $seat2; do
	check "resource $s: the expired holds' seats are free again" "SELECT booking.seats_left($s)" 3
done
check_invariants "after hold_expire"

########################################################################
# 3. expiry and confirms racing
########################################################################
HOLDS=200
big1=$(resource_on w1 'big held session w1' 1000) && big2=$(resource_on w2 'big held session w2' 1000) ||
	{ fail "two big resources"; citus_done; }
# 200 holds of 1..3 seats lasting 1.00 s to 1.99 s, each call its own statement
# (the answers go to the log for the confirming clients)
gexec "SELECT format('SELECT code, booking_id, %s FROM booking.reserve_seat(%s, %L, %s, hold => %L)',
		r, r, 'holder-' || i, 1 + i % 3, make_interval(secs => 1 + (i % 100) / 100.0))
	FROM generate_series(1, $HOLDS) i, LATERAL (SELECT CASE WHEN i % 2 = 0 THEN $big1 ELSE $big2 END AS r) x" |
	awk -F'|' -v q="'" '$1 == "ok" { printf "INSERT INTO citus_log (kind, code, booking_id, resource_id) VALUES (%shold%s, %sok%s, %s, %s);\n", q, q, q, q, $2, $3 }' |
	npsql coord -d "$CITUS_DB" >/dev/null
made=$(q "SELECT count(*) FROM citus_log WHERE kind = 'hold'")
check_eq "$HOLDS holds made on both workers" "$made" "$HOLDS"
citus_pgbench -c 4 -j 1 -T 4 -R 100 -f hold_expire.pgb >"$CITUS_TMP/expire.out" 2>&1 &
expire_pid=$!
citus_pgbench -c 4 -j 1 -T 4 -R 60 -f hold_confirm.pgb >"$CITUS_TMP/confirm.out" 2>&1 &
confirm_pid=$!
wait $expire_pid
expire_rc=$?
wait $confirm_pid
confirm_rc=$?
check_pgbench "hold_expire x4" "$CITUS_TMP/expire.out" $expire_rc
check_pgbench "confirm x4" "$CITUS_TMP/confirm.out" $confirm_rc
check_true "every hold's expiry is in the past" \
	"SELECT max(expires_at) < clock_timestamp() FROM booking.bookings WHERE resource_id IN ($big1, $big2) AND status <> 'confirmed'"
q "INSERT INTO citus_log (kind, code, quantity) VALUES ('final', 'ok', (SELECT booking.hold_expire()))" >/dev/null 2>&1 ||
	q "SELECT booking.hold_expire()" >/dev/null
answers confirm "kind = 'confirm'"
snapshot
echo "# final states: $(q "SELECT string_agg(status || '=' || n, ', ' ORDER BY status) FROM (SELECT status, count(*) n FROM chk_bookings WHERE resource_id IN ($big1, $big2) GROUP BY status) s")"
check "$HOLDS bookings, each confirmed or expired" \
	"SELECT count(*) FILTER (WHERE status IN ('confirmed', 'expired')) || '/' || count(*) FROM chk_bookings WHERE resource_id IN ($big1, $big2)" \
	"$HOLDS/$HOLDS"
check_true "some holds were confirmed and some expired" \
	"SELECT count(*) FILTER (WHERE status = 'confirmed') > 0 AND count(*) FILTER (WHERE status = 'expired') > 0 FROM chk_bookings WHERE resource_id IN ($big1, $big2)"
check "every confirm answer is ok, hold_expired or busy" \
	"SELECT count(*) FROM citus_log WHERE kind = 'confirm' AND code NOT IN ('ok', 'hold_expired', 'busy')" 0
check "every booking confirmed with ok is confirmed, every one answered hold_expired is expired" \
	"SELECT count(*) FROM citus_log l JOIN chk_bookings b ON b.id = l.booking_id
	  WHERE l.kind = 'confirm' AND ((l.code = 'ok' AND b.status <> 'confirmed') OR (l.code = 'hold_expired' AND b.status <> 'expired'))" 0
check "every confirmed booking had an ok confirm" \
	"SELECT count(*) FROM chk_bookings b WHERE b.resource_id IN ($big1, $big2) AND b.status = 'confirmed'
	   AND NOT EXISTS (SELECT 1 FROM citus_log l WHERE l.kind = 'confirm' AND l.code = 'ok' AND l.booking_id = b.id)" 0
check_invariants "after expiry and confirms"

########################################################################
# 4. idempotent replay
########################################################################
kseat1=$(resource_on w1 'keyed seats w1' 10) && kseat2=$(resource_on w2 'keyed seats w2' 10) ||
	{ fail "two keyed resources"; citus_done; }
for s in $kseat1 $kseat2; do
	first=$(call "SELECT ok, code, booking_id, replayed FROM booking.reserve_seat($s, 'kim', 2, idempotency_key => 'key-$s')")
	id=$(echo "$first" | cut -d'|' -f3)
	check_eq "resource $s ($(worker_of "$s")): a keyed call books" "$(echo "$first" | cut -d'|' -f1,2,4)" "t|ok|f"
	check "resource $s: the same call again replays it (same booking, replayed)" \
		"SELECT ok, code, booking_id, http_status, replayed FROM booking.reserve_seat($s, 'kim', 2, idempotency_key => 'key-$s')" \
		"t|ok|$id|201|t"
	check "resource $s: one booking for the key" "SELECT count(*) || ' ' || sum(quantity) FROM booking.bookings WHERE resource_id = $s" "1 2"
	check "resource $s: the key with another quantity answers idempotency_mismatch (422)" \
		"SELECT code || ' ' || http_status FROM booking.reserve_seat($s, 'kim', 3, idempotency_key => 'key-$s')" \
		"idempotency_mismatch 422"
	check "resource $s: a sold_out answer is stored and replayed" \
		"SELECT code, replayed FROM booking.reserve_seat($s, 'lou', 50, idempotency_key => 'soldout-$s')" "sold_out|f"
	check "resource $s: ... replayed" \
		"SELECT code, replayed FROM booking.reserve_seat($s, 'lou', 50, idempotency_key => 'soldout-$s')" "sold_out|t"
	check "resource $s: a keyed confirm replays" \
		"SELECT code, replayed FROM booking.confirm($id, idempotency_key => 'confirm-$s')" "ok|f"
	check "resource $s: ... replayed" \
		"SELECT code, replayed FROM booking.confirm($id, idempotency_key => 'confirm-$s')" "ok|t"
done
# a key reused for another resource of the same shard (the units of a pool
# live in its shard): a different request, as on one server
kpool=$(q "SELECT booking.create_resource('keyed pool', 0)")
unit1=$(q "SELECT booking.create_resource('keyed unit 1', 10, $kpool)")
unit2=$(q "SELECT booking.create_resource('keyed unit 2', 10, $kpool)")
check "a keyed call on a unit of a pool books" \
	"SELECT code FROM booking.reserve_seat($unit1, 'kim', 2, idempotency_key => 'unit-key')" ok
check "the key reused for another unit (the same shard) answers idempotency_mismatch" \
	"SELECT code FROM booking.reserve_seat($unit2, 'kim', 2, idempotency_key => 'unit-key')" idempotency_mismatch
check "... and books nothing there" "SELECT count(*) FROM booking.bookings WHERE resource_id = $unit2" 0
# keys live in the shard of their call (docs/scale-out.md): reused for a
# resource of another shard, a key is not seen; shown, not checked
echo "# documented limit: the key of a call on w1 reused on w2 answers $(q "SELECT code FROM booking.reserve_seat($kseat2, 'kim', 2, idempotency_key => 'key-$kseat1')")"
first=$(call "SELECT code, booking_id, replayed FROM booking.reserve_stay($room2, 'ned', tstzrange('2030-05-01 14:00+00', '2030-05-02 10:00+00'), idempotency_key => 'stay-key')")
check_eq "a keyed reserve_stay on w2 books" "$(echo "$first" | cut -d'|' -f1,3)" "ok|f"
first=$(echo "$first" | cut -d'|' -f2)
check "... and replays" \
	"SELECT code, booking_id, replayed FROM booking.reserve_stay($room2, 'ned', tstzrange('2030-05-01 14:00+00', '2030-05-02 10:00+00'), idempotency_key => 'stay-key')" \
	"ok|$first|t"

########################################################################
# 5. a second caller with the same key waits for the first
########################################################################
# first_caller NAME KEY END: session 1 makes the keyed call in a
# transaction, keeps it open 5 s, then ends it with END (COMMIT or ROLLBACK)
first_caller() {
	npsql coord -At -d "$CITUS_DB" -c "SET application_name = 'first $1'" -c "BEGIN" \
		-c "SELECT ok, code, booking_id, replayed FROM booking.reserve_seat($kseat1, 'guest $1', 1, idempotency_key => '$2')" \
		-c "SELECT pg_sleep(5)" -c "$3" >"$CITUS_TMP/first.$1" 2>&1 &
	first_pid=$!
	for _ in $(seq 1 100); do
		[ "$(q "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'first $1' AND query = 'SELECT pg_sleep(5)'")" = 1 ] && return 0
		sleep 0.05
	done
	return 1
}
# in_lock_wait: how many backends of the script's database wait for a
# heavyweight lock, on any node
in_lock_wait() {
	local node sum=0 n
	for node in $CITUS_NODES; do
		rehearsal && [ "$node" != coord ] && continue
		n=$(qn "$node" "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'")
		sum=$((sum + n))
	done
	echo "$sum"
}

for ending in COMMIT ROLLBACK; do
	key="wait-$ending"
	first_caller "$ending" "$key" "$ending" || fail "$ending: the first caller is in its transaction"
	npsql coord -At -d "$CITUS_DB" \
		-c "SELECT ok, code, booking_id, replayed FROM booking.reserve_seat($kseat1, 'guest $ending', 1, idempotency_key => '$key', lock_timeout => '30s')" \
		>"$CITUS_TMP/second.$ending" 2>&1 &
	second_pid=$!
	sleep 1
	if kill -0 "$second_pid" 2>/dev/null && [ "$(in_lock_wait)" -ge 1 ]; then
		pass "$ending: the second caller waits (a lock wait) while the first is in flight"
	else
		fail "$ending: the second caller waits (a lock wait) while the first is in flight"
		cat "$CITUS_TMP/second.$ending" | sed 's/^/#   /'
	fi
	wait "$first_pid"
	wait "$second_pid"
	first=$(grep '|' "$CITUS_TMP/first.$ending")
	second=$(grep '|' "$CITUS_TMP/second.$ending" || cat "$CITUS_TMP/second.$ending")
	fid=$(echo "$first" | cut -d'|' -f3)
	check_eq "$ending: the first caller booked" "$(echo "$first" | cut -d'|' -f1,2,4)" "t|ok|f"
	if [ "$ending" = COMMIT ]; then
		check_eq "COMMIT: the second caller replays the first's booking once it committed" "$second" "t|ok|$fid|t"
	else
		sid=$(echo "$second" | cut -d'|' -f3)
		check_eq "ROLLBACK: the second caller does the work itself once the first rolled back" \
			"$(echo "$second" | cut -d'|' -f1,2,4)" "t|ok|f"
		check_eq "ROLLBACK: ... a new booking" "$([ -n "$sid" ] && [ "$sid" != "$fid" ] && echo new)" new
	fi
	check "$ending: exactly one booking for the key" \
		"SELECT count(*) FROM booking.bookings WHERE guest = 'guest $ending'" 1
done

# bounded by lock_timeout: busy, and busy is not stored under the key
first_caller busy wait-busy COMMIT || fail "busy: the first caller is in its transaction"
got=$(call "SELECT code || ' ' || http_status FROM booking.reserve_seat($kseat1, 'guest busy', 1, idempotency_key => 'wait-busy', lock_timeout => '300ms')")
check_eq "busy: a second caller with lock_timeout 300ms answers busy (503)" "$got" "busy 503"
wait "$first_pid"
fid=$(grep '|' "$CITUS_TMP/first.busy" | cut -d'|' -f3)
check "busy: busy was not stored: a third caller replays the first's booking" \
	"SELECT code, booking_id, replayed FROM booking.reserve_seat($kseat1, 'guest busy', 1, idempotency_key => 'wait-busy')" \
	"ok|$fid|t"

# 32 callers released at the same instant: a controller session holds an
# advisory lock on the coordinator; each caller first waits for it shared
CLIENTS=32
BARRIER=42
KEY=3f1d2c9e-5b7a-4c1e-9d2f-barrier-0001
npsql coord -d "$CITUS_DB" -v ON_ERROR_STOP=0 -c "SET application_name = 'barrier controller'" \
	-c "SELECT pg_advisory_xact_lock($BARRIER), pg_sleep(60)" >/dev/null 2>&1 &
controller=$!
CITUS_BG_PIDS="$CITUS_BG_PIDS $controller"
for _ in $(seq 1 100); do
	[ "$(q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = $BARRIER AND granted")" = 1 ] && break
	sleep 0.1
done
pids=()
for i in $(seq 1 $CLIENTS); do
	npsql coord -At -d "$CITUS_DB" -c "SELECT pg_advisory_lock_shared($BARRIER)" \
		-c "SELECT ok, code, booking_id, replayed FROM booking.reserve_seat($kseat2, 'same guest', 2, idempotency_key => '$KEY', lock_timeout => '30s')" \
		>"$CITUS_TMP/client.$i" 2>&1 &
	pids+=($!)
done
for _ in $(seq 1 300); do
	[ "$(q "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = $BARRIER AND NOT granted")" = $CLIENTS ] && break
	sleep 0.1
done
check "barrier: $CLIENTS callers wait at the barrier" \
	"SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = $BARRIER AND NOT granted" $CLIENTS
q "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'barrier controller' AND datname = current_database()" >/dev/null
wait "$controller" 2>/dev/null
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
check_eq "barrier: all $CLIENTS callers finished without error" "$bad" 0
cat "$CITUS_TMP"/client.* | grep '|' >"$CITUS_TMP/answers"
echo "# barrier answers: $(sort "$CITUS_TMP/answers" | uniq -c | tr -s ' ' | paste -sd ';' -)"
booking=$(q "SELECT id FROM booking.bookings WHERE resource_id = $kseat2 AND guest = 'same guest'")
check "barrier: exactly one booking" "SELECT count(*) FROM booking.bookings WHERE guest = 'same guest'" 1
check_eq "barrier: all $CLIENTS answers are ok and name it" "$(grep -c "^t|ok|$booking|" "$CITUS_TMP/answers")" $CLIENTS
check_eq "barrier: exactly $((CLIENTS - 1)) answers say replayed" "$(grep -c '|t$' "$CITUS_TMP/answers")" $((CLIENTS - 1))
check_invariants "after the keys"

########################################################################
# 6. a backlog on one shard does not hold back the others
########################################################################
lag1=$(resource_on w1 'backlog w1' 20) && lag2=$(resource_on w2 'backlog w2' 20) ||
	{ fail "a backlog resource on each worker"; citus_done; }
q "SELECT booking.hold_expire()" >/dev/null
for s in $lag1 $lag2; do
	got=$(gexec "SELECT format('SELECT code FROM booking.reserve_seat(%s, %L, 1, hold => %L)', $s, 'lag ' || i, '1 second')
		FROM generate_series(1, 9) i" | sort | uniq -c | sed 's/^ *//')
	check_eq "resource $s: 9 holds of 1 s" "$got" "9 ok"
done
sleep 1.3
got=$(npsql coord -At -d "$CITUS_DB" -c "SELECT booking.hold_expire(3)" -c "SELECT booking.hold_expire(3)" | paste -sd ' ' -)
check_eq "two passes of 3 in one session expire 3 each" "$got" "3 3"
check "each resource lost 3 of its 9 lapsed holds, the one on the later shard too" \
	"SELECT string_agg(n::text, ' ' ORDER BY resource_id) FROM (SELECT resource_id, count(*) n FROM booking.bookings
	   WHERE resource_id IN ($lag1, $lag2) AND status = 'expired' GROUP BY resource_id) s" "3 3"
check "hold_expire() expires the 12 left" "SELECT booking.hold_expire()" 12
check_invariants "at the end"

citus_done
