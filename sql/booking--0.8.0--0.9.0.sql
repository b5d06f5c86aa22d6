-- booking 0.8.0 -> 0.9.0: local time (set_time_zone, set_check_times,
-- reserve_nights, set_opening_hours), recurring series (reserve_series),
-- cancel_group, and capacity over time (reserve_slot, slots_left);
-- docs/local-time.md, docs/slots.md
\echo Use "ALTER EXTENSION booking UPDATE TO '0.9.0'" to load this file. \quit

-- a resource's local time; constant defaults: no table rewrite
ALTER TABLE booking.resources
    ADD COLUMN time_zone text NOT NULL DEFAULT 'UTC',
    ADD COLUMN check_in time NOT NULL DEFAULT '00:00',
    ADD COLUMN check_out time NOT NULL DEFAULT '00:00',
    ADD COLUMN opening_hours jsonb NULL;

-- capacity over time: a slot booking holds quantity units of its
-- resource's capacity over during; it has no footprint (blocked), so the
-- exclusion constraint of stays leaves it alone, and reserve_slot decides
-- under the resource row's lock, reading the slots that overlap through
-- bookings_slots_idx, a B-tree on where they start, from longest_slot
-- before the window on.  slotted: reserve_slot has booked this resource, so
-- a stay on it must also leave room among its slots (docs/slots.md).
ALTER TABLE booking.resources
    ADD COLUMN slotted boolean NOT NULL DEFAULT false,
    ADD COLUMN longest_slot interval NOT NULL DEFAULT '0';
ALTER TABLE booking.bookings
    DROP CONSTRAINT bookings_row_check,
    ADD CONSTRAINT bookings_row_check CHECK (quantity > 0
        AND ((status = 'pending') = (expires_at IS NOT NULL) OR status IN ('cancelled', 'expired'))
        AND (during IS NOT NULL OR blocked IS NULL) AND (blocked IS NULL OR blocked @> during));
CREATE INDEX bookings_slots_idx ON booking.bookings (home, resource_id, lower(during))
    WHERE blocked IS NULL AND during IS NOT NULL AND status IN ('pending', 'confirmed');

