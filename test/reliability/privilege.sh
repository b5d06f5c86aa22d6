#!/usr/bin/env bash
# privilege.sh: least privilege, and hostile objects in public.
#  1. The catalog: every SECURITY DEFINER function of the extension pins
#     search_path = pg_catalog, pg_temp; nothing is executable by PUBLIC.
#  2. A login role with exactly the documented grants (USAGE on schema
#     booking, EXECUTE on its functions, SELECT on booking.resources and
#     booking.bookings), over its own connection, runs the whole API
#     (privilege_scenario.sql, output = privilege_scenario.out), and cannot
#     INSERT, UPDATE, DELETE or TRUNCATE the tables, read the stored keys,
#     draw ids from the sequences, or create objects in schema booking.  A
#     role without EXECUTE cannot call the API at all.
#  3. Hostile objects: public.now(), public.clock_timestamp(),
#     public.lower()/upper() for tstzrange, public.nextval(regclass), an
#     aggregate public.sum(integer), operators public.= for bigint (always
#     true), public.&& for tstzrange (always false), public.<= and public.+
#     for integer, tables public.bookings/resources/idempotency_keys, temp
#     tables of the same names, and a search_path for the role that puts
#     public before pg_catalog.  The scenario's output is byte for byte the
#     clean one, no hostile object was ever called, the public tables stay
#     empty.  (A sanity check first shows the hostile objects do fool plain
#     SQL of that role.)
#  4. Settings: the application role cannot SET (or set_config)
#     booking.idempotency_retention (42501), so its hold_expire(100000)
#     cannot purge keys younger than the server's retention: a key it stored
#     still replays afterwards, and books nothing twice.  Nor can a value it
#     SETs as a placeholder before the library is loaded: once loaded, the
#     server's retention counts.  booking.lock_timeout stays settable by it.
#  5. A schema "booking" that exists before CREATE EXTENSION is refused
#     (42501, a message that starts with schema "booking") when a
#     non-superuser owns it, or has CREATE on it, or it already holds an
#     object (here a better-matching booking.reserve_seat(integer, text,
#     integer) planted by a non-superuser), and nothing is created; an empty
#     one owned by the installing superuser is accepted.
set -u
cd "$(dirname "$0")" || exit 1
. ./lib.bash

APP=booking_rel_app
NOBODY=booking_rel_nobody
OWNER=booking_rel_schema_owner
CLEAN=booking_rel_priv_clean
EVIL=booking_rel_priv_hostile
SCHEMA_DBS="booking_rel_schema_owned booking_rel_schema_create booking_rel_schema_planted booking_rel_schema_mine"

drop_roles() {
	local db
	for db in $SCHEMA_DBS; do
		rel_psql -d postgres -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1
	done
	for db in $CLEAN $EVIL; do
		rel_psql -d "$db" -c "DROP OWNED BY $APP, $NOBODY" >/dev/null 2>&1
	done
	rel_psql -d postgres -c "DROP ROLE IF EXISTS $APP" -c "DROP ROLE IF EXISTS $NOBODY" \
		-c "DROP ROLE IF EXISTS $OWNER" >/dev/null 2>&1
}
finish() { drop_roles; rel_cleanup; }
trap finish EXIT

rel_db $EVIL
rel_db $CLEAN
rel_psql -d postgres -c "SET client_min_messages = warning" \
	-c "DROP ROLE IF EXISTS $APP" -c "DROP ROLE IF EXISTS $NOBODY" \
	-c "CREATE ROLE $APP LOGIN" -c "CREATE ROLE $NOBODY LOGIN" >/dev/null
for db in $CLEAN $EVIL; do
	rel_psql -d "$db" \
		-c "SELECT booking.grant_client('$APP')" \
		-c "SELECT booking.grant_admin('$APP')" \
		-c "GRANT USAGE ON SCHEMA booking TO $NOBODY" \
		-c "GRANT SELECT ON booking.resources, booking.bookings TO $NOBODY" >/dev/null
done

