-- booking 0.7.0 -> 0.8.0: the caller's metadata on every booking, get_booking,
-- and forget_guest (docs/reference.md; CHANGELOG.md)
\echo Use "ALTER EXTENSION booking UPDATE TO '0.8.0'" to load this file. \quit

-- the caller's own data (an order id, a cart): a JSON object of at most
-- 8 kB, checked by the calls; copied into every event's payload
ALTER TABLE booking.bookings ADD COLUMN metadata jsonb NULL;

-- forget_guest writes one guest_forgotten event per resource it touched
ALTER TABLE booking.events DROP CONSTRAINT events_kind_check,
    ADD CONSTRAINT events_kind_check CHECK (kind IN ('reserved', 'confirmed', 'cancelled', 'expired',
        'hold_extended', 'moved', 'reduced', 'capacity_changed', 'waitlist_joined', 'waitlist_offered',
        'guest_forgotten'));

-- The calls that create a booking take metadata as a last argument, and
-- their twins take it before home.  A function's arguments cannot change in
-- place: each is dropped and created again.  What an administrator granted
-- on them is kept, for the same roles: it is read here and given back below.
DO $grants$
DECLARE
    kept jsonb;
BEGIN
    SELECT COALESCE(pg_catalog.jsonb_agg(pg_catalog.jsonb_build_object(
               'fn', p.proname, 'grantee', a.grantee, 'grantable', a.is_grantable)), '[]')
      INTO kept
      FROM pg_catalog.pg_proc p
      CROSS JOIN LATERAL pg_catalog.aclexplode(p.proacl) AS a
     WHERE p.pronamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace
       AND p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['reserve_seat', 'reserve_seats', 'reserve_stay', 'reserve_stays', 'reserve_stay_any', 'join_waitlist', 'shard_reserve_seat', 'shard_reserve_stay', 'shard_reserve_stays', 'shard_reserve_stay_any', 'shard_stay_member', 'shard_reserve_seats', 'shard_seat_member', 'shard_join_waitlist'])
       AND a.privilege_type OPERATOR(pg_catalog.=) 'EXECUTE'
       AND a.grantee OPERATOR(pg_catalog.<>) p.proowner;
    PERFORM pg_catalog.set_config('booking_upgrade.grants', kept::text, true);
END
$grants$;

DROP FUNCTION booking.reserve_seat(bigint, text, integer, interval, text, interval);
DROP FUNCTION booking.reserve_seats(bigint[], text, integer[], interval, text, interval);
DROP FUNCTION booking.reserve_stay(bigint, text, tstzrange, interval, text, interval);
DROP FUNCTION booking.reserve_stays(bigint[], text, tstzrange, interval, text, interval);
DROP FUNCTION booking.reserve_stay_any(bigint, text, tstzrange, interval, text, interval);
DROP FUNCTION booking.join_waitlist(bigint, text, integer, text);
DROP FUNCTION booking.shard_reserve_seat(bigint, text, integer, interval, text, interval, bigint);
DROP FUNCTION booking.shard_reserve_stay(bigint, text, tstzrange, interval, text, interval, bigint);
DROP FUNCTION booking.shard_reserve_stays(bigint[], text, tstzrange, interval, text, interval, bigint);
DROP FUNCTION booking.shard_reserve_stay_any(bigint, text, tstzrange, interval, text, interval, bigint);
DROP FUNCTION booking.shard_stay_member(bigint, text, tstzrange, timestamptz, bigint, interval, bigint);
DROP FUNCTION booking.shard_reserve_seats(bigint[], text, integer[], interval, text, interval, bigint);
DROP FUNCTION booking.shard_seat_member(bigint, text, integer, timestamptz, bigint, interval, bigint);
DROP FUNCTION booking.shard_join_waitlist(bigint, text, integer, text, bigint);