CREATE FUNCTION booking.reserve_slot(resource bigint, guest text, during tstzrange,
        quantity integer DEFAULT 1, hold interval DEFAULT NULL,
        idempotency_key text DEFAULT NULL, lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_slot'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_slot(bigint, text, tstzrange, integer, interval, text, interval, jsonb) IS
'takes quantity units of the resource''s capacity over during; at no instant do its slot bookings exceed capacity';

CREATE FUNCTION booking.slots_left(resource bigint, within tstzrange)
    RETURNS TABLE (during tstzrange, free integer)
    AS 'MODULE_PATHNAME', 'booking_slots_left'
    LANGUAGE C STABLE PARALLEL SAFE ROWS 10
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.slots_left(bigint, tstzrange) IS
'the free units of a resource over within, as consecutive ranges of one free count, open time only';

CREATE FUNCTION booking.shard_reserve_slot(resource bigint, guest text, during tstzrange, quantity integer, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_slot'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_slot(bigint, text, tstzrange, integer, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_slot on the node that holds the resource (Citus)';

CREATE FUNCTION booking.set_time_zone(resource bigint, time_zone text)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_time_zone'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_time_zone(bigint, text) IS
'sets the IANA time zone in which reserve_nights and reserve_series read the resource''s local time';

CREATE FUNCTION booking.set_check_times(resource bigint, check_in time DEFAULT '00:00',
        check_out time DEFAULT '00:00')
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_check_times'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_check_times(bigint, time, time) IS
'sets the local check-in and check-out times of the nights reserve_nights books';

CREATE FUNCTION booking.set_opening_hours(resource bigint, hours jsonb)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_opening_hours'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_opening_hours(bigint, jsonb) IS
'sets the local windows per weekday that stays must lie in (NULL: always open); outside them calls answer closed';

CREATE FUNCTION booking.reserve_nights(resource bigint, guest text, arrival date, departure date,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_nights'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_nights(bigint, text, date, date, interval, text, interval, jsonb) IS
'books the nights from arrival at check-in to departure at check-out, in the resource''s local time; a stay';

CREATE FUNCTION booking.reserve_series(resource bigint, guest text, first tstzrange, every interval,
        count integer, hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_series'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_series(bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb) IS
'books count stays of first moved by k * every in the resource''s local time, all or nothing; they share group_id';

CREATE FUNCTION booking.cancel_group(group_id bigint, from_time timestamptz DEFAULT NULL,
        idempotency_key text DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_cancel_group'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.cancel_group(bigint, timestamptz, text) IS
'cancels every blocking booking of a group (a series, a reserve_stays group, a reserve_seats pass) that starts at or after from_time, at once';

-- the twins (scale-out on Citus): on a distributed cluster run SELECT
-- booking.distribute() once more afterwards, to register them
CREATE FUNCTION booking.shard_set_time_zone(resource bigint, time_zone text, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_time_zone'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_time_zone(bigint, text, bigint) IS
'internal: booking.set_time_zone on the node that holds the resource (Citus)';

CREATE FUNCTION booking.shard_set_check_times(resource bigint, check_in time, check_out time, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_check_times'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_check_times(bigint, time, time, bigint) IS
'internal: booking.set_check_times on the node that holds the resource (Citus)';

CREATE FUNCTION booking.shard_set_opening_hours(resource bigint, hours jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_opening_hours'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_opening_hours(bigint, jsonb, bigint) IS
'internal: booking.set_opening_hours on the node that holds the resource (Citus)';

CREATE FUNCTION booking.shard_reserve_nights(resource bigint, guest text, arrival date, departure date, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_nights'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_nights(bigint, text, date, date, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_nights on the node that holds the resource (Citus)';

CREATE FUNCTION booking.shard_reserve_series(resource bigint, guest text, first tstzrange, every interval, count integer, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_series'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_series(bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_series on the node that holds the resource (Citus)';

-- nothing new is executable by PUBLIC; the grant sets give the new calls
REVOKE ALL ON FUNCTION booking.set_time_zone(bigint, text),
    booking.set_check_times(bigint, time, time),
    booking.set_opening_hours(bigint, jsonb),
    booking.shard_set_opening_hours(bigint, jsonb, bigint),
    booking.reserve_nights(bigint, text, date, date, interval, text, interval, jsonb),
    booking.reserve_series(bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb),
    booking.cancel_group(bigint, timestamptz, text),
    booking.reserve_slot(bigint, text, tstzrange, integer, interval, text, interval, jsonb),
    booking.slots_left(bigint, tstzrange),
    booking.shard_reserve_slot(bigint, text, tstzrange, integer, interval, text, interval, jsonb, bigint),
    booking.shard_set_time_zone(bigint, text, bigint),
    booking.shard_set_check_times(bigint, time, time, bigint),
    booking.shard_reserve_nights(bigint, text, date, date, interval, text, interval, jsonb, bigint),
    booking.shard_reserve_series(bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb, bigint)
    FROM PUBLIC;

-- grant_client gives reserve_nights, reserve_series, cancel_group,
-- reserve_slot and slots_left;
-- grant_admin the three settings.
-- Run them again for the roles they were given to.
CREATE OR REPLACE FUNCTION booking.grant_client(role regrole)
    RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $grant$
DECLARE
    citus boolean;
    propagation text;
    fn text;
    ok boolean;
    failures text;
    calls text[] := ARRAY[
        'booking.reserve_seat(bigint, text, integer, interval, text, interval, jsonb)',
        'booking.reserve_seats(bigint[], text, integer[], interval, text, interval, jsonb)',
        'booking.reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb)',
        'booking.reserve_stays(bigint[], text, tstzrange, interval, text, interval, jsonb)',
        'booking.reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb)',
        'booking.reserve_nights(bigint, text, date, date, interval, text, interval, jsonb)',
        'booking.reserve_series(bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb)',
        'booking.reserve_slot(bigint, text, tstzrange, integer, interval, text, interval, jsonb)',
        'booking.confirm(bigint, text)',
        'booking.cancel(bigint, text)',
        'booking.cancel_group(bigint, timestamptz, text)',
        'booking.extend_hold(bigint, interval)',
        'booking.extend_hold_until(bigint, timestamptz)',
        'booking.reduce(bigint, integer, text)',
        'booking.move_stay(bigint, tstzrange, text, interval)',
        'booking.join_waitlist(bigint, text, integer, text, jsonb)',
        'booking.get_booking(bigint)',
        'booking.seats_left(bigint)',
        'booking.free_slots(bigint, tstzrange, interval)',
        'booking.slots_left(bigint, tstzrange)'];
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
    -- (0.9.0) On Citus the workers get the calls' grants below.  Citus would
    -- also send the grants of the calls it knows as distributed functions
    -- (after delegate_calls) to the workers inside this transaction, and
    -- the workers' own grant below would wait for them to the end.
    citus := EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus');
    IF citus THEN
        propagation := pg_catalog.current_setting('citus.enable_ddl_propagation');
        PERFORM pg_catalog.set_config('citus.enable_ddl_propagation', 'off', true);
    END IF;
    FOREACH fn IN ARRAY calls LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', fn, role);
    END LOOP;
    IF citus THEN
        PERFORM pg_catalog.set_config('citus.enable_ddl_propagation', propagation, true);
    END IF;
    EXECUTE pg_catalog.format('GRANT SELECT ON booking.resources, booking.bookings TO %s', role);
    -- On a Citus coordinator, the same calls on every worker, so that the
    -- role may make them on any node (docs/scale-out.md).  Citus copies the
    -- schema's grant but not those on an extension's functions, and refuses
    -- them on a worker unless its DDL propagation is off there.
    IF citus THEN
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.bool_and(success), pg_catalog.string_agg(nodename || '':'' || nodeport || '' '' || result, ''; '')'
            ' FROM pg_catalog.run_command_on_workers(%L)',
            pg_catalog.format('SET LOCAL citus.enable_ddl_propagation = off; GRANT EXECUTE ON FUNCTION %s TO %s',
                              pg_catalog.array_to_string(calls, ', '), role))
            INTO ok, failures;
        IF NOT coalesce(ok, true) THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = pg_catalog.format('could not grant %s the calls on every worker', role),
                DETAIL = failures;
        END IF;
    END IF;
    RETURN pg_catalog.format('%s may now make reservations: %s calls, and SELECT on booking.resources and booking.bookings',
                             role, pg_catalog.array_length(calls, 1));
END
$grant$;
COMMENT ON FUNCTION booking.grant_client(regrole) IS
'grants an application role the reservation calls (reserve, reserve_nights, reserve_series, reserve_slot, confirm, cancel, cancel_group, extend, reduce, move, join_waitlist, get_booking, seats_left, free_slots, slots_left) and SELECT on resources and bookings; for a superuser or the extension''s owner';


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
        'booking.set_time_zone(bigint, text)',
        'booking.set_check_times(bigint, time, time)',
        'booking.set_opening_hours(bigint, jsonb)',
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


-- health(): (0.9.0) snapshot_oldest_seconds, the oldest snapshot held in the
-- database (issue 29)
CREATE OR REPLACE FUNCTION booking.health()
    RETURNS TABLE (metric text, subject text, value double precision)
    LANGUAGE plpgsql STABLE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $health$
DECLARE
    who text;
BEGIN
    RETURN QUERY SELECT 'lapsed_hold_oldest_seconds'::text, NULL::text,
            COALESCE(pg_catalog.date_part('epoch', pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.min(b.expires_at)), 0)
        FROM booking.bookings b
        WHERE b.status OPERATOR(pg_catalog.=) 'pending' AND b.expires_at OPERATOR(pg_catalog.<=) pg_catalog.now();
    RETURN QUERY SELECT 'lapsed_holds'::text, NULL::text, CAST(pg_catalog.count(*) AS double precision)
        FROM booking.bookings b
        WHERE b.status OPERATOR(pg_catalog.=) 'pending' AND b.expires_at OPERATOR(pg_catalog.<=) pg_catalog.now();
    RETURN QUERY SELECT 'waitlist_length'::text, CAST(r.id AS text), CAST(r.waiting AS double precision)
        FROM booking.resources r WHERE r.waiting OPERATOR(pg_catalog.>) 0 ORDER BY r.id;
    -- every registered consumer gets its rows, 0 when it is up to date
    FOR who IN SELECT c.name FROM booking.consumers c ORDER BY c.name LOOP
        RETURN QUERY SELECT 'consumer_unacked'::text, who, CAST(pg_catalog.count(*) AS double precision)
            FROM booking.deliveries d WHERE d.consumer OPERATOR(pg_catalog.=) who AND d.acked_at IS NULL;
        RETURN QUERY SELECT 'consumer_oldest_unacked_seconds'::text, who,
                COALESCE(pg_catalog.date_part('epoch', pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.min(e.created_at)), 0)
            FROM booking.deliveries d JOIN booking.events e
              ON e.home OPERATOR(pg_catalog.=) d.home AND e.id OPERATOR(pg_catalog.=) d.event_id
            WHERE d.consumer OPERATOR(pg_catalog.=) who AND d.acked_at IS NULL;
    END LOOP;
    RETURN QUERY SELECT 'events_unsequenced'::text, NULL::text, CAST(pg_catalog.count(*) AS double precision)
        FROM booking.events e WHERE e.seq IS NULL;
    RETURN QUERY SELECT 'idempotency_keys'::text, NULL::text, CAST(pg_catalog.count(*) AS double precision)
        FROM booking.idempotency_keys k;
    RETURN QUERY SELECT 'idempotency_key_oldest_seconds'::text, NULL::text,
            COALESCE(pg_catalog.date_part('epoch', pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.min(k.created_at)), 0)
        FROM booking.idempotency_keys k;
    -- (0.9.0) while a transaction keeps an old snapshot, no counter row's
    -- old versions can be removed and every sale walks past them
    -- (docs/performance.md, "A held snapshot")
    RETURN QUERY SELECT 'snapshot_oldest_seconds'::text, NULL::text,
            COALESCE(pg_catalog.max(pg_catalog.date_part('epoch', pg_catalog.now() OPERATOR(pg_catalog.-) a.xact_start)), 0)
        FROM pg_catalog.pg_stat_activity a
        WHERE a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
          AND a.backend_type OPERATOR(pg_catalog.=) 'client backend'
          AND a.backend_xmin IS NOT NULL
          AND a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid();
END
$health$;
COMMENT ON FUNCTION booking.health() IS
'figures to watch: lapsed holds not yet swept, waitlist lengths, each consumer''s unacknowledged events and their age, events not yet numbered, idempotency keys, the oldest snapshot held in this database';

-- a claim's lease is a HOT update beside the row the numbering wrote, when
-- the page has room for it (docs/performance.md, "Relays at full speed");
-- pages written from now on keep that room
ALTER TABLE booking.deliveries SET (fillfactor = 50);

-- (0.9.0) the client calls of one resource, pool or booking sent by Citus
-- straight to their node (docs/scale-out.md, "Delegated calls").  Run by a
-- superuser, not granted by grant_admin: off edits Citus's catalog.
CREATE FUNCTION booking.delegate_calls(enabled boolean DEFAULT true)
    RETURNS text
    AS 'MODULE_PATHNAME', 'booking_delegate_calls'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION booking.delegate_calls(boolean) FROM PUBLIC;
COMMENT ON FUNCTION booking.delegate_calls(boolean) IS
'on a Citus coordinator: Citus sends a call of one resource, pool or booking made as a statement of its own to its node in one round trip (a node that cannot be reached then fails it with Citus''s error instead of busy); false undoes it';

-- (0.9.0) the numbering writes no head row per resource: a resource's last
-- number is its highest numbered event, or what the purge kept here
COMMENT ON TABLE booking.event_heads IS 'per resource, the last sequence number of the events the purge removed (the numbering gives the next number above it and above the resource''s numbered events); the row with resource_id 0 is the home''s sequencer lock';
