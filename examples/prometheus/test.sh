#!/usr/bin/env bash
# examples/prometheus/test.sh: Debian's prometheus-postgres-exporter with
# queries.yaml exports booking.stats() and booking.health(). Installs the
# package with apt-get when it is missing (and says how long that took),
# starts a cluster of its own that preloads booking (the counters of stats()
# are cluster-wide, so the test cluster's other calls would blur them), makes
# known calls as the web role (3 reserve_seat ok, 3 sold_out, a waitlist
# join, a hold of 1 second that lapses, a consumer that acknowledges 1 of
# its 4 events), starts the exporter on a free localhost port as a role that
# can only run stats() and health(), scrapes /metrics and checks exact
# lines; then 2 more sold_out calls and a second scrape: the counter moved
# by 2. The exporter and the cluster are stopped on exit, also on failure.
# Run by test/run.sh (examples stage); alone, it needs the extension
# installed. Ports: the cluster on BOOKING_PROMETHEUS_EXAMPLE_PORT (default
# BOOKING_TEST_PORT + 6, 54335), the exporter on BOOKING_EXPORTER_PORT
# (default: a free port).
set -u
cd "$(dirname "$0")" || exit 1
. ../lib.sh

EXPORTER=/usr/bin/prometheus-postgres-exporter
# the exporter, and Debian's python3 for a free port and the scrapes
missing=
[ -x "$EXPORTER" ] || missing="$missing prometheus-postgres-exporter"
[ -x /usr/bin/python3 ] || missing="$missing python3"
if [ -n "$missing" ]; then
	echo "== installing:$missing"
	t0=$(date +%s.%N)
	export DEBIAN_FRONTEND=noninteractive
	# shellcheck disable=SC2086
	out=$({ apt-get update -qq && apt-get install -y -qq --no-install-recommends $missing; } 2>&1) ||
		{ echo "not ok - install$missing"; sed 's/^/#   /' <<<"$out" | tail -n 20; rm -rf "$EXAMPLE_TMP"; exit 1; }
	echo "ok - apt-get installed$missing in $(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }') s"
fi
echo "# $("$EXPORTER" --version 2>&1 | head -n 1)"

# no expiry passes: the lapsed hold must stay pending until the scrape
EXAMPLE_CLUSTER_CONF="shared_preload_libraries = 'booking'
booking.expire_interval = '0'" \
	BOOKING_EXAMPLE_PORT=${BOOKING_PROMETHEUS_EXAMPLE_PORT:-$((${BOOKING_TEST_PORT:-54329} + 6))} \
	example_begin booking_example_prometheus
APP=${EXAMPLE_DB}_app
MONITOR=${EXAMPLE_DB}_monitor

failures=0
checks=0
ok() { checks=$((checks + 1)); echo "ok - $*"; }
not_ok() {
	checks=$((checks + 1))
	failures=$((failures + 1))
	echo "not ok - $*"
}
check() { # check DESCRIPTION GOT WANT
	if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1: got '$2', want '$3'"; fi
}
admin() { example_psql -d "$EXAMPLE_DB" -At -c "$1"; }
as_app() { example_psql -U "$APP" -d "$EXAMPLE_DB" -At -c "$@"; }
fail_now() {
	not_ok "$1"
	[ -s "$EXAMPLE_TMP/exporter.log" ] && sed 's/^/#   /' "$EXAMPLE_TMP/exporter.log" | tail -n 20
	exit 1
}

# -- the exporter's role: USAGE on the schema and EXECUTE on the two reads.
# Not grant_admin: that also gives create_resource, set_capacity,
# add_consumer, drop_consumer (which makes the outbox forget what a consumer
# has not acknowledged), hold_expire and stats_reset (which zeroes the
# counters), SELECT on the bookings (guests' names) and distribute, none of
# which a scraper needs. health() is SECURITY DEFINER, so it needs no SELECT
# on the tables; stats() reads shared memory.
example_psql -d "$EXAMPLE_DB" \
	-c "CREATE ROLE $MONITOR LOGIN" \
	-c "GRANT USAGE ON SCHEMA booking TO $MONITOR" \
	-c "GRANT EXECUTE ON FUNCTION booking.stats(), booking.health() TO $MONITOR" >/dev/null ||
	fail_now "the exporter's role $MONITOR"
