#!/usr/bin/env bash
# relays.sh: the outbox on a cluster whose expiry worker serves the database
# (shared_preload_libraries = 'booking', booking.database), as in
# production; the test cluster of test/run.sh has no worker in its test
# databases, so there every claim numbers for itself.
#
#  1. The isolation spec isolation/specs/iso_outbox_open_claim.spec, run
#     there with pg_isolation_regress --use-existing: a relay that claims
#     inside a transaction it keeps open does not hold up another relay of
#     its consumer, which gets other events at once, also events committed
#     while the first one's transaction is still open (issue 24, item 9).
#  2. Two-phase commit with a consumer registered: PREPARE TRANSACTION
#     works (nothing notifies from the caller's transaction), and once
#     committed its event is numbered by the worker when a claim made
#     inside a larger transaction asks for it (a prepared transaction sends
#     the worker no news at its commit), and delivered exactly once.
#  3. A relay inside a larger transaction never numbers while the worker
#     numbers: it holds no sequencer lock.
#  4. The worker sends NOTIFY booking_events after it numbered, and a relay
#     woken by it finds the events delivered.
# Prints "ok - ..." / "not ok - ..." per check and ends with "N passed, N failed".
set -u
cd "$(dirname "$0")"
. ./lib.bash

R_PORT=${BOOKING_RELAYS_PORT:-$((${PGPORT:-54329} + 9))}
R_DB=booking_relays
ISO_REGRESS=$(dirname "$("$REL_PGBIN/pg_config" --pgxs)")/../test/isolation/pg_isolation_regress

rel_cluster_start relays "$R_PORT" "shared_preload_libraries = 'booking'" "booking.database = '$R_DB'" \
	"booking.expire_interval = '1h'" "max_connections = 30" "max_prepared_transactions = 2" ||
	{ fail "start a cluster with shared_preload_libraries = 'booking' on port $R_PORT"; rel_done; }
pass "a cluster with the expiry worker in database $R_DB, on port $R_PORT"
rel_db "$R_DB"

worker_up() {
	q "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND datname = '$R_DB'"
}
for ((i = 0; i < 150; i++)); do [ "$(worker_up)" = 1 ] && break; sleep 0.1; done
check "the expiry worker runs in $R_DB" \
	"SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND datname = '$R_DB'" 1

# 1. the spec
out=$REL_TMP/isolation
mkdir -p "$out"
if "$ISO_REGRESS" --use-existing --dbname="$R_DB" \
	--host="$REL_HOST" --port="$R_PORT" --user=postgres \
	--inputdir=isolation --outputdir="$out" iso_outbox_open_claim >"$out/log" 2>&1; then
	pass "iso_outbox_open_claim: a relay's open claim does not hold up another relay"
