/* booking--0.3.0--0.4.0.sql: a schema that can be distributed on Citus.  Every
 * table gets the column home (0 on one server), first in every key and
 * constraint; booking.distribute() distributes the tables by it. */

\echo Use "ALTER EXTENSION booking UPDATE TO '0.4.0'" to load this file. \quit

ALTER TABLE booking.resources ADD COLUMN home bigint NOT NULL DEFAULT 0;
ALTER TABLE booking.bookings ADD COLUMN home bigint NOT NULL DEFAULT 0;
ALTER TABLE booking.resource_stripes ADD COLUMN home bigint NOT NULL DEFAULT 0;
ALTER TABLE booking.idempotency_keys ADD COLUMN home bigint NOT NULL DEFAULT 0;

-- the keys that point at resources go first, then every key gains home
ALTER TABLE booking.resource_stripes DROP CONSTRAINT resource_stripes_resource_id_fkey;
ALTER TABLE booking.resources DROP CONSTRAINT resources_pool_id_fkey;

ALTER TABLE booking.resources DROP CONSTRAINT resources_pkey,
    ADD CONSTRAINT resources_pkey PRIMARY KEY (home, id);
ALTER TABLE booking.resources
    ADD CONSTRAINT resources_pool_fkey FOREIGN KEY (home, pool_id) REFERENCES booking.resources (home, id);
DROP INDEX booking.resources_pool_idx;
CREATE INDEX resources_pool_idx ON booking.resources (home, pool_id, id) WHERE pool_id IS NOT NULL;

ALTER TABLE booking.bookings DROP CONSTRAINT bookings_pkey,
    ADD CONSTRAINT bookings_pkey PRIMARY KEY (home, id);
ALTER TABLE booking.bookings DROP CONSTRAINT bookings_no_overlap,
    ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
        home WITH =, resource_id WITH =, during WITH &&, validity WITH &&)
        WHERE (during IS NOT NULL AND status IN ('pending', 'confirmed'));
DROP INDEX booking.bookings_pending_idx, booking.bookings_expiry_idx, booking.bookings_group_idx;
CREATE INDEX bookings_pending_idx ON booking.bookings (home, resource_id, expires_at) WHERE status = 'pending';
CREATE INDEX bookings_expiry_idx ON booking.bookings (home, expires_at) WHERE status = 'pending';
CREATE INDEX bookings_group_idx ON booking.bookings (home, group_id) WHERE group_id IS NOT NULL;

ALTER TABLE booking.resource_stripes DROP CONSTRAINT resource_stripes_pkey,
    ADD CONSTRAINT resource_stripes_pkey PRIMARY KEY (home, resource_id, stripe),
    ADD CONSTRAINT resource_stripes_resource_fkey FOREIGN KEY (home, resource_id)
        REFERENCES booking.resources (home, id);

ALTER TABLE booking.idempotency_keys DROP CONSTRAINT idempotency_keys_pkey,
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (home, key);

------------------------------------------------------------------------------
-- scale-out on Citus (docs/scale-out.md)
------------------------------------------------------------------------------

CREATE FUNCTION booking.distribute(shard_count integer DEFAULT 32)
    RETURNS text
    AS 'MODULE_PATHNAME', 'booking_distribute'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION booking.distribute(integer) IS
'on a Citus coordinator: distributes the booking tables by home over shard_count shards and routes every call to the node that holds its shard';

-- The twins: booking.shard_<name> runs booking.<name> on the node that holds
-- home's shard.  distribute() registers them with Citus (distributed by
-- home, force_delegation); booking.<name> calls them.  Do not call them.

CREATE FUNCTION booking.shard_reserve_seat(resource bigint, guest text, quantity integer, hold interval, idempotency_key text, lock_timeout interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_seat'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_seat(bigint, text, integer, interval, text, interval, bigint) IS
'internal: booking.reserve_seat on the node that holds the shard of home (Citus); call booking.reserve_seat';

CREATE FUNCTION booking.shard_reserve_stay(resource bigint, guest text, during tstzrange, hold interval, idempotency_key text, lock_timeout interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_stay'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_stay(bigint, text, tstzrange, interval, text, interval, bigint) IS
'internal: booking.reserve_stay on the node that holds the shard of home (Citus); call booking.reserve_stay';

CREATE FUNCTION booking.shard_reserve_stays(resources bigint[], guest text, during tstzrange, hold interval, idempotency_key text, lock_timeout interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_stays'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_stays(bigint[], text, tstzrange, interval, text, interval, bigint) IS
'internal: booking.reserve_stays on the node that holds the shard of home (Citus); call booking.reserve_stays';

CREATE FUNCTION booking.shard_reserve_stay_any(pool bigint, guest text, during tstzrange, hold interval, idempotency_key text, lock_timeout interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_stay_any'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_stay_any(bigint, text, tstzrange, interval, text, interval, bigint) IS
'internal: booking.reserve_stay_any on the node that holds the shard of home (Citus); call booking.reserve_stay_any';

CREATE FUNCTION booking.shard_confirm(booking bigint, idempotency_key text, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_confirm'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_confirm(bigint, text, bigint) IS
'internal: booking.confirm on the node that holds the shard of home (Citus); call booking.confirm';

CREATE FUNCTION booking.shard_cancel(booking bigint, idempotency_key text, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_cancel'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_cancel(bigint, text, bigint) IS
'internal: booking.cancel on the node that holds the shard of home (Citus); call booking.cancel';

CREATE FUNCTION booking.shard_extend_hold(booking bigint, by interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_extend_hold'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_extend_hold(bigint, interval, bigint) IS
'internal: booking.extend_hold on the node that holds the shard of home (Citus); call booking.extend_hold';

CREATE FUNCTION booking.shard_extend_hold_until(booking bigint, until timestamptz, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_extend_hold_until'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_extend_hold_until(bigint, timestamptz, bigint) IS
'internal: booking.extend_hold_until on the node that holds the shard of home (Citus); call booking.extend_hold_until';

CREATE FUNCTION booking.shard_stay_member(resource bigint, guest text, during tstzrange, hold interval,
        group_id bigint, lock_timeout interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_stay_member'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_stay_member(bigint, text, tstzrange, interval, bigint, interval, bigint) IS
'internal: one member of a booking.reserve_stays group whose members live on several nodes (Citus)';

CREATE FUNCTION booking.shard_set_capacity(resource bigint, capacity integer, expected_version bigint, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_capacity'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_capacity(bigint, integer, bigint, bigint) IS
'internal: booking.set_capacity on the node that holds the shard of home (Citus); call booking.set_capacity';

CREATE FUNCTION booking.shard_set_stripes(resource bigint, stripes integer, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_stripes'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_stripes(bigint, integer, bigint) IS
'internal: booking.set_stripes on the node that holds the shard of home (Citus); call booking.set_stripes';

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA booking FROM PUBLIC;
