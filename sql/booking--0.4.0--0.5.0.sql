/* booking--0.4.0--0.5.0.sql: amendments.  A per-guest limit
 * (set_guest_limit), seats in several sessions at once (reserve_seats),
 * reduce, move_stay, and buffers between stays (set_buffer), whose footprint
 * the exclusion constraint now compares. */

\echo Use "ALTER EXTENSION booking UPDATE TO '0.5.0'" to load this file. \quit

ALTER TABLE booking.resources ADD COLUMN guest_limit integer NULL,
    ADD COLUMN buffer_before interval NOT NULL DEFAULT '0',
    ADD COLUMN buffer_after interval NOT NULL DEFAULT '0';
ALTER TABLE booking.resources DROP CONSTRAINT resources_counter_check,
    ADD CONSTRAINT resources_counter_check CHECK (capacity >= 0 AND taken >= 0
        AND taken <= capacity AND stripes >= 0 AND stripes <= 64
        AND (stripes <= 1 OR taken = 0)
        AND (guest_limit IS NULL OR guest_limit >= 1)
        AND buffer_before >= '0' AND buffer_after >= '0');

ALTER TABLE booking.resource_stripes ADD COLUMN limited boolean NOT NULL DEFAULT false;

-- every stay so far was booked without buffers: its footprint is its range
ALTER TABLE booking.bookings ADD COLUMN limited boolean NOT NULL DEFAULT false,
    ADD COLUMN blocked tstzrange NULL;
UPDATE booking.bookings SET blocked = during WHERE during IS NOT NULL;
ALTER TABLE booking.bookings DROP CONSTRAINT bookings_row_check,
    ADD CONSTRAINT bookings_row_check CHECK (quantity > 0
        AND ((status = 'pending') = (expires_at IS NOT NULL) OR status IN ('cancelled', 'expired'))
        AND (during IS NULL) = (blocked IS NULL) AND (during IS NULL OR blocked @> during));
ALTER TABLE booking.bookings DROP CONSTRAINT bookings_no_overlap,
    ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
        home WITH =, resource_id WITH =, blocked WITH &&, validity WITH &&)
        WHERE (blocked IS NOT NULL AND status IN ('pending', 'confirmed'));
CREATE INDEX bookings_guest_idx ON booking.bookings (home, resource_id, guest)
    WHERE limited AND status IN ('pending', 'confirmed');

CREATE FUNCTION booking.set_guest_limit(resource bigint, max_per_guest integer)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_guest_limit'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_guest_limit(bigint, integer) IS
'caps what one guest may hold of a resource (seats, or stays not yet ended); NULL removes the cap';

CREATE FUNCTION booking.set_buffer(resource bigint, before interval, after interval)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_buffer'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_buffer(bigint, interval, interval) IS
'from now on a stay keeps the resource from others for before ahead of it and after behind it';

CREATE FUNCTION booking.reserve_seats(resources bigint[], guest text, quantities integer[] DEFAULT NULL,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_seats'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_seats(bigint[], text, integer[], interval, text, interval) IS
'takes seats of several resources, all or nothing, locking them in ascending id order; members share group_id';

CREATE FUNCTION booking.reduce(booking bigint, quantity integer, idempotency_key text DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reduce'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reduce(bigint, integer, text) IS
'gives back quantity seats of a seat booking at once; all of them cancels it';

CREATE FUNCTION booking.move_stay(booking bigint, during tstzrange, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_move_stay'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.move_stay(bigint, tstzrange, text, interval) IS
'gives a stay a new range, or leaves it untouched when the new range is not free';

-- the twins of the new calls (scale-out on Citus, docs/scale-out.md); on a
-- distributed cluster run SELECT booking.distribute() once more afterwards:
-- it registers the twins Citus does not know yet

CREATE FUNCTION booking.shard_set_guest_limit(resource bigint, max_per_guest integer, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_guest_limit'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_guest_limit(bigint, integer, bigint) IS
'internal: booking.set_guest_limit on the node that holds the shard of home (Citus); call booking.set_guest_limit';

CREATE FUNCTION booking.shard_set_buffer(resource bigint, before interval, after interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_buffer'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_buffer(bigint, interval, interval, bigint) IS
'internal: booking.set_buffer on the node that holds the shard of home (Citus); call booking.set_buffer';

CREATE FUNCTION booking.shard_reserve_seats(resources bigint[], guest text, quantities integer[], hold interval, idempotency_key text, lock_timeout interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_seats'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_seats(bigint[], text, integer[], interval, text, interval, bigint) IS
'internal: booking.reserve_seats on the node that holds the shard of home (Citus); call booking.reserve_seats';

CREATE FUNCTION booking.shard_reduce(booking bigint, quantity integer, idempotency_key text, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reduce'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reduce(bigint, integer, text, bigint) IS
'internal: booking.reduce on the node that holds the shard of home (Citus); call booking.reduce';

CREATE FUNCTION booking.shard_move_stay(booking bigint, during tstzrange, idempotency_key text, lock_timeout interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_move_stay'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_move_stay(bigint, tstzrange, text, interval, bigint) IS
'internal: booking.move_stay on the node that holds the shard of home (Citus); call booking.move_stay';

CREATE FUNCTION booking.shard_seat_member(resource bigint, guest text, quantity integer,
        expires_at timestamptz, group_id bigint, lock_timeout interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_seat_member'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_seat_member(bigint, text, integer, timestamptz, bigint, interval, bigint) IS
'internal: one member of a booking.reserve_seats group whose members live on several nodes (Citus); every member gets the expiry of the coordinator''s hold';

-- a member of a group over several nodes takes the coordinator's expiry, so
-- that the members of one hold lapse at once (it took the hold interval,
-- and each node added it to its own clock)
DROP FUNCTION booking.shard_stay_member(bigint, text, tstzrange, interval, bigint, interval, bigint);

CREATE FUNCTION booking.shard_stay_member(resource bigint, guest text, during tstzrange,
        expires_at timestamptz, group_id bigint, lock_timeout interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_stay_member'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_stay_member(bigint, text, tstzrange, timestamptz, bigint, interval, bigint) IS
'internal: one member of a booking.reserve_stays group whose members live on several nodes (Citus); every member gets the expiry of the coordinator''s hold';

REVOKE ALL ON ALL FUNCTIONS IN SCHEMA booking FROM PUBLIC;
