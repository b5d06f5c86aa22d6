#!/usr/bin/env bash
# test/upgrade/upgrade.sh: walks the upgrade path from the previous version to
# the newest one (booking.control's default_version).
#
#  1. Installs the previous version in a fresh database and fills it with
#     plain SQL (test/upgrade/fill--<version>.sql: the newest fill file that is
#     not newer than the previous version).
#  2. Runs ALTER EXTENSION booking UPDATE.
#  3. Checks that the data survived: a checksum of every column the old schema
#     had, table by table, and the sequences.
#  4. Checks that the upgraded schema equals a fresh install of the newest
#     version: test/upgrade/catalog.sql dumps both catalogs, diff compares.
#  5. Checks that the API works on the old rows: reserve_seat (including
#     reclaiming a lapsed hold), reserve_stay refused on an overlap,
#     reserve_stay_any, cancel, confirm, a stored idempotency result replayed,
#     hold_expire, and set_stripes on an old session.
#
# Versions come from sql/booking--*.sql and booking.control. With a single
# version there is nothing to upgrade from: the script says "skip" and exits 0.
# BOOKING_UPGRADE_FROM=X.Y.Z starts from an older version instead of the previous one.
# Uses the cluster named by PGHOST/PGPORT/PGUSER (test/run.sh sets them);
# without PGHOST it starts a private cluster on ${BOOKING_UPGRADE_PORT:-54346}.
# The installed extension files must be those of this checkout.
set -u
cd "$(dirname "$0")/../.."
ROOT=$PWD

FAILED=0
OLD_DB=booking_upgrade_old
NEW_DB=booking_upgrade_new
TMP=
OWN_CLUSTER=
export PGTZ=UTC

pass() { echo "ok - $1"; }
fail() { echo "not ok - $1"; FAILED=$((FAILED + 1)); }
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
	[ -n "$TMP" ] && rm -rf "$TMP"
	[ -n "$OWN_CLUSTER" ] && booking_cluster_stop
}

# -- versions ------------------------------------------------------------------

semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$'
newest=$(sed -n "s/^[[:space:]]*default_version[[:space:]]*=[[:space:]]*'\([^']*\)'.*/\1/p" booking.control)
versions=$(
	{
		echo "$newest"
		for f in sql/booking--*.sql; do
			f=${f#sql/booking--}
			f=${f%.sql}
			echo "${f%%--*}"
			case $f in *--*) echo "${f#*--}" ;; esac
		done
	} | sort -u -V
)
for v in $versions; do
	if ! [[ $v =~ $semver ]]; then
		fail "version $v (from sql/ or booking.control) is semantic (X.Y.Z)"
		exit 1
	fi
done
previous=$(echo "$versions" | awk -v n="$newest" '$0 == n { print prev; exit } { prev = $0 }')
# BOOKING_UPGRADE_FROM=X.Y.Z walks a longer path, from an older version
if [ -n "$previous" ] && [ -n "${BOOKING_UPGRADE_FROM:-}" ]; then
	previous=$BOOKING_UPGRADE_FROM
fi
if [ -z "$previous" ]; then
	echo "ok - skip: $newest is the only version, there is nothing to upgrade from"
	exit 0
fi
echo "# upgrade $previous -> $newest (versions: $(echo $versions))"
if [ "$(echo "$versions" | tail -n 1)" != "$newest" ]; then
	fail "booking.control's default_version $newest is the newest version"
fi

fill=
for v in $(echo "$versions" | sort -r -V); do
	if [ -f "test/upgrade/fill--$v.sql" ] && [ "$(printf '%s\n%s\n' "$v" "$previous" | sort -V | tail -n 1)" = "$previous" ]; then
		fill=test/upgrade/fill--$v.sql
		break
	fi
done
if [ -z "$fill" ]; then
	fail "a test/upgrade/fill--X.sql exists for $previous or older"
	exit 1
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
	cmp -s "$f" "$sharedir/${f#sql/}" || stale="$stale ${f#sql/}"
done
[ -f sql/booking.sql ] && ! cmp -s sql/booking.sql "$sharedir/booking--$newest.sql" && stale="$stale booking--$newest.sql"
if [ -z "$stale" ]; then
	pass "the installed scripts are this checkout's"
else
	fail "the installed scripts are this checkout's (differ or missing:$stale; run make install)"
	exit 1
fi
check "an update path leads from $previous to $newest" postgres \
	"SELECT path IS NOT NULL FROM pg_catalog.pg_extension_update_paths('booking') WHERE source = '$previous' AND target = '$newest'" t

# -- 1. the previous version, filled -------------------------------------------

for db in $OLD_DB $NEW_DB; do
	upsql -d postgres -c "SET client_min_messages = warning" -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null || exit 1
done
if upsql -d $OLD_DB -c "SET client_min_messages = warning" \
	-c "CREATE EXTENSION booking VERSION '$previous' CASCADE" >"$TMP/create.out" 2>&1; then
	pass "CREATE EXTENSION booking VERSION '$previous' CASCADE"
else
	fail "CREATE EXTENSION booking VERSION '$previous' CASCADE"
	sed 's/^/#   /' "$TMP/create.out"
	exit 1
