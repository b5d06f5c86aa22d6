#!/usr/bin/env bash
# idempotency_barrier.sh: 32 separate connections released at the same
# instant call reserve_seat with the same idempotency key.  A controller
# session holds an advisory lock; each client first waits for a shared lock
# on it, then calls.  Exactly one booking is made, all 32 answers name it,
# and exactly 31 of them are replays.
set -u
cd "$(dirname "$0")"
. ./lib.bash

CLIENTS=32
BARRIER=42
KEY=3f1d2c9e-5b7a-4c1e-9d2f-barrier-0001
stress_db booking_stress_idem_barrier

res=$(sql "SELECT booking.create_resource('barrier session', 100)") || exit 1

pids=()
controller=
stop_all() {
	local p
	[ -n "$controller" ] && kill "$controller" 2>/dev/null
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
	stress_cleanup
}
trap stop_all EXIT

# the controller holds the barrier inside a transaction; cancelling its sleep
# ends the transaction and releases every waiter at once
stress_psql -d "$STRESS_DB" -v ON_ERROR_STOP=0 \
	-c "SET application_name = 'barrier controller'" \
	-c "SELECT pg_advisory_xact_lock($BARRIER), pg_sleep(60)" >/dev/null 2>&1 &
controller=$!
for _ in $(seq 1 100); do
	[ "$(sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = $BARRIER AND granted AND mode = 'ExclusiveLock'")" = 1 ] && break
	sleep 0.1
done

for i in $(seq 1 $CLIENTS); do
	stress_psql -At -d "$STRESS_DB" \
		-c "SELECT pg_advisory_lock_shared($BARRIER)" \
		-c "SELECT ok, code, booking_id, replayed FROM booking.reserve_seat($res, 'same guest', 2, idempotency_key => '$KEY')" \
		>"$STRESS_TMP/client.$i" 2>&1 &
	pids+=($!)
done

waiting=0
for _ in $(seq 1 300); do
	waiting=$(sql "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objid = $BARRIER AND NOT granted")
	[ "$waiting" = "$CLIENTS" ] && break
	sleep 0.1
done
if [ "$waiting" = "$CLIENTS" ]; then pass "$CLIENTS clients wait at the barrier"
else fail "$CLIENTS clients wait at the barrier (got $waiting)"; fi
check "nothing was booked before the release" "SELECT count(*) FROM booking.bookings" 0

# release
sql "SELECT pg_cancel_backend(pid) FROM pg_stat_activity WHERE application_name = 'barrier controller' AND datname = current_database()" >/dev/null
wait "$controller" 2>/dev/null
controller=
failed_clients=0
for p in "${pids[@]}"; do wait "$p" || failed_clients=$((failed_clients + 1)); done
pids=()
if [ "$failed_clients" = 0 ]; then pass "all $CLIENTS clients finished without error"
else fail "all $CLIENTS clients finished without error ($failed_clients failed)"; fi

# each client printed the (empty) lock result, then ok|code|booking_id|replayed
cat "$STRESS_TMP"/client.* | grep '|' >"$STRESS_TMP/answers"
echo "# answers: $(sort "$STRESS_TMP/answers" | uniq -c | tr -s ' ' | paste -sd ';' -)"
booking=$(sql "SELECT id FROM booking.bookings WHERE resource_id = $res")
check "exactly one booking row" "SELECT count(*) FROM booking.bookings" 1
n=$(grep -c "^t|ok|$booking|" "$STRESS_TMP/answers")
if [ "$n" = "$CLIENTS" ]; then pass "all $CLIENTS answers are ok and name booking $booking"
else fail "all $CLIENTS answers are ok and name booking $booking (got $n of $(wc -l <"$STRESS_TMP/answers"))"; fi
n=$(grep -c '|t$' "$STRESS_TMP/answers")
if [ "$n" = $((CLIENTS - 1)) ]; then pass "exactly $((CLIENTS - 1)) answers say replayed"
else fail "exactly $((CLIENTS - 1)) answers say replayed (got $n)"; fi
n=$(grep -c '|f$' "$STRESS_TMP/answers")
if [ "$n" = 1 ]; then pass "exactly one answer did the work"
else fail "exactly one answer did the work (got $n)"; fi
check "the booking holds 2 seats and the counter says so" \
	"SELECT b.quantity || '/' || r.taken FROM booking.bookings b JOIN booking.resources r ON r.id = b.resource_id" "2/2"
check "one stored key" "SELECT count(*) FROM booking.idempotency_keys WHERE key = '$KEY'" 1

stress_done
