#!/usr/bin/env bash
# dump_restore.sh: a pg_dump -Fc / pg_restore round trip keeps every booking
# and every rule.  The source database has resources (a session, rooms, a
# pool and its units, a striped session when the installed version has
# stripes), bookings in every status (pending, confirmed, cancelled,
# expired) of seats and of stays, a group, idempotency keys (of an ok and of
# a refusal).  The dump is restored into a new, empty database: the dump
# itself creates the extension there.  Then:
#  - every table of schema booking is identical (md5 of its rows' text, in
#    order), and so are the sequences (last_value, is_called);
#  - the exclusion rule holds: an overlapping reserve_stay is refused, and a
#    raw INSERT that bypasses the API fails on bookings_no_overlap;
#  - the counters hold: a seat reserve respects what was sold; a new booking
#    and a new resource get fresh ids (no primary-key clash);
#  - stored keys replay, holds can be confirmed, the invariants hold.
set -u
cd "$(dirname "$0")" || exit 1
. ./lib.bash
export PGTZ=UTC

SRC=booking_rel_dump_src
DST=booking_rel_dump_dst
rel_db $SRC
striped=$(q "SELECT to_regproc('booking.set_stripes') IS NOT NULL")

# the fixture; ids are captured for the checks after the restore
seat=$(q "SELECT booking.create_resource('concert', 10)")
room=$(q "SELECT booking.create_resource('room 1')")
room2=$(q "SELECT booking.create_resource('room 2')")
g1=$(q "SELECT booking.create_resource('family room 1')")
g2=$(q "SELECT booking.create_resource('family room 2')")
pool=$(q "SELECT booking.create_resource('double rooms', 0, meta => '{\"kind\": \"pool\"}')")
q "SELECT booking.create_resource('double ' || n, 1, $pool) FROM generate_series(1, 2) n" >/dev/null
hot=$seat
if [ "$striped" = t ]; then
	hot=$(q "SELECT booking.create_resource('hot sale', 50)")
	q "SELECT code FROM booking.set_stripes($hot, 4)" >/dev/null
	q "SELECT (booking.reserve_seat($hot, 'hot-' || n, 3)).code FROM generate_series(1, 5) n" >/dev/null
fi

b_conf=$(q "SELECT booking_id FROM booking.reserve_seat($seat, 'ann', 3, idempotency_key => 'k-seat-confirmed')")
b_hold=$(q "SELECT booking_id FROM booking.reserve_seat($seat, 'bob', 2, hold => '1 day', idempotency_key => 'k-seat-hold')")
b_c=$(q "SELECT booking_id FROM booking.reserve_seat($seat, 'cid', 1)")
q "SELECT code FROM booking.cancel($b_c, idempotency_key => 'k-cancel')" >/dev/null
b_e=$(q "SELECT booking_id FROM booking.reserve_seat($seat, 'dan', 1, hold => '1 millisecond')")
b_eve=$(q "SELECT booking_id FROM booking.reserve_seat($seat, 'eve', 1, hold => '1 day')")
q "SELECT code FROM booking.confirm($b_eve, idempotency_key => 'k-confirm')" >/dev/null
q "SELECT code FROM booking.reserve_seat($seat, 'fay', 100, idempotency_key => 'k-sold-out')" >/dev/null
s_conf=$(q "SELECT booking_id FROM booking.reserve_stay($room, 'gus', '[2030-06-01, 2030-06-04)', idempotency_key => 'k-stay')")
q "SELECT code FROM booking.reserve_stay($room, 'hal', '[2030-06-10, 2030-06-12)', hold => '1 day')" >/dev/null
s_c=$(q "SELECT booking_id FROM booking.reserve_stay($room, 'ian', '[2030-06-20, 2030-06-21)')")
q "SELECT code FROM booking.cancel($s_c)" >/dev/null
q "SELECT code FROM booking.reserve_stay($room2, 'jon', '[2030-07-01, 2030-07-02)', hold => '1 millisecond')" >/dev/null
grp=$(q "SELECT booking_id FROM booking.reserve_stays(ARRAY[$g2, $g1], 'family', '[2030-06-01, 2030-06-05)', idempotency_key => 'k-group')")
q "SELECT code FROM booking.reserve_stay_any($pool, 'kim', '[2030-06-01, 2030-06-02)', idempotency_key => 'k-any')" >/dev/null
q "SELECT code FROM booking.set_capacity($room2, 1, 1)" >/dev/null
q "SELECT pg_sleep(0.05)" >/dev/null
# the lapsed seat hold was already reclaimed by the sold_out call; hold_expire
# moves the lapsed stay hold
q "SELECT booking.hold_expire()" >/dev/null
check "the fixture: both lapsed 1 ms holds are expired" "SELECT count(*) FROM booking.bookings WHERE status = 'expired'" 2
check "the fixture has bookings in every status" \
	"SELECT string_agg(s, ',' ORDER BY s) FROM (SELECT DISTINCT status::text AS s FROM booking.bookings) d" \
	"cancelled,confirmed,expired,pending"
