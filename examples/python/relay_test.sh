#!/usr/bin/env bash
# examples/python/relay_test.sh: the outbox relay (relay.py) sends each
# confirmation exactly once although it is killed twice. Bookings are made
# (held then confirmed, confirmed at once, some cancelled); a first relay dies
# right after its 17th send, before the ack (CRASH_AFTER_SEND=17); a second
# one is killed with SIGKILL at a random moment while more bookings come in; a
# third one drains the rest and is woken by the expiry worker's NOTIFY for one
# last booking (on a cluster of its own that preloads booking). Then
# SENT_FILE must hold exactly one line per confirmation event (no event id
# twice, none missing) and every delivery of the consumer must be acked.
# Leases are 2 s, so redeliveries come quickly. Run by examples/python/test.sh;
# alone, it starts its own cluster (see examples/lib.sh).
set -u
cd "$(dirname "$0")"
. ../lib.sh

CONSUMER=mailer
LEASE=2
FIRST=160 # bookings made before the first relay starts
MORE=100  # bookings made while the second relay runs

/usr/bin/python3 -c 'import psycopg' 2>/dev/null ||
	{ echo "not ok - python3-psycopg is missing (examples/python/test.sh installs it)"; exit 1; }
start=$SECONDS
# relays are woken by the expiry worker's NOTIFY, and only by it (nothing
# notifies from a booking transaction): a cluster of its own, as in
# production, with the worker in this database; no expiry passes, which
# would race the test's holds
EXAMPLE_CLUSTER_CONF="shared_preload_libraries = 'booking'
booking.database = 'booking_example_relay'
booking.expire_interval = '1h'
max_connections = 50" \
	BOOKING_EXAMPLE_PORT=${BOOKING_RELAY_EXAMPLE_PORT:-$((${BOOKING_TEST_PORT:-54329} + 5))} \
	example_begin booking_example_relay
ROLE=${EXAMPLE_DB}_app
SENT=$EXAMPLE_TMP/sent.jsonl
PRODUCER=
trap '[ -n "$PRODUCER" ] && kill "$PRODUCER" 2>/dev/null; example_cleanup' EXIT

failures=0
ok() { echo "ok - $*"; }
not_ok() {
	echo "not ok - $*"
	failures=$((failures + 1))
}
check() { # check DESCRIPTION GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: got $2, want $3"; fi
}
sql() { example_psql -d "$EXAMPLE_DB" -At -c "$1"; }
show_stderr() {
	[ -s "$1" ] && sed 's/^/#   /' "$1" | tail -n 20
}

# the relay's role: a relay's grants (booking.grant_relay), none of the
# web grants; it also registers its consumer here, an admin's call
example_psql -d "$EXAMPLE_DB" \
	-c "REVOKE ALL ON ALL FUNCTIONS IN SCHEMA booking FROM $ROLE" \
	-c "REVOKE ALL ON ALL TABLES IN SCHEMA booking FROM $ROLE" \
	-c "SELECT booking.grant_relay('$ROLE')" \
	-c "GRANT EXECUTE ON FUNCTION booking.add_consumer(text) TO $ROLE" >/dev/null ||
	{ echo "not ok - the relay's grants"; exit 1; }
RESOURCE=$(sql "SELECT booking.create_resource('concert', 1000)") || { echo "not ok - create_resource"; exit 1; }
# events are written while a consumer is registered: register it before
# the sales, as a deployment would (the relay finds it there)
check "the consumer is registered before the sales" "$(sql "SELECT booking.add_consumer('$CONSUMER')")" t

# bookings_sql FROM TO: one booking per number, each call its own transaction;
# of every four bookings three are confirmed (one through a hold), and one of
# those and the fourth, a hold, are cancelled
bookings_sql() {
	local i g
	for i in $(seq "$1" "$2"); do
		g="guest-$i@example.com"
		case $((i % 4)) in
		0) echo "SELECT booking_id AS b FROM booking.reserve_seat($RESOURCE, '$g', hold => '10 minutes') \gset"
		   echo "SELECT code FROM booking.confirm(:b);" ;;
		1) echo "SELECT code FROM booking.reserve_seat($RESOURCE, '$g');" ;;
		2) echo "SELECT booking_id AS b FROM booking.reserve_seat($RESOURCE, '$g') \gset"
		   echo "SELECT code FROM booking.cancel(:b);" ;;
		3) echo "SELECT booking_id AS b FROM booking.reserve_seat($RESOURCE, '$g', hold => '10 minutes') \gset"
		   echo "SELECT code FROM booking.cancel(:b);" ;;
		esac
		[ -n "${3:-}" ] && echo "SELECT pg_sleep($3);"
	done
}

# relay NAME [VAR=VALUE...]: starts relay.py in the background as the relay role
relay() {
	local name=$1
	shift
	env DATABASE_URL= PGUSER="$ROLE" PGDATABASE="$EXAMPLE_DB" CONSUMER=$CONSUMER \
		SENT_FILE="$SENT" LEASE_SECONDS=$LEASE BATCH=50 "$@" \
		/usr/bin/python3 relay.py 2>"$EXAMPLE_TMP/$name.err" &
	EXAMPLE_PID=$! # example_cleanup stops it
}