CREATE FUNCTION booking.reserve_seat(resource bigint, guest text, quantity integer DEFAULT 1,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_seat'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_seat(bigint, text, integer, interval, text, interval, jsonb) IS
'takes quantity seats of a resource under its row lock; sold_out when they are not there';

CREATE FUNCTION booking.reserve_seats(resources bigint[], guest text, quantities integer[] DEFAULT NULL,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_seats'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_seats(bigint[], text, integer[], interval, text, interval, jsonb) IS
'takes seats of several resources, all or nothing, locking them in ascending id order; members share group_id';

CREATE FUNCTION booking.reserve_stay(resource bigint, guest text, during tstzrange,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_stay'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb) IS
'books a resource exclusively over a half-open time range; the exclusion constraint is the guard';

CREATE FUNCTION booking.reserve_stays(resources bigint[], guest text, during tstzrange,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_stays'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_stays(bigint[], text, tstzrange, interval, text, interval, jsonb) IS
'books several resources over the same range, all or nothing; members share group_id';

CREATE FUNCTION booking.reserve_stay_any(pool bigint, guest text, during tstzrange,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_stay_any'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb) IS
'books any free unit of a pool (resources whose pool_id is pool) over a range';

CREATE FUNCTION booking.join_waitlist(resource bigint, guest text, quantity integer DEFAULT 1,
        idempotency_key text DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_join_waitlist'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.join_waitlist(bigint, text, integer, text, jsonb) IS
'puts the guest in line for quantity seats of a sold-out resource (code waitlisted, 202); freed seats are offered to the line in join order as holds';

-- the twins (scale-out on Citus): on a distributed cluster run SELECT
-- booking.distribute() once more afterwards, to register them again

CREATE FUNCTION booking.shard_reserve_seat(resource bigint, guest text, quantity integer, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_seat'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_seat(bigint, text, integer, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_seat on the node that holds the shard of home (Citus); call booking.reserve_seat';

CREATE FUNCTION booking.shard_reserve_stay(resource bigint, guest text, during tstzrange, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_stay'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_stay on the node that holds the shard of home (Citus); call booking.reserve_stay';

CREATE FUNCTION booking.shard_reserve_stays(resources bigint[], guest text, during tstzrange, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_stays'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_stays(bigint[], text, tstzrange, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_stays on the node that holds the shard of home (Citus); call booking.reserve_stays';

CREATE FUNCTION booking.shard_reserve_stay_any(pool bigint, guest text, during tstzrange, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_stay_any'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_stay_any on the node that holds the shard of home (Citus); call booking.reserve_stay_any';

CREATE FUNCTION booking.shard_stay_member(resource bigint, guest text, during tstzrange,
        expires_at timestamptz, group_id bigint, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_stay_member'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_stay_member(bigint, text, tstzrange, timestamptz, bigint, interval, jsonb, bigint) IS
'internal: one member of a booking.reserve_stays group whose members live on several nodes (Citus); every member gets the expiry of the coordinator''s hold';

CREATE FUNCTION booking.shard_reserve_seats(resources bigint[], guest text, quantities integer[], hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_seats'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_seats(bigint[], text, integer[], interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_seats on the node that holds the shard of home (Citus); call booking.reserve_seats';

CREATE FUNCTION booking.shard_seat_member(resource bigint, guest text, quantity integer,
        expires_at timestamptz, group_id bigint, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_seat_member'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_seat_member(bigint, text, integer, timestamptz, bigint, interval, jsonb, bigint) IS
'internal: one member of a booking.reserve_seats group whose members live on several nodes (Citus); every member gets the expiry of the coordinator''s hold';

CREATE FUNCTION booking.shard_join_waitlist(resource bigint, guest text, quantity integer, idempotency_key text, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_join_waitlist'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_join_waitlist(bigint, text, integer, text, jsonb, bigint) IS
'internal: booking.join_waitlist on the node that holds the resource (Citus)';

-- a booking as a screen shows it, for a role without SELECT on the tables
CREATE FUNCTION booking.get_booking(booking bigint)
    RETURNS TABLE (id bigint, resource_id bigint, guest text, quantity integer, during tstzrange,
                   status booking.status, expires_at timestamptz, created_at timestamptz,
                   metadata jsonb, group_id bigint)
    AS 'MODULE_PATHNAME', 'booking_get_booking'
    LANGUAGE C STABLE PARALLEL SAFE ROWS 1
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.get_booking(bigint) IS
'one booking: id, resource_id, guest, quantity, during, status, expires_at, created_at, metadata, group_id; no row for an unknown id';

REVOKE ALL ON FUNCTION booking.reserve_seat(bigint, text, integer, interval, text, interval, jsonb),
    booking.reserve_seats(bigint[], text, integer[], interval, text, interval, jsonb),
    booking.reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb),
    booking.reserve_stays(bigint[], text, tstzrange, interval, text, interval, jsonb),
    booking.reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb),
    booking.join_waitlist(bigint, text, integer, text, jsonb),
    booking.shard_reserve_seat(bigint, text, integer, interval, text, interval, jsonb, bigint),
    booking.shard_reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb, bigint),
    booking.shard_reserve_stays(bigint[], text, tstzrange, interval, text, interval, jsonb, bigint),
    booking.shard_reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb, bigint),
    booking.shard_stay_member(bigint, text, tstzrange, timestamptz, bigint, interval, jsonb, bigint),
    booking.shard_reserve_seats(bigint[], text, integer[], interval, text, interval, jsonb, bigint),
    booking.shard_seat_member(bigint, text, integer, timestamptz, bigint, interval, jsonb, bigint),
    booking.shard_join_waitlist(bigint, text, integer, text, jsonb, bigint),
    booking.get_booking(bigint) FROM PUBLIC;

DO $grants$
DECLARE
    g record;
BEGIN
    FOR g IN SELECT * FROM pg_catalog.jsonb_to_recordset(
                 pg_catalog.current_setting('booking_upgrade.grants')::jsonb)
                 AS k(fn text, grantee oid, grantable boolean)
    LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s%s',
            pg_catalog.to_regproc('booking.' OPERATOR(pg_catalog.||) g.fn)::pg_catalog.regprocedure,
            CASE WHEN g.grantee OPERATOR(pg_catalog.=) 0 THEN 'PUBLIC'
                 ELSE g.grantee::pg_catalog.regrole::pg_catalog.text END,
            CASE WHEN g.grantable THEN ' WITH GRANT OPTION' ELSE '' END);
    END LOOP;
END
$grants$;
-- A GRANT in an extension's script is recorded as one of the extension's
-- initial privileges, which pg_dump leaves out (a restore recreates them
-- with the extension).  These are the administrator's own: the initial
-- privileges of the new functions are those of a fresh install, the owner's
-- alone, so that pg_dump keeps the grants given back above.
UPDATE pg_catalog.pg_init_privs i
   SET initprivs = ARRAY[pg_catalog.makeaclitem(p.proowner, p.proowner, 'EXECUTE', false)]
  FROM pg_catalog.pg_proc p
 WHERE i.classoid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass
   AND i.objoid OPERATOR(pg_catalog.=) p.oid AND i.objsubid OPERATOR(pg_catalog.=) 0
   AND p.pronamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace
   AND p.proname OPERATOR(pg_catalog.=) ANY (ARRAY['reserve_seat', 'reserve_seats', 'reserve_stay', 'reserve_stays', 'reserve_stay_any', 'join_waitlist', 'shard_reserve_seat', 'shard_reserve_stay', 'shard_reserve_stays', 'shard_reserve_stay_any', 'shard_stay_member', 'shard_reserve_seats', 'shard_seat_member', 'shard_join_waitlist']);

-- grant_client gives get_booking too, and the new signatures
CREATE OR REPLACE FUNCTION booking.grant_client(role regrole)
    RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $grant$
DECLARE
    fn text;
    calls text[] := ARRAY[
        'booking.reserve_seat(bigint, text, integer, interval, text, interval, jsonb)',
        'booking.reserve_seats(bigint[], text, integer[], interval, text, interval, jsonb)',
        'booking.reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb)',
        'booking.reserve_stays(bigint[], text, tstzrange, interval, text, interval, jsonb)',
        'booking.reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb)',
        'booking.confirm(bigint, text)',
        'booking.cancel(bigint, text)',
        'booking.extend_hold(bigint, interval)',
        'booking.extend_hold_until(bigint, timestamptz)',
        'booking.reduce(bigint, integer, text)',
        'booking.move_stay(bigint, tstzrange, text, interval)',
        'booking.join_waitlist(bigint, text, integer, text, jsonb)',
        'booking.get_booking(bigint)',
        'booking.seats_left(bigint)',
        'booking.free_slots(bigint, tstzrange, interval)'];
BEGIN
    IF role IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed', MESSAGE = 'role must not be null';
    END IF;
    IF NOT (SELECT r.rolsuper OR r.oid OPERATOR(pg_catalog.=) e.extowner
              FROM pg_catalog.pg_roles r, pg_catalog.pg_extension e
             WHERE r.rolname OPERATOR(pg_catalog.=) current_user
               AND e.extname OPERATOR(pg_catalog.=) 'booking') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'permission denied for function grant_client',
            DETAIL = 'Only a superuser or the owner of extension booking may grant the roles'' calls.';
    END IF;
    EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA booking TO %s', role);
    FOREACH fn IN ARRAY calls LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', fn, role);
    END LOOP;
    EXECUTE pg_catalog.format('GRANT SELECT ON booking.resources, booking.bookings TO %s', role);
    RETURN pg_catalog.format('%s may now make reservations: %s calls, and SELECT on booking.resources and booking.bookings',
                             role, pg_catalog.array_length(calls, 1));
END
$grant$;
COMMENT ON FUNCTION booking.grant_client(regrole) IS
'grants an application role the reservation calls (reserve, confirm, cancel, extend, reduce, move, join_waitlist, get_booking, seats_left, free_slots) and SELECT on resources and bookings; for a superuser or the extension''s owner';

-- the key of forget_guest's pseudonyms: made on first use (a fresh
-- install has none, so that a restored dump keeps the old one), read by
-- nobody but the extension's owner; on Citus it stays on the coordinator
CREATE TABLE booking.secrets (
    name        text PRIMARY KEY,
    value       bytea NOT NULL
);
SELECT pg_catalog.pg_extension_config_dump('booking.secrets', '');
REVOKE ALL ON booking.secrets FROM PUBLIC;
COMMENT ON TABLE booking.secrets IS 'the key of forget_guest''s pseudonyms; never grant it';

-- a guest forgotten (a GDPR request): its name replaced by a stable
-- pseudonym everywhere the extension keeps it (docs/reference.md)
CREATE FUNCTION booking.forget_guest(guest text)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'booking_forget_guest'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.forget_guest(text) IS
'replaces a guest''s name in bookings, waitlist entries, stored idempotency requests and events with a stable pseudonym; one guest_forgotten event per resource; returns the rows changed';
REVOKE ALL ON FUNCTION booking.forget_guest(text) FROM PUBLIC;

-- grant_admin gives forget_guest too
CREATE OR REPLACE FUNCTION booking.grant_admin(role regrole)
    RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $grant$
DECLARE
    fn text;
    calls text[] := ARRAY[
        'booking.create_resource(text, integer, bigint, jsonb)',
        'booking.set_capacity(bigint, integer, bigint)',
        'booking.set_stripes(bigint, integer)',
        'booking.set_guest_limit(bigint, integer)',
        'booking.set_buffer(bigint, interval, interval)',
        'booking.add_consumer(text)',
        'booking.drop_consumer(text)',
        'booking.hold_expire(integer)',
        'booking.forget_guest(text)',
        'booking.health()',
        'booking.stats()',
        'booking.stats_reset()',
        'booking.distribute(integer)'];
BEGIN
    IF role IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed', MESSAGE = 'role must not be null';
    END IF;
    IF NOT (SELECT r.rolsuper OR r.oid OPERATOR(pg_catalog.=) e.extowner
              FROM pg_catalog.pg_roles r, pg_catalog.pg_extension e
             WHERE r.rolname OPERATOR(pg_catalog.=) current_user
               AND e.extname OPERATOR(pg_catalog.=) 'booking') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'permission denied for function grant_admin',
            DETAIL = 'Only a superuser or the owner of extension booking may grant the roles'' calls.';
    END IF;
    EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA booking TO %s', role);
    FOREACH fn IN ARRAY calls LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', fn, role);
    END LOOP;
    EXECUTE pg_catalog.format('GRANT SELECT ON booking.resources, booking.bookings TO %s', role);
    RETURN pg_catalog.format('%s may now run booking: %s calls (resources, settings, consumers, hold_expire, forget_guest, statistics, distribute), and SELECT on booking.resources and booking.bookings',
                             role, pg_catalog.array_length(calls, 1));
END
$grant$;
COMMENT ON FUNCTION booking.grant_admin(regrole) IS
'grants an operations role resources, settings, consumers, hold_expire, forget_guest, health, stats, stats_reset and distribute, and SELECT on resources and bookings; for a superuser or the extension''s owner';