denied=0
for sql in "SELECT booking.stats_reset()" "SELECT code FROM booking.reserve_seat(1, 'x')" \
	"SELECT count(*) FROM booking.bookings" "SELECT booking.drop_consumer('x')"; do
	example_psql -U "$MONITOR" -d "$EXAMPLE_DB" -c "$sql" 2>&1 | grep -q 'permission denied' && denied=$((denied + 1))
done
check "$MONITOR runs stats() and health() only: stats_reset, reserve_seat, drop_consumer and SELECT on bookings are denied" \
	"$denied $(example_psql -U "$MONITOR" -d "$EXAMPLE_DB" -At -c "SELECT count(*) > 0 FROM booking.health()")" "4 t"

# -- known calls: the admin makes the resources and the consumer, the web
# role sells
CONCERT=$(admin "SELECT booking.create_resource('concert', 2)") || fail_now "create_resource"
WORKSHOP=$(admin "SELECT booking.create_resource('workshop', 1)") || fail_now "create_resource"
check "the consumer mailer is registered before the sales" "$(admin "SELECT booking.add_consumer('mailer')")" t
# one transaction per call, as a web service makes them
codes=$(as_app "SELECT code FROM booking.reserve_seat($CONCERT, 'ann')" \
	-c "SELECT code FROM booking.reserve_seat($CONCERT, 'bob', idempotency_key => 'order-2')" \
	-c "SELECT code FROM booking.reserve_seat($CONCERT, 'cat')" \
	-c "SELECT code FROM booking.reserve_seat($CONCERT, 'dan')" \
	-c "SELECT code FROM booking.reserve_seat($CONCERT, 'eve')" \
	-c "SELECT code FROM booking.join_waitlist($CONCERT, 'cat')" \
	-c "SELECT code FROM booking.reserve_seat($WORKSHOP, 'fay', hold => '1 second')" | sort | uniq -c |
	awk '{ printf "%s%s=%s", sep, $2, $1; sep = " " }')
check "the calls answered" "$codes" "ok=3 sold_out=3 waitlisted=1"
# the hold lapses after a second; nothing expires it (no worker pass)
for _ in $(seq 1 50); do
	lapsed=$(admin "SELECT value FROM booking.health() WHERE metric = 'lapsed_holds'")
	[ "$lapsed" = 1 ] && break
	sleep 0.1
