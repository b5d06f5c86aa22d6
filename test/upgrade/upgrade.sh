#!/usr/bin/env bash
# test/upgrade/upgrade.sh: walks the whole upgrade path, from the oldest
# version that has a full install script in sql/ to the newest one
# (booking.control's default_version), one upgrade script at a time, with
# data in every step:
#
#  1. Installs the oldest version in a fresh database and fills it with plain
#     SQL (test/upgrade/fill--<version>.sql; for the first version, the newest
#     fill file that is not newer than it).
#  2. For each step A -> B of the path: runs ALTER EXTENSION booking UPDATE TO
#     'B', then checks that the data survived: a checksum of every column the
#     schema of A had, table by table, and the sequences.  Then, if
#     fill--B.sql exists and B is not the newest version, adds B's data, so
#     that the next step carries data of every kind B can hold.
#  3. Checks that the upgraded schema equals a fresh install of the newest
#     version: test/upgrade/catalog.sql dumps both catalogs, diff compares.
#  4. Checks that the API works on the old rows: reserve_seat (including
#     reclaiming a lapsed hold), reserve_stay refused on an overlap,
#     reserve_stay_any, cancel, confirm, a stored idempotency result replayed,
#     hold_expire, set_stripes on an old session, move_stay, set_buffer and
#     reduce on old rows (0.5.0), a waitlist and the events of old rows
#     (0.6.0), and the striped session of
#     fill--0.2.0.sql when the path went through 0.2.0.
#
# The path follows the upgrade scripts sql/booking--A--B.sql from version to
# the next higher version one leads to; every upgrade script must lie on it.
# Versions come from sql/booking--*.sql and booking.control, and none is
# named here.  The repository always has a previous version, so a path with
# no step, or one that breaks off, is a failure, not a skip.
# BOOKING_UPGRADE_FROM=X.Y.Z starts the walk from X.Y.Z instead.
# Uses the cluster named by PGHOST/PGPORT/PGUSER (test/run.sh sets them);
# without PGHOST it starts a private cluster on ${BOOKING_UPGRADE_PORT:-54346}.
# The installed extension files must be those of this checkout.
# Prints "ok - ..." / "not ok - ..." per check and ends with "N passed, N failed".
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD

PASSED=0
FAILED=0
OLD_DB=booking_upgrade_old
NEW_DB=booking_upgrade_new
TMP=
OWN_CLUSTER=
export PGTZ=UTC

pass() { echo "ok - $1"; PASSED=$((PASSED + 1)); }
fail() { echo "not ok - $1"; FAILED=$((FAILED + 1)); }
done_() {
	echo "$PASSED passed, $FAILED failed"
	[ "$FAILED" -eq 0 ] && [ "$PASSED" -gt 0 ]
	exit
}
upsql() { psql -X -q -v ON_ERROR_STOP=1 "$@"; }
# q DB QUERY: the query's result, unaligned, tuples only
q() { upsql -At -d "$1" -c "$2" 2>&1; }
# check DESCRIPTION DB QUERIES EXPECTED: the output lines of QUERIES (each
# statement has its own snapshot), joined with ";"
check() {
	local got
	got=$(q "$2" "$3" | paste -sd ';')
	if [ "$got" = "$4" ]; then
		pass "$1"
	else
		fail "$1"
		echo "#   expected: $4"
		echo "#   got:      $got"
	fi
}
cleanup() {
	local db
	for db in $OLD_DB $NEW_DB; do
		upsql -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
	done
	# the roles of fill--0.7.0.sql, once no database holds their grants
	upsql -d postgres -c "SET client_min_messages = warning" \
		-c "DROP ROLE IF EXISTS booking_upgrade_client, booking_upgrade_direct" >/dev/null 2>&1
	[ -n "$TMP" ] && rm -rf "$TMP"
	[ -n "$OWN_CLUSTER" ] && booking_cluster_stop
}
# newer A B: true when version A is newer than version B
newer() { [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | tail -n 1)" = "$1" ]; }

# -- versions and the path ---------------------------------------------------------

semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$'
newest=$(sed -n "s/^[[:space:]]*default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" booking.control)
full=""     # versions with a full install script
steps=""    # upgrade scripts, as "A B"
for f in sql/booking--*.sql; do
	[ -e "$f" ] || continue
	f=${f#sql/booking--}
	f=${f%.sql}
	case $f in
	*--*) steps="$steps${f%%--*} ${f#*--}"$'\n' ;;
	*) full="$full$f"$'\n' ;;
	esac