check "the fixture has 8 idempotency keys, one of them a refusal" \
	"SELECT count(*) || ' ' || count(*) FILTER (WHERE NOT ok) FROM booking.idempotency_keys" "8 1"

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
before=$(q "$fingerprint_sql")
ntables=$(q "SELECT count(*) FROM pg_class WHERE relnamespace = 'booking'::regnamespace AND relkind IN ('r', 'S')")
version=$(q "SELECT extversion FROM pg_extension WHERE extname = 'booking'")
seq_last=$(q "SELECT last_value FROM booking.bookings_id_seq")
res_last=$(q "SELECT last_value FROM booking.resources_id_seq")
max_id=$(q "SELECT max(id) FROM booking.bookings")

dump="$REL_TMP/booking.dump"
if "$REL_PGBIN/pg_dump" -h "$REL_HOST" -p "$REL_PORT" -U postgres -Fc -f "$dump" $SRC 2>"$REL_TMP/pg_dump.err"; then
	pass "pg_dump -Fc of the source database"
else
	fail "pg_dump -Fc of the source database"
	sed 's/^/#   /' "$REL_TMP/pg_dump.err"
fi
REL_DBS="$REL_DBS $REL_HOST|$REL_PORT|$DST"
rel_psql -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $DST" -c "CREATE DATABASE $DST" >/dev/null
"$REL_PGBIN/pg_restore" -h "$REL_HOST" -p "$REL_PORT" -U postgres -d $DST "$dump" >"$REL_TMP/pg_restore.out" 2>&1
rc=$?
if [ $rc -eq 0 ] && [ ! -s "$REL_TMP/pg_restore.out" ]; then
	pass "pg_restore into a new empty database: exit 0, no error or warning"
else
	fail "pg_restore into a new empty database: exit 0, no error or warning (rc $rc)"
	head -n 20 "$REL_TMP/pg_restore.out" | sed 's/^/#   /'
fi

REL_DB=$DST
check "the restore created the extension, at the same version" \
	"SELECT extversion FROM pg_extension WHERE extname = 'booking'" "$version"
after=$(q "$fingerprint_sql")
if [ -n "$before" ] && [ "$before" = "$after" ] && [ "$(echo "$after" | wc -l)" = "$ntables" ]; then
	pass "all $ntables tables and sequences of schema booking are identical ($(echo "$after" | cut -d' ' -f1 | paste -sd' '))"
else
	fail "all $ntables tables and sequences of schema booking are identical"
	diff <(echo "$before") <(echo "$after") | sed 's/^/#   /'
fi

# the counters: 10 seats, 3 + 2 (a live hold) + 1 taken, 4 left
check "seats_left of the session is 4 after the restore" "SELECT booking.seats_left($seat)" 4
check "a 5-seat reserve is sold_out: the counter remembers what was sold" \
	"SELECT code FROM booking.reserve_seat($seat, 'new', 5)" sold_out
