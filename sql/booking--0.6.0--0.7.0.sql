/* booking--0.6.0--0.7.0.sql: safe at the edges (docs: CHANGELOG.md, 0.7.0). */

\echo Use "ALTER EXTENSION booking UPDATE TO '0.7.0'" to load this file. \quit

------------------------------------------------------------------------------
-- internals out of reach: the twins refuse any caller but a superuser or the
-- extension's owner (src/route.c), so they must run as the role that called
-- them, not as their owner
------------------------------------------------------------------------------
ALTER FUNCTION booking.shard_reserve_seat(bigint, text, integer, interval, text, interval, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_reserve_stay(bigint, text, tstzrange, interval, text, interval, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_reserve_stays(bigint[], text, tstzrange, interval, text, interval, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_reserve_stay_any(bigint, text, tstzrange, interval, text, interval, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_confirm(bigint, text, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_cancel(bigint, text, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_extend_hold(bigint, interval, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_extend_hold_until(bigint, timestamptz, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_set_capacity(bigint, integer, bigint, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_set_stripes(bigint, integer, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_stay_member(bigint, text, tstzrange, timestamptz, bigint, interval, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_set_guest_limit(bigint, integer, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_set_buffer(bigint, interval, interval, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_reserve_seats(bigint[], text, integer[], interval, text, interval, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_seat_member(bigint, text, integer, timestamptz, bigint, interval, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_reduce(bigint, integer, text, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_move_stay(bigint, tstzrange, text, interval, bigint) SECURITY INVOKER;
ALTER FUNCTION booking.shard_join_waitlist(bigint, text, integer, text, bigint) SECURITY INVOKER;

-- distribute() runs as its owner, who owns the tables: an admin role may run it
ALTER FUNCTION booking.distribute(integer) SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
-- stats_reset() is gated by EXECUTE alone now (grant_admin gives it)
COMMENT ON FUNCTION booking.stats_reset() IS
'sets every counter of booking.stats() to zero, in the whole cluster; granted by grant_admin, not to clients';

------------------------------------------------------------------------------
-- roles (0.7.0): what each kind of role may call, granted in one call
------------------------------------------------------------------------------

-- Each grant_* function grants one role exactly what its kind needs, and
-- nothing of the internals (the shard_* twins) or of the other kinds.  Run
-- by the extension's owner or a superuser; run it again after ALTER
-- EXTENSION booking UPDATE, so that the role also gets the new calls of its
-- kind.  Not SECURITY DEFINER: granting needs the owner's own rights.

CREATE FUNCTION booking.grant_client(role regrole)
    RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $grant$
DECLARE
    fn text;
    calls text[] := ARRAY[
        'booking.reserve_seat(bigint, text, integer, interval, text, interval)',
        'booking.reserve_seats(bigint[], text, integer[], interval, text, interval)',
        'booking.reserve_stay(bigint, text, tstzrange, interval, text, interval)',
        'booking.reserve_stays(bigint[], text, tstzrange, interval, text, interval)',
        'booking.reserve_stay_any(bigint, text, tstzrange, interval, text, interval)',
        'booking.confirm(bigint, text)',
        'booking.cancel(bigint, text)',
        'booking.extend_hold(bigint, interval)',
        'booking.extend_hold_until(bigint, timestamptz)',
        'booking.reduce(bigint, integer, text)',
        'booking.move_stay(bigint, tstzrange, text, interval)',
        'booking.join_waitlist(bigint, text, integer, text)',
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
'grants an application role the reservation calls (reserve, confirm, cancel, extend, reduce, move, join_waitlist, seats_left, free_slots) and SELECT on resources and bookings; for a superuser or the extension''s owner';

CREATE FUNCTION booking.grant_relay(role regrole)
    RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $grant$
DECLARE
    fn text;
    calls text[] := ARRAY[
        'booking.claim_events(text, integer, interval)',
        'booking.ack_events(text, bigint, bigint[])'];
BEGIN
    IF role IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed', MESSAGE = 'role must not be null';
    END IF;
    IF NOT (SELECT r.rolsuper OR r.oid OPERATOR(pg_catalog.=) e.extowner
              FROM pg_catalog.pg_roles r, pg_catalog.pg_extension e
             WHERE r.rolname OPERATOR(pg_catalog.=) current_user
               AND e.extname OPERATOR(pg_catalog.=) 'booking') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'permission denied for function grant_relay',
            DETAIL = 'Only a superuser or the owner of extension booking may grant the roles'' calls.';
    END IF;
    EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA booking TO %s', role);
    FOREACH fn IN ARRAY calls LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', fn, role);
    END LOOP;
    RETURN pg_catalog.format('%s may now relay events: claim_events and ack_events', role);
END
$grant$;
COMMENT ON FUNCTION booking.grant_relay(regrole) IS
'grants a relay role claim_events and ack_events; for a superuser or the extension''s owner';

CREATE FUNCTION booking.grant_admin(role regrole)
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
    RETURN pg_catalog.format('%s may now run booking: %s calls (resources, settings, consumers, hold_expire, statistics, distribute), and SELECT on booking.resources and booking.bookings',
                             role, pg_catalog.array_length(calls, 1));
END
$grant$;
COMMENT ON FUNCTION booking.grant_admin(regrole) IS
'grants an operations role resources, settings, consumers, hold_expire, health, stats, stats_reset and distribute, and SELECT on resources and bookings; for a superuser or the extension''s owner';

REVOKE ALL ON FUNCTION booking.grant_client(regrole), booking.grant_relay(regrole),
    booking.grant_admin(regrole) FROM PUBLIC;

------------------------------------------------------------------------------
-- the outbox: deliveries of consumers that are gone (0.6.0's drop_consumer
-- could race a numbering and leave some, which kept their events from the
-- purge for good)
------------------------------------------------------------------------------
DELETE FROM booking.deliveries d
 WHERE NOT EXISTS (SELECT 1 FROM booking.consumers c WHERE c.name OPERATOR(pg_catalog.=) d.consumer);