done
check "fay's hold has lapsed" "$lapsed" 1
# a relay claims the events (reserved x3, waitlist_joined x1) and
# acknowledges one of them
claimed=$(admin "CREATE TEMP TABLE c AS SELECT * FROM booking.claim_events('mailer', 100, '1 hour');
	SELECT count(*) || ' ' || booking.ack_events('mailer', min(lease_token), ARRAY[min(event_id)]) FROM c")
check "the relay claimed 4 events and acknowledged 1" "$claimed" "4 1"

# -- the exporter, on a free localhost port, as the monitoring role, through
# the cluster's private socket
PORT=${BOOKING_EXPORTER_PORT:-$(/usr/bin/python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
args=(--web.listen-address="127.0.0.1:$PORT" --extend.query-path="$PWD/queries.yaml")
help=$("$EXPORTER" --help 2>&1)
# only the queries of queries.yaml: no built-in metrics, no pg_settings, no
# collectors (each flag where this version has it)
for flag in disable-default-metrics disable-settings-metrics; do
	grep -q -- "--$flag" <<<"$help" && args+=("--$flag")
done
for collector in $(grep -o -- '--collector\.[a-z_]*' <<<"$help" | sort -u); do
	args+=("--no-${collector#--}")
done
DATA_SOURCE_NAME="host=$PGHOST port=$PGPORT user=$MONITOR dbname=$EXAMPLE_DB sslmode=disable" \
	"$EXPORTER" "${args[@]}" >"$EXAMPLE_TMP/exporter.log" 2>&1 &
EXAMPLE_PID=$! # example_cleanup stops it
URL="http://127.0.0.1:$PORT/metrics"
scrape() { # scrape FILE: GET /metrics into FILE; fails unless 200
	/usr/bin/python3 -c 'import sys, urllib.request
sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$URL" >"$1" 2>/dev/null
}
for _ in $(seq 1 100); do
	scrape "$EXAMPLE_TMP/m1.txt" && break
	kill -0 "$EXAMPLE_PID" 2>/dev/null || fail_now "the exporter exited"
	sleep 0.1
done
[ -s "$EXAMPLE_TMP/m1.txt" ] || fail_now "the exporter answers on $URL"
ok "the exporter answers on $URL (${args[*]:2})"

# has FILE LINE...: each exact line is in the scrape
has() {
	local file=$1 line
	shift
	for line in "$@"; do
		if grep -qxF -- "$line" "$file"; then
			ok "$line"
		else
			not_ok "$line: the scrape has $(grep -F -- "${line%% *}" "$file" | grep -v '^#' | head -n 1)"
		fi
	done
}
S="server=\"$PGHOST:$PGPORT\""
has "$EXAMPLE_TMP/m1.txt" \
	"pg_up 1" \
	"pg_exporter_last_scrape_error 0" \
	"# TYPE booking_calls_total counter" \
	"booking_calls_total{code=\"ok\",function=\"reserve_seat\",$S} 3" \
	"booking_calls_total{code=\"sold_out\",function=\"reserve_seat\",$S} 3" \
	"booking_calls_total{code=\"waitlisted\",function=\"join_waitlist\",$S} 1" \
	"booking_lock_wait_seconds_total{code=\"ok\",function=\"reserve_seat\",$S} 0" \
	"# TYPE booking_lapsed_holds gauge" \
	"booking_lapsed_holds{$S} 1" \
	"booking_waitlist_length{resource=\"$CONCERT\",$S} 1" \
	"booking_consumer_unacked{consumer=\"mailer\",$S} 3" \
	"booking_events_unsequenced{$S} 0" \
	"booking_idempotency_keys{$S} 1"
check "the queries file loaded" "$(grep -c '^pg_exporter_user_queries_load_error{.*} 0$' "$EXAMPLE_TMP/m1.txt")" 1
check "every booking_ sample is a number: 20 of 20 (12 of stats(), 8 of health())" \
	"$(grep -cE '^booking_[a-z_]+\{[^}]*\} [0-9.e+-]+$' "$EXAMPLE_TMP/m1.txt") of $(grep -c '^booking_' "$EXAMPLE_TMP/m1.txt")" "20 of 20"
check "the lapsed hold's age is a positive number of seconds" \
	"$(awk '/^booking_lapsed_hold_oldest_seconds\{/ { print ($2 > 0 && $2 < 600) }' "$EXAMPLE_TMP/m1.txt")" 1

# -- the counters are read at each scrape
check "two more sold_out calls" "$(as_app "SELECT code FROM booking.reserve_seat($CONCERT, 'gus')" \
	-c "SELECT code FROM booking.reserve_seat($CONCERT, 'hal')" | sort | uniq -c | awk '{ print $1, $2 }')" "2 sold_out"
scrape "$EXAMPLE_TMP/m2.txt" || fail_now "the second scrape"
has "$EXAMPLE_TMP/m2.txt" "booking_calls_total{code=\"sold_out\",function=\"reserve_seat\",$S} 5"
check "the exporter logged no error" "$(grep -c 'level=error' "$EXAMPLE_TMP/exporter.log")" 0

if [ "$failures" -gt 0 ]; then
	echo "# the exporter's log:"
	sed 's/^/#   /' "$EXAMPLE_TMP/exporter.log" | tail -n 20
fi
echo "# prometheus: $((checks - failures)) of $checks checks passed"
[ "$failures" -eq 0 ]