done
# the newest version's script is built from sql/booking.sql by make
[ -f sql/booking.sql ] && full="$full$newest"$'\n'
versions=$(printf '%s\n%s%s' "$newest" "$full" "$(echo "$steps" | tr ' ' '\n')" | grep . | sort -u -V)
for v in $versions; do
	if ! [[ $v =~ $semver ]]; then
		fail "version $v (from sql/ or booking.control) is semantic (X.Y.Z)"
		done_
	fi
done
if [ "$(echo "$versions" | tail -n 1)" = "$newest" ]; then
	pass "booking.control's default_version $newest is the newest version (versions: $(echo $versions))"
else
	fail "booking.control's default_version $newest is the newest version (versions: $(echo $versions))"
fi

start=${BOOKING_UPGRADE_FROM:-$(echo "$full" | grep . | sort -V | head -n 1)}
path=("$start")
v=$start
while [ "$v" != "$newest" ]; do
	# the next step: the lowest version an upgrade script from v leads to
	next=$(echo "$steps" | awk -v v="$v" '$1 == v { print $2 }' | sort -V | head -n 1)
	if [ -z "$next" ] || ! newer "$next" "$v"; then
		fail "an upgrade script leads on from $v towards $newest (path so far: ${path[*]})"
		done_
	fi
	path+=("$next")
	v=$next