check "a 4-seat reserve gets a fresh booking id ($((seq_last + 1)), above the largest restored id $max_id)" \
	"SELECT code || ' ' || booking_id FROM booking.reserve_seat($seat, 'new', 4)" "ok $((seq_last + 1))"
check "... and the session is sold out" "SELECT booking.seats_left($seat) || ' ' || (booking.reserve_seat($seat, 'late', 1)).code" "0 sold_out"
check "a new resource gets a fresh id ($((res_last + 1)))" "SELECT booking.create_resource('after restore', 3)" "$((res_last + 1))"
if [ "$striped" = t ]; then
	check "the striped session sold 15 of 50: 36 more seats are refused, 35 are sold" \
		"SELECT (booking.reserve_seat($hot, 'x', 36)).code || ' ' || (booking.reserve_seat($hot, 'x', 35)).code" "sold_out ok"
	check "... and the striped session is sold out" "SELECT booking.seats_left($hot)" 0
fi

# the exclusion rule
check "an overlapping reserve_stay on a confirmed stay is refused (unavailable)" \
	"SELECT code FROM booking.reserve_stay($room, 'x', '[2030-06-03, 2030-06-05)')" unavailable
check "an overlapping reserve_stay on a live hold is refused (unavailable)" \
	"SELECT code FROM booking.reserve_stay($room, 'x', '[2030-06-11, 2030-06-13)')" unavailable
check "the dates of the cancelled and of the expired stay are free" \
	"SELECT (booking.reserve_stay($room, 'x', '[2030-06-20, 2030-06-21)')).code || ' ' || (booking.reserve_stay($room2, 'x', '[2030-07-01, 2030-07-02)')).code" "ok ok"
check "the group's two rooms are refused for overlapping dates (unavailable)" \
	"SELECT code FROM booking.reserve_stays(ARRAY[$g1, $g2], 'y', '[2030-06-04, 2030-06-06)')" unavailable
check "the group is findable: 2 members share group_id $grp" "SELECT count(*) FROM booking.bookings WHERE group_id = $grp" 2
raw=$(q "INSERT INTO booking.bookings (resource_id, guest, quantity, during, blocked, status, validity)
         VALUES ($room, 'raw', 1, '[2030-06-02, 2030-06-03)', '[2030-06-02, 2030-06-03)', 'confirmed', tstzrange(now(), NULL))" 2>&1)
if echo "$raw" | grep -q 'violates exclusion constraint "bookings_no_overlap"'; then
	pass "a raw overlapping INSERT that bypasses the API fails on bookings_no_overlap"
else
	fail "a raw overlapping INSERT that bypasses the API fails on bookings_no_overlap"
	echo "#   got: $raw"
fi

# stored results and holds
check "a stored key replays the original result (booking $b_conf)" \
	"SELECT code || ' ' || booking_id || ' ' || replayed FROM booking.reserve_seat($seat, 'ann', 3, idempotency_key => 'k-seat-confirmed')" \
	"ok $b_conf true"
check "a stored refusal replays as a refusal" \
	"SELECT code || ' ' || replayed FROM booking.reserve_seat($seat, 'fay', 100, idempotency_key => 'k-sold-out')" "sold_out true"
check "a stored key used for another request is a mismatch" \
	"SELECT code FROM booking.reserve_seat($seat, 'ann', 2, idempotency_key => 'k-seat-confirmed')" idempotency_mismatch
check "the restored hold can be confirmed (ok 200)" \
	"SELECT code || ' ' || http_status FROM booking.confirm($b_hold)" "ok 200"
check "the restored expired hold answers hold_expired" "SELECT code FROM booking.confirm($b_e)" hold_expired
check "a restored confirmed booking can be cancelled" "SELECT code FROM booking.cancel($b_conf)" ok
check "... and its 3 seats come back" "SELECT booking.seats_left($seat)" 3
check "the restored confirmed stay can be cancelled" "SELECT code FROM booking.cancel($s_conf)" ok
check_invariants "restored database"

rel_done