fi
if upsql -d $OLD_DB -f "$fill" >"$TMP/fill.out" 2>&1; then
	pass "filled $previous with $fill"
else
	fail "filled $previous with $fill"
	sed 's/^/#   /' "$TMP/fill.out"
	exit 1
fi

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
q $OLD_DB "SELECT c.relname, pg_catalog.string_agg(pg_catalog.quote_ident(a.attname), ', ' ORDER BY a.attnum)
	FROM pg_catalog.pg_class c JOIN pg_catalog.pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
	WHERE c.relnamespace = 'booking'::pg_catalog.regnamespace AND c.relkind = 'r'
	GROUP BY c.relname ORDER BY c.relname" >"$TMP/columns"
q $OLD_DB "SELECT relname FROM pg_catalog.pg_class WHERE relnamespace = 'booking'::pg_catalog.regnamespace AND relkind = 'S' ORDER BY 1" >"$TMP/sequences"
checksums $OLD_DB >"$TMP/before"
echo "# $(wc -l <"$TMP/columns") tables, $(wc -l <"$TMP/sequences") sequences: $(q $OLD_DB "SELECT pg_catalog.count(*) FROM booking.bookings") bookings, $(q $OLD_DB "SELECT pg_catalog.count(*) FROM booking.resources") resources"

# -- 2. ALTER EXTENSION booking UPDATE -------------------------------------------

if upsql -d $OLD_DB -c "ALTER EXTENSION booking UPDATE" >"$TMP/update.out" 2>&1; then
	pass "ALTER EXTENSION booking UPDATE"
else
	fail "ALTER EXTENSION booking UPDATE"
	sed 's/^/#   /' "$TMP/update.out"
	exit 1
fi
check "the extension is at $newest" $OLD_DB "SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'booking'" "$newest"

# -- 3. the data survived ---------------------------------------------------------

checksums $OLD_DB >"$TMP/after"
if diff -u "$TMP/before" "$TMP/after" >"$TMP/data.diff"; then
	pass "every row of every old column and every sequence survived (checksums equal)"
else
	fail "every row of every old column and every sequence survived (checksums equal)"
	sed 's/^/#   /' "$TMP/data.diff"
fi

# -- 4. the upgraded schema equals a fresh install --------------------------------

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

# -- 5. behaviour on the old rows --------------------------------------------------

B=$OLD_DB
check "reserve_seat on an old session with a free seat: ok 201, the next booking id" $B \
	"SELECT code, http_status, booking_id FROM booking.reserve_seat(1, 'kim')" "ok|201|13"
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
check "an idempotency key stored before the update replays its result" $B \
	"SELECT code, booking_id, http_status, message, replayed FROM booking.reserve_seat(1, 'alice', 1, idempotency_key => 'upgrade-key-1')" \
	"ok|1|201|Reserved 1 seat on resource 1.|t"
check "an old key used for another request: idempotency_mismatch" $B \
	"SELECT code, http_status FROM booking.reserve_seat(1, 'alice', 2, idempotency_key => 'upgrade-key-1')" "idempotency_mismatch|422"
check "an old stored refusal replays too" $B \
	"SELECT code, booking_id, replayed FROM booking.cancel(5, idempotency_key => 'upgrade-key-2')" "invalid_state|5|t"
check "no two blocking stays of a resource overlap" $B \
	"SELECT pg_catalog.count(*) FROM booking.bookings a JOIN booking.bookings b ON a.resource_id = b.resource_id AND a.id < b.id
	 WHERE a.during && b.during AND a.validity && b.validity AND a.status IN ('pending', 'confirmed') AND b.status IN ('pending', 'confirmed')" 0
check "every seat counter equals its pending and confirmed seat bookings" $B \
	"SELECT pg_catalog.count(*) FROM booking.resources r WHERE r.stripes <= 1 AND r.taken <> (SELECT coalesce(sum(quantity), 0) FROM booking.bookings b
	 WHERE b.resource_id = r.id AND b.during IS NULL AND b.status IN ('pending', 'confirmed'))" 0
if [ "$(q $B "SELECT pg_catalog.to_regprocedure('booking.set_stripes(bigint,integer)') IS NOT NULL")" = t ]; then
	check "set_stripes on an old session with 6 of 10 seats taken: ok" $B \
		"SELECT code FROM booking.set_stripes(7, 4)" "ok"
	check "its 4 free seats sell and the fifth buyer gets sold_out" $B \
		"SELECT pg_catalog.string_agg(r.code, ',' ORDER BY g) FROM pg_catalog.generate_series(1, 5) g, LATERAL booking.reserve_seat(7, 'buyer ' || g) r" \
		"ok,ok,ok,ok,sold_out"
	check "back to one counter: the old session is exactly full" $B \
		"SELECT code FROM booking.set_stripes(7, 0); SELECT booking.seats_left(7), taken FROM booking.resources WHERE id = 7" "ok;0|10"
fi

if [ "$FAILED" -eq 0 ]; then
	echo "# all checks passed"
	exit 0
fi
echo "# $FAILED check(s) failed"
exit 1