# as_role ROLE DB SQL...: runs SQL over the role's own connection
as_role() {
	local role=$1 db=$2
	shift 2
	"$REL_PGBIN/psql" -X -q -At -h "$REL_HOST" -p "$REL_PORT" -U "$role" -d "$db" "$@"
}

# refused DESCRIPTION SQL: the application role gets 42501 for SQL
refused() {
	local got
	got=$(as_role $APP $CLEAN -v VERBOSITY=verbose -c "$2" 2>&1)
	if echo "$got" | grep -q '^ERROR:  42501:'; then
		pass "the application role cannot $1 (42501)"
	else
		fail "the application role cannot $1 (42501)"
		echo "#   got: $got"
	fi
}

# 1. the catalog
REL_DB=$CLEAN
ext_functions="SELECT p.* FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
	AND d.deptype = 'e' JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'booking'"
nfun=$(q "SELECT count(*) FROM ($ext_functions) f")
ndef=$(q "SELECT count(*) FROM ($ext_functions) f WHERE prosecdef")
check "all $ndef SECURITY DEFINER functions (of $nfun) pin search_path = pg_catalog, pg_temp" \
	"SELECT coalesce(string_agg(oid::regprocedure::text, ', '), 'none') FROM ($ext_functions) f
	  WHERE prosecdef AND NOT coalesce('search_path=pg_catalog, pg_temp' = ANY (proconfig), false)" none
check "no function of the extension is executable by PUBLIC" \
	"SELECT count(*) FROM ($ext_functions) f WHERE has_function_privilege('public', oid, 'EXECUTE')" 0

# 2. least privilege, over the role's own connection
refused "INSERT into booking.bookings" \
	"INSERT INTO booking.bookings (resource_id, guest, quantity, status, validity) VALUES (1, 'x', 1, 'confirmed', tstzrange(now(), NULL))"
refused "UPDATE booking.bookings" "UPDATE booking.bookings SET status = 'cancelled'"
refused "DELETE from booking.bookings" "DELETE FROM booking.bookings"
refused "TRUNCATE booking.bookings" "TRUNCATE booking.bookings"
refused "INSERT into booking.resources" "INSERT INTO booking.resources (name, capacity) VALUES ('x', 1)"
refused "UPDATE booking.resources" "UPDATE booking.resources SET taken = 0"
refused "DELETE from booking.resources" "DELETE FROM booking.resources"
refused "TRUNCATE booking.resources" "TRUNCATE booking.resources"
refused "read booking.idempotency_keys" "SELECT count(*) FROM booking.idempotency_keys"
refused "delete booking.idempotency_keys" "DELETE FROM booking.idempotency_keys"
refused "draw a booking id (nextval)" "SELECT nextval('booking.bookings_id_seq')"
refused "move a sequence (setval)" "SELECT setval('booking.resources_id_seq', 1)"
refused "create a table in schema booking" "CREATE TABLE booking.sneaky (id int)"
refused "create a function in schema booking" "CREATE FUNCTION booking.sneaky() RETURNS int LANGUAGE sql AS 'SELECT 1'"
refused "disable the triggers of booking.bookings" "ALTER TABLE booking.bookings DISABLE TRIGGER ALL"
if [ "$(q "SELECT to_regclass('booking.resource_stripes') IS NOT NULL")" = t ]; then
	refused "UPDATE booking.resource_stripes" "UPDATE booking.resource_stripes SET free = 1000"
fi
got=$(as_role $NOBODY $CLEAN -c "\\set VERBOSITY verbose" -c "SELECT code FROM booking.reserve_seat(1, 'x', 1)" 2>&1)
if echo "$got" | grep -q '^ERROR:  42501:'; then
	pass "a role without EXECUTE cannot call reserve_seat (42501)"
else
	fail "a role without EXECUTE cannot call reserve_seat (42501)"
	echo "#   got: $got"
fi

clean_out="$REL_TMP/scenario.clean"
if as_role $APP $CLEAN -f privilege_scenario.sql >"$clean_out" 2>&1; then
	pass "the application role runs the whole API scenario ($(wc -l <"$clean_out") results)"