done
if [ ${#path[@]} -lt 2 ]; then
	fail "there is a previous version to upgrade from: sql/ has no upgrade script that leads to $newest (versions: $(echo $versions))"
	done_
fi
pass "the upgrade path: $(echo "${path[*]}" | sed 's/ / -> /g')"
# every upgrade script is walked
while read -r a b; do
	[ -n "$a" ] || continue
	walked=
	for ((i = 0; i + 1 < ${#path[@]}; i++)); do
		[ "${path[i]} ${path[i + 1]}" = "$a $b" ] && walked=1
	done
	newer "$start" "$a" && walked=skipped	# BOOKING_UPGRADE_FROM starts after it
	[ -n "$walked" ] || fail "sql/booking--$a--$b.sql lies on the upgrade path (it is never walked)"
done <<<"$steps"

fill=
for v in $(echo "$versions" | sort -r -V); do
	if [ -f "test/upgrade/fill--$v.sql" ] && ! newer "$v" "$start"; then
		fill=test/upgrade/fill--$v.sql
		break
	fi
done
if [ -z "$fill" ]; then
	fail "a test/upgrade/fill--X.sql exists for $start or older"
	done_
fi

# -- cluster and installed files -------------------------------------------------

if [ -z "${PGHOST:-}" ]; then
	. test/lib/cluster.sh
	booking_need_packages || exit 1
	booking_cluster_start "${BOOKING_UPGRADE_PORT:-54346}" || exit 1
	OWN_CLUSTER=1
fi
export PATH="${BOOKING_PG_BIN:-/usr/lib/postgresql/15/bin}:$PATH"
trap cleanup EXIT
trap 'exit 130' INT TERM
TMP=$(mktemp -d "${TMPDIR:-/tmp}/booking-upgrade.XXXXXX")

# the test must exercise this checkout's scripts, not a stale install
sharedir=$(pg_config --sharedir)/extension
stale=
for f in sql/booking--*.sql; do
	[ -e "$f" ] || continue
	cmp -s "$f" "$sharedir/${f#sql/}" || stale="$stale ${f#sql/}"
done
[ -f sql/booking.sql ] && ! cmp -s sql/booking.sql "$sharedir/booking--$newest.sql" && stale="$stale booking--$newest.sql"
grep -q "^default_version = '$newest'" "$sharedir/booking.control" 2>/dev/null || stale="$stale booking.control"
if [ -z "$stale" ]; then
	pass "the installed scripts are this checkout's"
else
	fail "the installed scripts are this checkout's (differ or missing:$stale; run make install)"
	done_
fi
check "PostgreSQL finds an update path from $start to $newest" postgres \
	"SELECT path FROM pg_catalog.pg_extension_update_paths('booking') WHERE source = '$start' AND target = '$newest'" \
	"$(echo "${path[*]}" | sed 's/ /--/g')"

# -- 1. the first version, filled ------------------------------------------------

for db in $OLD_DB $NEW_DB; do
	upsql -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null || exit 1
done
if upsql -d $OLD_DB -c "SET client_min_messages = warning" \
	-c "CREATE EXTENSION booking VERSION '$start' CASCADE" >"$TMP/create.out" 2>&1; then
	pass "CREATE EXTENSION booking VERSION '$start' CASCADE"
else
	fail "CREATE EXTENSION booking VERSION '$start' CASCADE"
	sed 's/^/#   /' "$TMP/create.out"
	done_
fi
filled=" "
# fill_with FILE VERSION: adds the data of FILE to the old database
fill_with() {
	if upsql -d $OLD_DB -f "$1" >"$TMP/fill.out" 2>&1; then
		pass "filled $2 with $1"
		filled="$filled${1#test/upgrade/fill--}"
		filled="${filled%.sql} "
	else
		fail "filled $2 with $1"
		sed 's/^/#   /' "$TMP/fill.out"
		done_
	fi
}
fill_with "$fill" "$start"

# checksums of every column the old schema has, table by table, and the
# sequences; computed again with the same column lists after the update
checksums() {
	local db=$1 rel cols
	while IFS='|' read -r rel cols; do
		q "$db" "SELECT '$rel', pg_catalog.count(*), pg_catalog.md5(pg_catalog.string_agg(t::text, E'\n' ORDER BY t::text)) FROM (SELECT $cols FROM booking.$rel) t"
	done <"$TMP/columns"
	while read -r rel; do
		q "$db" "SELECT '$rel', last_value, is_called FROM booking.$rel"
	done <"$TMP/sequences"
}

# -- 2. the steps ----------------------------------------------------------------

for ((i = 0; i + 1 < ${#path[@]}; i++)); do
	from=${path[i]}
	to=${path[i + 1]}
	q $OLD_DB "SELECT c.relname, pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' ORDER BY a.attnum)
		FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
		WHERE c.relnamespace = 'booking'::pg_catalog.regnamespace AND c.relkind = 'r'
		GROUP BY c.relname ORDER BY c.relname" >"$TMP/columns"
	q $OLD_DB "SELECT relname FROM pg_catalog.pg_class WHERE relnamespace = 'booking'::pg_catalog.regnamespace AND relkind = 'S' ORDER BY 1" >"$TMP/sequences"
	checksums $OLD_DB >"$TMP/before"
	echo "# $from: $(wc -l <"$TMP/columns") tables, $(wc -l <"$TMP/sequences") sequences: $(q $OLD_DB "SELECT pg_catalog.count(*) FROM booking.bookings") bookings, $(q $OLD_DB "SELECT pg_catalog.count(*) FROM booking.resources") resources"

	if upsql -d $OLD_DB -c "ALTER EXTENSION booking UPDATE TO '$to'" >"$TMP/update.out" 2>&1; then
		pass "ALTER EXTENSION booking UPDATE TO '$to' (from $from)"
	else
		fail "ALTER EXTENSION booking UPDATE TO '$to' (from $from)"
		sed 's/^/#   /' "$TMP/update.out"
		done_
	fi
	check "the extension is at $to" $OLD_DB "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'booking'" "$to"

	checksums $OLD_DB >"$TMP/after"
	if diff -u "$TMP/before" "$TMP/after" >"$TMP/data.diff"; then
		pass "$from -> $to: every row of every column of $from and every sequence survived (checksums equal)"
	else
		fail "$from -> $to: every row of every column of $from and every sequence survived (checksums equal)"
		sed 's/^/#   /' "$TMP/data.diff"
	fi
	# data of the kinds the new version added, for the next step to carry
	if [ "$to" != "$newest" ] && [ -f "test/upgrade/fill--$to.sql" ]; then
		fill_with "test/upgrade/fill--$to.sql" "$to"
	fi
done

# the grants of fill--0.7.0.sql, on the functions 0.8.0 replaced
if [[ $filled == *" 0.7.0 "* ]]; then
	check "grant_client's role may still reserve, with and without metadata (0.8.0 replaced the functions)" $OLD_DB \
		"SELECT pg_catalog.has_function_privilege('booking_upgrade_client',
		   'booking.reserve_seat(bigint,text,integer,interval,text,interval,jsonb)', 'EXECUTE'),
		   pg_catalog.has_function_privilege('booking_upgrade_client',
		   'booking.join_waitlist(bigint,text,integer,text,jsonb)', 'EXECUTE')" "t|t"
	check "an EXECUTE given by hand, WITH GRANT OPTION, is on the new reserve_stay; nothing more" $OLD_DB \
		"SELECT pg_catalog.has_function_privilege('booking_upgrade_direct',
		   'booking.reserve_stay(bigint,text,tstzrange,interval,text,interval,jsonb)', 'EXECUTE WITH GRANT OPTION'),
		   pg_catalog.has_function_privilege('booking_upgrade_direct',
		   'booking.reserve_seat(bigint,text,integer,interval,text,interval,jsonb)', 'EXECUTE')" "t|f"
	check "grant_client again adds get_booking for the old role (0.8.0)" $OLD_DB \
		"SELECT booking.grant_client('booking_upgrade_client') ~ '20 calls',
		   pg_catalog.has_function_privilege('booking_upgrade_client', 'booking.get_booking(bigint)', 'EXECUTE')" "t|t"
	# pg_dump keeps them: they are the administrator's, not initial privileges
	dumped=$(pg_dump -d $OLD_DB --schema-only 2>&1 | grep -cE '^GRANT ALL ON FUNCTION booking\.(reserve_seat|reserve_stay)\(.*metadata jsonb.* TO booking_upgrade_(client|direct)( WITH GRANT OPTION)?;$')
	if [ "$dumped" = 3 ]; then
		pass "pg_dump keeps the grants 0.8.0 gave back (3 GRANT lines on reserve_seat and reserve_stay)"
	else
		fail "pg_dump keeps the grants 0.8.0 gave back (3 GRANT lines on reserve_seat and reserve_stay; got $dumped)"
	fi
	# a fresh install has no such grants: the catalogs are compared without them
	upsql -d $OLD_DB -c "DROP OWNED BY booking_upgrade_client, booking_upgrade_direct" >/dev/null ||
		fail "DROP OWNED BY the roles of fill--0.7.0.sql"
fi

# -- 3. the upgraded schema equals a fresh install --------------------------------

upsql -d $NEW_DB -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE" >/dev/null ||
	fail "CREATE EXTENSION booking CASCADE (fresh $newest)"
upsql -At -d $OLD_DB -f test/upgrade/catalog.sql >"$TMP/catalog.upgraded" 2>&1
upsql -At -d $NEW_DB -f test/upgrade/catalog.sql >"$TMP/catalog.fresh" 2>&1
if diff -u "$TMP/catalog.fresh" "$TMP/catalog.upgraded" >"$TMP/catalog.diff"; then
	pass "the upgraded catalog equals a fresh install of $newest ($(wc -l <"$TMP/catalog.fresh") facts: types, tables, columns, defaults, constraints, indexes, sequences, functions, grants, comments, members)"
else
	fail "the upgraded catalog equals a fresh install of $newest (- fresh, + upgraded)"
	grep '^[-+][^-+]' "$TMP/catalog.diff" | head -n 40 | sed 's/^/#   /'
fi
[ "$(wc -l <"$TMP/catalog.fresh")" -gt 100 ] || fail "the catalog dump has more than 100 facts"

# -- 4. behaviour on the old rows --------------------------------------------------

B=$OLD_DB

# the striped session of fill--0.2.0.sql: 20 seats over 4 stripes, 16 free;
# 2 confirmed (uma), a live hold (vic), a lapsed hold (wes), a cancel (xia)
if [[ $filled == *" 0.2.0 "* ]]; then
	arena=$(q $B "SELECT id FROM booking.resources WHERE name = 'Arena'")
	check "the old striped session: 17 seats left (its lapsed hold counts as free)" $B \
		"SELECT booking.seats_left($arena)" 17
	check "17 seats on it in one call: ok, the lapsed hold is reclaimed" $B \
		"SELECT code FROM booking.reserve_seat($arena, 'yan', 17);
		 SELECT status FROM booking.bookings WHERE resource_id = $arena AND guest = 'wes'" "ok;expired"
	check "one more seat: sold_out, and its stripes hold no free seat" $B \
		"SELECT code FROM booking.reserve_seat($arena, 'zed');
		 SELECT pg_catalog.sum(free) FROM booking.resource_stripes WHERE resource_id = $arena" "sold_out;0"
	check "cancel of its old confirmed booking and confirm of its old live hold: ok, 2 seats free again" $B \
		"SELECT code FROM booking.cancel((SELECT id FROM booking.bookings WHERE resource_id = $arena AND guest = 'uma'));
		 SELECT code FROM booking.confirm((SELECT id FROM booking.bookings WHERE resource_id = $arena AND guest = 'vic'));
		 SELECT booking.seats_left($arena)" "ok;ok;2"
fi

# the sessions, stays, pool and keys of fill--0.1.0.sql
if [[ $filled == *" 0.1.0 "* ]]; then
	next_id=$(q $B "SELECT last_value + 1 FROM booking.bookings_id_seq")
	check "reserve_seat on an old session with a free seat: ok 201, the next booking id" $B \
		"SELECT code, http_status, booking_id FROM booking.reserve_seat(1, 'kim')" "ok|201|$next_id"
	check "the session is now full: sold_out 409" $B \
		"SELECT code, http_status FROM booking.reserve_seat(1, 'lee')" "sold_out|409"
	check "a full old session whose only free seat is a lapsed hold: ok, the hold is reclaimed" $B \
		"SELECT code, http_status FROM booking.reserve_seat(2, 'mia')" "ok|201"
	check "the lapsed hold is expired and the counter is right" $B \
		"SELECT (SELECT status FROM booking.bookings WHERE id = 4), taken, booking.seats_left(2) FROM booking.resources WHERE id = 2" "expired|3|0"
	check "hold_expire moves the old lapsed stay hold to expired" $B \
		"SELECT booking.hold_expire(); SELECT status FROM booking.bookings WHERE id = 10" "1;expired"
	check "reserve_stay over an old confirmed stay: unavailable 409" $B \
		"SELECT code, http_status FROM booking.reserve_stay(3, 'ned', '[2030-06-03, 2030-06-05)')" "unavailable|409"
	check "reserve_stay over an old expired stay: ok 201" $B \
		"SELECT code, http_status FROM booking.reserve_stay(3, 'ned', '[2030-06-04, 2030-06-06)')" "ok|201"
	check "reserve_stay over an old live hold: unavailable" $B \
		"SELECT code FROM booking.reserve_stay(3, 'ola', '[2030-06-11, 2030-06-13)')" "unavailable"
	check "reserve_stay over an old lapsed hold: ok" $B \
		"SELECT code FROM booking.reserve_stay(3, 'ola', '[2030-08-01, 2030-08-02)')" "ok"
	check "reserve_stay_any when the old group holds every unit: sold_out" $B \
		"SELECT code FROM booking.reserve_stay_any(4, 'oli', '[2030-07-02, 2030-07-03)')" "sold_out"
	check "reserve_stay_any on other dates: ok, the lowest unit" $B \
		"SELECT code FROM booking.reserve_stay_any(4, 'oli', '[2030-07-05, 2030-07-06)');
		 SELECT resource_id FROM booking.bookings WHERE guest = 'oli'" "ok;5"
	check "cancel an old confirmed booking: ok 200, its seat is free" $B \
		"SELECT code, http_status FROM booking.cancel(1); SELECT booking.seats_left(1)" "ok|200;1"
	check "cancel it again: invalid_state 409" $B \
		"SELECT code, http_status FROM booking.cancel(1)" "invalid_state|409"
	check "confirm an old live hold: ok 200" $B \
		"SELECT code, http_status FROM booking.confirm(2); SELECT status FROM booking.bookings WHERE id = 2" "ok|200;confirmed"
	check "every old stay's footprint is its range (no buffers before 0.5.0)" $B \
		"SELECT pg_catalog.count(*) FROM booking.bookings WHERE (during IS NULL) <> (blocked IS NULL) OR blocked <> during" "0"
	check "move_stay of an old confirmed stay: ok 200, same id, new range" $B \
		"SELECT code, http_status, booking_id = s.id FROM (SELECT min(id) AS id FROM booking.bookings
		  WHERE resource_id = 3 AND status = 'confirmed' AND during IS NOT NULL) s,
		  LATERAL booking.move_stay(s.id, '[2031-01-01, 2031-01-03)') m" "ok|200|t"
	check "set_buffer on an old room re-pads its stays: ok" $B \
		"SELECT code FROM booking.set_buffer(3, '0', '0')" "ok"
	check "reduce of an old confirmed seat booking to zero: ok, cancelled" $B \
		"CREATE TEMP TABLE r AS SELECT min(id) AS id FROM booking.bookings WHERE during IS NULL AND status = 'confirmed';
		 SELECT m.code FROM r, LATERAL booking.reduce(r.id, (SELECT quantity FROM booking.bookings b WHERE b.id = r.id)) m;
		 SELECT b.status FROM r JOIN booking.bookings b USING (id)" "ok;cancelled"
	check "an idempotency key stored before the update replays its result" $B \
		"SELECT code, booking_id, http_status, message, replayed FROM booking.reserve_seat(1, 'alice', 1, idempotency_key => 'upgrade-key-1')" \
		"ok|1|201|Reserved 1 seat on resource 1.|t"
	check "an old key used for another request: idempotency_mismatch" $B \
		"SELECT code, http_status FROM booking.reserve_seat(1, 'alice', 2, idempotency_key => 'upgrade-key-1')" "idempotency_mismatch|422"
	check "an old stored refusal replays too" $B \
		"SELECT code, booking_id, replayed FROM booking.cancel(5, idempotency_key => 'upgrade-key-2')" "invalid_state|5|t"
	check "a full old session takes a line, and a cancel of an old booking offers its seat to the line (0.6.0)" $B \
		"SELECT booking.add_consumer('upgrade');
		 SELECT code FROM booking.reserve_seat(1, 'pat', booking.seats_left(1));
		 SELECT code, http_status FROM booking.join_waitlist(1, 'quinn');
		 SELECT code FROM booking.cancel((SELECT min(id) FROM booking.bookings WHERE resource_id = 1 AND status = 'confirmed'));
		 SELECT status FROM booking.bookings WHERE guest = 'quinn'" "t;ok;waitlisted|202;ok;pending"
	check "the changes since a consumer registered wrote events, numbered 1, 2, ... per resource (0.6.0)" $B \
		"SELECT pg_catalog.string_agg(kind, ',' ORDER BY seq DESC) FROM (SELECT kind, seq
		   FROM booking.claim_events('upgrade', 1000) WHERE resource_id = 1 ORDER BY seq DESC LIMIT 3) t;
		 SELECT pg_catalog.count(*) FROM booking.events GROUP BY resource_id HAVING pg_catalog.max(seq) <> pg_catalog.count(*)" \
		"waitlist_offered,cancelled,waitlist_joined"
	if [ "$(q $B "SELECT pg_catalog.to_regprocedure('booking.set_stripes(bigint,integer)') IS NOT NULL")" = t ]; then
		check "set_stripes on an old session with 6 of 10 seats taken: ok" $B \
			"SELECT code FROM booking.set_stripes(7, 4)" "ok"
		check "its 4 free seats sell and the fifth buyer gets sold_out" $B \
			"SELECT pg_catalog.string_agg(r.code, ',' ORDER BY g) FROM pg_catalog.generate_series(1, 5) g, LATERAL booking.reserve_seat(7, 'buyer ' || g) r" \
			"ok,ok,ok,ok,sold_out"
		check "back to one counter: the old session is exactly full" $B \
			"SELECT code FROM booking.set_stripes(7, 0); SELECT booking.seats_left(7), taken FROM booking.resources WHERE id = 7" "ok;0|10"
	fi
fi

check "old bookings have no metadata; a new one on an old resource has, and get_booking reads both (0.8.0)" $B \
	"SELECT pg_catalog.count(*) FILTER (WHERE metadata IS NOT NULL) FROM booking.bookings;
	 SELECT code FROM booking.reserve_seat(booking.create_resource('meta show', 2), 'meta',
	   lock_timeout => '1s', metadata => '{\"order\": 7}');
	 SELECT guest, metadata ->> 'order' FROM booking.get_booking((SELECT max(id) FROM booking.bookings WHERE guest = 'meta'));
	 SELECT guest IS NOT NULL, metadata IS NULL FROM booking.get_booking((SELECT min(id) FROM booking.bookings))" \
	"0;ok;meta|7;t|t"
check "no two blocking stays of a resource overlap" $B \
	"SELECT pg_catalog.count(*) FROM booking.bookings a JOIN booking.bookings b ON a.resource_id = b.resource_id AND a.id < b.id
	 WHERE a.during && b.during AND a.validity && b.validity AND a.status IN ('pending', 'confirmed') AND b.status IN ('pending', 'confirmed')" 0
check "every seat counter equals its pending and confirmed seat bookings" $B \
	"SELECT pg_catalog.count(*) FROM booking.resources r
	  WHERE CASE WHEN r.stripes > 1
	             THEN r.capacity - (SELECT coalesce(sum(free), 0) FROM booking.resource_stripes s WHERE s.resource_id = r.id)
	             ELSE r.taken END
	        <> (SELECT coalesce(sum(quantity), 0) FROM booking.bookings b
	             WHERE b.resource_id = r.id AND b.during IS NULL AND b.status IN ('pending', 'confirmed'))" 0
done_
