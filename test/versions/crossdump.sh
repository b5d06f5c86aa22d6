#!/usr/bin/env bash
# test/versions/crossdump.sh: data crosses majors.  A database on
# PostgreSQL 15 with live state is dumped with pg_dump and restored into a
# newer major; afterwards every invariant holds.  Two halves, run by
# test/versions/stage.sh:
#
#   crossdump.sh make DIR     on 15, against the cluster PGHOST/PGPORT name
#                             (test/run.sh's test cluster, booking installed):
#                             makes database booking_cross with live state,
#                             dumps it to DIR/live15.dump (15's pg_dump -Fc)
#                             and writes DIR/live.env (the ids, the counts,
#                             the fingerprint of every table and sequence)
#   crossdump.sh check DIR    inside the newer major's chroot
#                             (BOOKING_PG_BIN, BOOKING_TEST_PORT): restores
#                             DIR/*.dump, each into a database of its own in
#                             a cluster of its own, and checks each
#
# The live state: a session with a confirmed booking (made with a key), a
# day-long hold and a short hold that lapses after the restore; a striped
# session; a room with a confirmed stay and a held stay; a sold-out
# workshop whose waitlist has an offer (a hold) and a guest still waiting;
# a consumer with acknowledged events, events leased under a lease that is
# still open at the dump, numbered events not leased yet, and events not
# numbered yet.  After the restore: the tables and sequences are identical;
# seats_left is exact; the short hold expires and frees its seat; a key
# replays its stored result; the unacknowledged events are claimed exactly
# once (the leased ones when their lease lapsed) and the outbox numbers go
# on with no gap; the waitlist's order holds.  Each half prints "ok - " /
# "not ok - " lines and "N passed, N failed".
set -u
cd "$(dirname "$0")/../reliability" || exit 1
. ./lib.bash
export PGTZ=UTC
mode=${1:?make or check}
dir=${2:?a directory}
DB=booking_cross
# holds and leases that are open at the dump and lapse after the restore
SHORT=${BOOKING_CROSS_SHORT:-30 seconds}