else
	fail "the application role runs the whole API scenario"
	tail -n 5 "$clean_out" | sed 's/^/#   /'
fi
if diff -u privilege_scenario.out <(grep -v '^stripes' "$clean_out") >"$REL_TMP/scenario.diff"; then
	pass "its results are exactly privilege_scenario.out (3 seats sold of 5 asked, overlaps refused, replays, ...)"
else
	fail "its results are exactly privilege_scenario.out"
	sed 's/^/#   /' "$REL_TMP/scenario.diff" | head -n 40
fi
if [ "$(q "SELECT to_regproc('booking.set_stripes') IS NOT NULL")" = t ]; then
	want="stripes create_resource|7
stripes set_stripes|t|ok||200|f
stripes reserve_seat|t|ok|201
stripes reserve_seat|t|ok|201
stripes reserve_seat|f|sold_out|409
stripes reserve_seat|t|ok|201
stripes seats_left|0"
	if [ "$(grep '^stripes' "$clean_out")" = "$want" ]; then
		pass "... and on a striped session: 4 + 4 + 2 of 10 seats sold, the third 4 refused"
	else
		fail "... and on a striped session: 4 + 4 + 2 of 10 seats sold, the third 4 refused"
		grep '^stripes' "$clean_out" | sed 's/^/#   got: /'
	fi
fi

# 3. hostile objects in public, first in the role's search_path
REL_DB=$EVIL
rel_psql -d $EVIL >/dev/null <<EOF
SET client_min_messages = warning;
CREATE TABLE public.hostile_calls (what text NOT NULL, at timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp());
GRANT INSERT, SELECT ON public.hostile_calls TO PUBLIC;
CREATE FUNCTION public.hostile_log(what text) RETURNS void LANGUAGE sql
    AS \$\$ INSERT INTO public.hostile_calls (what) VALUES (what) \$\$;
CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM public.hostile_log('now'); RETURN '2000-01-01 00:00+00'; END \$\$;
CREATE FUNCTION public.clock_timestamp() RETURNS timestamptz LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM public.hostile_log('clock_timestamp'); RETURN '2000-01-01 00:00+00'; END \$\$;
CREATE FUNCTION public.lower(tstzrange) RETURNS timestamptz LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM public.hostile_log('lower'); RETURN '2000-01-01 00:00+00'; END \$\$;
CREATE FUNCTION public.upper(tstzrange) RETURNS timestamptz LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM public.hostile_log('upper'); RETURN '2000-01-01 00:00+00'; END \$\$;
CREATE FUNCTION public.nextval(regclass) RETURNS bigint LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM public.hostile_log('nextval'); RETURN 1; END \$\$;
CREATE FUNCTION public.hostile_sum(bigint, integer) RETURNS bigint LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM public.hostile_log('sum'); RETURN 0; END \$\$;
CREATE AGGREGATE public.sum(integer) (sfunc = public.hostile_sum, stype = bigint, initcond = '0');
CREATE FUNCTION public.hostile_eq(bigint, bigint) RETURNS boolean LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM public.hostile_log('='); RETURN true; END \$\$;
CREATE OPERATOR public.= (FUNCTION = public.hostile_eq, LEFTARG = bigint, RIGHTARG = bigint);
CREATE FUNCTION public.hostile_overlaps(tstzrange, tstzrange) RETURNS boolean LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM public.hostile_log('&&'); RETURN false; END \$\$;
CREATE OPERATOR public.&& (FUNCTION = public.hostile_overlaps, LEFTARG = tstzrange, RIGHTARG = tstzrange);
CREATE FUNCTION public.hostile_le(integer, integer) RETURNS boolean LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM public.hostile_log('<='); RETURN true; END \$\$;
CREATE OPERATOR public.<= (FUNCTION = public.hostile_le, LEFTARG = integer, RIGHTARG = integer);
CREATE FUNCTION public.hostile_plus(integer, integer) RETURNS integer LANGUAGE plpgsql
    AS \$\$ BEGIN PERFORM public.hostile_log('+'); RETURN 0; END \$\$;