else
	fail "iso_outbox_open_claim: a relay's open claim does not hold up another relay"
	sed 's/^/#   /' "$out/log" | tail -n 5
	[ -f "$out/regression.diffs" ] && head -n 80 "$out/regression.diffs" | sed 's/^/#   /'
	# what it printed, kept for a look
	mkdir -p "${TMPDIR:-/tmp}/booking-relays-results" &&
		cp "$out"/results/*.out "${TMPDIR:-/tmp}/booking-relays-results/" 2>/dev/null &&
		echo "#   the output is in ${TMPDIR:-/tmp}/booking-relays-results"
fi

# 2. two-phase commit; the worker numbers the prepared transaction's event
#    when an in-block claim finds it unnumbered
q "SELECT booking.add_consumer('tpc')" >/dev/null
seat=$(q "SELECT booking.create_resource('two-phase seats', 10)")
got=$(rel_psql -At -d "$R_DB" -c "BEGIN" -c "SELECT code FROM booking.reserve_seat($seat, 'prepared', 1)" \
	-c "PREPARE TRANSACTION 'booking_relays_tpc'" -c "COMMIT PREPARED 'booking_relays_tpc'" 2>&1 | paste -sd' ')
if [ "$got" = "ok" ]; then pass "with a consumer registered, a booking transaction prepares and commits (two-phase)"
else fail "with a consumer registered, a booking transaction prepares and commits (two-phase): $got"; fi
check "its event is there, not numbered yet" \
	"SELECT count(*) || '|' || count(*) FILTER (WHERE seq IS NULL) FROM booking.events WHERE guest = 'prepared'" "1|1"
block_claim() {
	rel_psql -At -d "$R_DB" -c "BEGIN" \
		-c "SELECT count(*) FROM booking.claim_events('tpc', 100) WHERE guest = 'prepared'" -c "COMMIT"
}
# The claim looks for unnumbered events, wakes the worker, then takes what
# is delivered, each with a fresh snapshot: a worker quick enough numbers
# the event in between and the first claim already gets it (a CI run saw
# it).  Either way the worker numbers it and tpc gets it exactly once.
first=$(block_claim)
numbered=
for ((i = 0; i < 100; i++)); do
	[ "$(q "SELECT count(*) FROM booking.events WHERE guest = 'prepared' AND seq IS NOT NULL")" = 1 ] && { numbered=1; break; }
	sleep 0.05
done
if { [ "$first" = 0 ] || [ "$first" = 1 ]; } && [ -n "$numbered" ]; then
	pass "a claim inside a transaction wakes the worker, which numbers the prepared transaction's event (first claim got $first)"
else
	fail "a claim inside a transaction wakes the worker, which numbers the prepared transaction's event (first claim ${first:-failed}, numbered ${numbered:-no})"
fi
second=$(block_claim)
if [ "$((${first:-9} + ${second:-9}))" = 1 ]; then pass "tpc gets the event exactly once (claims got $first, then $second)"
else fail "tpc gets the event exactly once (claims got ${first:-failed}, then ${second:-failed})"; fi

# 3. an open relay transaction holds no sequencer lock: another session can
#    take the sequencer row at once
q "SELECT code FROM booking.reserve_seat($seat, 'lock check', 1)" >/dev/null
for ((i = 0; i < 100; i++)); do [ "$(q "SELECT count(*) FROM booking.events WHERE seq IS NULL")" = 0 ] && break; sleep 0.05; done
got=$(printf '%s\n' "BEGIN;" "SELECT count(*) FROM booking.claim_events('tpc', 100);" \
	"\\! $REL_PGBIN/psql -X -At -h '$REL_HOST' -p $R_PORT -U postgres -d $R_DB -c \"SELECT 1 FROM booking.event_heads WHERE resource_id = 0 FOR UPDATE NOWAIT\"" \
	"COMMIT;" | rel_psql -At -d "$R_DB" 2>&1 | paste -sd' ')
if [ "$got" = "1 1" ]; then pass "while a relay's claim transaction is open, the sequencer row is free (FOR UPDATE NOWAIT)"
else fail "while a relay's claim transaction is open, the sequencer row is free (FOR UPDATE NOWAIT): $got"; fi

# 4. NOTIFY after numbering: a listener woken by the worker finds the event
#    delivered (a claim in a transaction of its own would number it too:
#    claim inside a block, which only leases)
out=$(printf '%s\n' "LISTEN booking_events;" \
	"SELECT code FROM booking.reserve_seat($seat, 'notified', 1);" \
	"SELECT pg_sleep(1);" \
	"BEGIN;" "SELECT 'got ' || count(*) FROM booking.claim_events('tpc', 100) WHERE guest = 'notified';" "COMMIT;" |
	rel_psql -At -d "$R_DB" 2>&1)
wpid=$(q "SELECT pid FROM pg_stat_activity WHERE backend_type = 'booking expiry worker' AND datname = '$R_DB'")
if echo "$out" | grep -q "\"booking_events\" received from server process with PID $wpid" && echo "$out" | grep -q '^got 1$'; then
	pass "the worker notifies after it numbered, and the woken relay finds the event delivered"
else
	fail "the worker notifies after it numbered, and the woken relay finds the event delivered"
	echo "$out" | sed 's/^/#   /'
fi
check_invariants "after the relays"
rel_done