# every table and sequence of schema booking, as "name md5" lines
fingerprint_sql="SELECT string_agg(line, E'\n' ORDER BY line) FROM (
	SELECT c.relname || ' ' || (xpath('/row/m/text()', query_to_xml(format(
	    'SELECT md5(coalesce(string_agg(t::text, E''\n'' ORDER BY t::text), '''')) AS m FROM %s t', c.oid::regclass),
	    false, true, '')))[1]::text AS line
	  FROM pg_class c WHERE c.relnamespace = 'booking'::regnamespace AND c.relkind = 'r'
	UNION ALL
	SELECT c.relname || ' ' || (xpath('/row/v/text()', query_to_xml(format(
	    'SELECT last_value || '','' || is_called AS v FROM %s', c.oid::regclass), false, true, '')))[1]::text
	  FROM pg_class c WHERE c.relnamespace = 'booking'::regnamespace AND c.relkind = 'S') s"

# the outbox's numbers: per resource 1..n with no gap and no NULL, and no
# head (what the purge keeps) above the last number: nothing was purged
gapfree_sql="SELECT count(*) FROM (
	SELECT e.resource_id FROM booking.events e
	  LEFT JOIN booking.event_heads h ON h.home = e.home AND h.resource_id = e.resource_id
	 GROUP BY e.resource_id, h.last_seq
	HAVING count(e.seq) <> count(*) OR min(e.seq) <> 1 OR max(e.seq) <> count(*)
	    OR count(DISTINCT e.seq) <> count(*) OR h.last_seq > max(e.seq)) bad"

make_state() {
	REL_DB=$DB
	# the database stays: stage.sh dumps it with the newer pg_dump too, then
	# drops it
	REL_DBS=""
	rel_psql -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DB" \
		-c "CREATE DATABASE $DB" >/dev/null || { fail "create database $DB"; rel_done; }
	q "SET client_min_messages = warning; CREATE EXTENSION booking CASCADE" >/dev/null &&
		q "SELECT booking.add_consumer('mailer')" >/dev/null || { fail "booking and a consumer in $DB"; rel_done; }
	seat=$(q "SELECT booking.create_resource('concert', 10)")
	b_ann=$(q "SELECT booking_id FROM booking.reserve_seat($seat, 'ann', 3, idempotency_key => 'k-ann')")
	b_bob=$(q "SELECT booking_id FROM booking.reserve_seat($seat, 'bob', 2, hold => '1 day')")
	b_cid=$(q "SELECT booking_id FROM booking.reserve_seat($seat, 'cid', 1, hold => '$SHORT')")
	hot=$(q "SELECT booking.create_resource('hot sale', 100)")
	q "SELECT code FROM booking.set_stripes($hot, 4)" >/dev/null
	q "SELECT (booking.reserve_seat($hot, 'hot-' || n, 3)).code FROM generate_series(1, 5) n" >/dev/null
	room=$(q "SELECT booking.create_resource('room 1')")
	s_gus=$(q "SELECT booking_id FROM booking.reserve_stay($room, 'gus', '[2030-06-01, 2030-06-04)', idempotency_key => 'k-stay')")
	q "SELECT code FROM booking.reserve_stay($room, 'hal', '[2030-06-10, 2030-06-12)', hold => '1 day')" >/dev/null
	wl=$(q "SELECT booking.create_resource('workshop', 2)")
	w_ida=$(q "SELECT booking_id FROM booking.reserve_seat($wl, 'ida', 1)")
	q "SELECT code FROM booking.reserve_seat($wl, 'jon', 1)" >/dev/null
	w_kim=$(q "SELECT booking_id FROM booking.join_waitlist($wl, 'kim', 1)")
	w_lea=$(q "SELECT booking_id FROM booking.join_waitlist($wl, 'lea', 1)")
	q "SELECT code FROM booking.cancel($w_ida)" >/dev/null
	check "the fixture: the workshop's freed seat is offered to kim (a hold), lea waits" \
		"SELECT string_agg(guest || ' ' || status, ', ' ORDER BY id) FROM booking.bookings WHERE id IN ($w_kim, $w_lea)" \
		"kim pending, lea waiting"
	# the outbox: 4 events acknowledged, 3 leased under a lease still open at
	# the dump, the rest numbered and not leased, and then one more not numbered
	q "SELECT booking.ack_events('mailer', max(lease_token), array_agg(event_id)) FROM booking.claim_events('mailer', 4)" >/dev/null
	q "SELECT count(*) FROM booking.claim_events('mailer', 3, '$SHORT')" >/dev/null
	q "SELECT code FROM booking.reserve_seat($seat, 'dan', 1)" >/dev/null
	check "the fixture's outbox: 4 acknowledged, 3 leased, 1 not numbered" \
		"SELECT (SELECT count(*) FROM booking.deliveries WHERE acked_at IS NOT NULL) || ' ' ||
		        (SELECT count(*) FROM booking.deliveries WHERE acked_at IS NULL AND lease_until > now()) || ' ' ||
		        (SELECT count(*) FROM booking.events WHERE seq IS NULL)" "4 3 1"
	check "the fixture: the concert has 10 - 3 - 2 - 1 - 1 = 3 seats left, the striped sale 85" \
		"SELECT booking.seats_left($seat) || ' ' || booking.seats_left($hot)" "3 85"
	{
		echo "seat=$seat hot=$hot room=$room wl=$wl b_ann=$b_ann b_bob=$b_bob b_cid=$b_cid s_gus=$s_gus w_kim=$w_kim w_lea=$w_lea"
		echo "events=$(q "SELECT count(*) FROM booking.events")"
		echo "bookings_last=$(q "SELECT last_value FROM booking.bookings_id_seq")"
		echo "events_last=$(q "SELECT last_value FROM booking.events_id_seq")"
		echo "short_until=\"$(q "SELECT greatest((SELECT expires_at FROM booking.bookings WHERE id = $b_cid),
			(SELECT max(lease_until) FROM booking.deliveries WHERE acked_at IS NULL))")\""
	} >"$dir/live.env"
	q "$fingerprint_sql" >"$dir/live.fingerprint"
	if "$REL_PGBIN/pg_dump" -h "$REL_HOST" -p "$REL_PORT" -U postgres -Fc -f "$dir/live15.dump" $DB 2>"$REL_TMP/pg_dump.err"; then
		pass "pg_dump -Fc of the live database on $(q "SHOW server_version" | cut -d' ' -f1), with 15's pg_dump"
	else
		fail "pg_dump -Fc of the live database, with 15's pg_dump"
		sed 's/^/#   /' "$REL_TMP/pg_dump.err"
	fi
	chmod 644 "$dir"/*
}

# check_restored DUMP: restores DUMP into a new database and checks it while
# the short hold and the lease are open
check_restored() {
	local dump=$1 name got
	name=$(basename "$dump" .dump)
	REL_DB=${DB}_$name
	REL_DBS="$REL_DBS $REL_HOST|$REL_PORT|$REL_DB"
	rel_psql -d postgres -c "CREATE DATABASE $REL_DB" >/dev/null
	"$REL_PGBIN/pg_restore" -h "$REL_HOST" -p "$REL_PORT" -U postgres -d "$REL_DB" "$dump" >"$REL_TMP/restore.out" 2>&1
	local rc=$?
	if [ $rc -eq 0 ] && [ ! -s "$REL_TMP/restore.out" ]; then
		pass "$name: pg_restore into $major: exit 0, no error or warning"
	else
		fail "$name: pg_restore into $major: exit 0, no error or warning (rc $rc)"
		head -n 20 "$REL_TMP/restore.out" | sed 's/^/#   /'
	fi
	check "$name: restored before the short hold lapsed (else make BOOKING_CROSS_SHORT longer)" \
		"SELECT now() < '$short_until'" t
	got=$(q "$fingerprint_sql")
	if [ -n "$got" ] && [ "$got" = "$(cat "$dir/live.fingerprint")" ]; then
		pass "$name: every table and sequence of schema booking is identical ($(echo "$got" | wc -l))"
	else
		fail "$name: every table and sequence of schema booking is identical"
		diff "$dir/live.fingerprint" <(echo "$got") | head -n 20 | sed 's/^/#   /'
	fi
	check "$name: seats_left is exact: the concert 3 (the short hold still counts), the striped sale 85, the workshop 0" \
		"SELECT booking.seats_left($seat) || ' ' || booking.seats_left($hot) || ' ' || booking.seats_left($wl)" "3 85 0"
	check "$name: the key replays its stored result (booking $b_ann), and takes no seat" \
		"SELECT code || ' ' || booking_id || ' ' || replayed FROM booking.reserve_seat($seat, 'ann', 3, idempotency_key => 'k-ann')" \
		"ok $b_ann true"
	check "$name: the stay's key replays too" \
		"SELECT code || ' ' || booking_id || ' ' || replayed FROM booking.reserve_stay($room, 'gus', '[2030-06-01, 2030-06-04)', idempotency_key => 'k-stay')" \
		"ok $s_gus true"
	check "$name: the held and the confirmed stay still block" \
		"SELECT (booking.reserve_stay($room, 'x', '[2030-06-03, 2030-06-05)')).code || ' ' || (booking.reserve_stay($room, 'x', '[2030-06-11, 2030-06-13)')).code" \
		"unavailable unavailable"
	check "$name: 4 seats of the concert are refused: the short hold is still live" \
		"SELECT (booking.reserve_seat($seat, 'x', 4)).code" sold_out
	check "$name: the workshop is sold out and lea still waits second in line" \
		"SELECT (booking.reserve_seat($wl, 'x', 1)).code || ' ' || (booking.join_waitlist($wl, 'lea', 1)).code" \
		"sold_out already_waiting"
}

# check_lapsed DUMP: the checks after the short hold and the lease lapsed
check_lapsed() {
	local name got
	name=$(basename "$1" .dump)
	REL_DB=${DB}_$name
	check "$name: the short hold lapses and hold_expire moves it" "SELECT booking.hold_expire()" 1
	check "$name: ... to expired" "SELECT status FROM booking.bookings WHERE id = $b_cid" expired
	check "$name: ... and its seat is free again: 4 seats sell, then sold_out" \
		"SELECT booking.seats_left($seat) || ' ' || (booking.reserve_seat($seat, 'new', 4)).code || ' ' || (booking.reserve_seat($seat, 'late', 1)).code" \
		"4 ok sold_out"
	# kim lets the offer go: lea gets it
	check "$name: kim cancels the offered hold" "SELECT code FROM booking.cancel($w_kim)" ok
	check "$name: ... and the seat is offered to lea" "SELECT status FROM booking.bookings WHERE id = $w_lea" pending
	check "$name: the new booking got a fresh id, after the restored ones" \
		"SELECT count(*) FROM booking.bookings WHERE id > $bookings_last" 1
	got=$(q "SELECT count(*) FROM booking.events")
	check "$name: the restored events kept their ids; the new ones come after them" \
		"SELECT count(*) FILTER (WHERE id <= $events_last) || ' ' || (count(*) FILTER (WHERE id > $events_last) > 0) FROM booking.events" \
		"$events true"
	# every unacknowledged event, the leased ones included, exactly once
	check "$name: one claim leases every unacknowledged event exactly once ($got - 4), the 3 leased before for the second time" \
		"SELECT count(*) || ' ' || count(DISTINCT event_id) || ' ' || count(*) FILTER (WHERE attempts = 2)
		   FROM booking.claim_events('mailer', 10000)" "$((got - 4)) $((got - 4)) 3"
	check "$name: the outbox numbers go on from the restored ones with no gap" "$gapfree_sql" 0
	check "$name: ... every event is numbered, and a second claim gets nothing" \
		"SELECT (SELECT count(*) FROM booking.events WHERE seq IS NULL) || ' ' || (SELECT count(*) FROM booking.claim_events('mailer', 10000))" "0 0"
	check "$name: the claimed events acknowledge" \
		"SELECT booking.ack_events('mailer', (SELECT max(lease_token) FROM booking.deliveries), (SELECT array_agg(event_id) FROM booking.deliveries WHERE acked_at IS NULL))" \
		"$((got - 4))"
	check_invariants "$name"
}

case $mode in
make)
	make_state
	;;
check)
	major=$("$REL_PGBIN/pg_config" --version)
	. "$dir/live.env"
	rel_cluster_start cross "$((${BOOKING_TEST_PORT:-54329} + 7))" "max_prepared_transactions = 10" ||
		{ fail "a cluster of $major"; rel_done; }
	rel_psql -d postgres -At -c "SELECT version()" | sed 's/^/# /'
	# 18 records a module's name and version (PG_MODULE_MAGIC_EXT)
	if [ "$(q "SHOW server_version_num")" -ge 180000 ]; then
		check "the library names itself and its version (PG_MODULE_MAGIC_EXT)" \
			"LOAD 'booking'; SELECT module_name || ' ' || version FROM pg_get_loaded_modules() WHERE file_name LIKE 'booking%'" \
			"booking $(sed -n "s/^default_version = '\(.*\)'/\1/p" ../../booking.control)"
	fi
	# every dump is restored and checked before the short hold lapses
	for dump in "$dir"/*.dump; do
		check_restored "$dump"
	done
	q "SELECT pg_sleep(greatest(0, extract(epoch FROM '$short_until'::timestamptz - clock_timestamp()) + 0.2))" >/dev/null
	for dump in "$dir"/*.dump; do
		check_lapsed "$dump"
	done
	;;
*)
	echo "usage: crossdump.sh make|check DIR" >&2
	exit 2
	;;
esac
rel_done