CREATE OPERATOR public.+ (FUNCTION = public.hostile_plus, LEFTARG = integer, RIGHTARG = integer);
CREATE TABLE public.resources (LIKE booking.resources);
CREATE TABLE public.bookings (LIKE booking.bookings);
CREATE TABLE public.idempotency_keys (LIKE booking.idempotency_keys);
GRANT ALL ON public.resources, public.bookings, public.idempotency_keys TO PUBLIC;
ALTER ROLE $APP IN DATABASE $EVIL SET search_path = public, pg_catalog, booking;
EOF
[ $? -eq 0 ] || fail "create the hostile objects"

sanity=$(as_role $APP $EVIL -c "SELECT (1::bigint = 2::bigint)::text || ' ' || (now() = '2000-01-01 00:00+00')::text
	|| ' ' || (tstzrange('2030-01-01', '2030-01-03') && tstzrange('2030-01-02', '2030-01-04'))::text
	|| ' ' || (2 <= 1)::text || ' ' || (2 + 2)::text || ' ' || (SELECT sum(x) FROM (VALUES (1), (2)) v(x))::text
	|| ' ' || current_setting('search_path')" 2>&1)
if [ "$sanity" = "true true false true 0 0 public, pg_catalog, booking" ]; then
	pass "sanity: the hostile objects do fool the role's own SQL (1 = 2, now() is 2000, && is false, 2 <= 1, 2 + 2 = 0, sum = 0)"
else
	fail "sanity: the hostile objects fool the role's own SQL"
	echo "#   got: $sanity"
fi
q "TRUNCATE public.hostile_calls" >/dev/null

evil_out="$REL_TMP/scenario.hostile"
{
	echo "\\set ON_ERROR_STOP 1"
	echo "CREATE TEMP TABLE resources (LIKE booking.resources);"
	echo "CREATE TEMP TABLE bookings (LIKE booking.bookings);"
	echo "CREATE TEMP TABLE idempotency_keys (key text PRIMARY KEY, request text, code text);"
	cat privilege_scenario.sql
} >"$REL_TMP/scenario.sql"
if as_role $APP $EVIL -f "$REL_TMP/scenario.sql" >"$evil_out" 2>&1; then
	pass "the application role runs the whole API scenario among the hostile objects"
else
	fail "the application role runs the whole API scenario among the hostile objects"
	tail -n 5 "$evil_out" | sed 's/^/#   /'
fi
if diff -u "$clean_out" "$evil_out" >"$REL_TMP/hostile.diff"; then
	pass "every result is identical to the clean database's ($(wc -l <"$evil_out") lines)"
else
	fail "every result is identical to the clean database's"
	sed 's/^/#   /' "$REL_TMP/hostile.diff" | head -n 40
fi
check "no hostile function or operator was called by the extension" \
	"SELECT coalesce(string_agg(DISTINCT what, ' '), 'none') FROM public.hostile_calls" none
check "the hostile tables public.resources, public.bookings, public.idempotency_keys stay empty" \
	"SELECT (SELECT count(*) FROM public.resources) + (SELECT count(*) FROM public.bookings) + (SELECT count(*) FROM public.idempotency_keys)" 0
check_invariants "hostile database"

# 4. settings, as the application role over its own connections
REL_DB=$CLEAN
retention_res=$(q "SELECT booking.create_resource('retention', 10)")
# keyed_call KEY GUEST: the role's keyed reserve_seat on that resource,
# answering "code replayed booking_id"
keyed_call() {
	echo "SELECT code || ' ' || replayed || ' ' || booking_id FROM booking.reserve_seat($retention_res, '$2', 1, idempotency_key => '$1')"
}
# the role's first statement loads the library, so a SET is no placeholder
load="SELECT booking.seats_left($retention_res)"
got=$(as_role $APP $CLEAN -v VERBOSITY=verbose -c "$load" -c "SET booking.idempotency_retention = 1" 2>&1)
if echo "$got" | grep -q '^ERROR:  42501:'; then
	pass "the application role cannot SET booking.idempotency_retention (42501)"
else
	fail "the application role cannot SET booking.idempotency_retention (42501)"
	echo "#   got: $got"
fi
got=$(as_role $APP $CLEAN -v VERBOSITY=verbose -c "$load" \
	-c "SELECT set_config('booking.idempotency_retention', '1', false)" 2>&1)
if echo "$got" | grep -q '^ERROR:  42501:'; then
	pass "the application role cannot set_config booking.idempotency_retention (42501)"
else
	fail "the application role cannot set_config booking.idempotency_retention (42501)"
	echo "#   got: $got"
fi
got=$(as_role $APP $CLEAN -c "$load" -c "SET booking.lock_timeout = '250ms'" -c "SHOW booking.lock_timeout" 2>&1)
if [ "$(echo "$got" | tail -n 1)" = "250ms" ]; then
	pass "the application role may SET booking.lock_timeout (it bounds only its own waits)"
else
	fail "the application role may SET booking.lock_timeout"
	echo "#   got: $got"
fi

# a key stored by the role; then, in another session of the role, a
# retention of 1 s, a wait past it, and hold_expire(100000): the key stays
first=$(as_role $APP $CLEAN -c "$(keyed_call retention-set kay)" 2>&1)
as_role $APP $CLEAN -c "$load" -c "SET booking.idempotency_retention = 1" \
	-c "SELECT pg_sleep(1.2)" -c "SELECT booking.hold_expire(100000)" >/dev/null 2>&1
again=$(as_role $APP $CLEAN -c "$(keyed_call retention-set kay)" 2>&1)
if [ "$first" = "ok false ${first##* }" ] && [ "$again" = "ok true ${first##* }" ]; then
	pass "after the role SET the retention to 1 s and ran hold_expire(100000), its key still replays"
else
	fail "after the role SET the retention to 1 s and ran hold_expire(100000), its key still replays"
	echo "#   first call: $first; after hold_expire: $again"
fi

# the same with the value SET before anything loaded the library: a
# placeholder, which the library must not adopt when it loads
out=$(as_role $APP $CLEAN -c "SET booking.idempotency_retention = 1" -c "$(keyed_call retention-early lee)" \
	-c "SHOW booking.idempotency_retention" -c "SELECT pg_sleep(1.2)" -c "SELECT booking.hold_expire(100000)" \
	-c "$(keyed_call retention-early lee)" 2>&1)
first=$(echo "$out" | grep -m 1 '^ok ')
shown=$(echo "$out" | grep -m 1 -x '[0-9][0-9]*[a-z]*')
again=$(echo "$out" | grep '^ok ' | tail -n 1)
if [ -n "$first" ] && [ "$first" = "ok false ${first##* }" ] && [ "$again" = "ok true ${first##* }" ]; then
	pass "a retention the role SET before the library loaded is not adopted: its key still replays after hold_expire(100000)"
else
	fail "a retention the role SET before the library loaded is not adopted: its key still replays after hold_expire(100000)"
	echo "$out" | sed 's/^/#   /'
fi
if [ "$shown" = "1d" ]; then
	pass "... and once loaded, that session's booking.idempotency_retention is the server's 1d"
else
	fail "... and once loaded, that session's booking.idempotency_retention is the server's 1d (got ${shown:-nothing})"
fi
check "each of the two keys booked once" \
	"SELECT count(*) FILTER (WHERE guest = 'kay') || ' ' || count(*) FILTER (WHERE guest = 'lee')
	   FROM booking.bookings WHERE resource_id = $retention_res" "1 1"

# 5. a schema booking that exists before CREATE EXTENSION
rel_psql -d postgres -c "SET client_min_messages = warning" -c "DROP ROLE IF EXISTS $OWNER" \
	-c "CREATE ROLE $OWNER LOGIN" >/dev/null
for db in $SCHEMA_DBS; do
	rel_psql -d postgres -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null 2>&1 ||
		fail "create database $db"
done
rel_psql -d booking_rel_schema_owned -c "CREATE SCHEMA booking AUTHORIZATION $OWNER" >/dev/null
rel_psql -d booking_rel_schema_create -c "CREATE SCHEMA booking" \
	-c "GRANT USAGE, CREATE ON SCHEMA booking TO $OWNER" >/dev/null
# the owner plants a better match for the README's reserve_seat(1, '...', 2),
# then loses CREATE: the schema is the superuser's, but not empty
rel_psql -d booking_rel_schema_planted -c "CREATE SCHEMA booking" \
	-c "GRANT USAGE, CREATE ON SCHEMA booking TO $OWNER" -c "SET ROLE $OWNER" \
	-c "CREATE FUNCTION booking.reserve_seat(resource integer, guest text, quantity integer DEFAULT 1)
	    RETURNS text LANGUAGE sql AS 'SELECT ''the owner''''s code ran as '' || current_user'" \
	-c "RESET ROLE" -c "REVOKE CREATE ON SCHEMA booking FROM $OWNER" >/dev/null
rel_psql -d booking_rel_schema_mine -c "CREATE SCHEMA booking" >/dev/null

# the objects in schema booking, but for the owner's planted function
objects_sql="SELECT (SELECT count(*) FROM pg_class WHERE relnamespace = n.oid)
	+ (SELECT count(*) FROM pg_type WHERE typnamespace = n.oid)
	+ (SELECT count(*) FROM pg_proc WHERE pronamespace = n.oid
	     AND proowner <> (SELECT oid FROM pg_roles WHERE rolname = '$OWNER'))
	FROM pg_namespace n WHERE nspname = 'booking'"
# refuses_schema DB WHAT: CREATE EXTENSION fails there with 42501 and creates nothing
refuses_schema() {
	local db=$1 what=$2 got
	got=$(rel_psql -d "$db" -v VERBOSITY=verbose -c "SET client_min_messages = warning" \
		-c "CREATE EXTENSION booking CASCADE" 2>&1)
	if echo "$got" | grep -q '^ERROR:  42501: schema "booking" '; then
		pass "CREATE EXTENSION refuses a schema booking $what (42501, schema \"booking\" ...)"
	else
		fail "CREATE EXTENSION refuses a schema booking $what (42501, schema \"booking\" ...)"
		echo "#   got: ${got:-success}"
	fi
	REL_DB=$db check "... and creates nothing: no extension, nothing new in schema booking" \
		"SELECT (SELECT count(*) FROM pg_extension WHERE extname IN ('booking', 'btree_gist')) || ' ' || ($objects_sql)" "0 0"
}
refuses_schema booking_rel_schema_owned "owned by a non-superuser"
refuses_schema booking_rel_schema_create "on which a non-superuser has CREATE"
refuses_schema booking_rel_schema_planted "that holds a non-superuser's reserve_seat(integer, text, integer)"
got=$(REL_DB=booking_rel_schema_planted q "SELECT * FROM booking.reserve_seat(1, 'alice@example.com', 2)" 2>&1)
echo "# there, the README's first reserve_seat call, as the superuser, answers: $got"
got=$(rel_psql -d booking_rel_schema_mine -c "SET client_min_messages = warning" \
	-c "CREATE EXTENSION booking CASCADE" 2>&1)
if [ -z "$got" ]; then
	pass "CREATE EXTENSION accepts an empty schema booking owned by the installing superuser"
else
	fail "CREATE EXTENSION accepts an empty schema booking owned by the installing superuser"
	echo "#   got: $got"
fi
REL_DB=booking_rel_schema_mine check "... and the extension lives in it and works" \
	"SELECT e.extnamespace::regnamespace || ' ' || booking.create_resource('x', 1) || ' ' ||
	        (booking.reserve_seat(1, 'alice', 1)).code FROM pg_extension e WHERE e.extname = 'booking'" "booking 1 ok"

rel_done