sent_lines() { wc -l <"$SENT" 2>/dev/null || echo 0; }

bookings_sql 1 $FIRST | example_psql -d "$EXAMPLE_DB" >/dev/null ||
	{ echo "not ok - $FIRST bookings"; exit 1; }
ok "$FIRST bookings"

# 1. dies right after its 17th send, before acknowledging the batch
relay crash CRASH_AFTER_SEND=17
wait "$EXAMPLE_PID" 2>/dev/null
rc=$?
EXAMPLE_PID=
check "the first relay killed itself after its 17th send" "$rc $(sent_lines)" "1 17"
check "the relay's consumer is there" "$(sql "SELECT count(*) FROM booking.consumers WHERE name = '$CONSUMER'")" 1

# 2. SIGKILL at a random moment, while bookings keep coming in (the worker
# numbers and notifies after their commits); the first relay's lease lapses
# meanwhile
bookings_sql $((FIRST + 1)) $((FIRST + MORE)) 0.02 | example_psql -d "$EXAMPLE_DB" >/dev/null &
PRODUCER=$!
relay killed
# once it is at work (it has sent something), at a random moment
for _ in $(seq 1 200); do
	[ "$(sent_lines)" -gt 17 ] && break
	sleep 0.1
done
delay=$((RANDOM % 1500))
sleep "$((delay / 1000)).$(printf %03d $((delay % 1000)))"
kill -9 "$EXAMPLE_PID"
wait "$EXAMPLE_PID" 2>/dev/null
rc=$?
EXAMPLE_PID=
check "the second relay was killed with SIGKILL ${delay} ms after its first send" "$rc" 137
echo "# $(sent_lines) lines sent so far"
wait "$PRODUCER" || not_ok "$MORE more bookings"
PRODUCER=

# 3. drains the rest; a long poll interval, so that only NOTIFY wakes it up
# for the last booking. Every lease of the killed relay has lapsed by then.
sleep $((LEASE + 1))
relay last POLL_SECONDS=60
backlog=
for _ in $(seq 1 120); do
	backlog=$(sql "SELECT (SELECT count(*) FROM booking.deliveries WHERE consumer = '$CONSUMER' AND acked_at IS NULL)
	                    + (SELECT value FROM booking.health() WHERE metric = 'events_unsequenced')")
	[ "$backlog" = 0 ] && break
	sleep 0.25
done
check "the backlog is drained (unacked deliveries + unnumbered events)" "$backlog" 0
before=$(sent_lines)
sql "SELECT code FROM booking.reserve_seat($RESOURCE, 'last@example.com')" >/dev/null
for _ in $(seq 1 50); do
	[ "$(sent_lines)" -gt "$before" ] && break
	sleep 0.1
done
check "the worker's NOTIFY woke the idle relay for a new booking" "$(sent_lines)" $((before + 1))
kill -TERM "$EXAMPLE_PID"
wait "$EXAMPLE_PID" 2>/dev/null
rc=$?
EXAMPLE_PID=
check "the last relay stopped on SIGTERM" "$rc" 0

# exactly once: the sent event ids are the confirmation events, each once
want=$(sql "SELECT count(*) FROM booking.events
             WHERE kind = 'confirmed' OR (kind = 'reserved' AND payload->>'status_after' = 'confirmed')")
check "confirmation events in the database" "$want" $(((FIRST + MORE) * 3 / 4 + 1))
sed -n 's/^{"event_id": \([0-9]*\),.*/\1/p' "$SENT" | sort >"$EXAMPLE_TMP/sent.ids"
check "one line per confirmation event in SENT_FILE" "$(sent_lines)" "$want"
check "no event id sent twice" "$(sort -u "$EXAMPLE_TMP/sent.ids" | wc -l)" "$(sent_lines)"
sort -u -o "$EXAMPLE_TMP/sent.ids" "$EXAMPLE_TMP/sent.ids"
sql "SELECT id FROM booking.events
      WHERE kind = 'confirmed' OR (kind = 'reserved' AND payload->>'status_after' = 'confirmed')" |
	sort >"$EXAMPLE_TMP/want.ids"
check "the sent event ids are the confirmation events' ids" \
	"$(comm -3 "$EXAMPLE_TMP/sent.ids" "$EXAMPLE_TMP/want.ids" | wc -l)" 0
check "every event has a delivery to $CONSUMER, and every delivery is acked" \
	"$(sql "SELECT count(*), count(acked_at) FROM booking.deliveries WHERE consumer = '$CONSUMER'")" \
	"$(sql "SELECT count(*) FROM booking.events")|$(sql "SELECT count(*) FROM booking.events")"
redelivered=$(sql "SELECT count(*) FROM booking.deliveries WHERE consumer = '$CONSUMER' AND attempts > 1")
if [ "$redelivered" -ge 17 ]; then
	ok "$redelivered events were delivered more than once"
else
	not_ok "redeliveries: $redelivered, want at least the 17 sent before the crash"
fi

if [ "$failures" -gt 0 ]; then
	for f in crash killed last; do
		echo "# relay $f stderr:"
		show_stderr "$EXAMPLE_TMP/$f.err"
	done
	exit 1
fi
echo "# relay test: $((SECONDS - start)) s"
