/* booking--0.1.0--0.2.0.sql: hot inventory (striped counters) */

\echo Use "ALTER EXTENSION booking UPDATE TO '0.2.0'" to load this file. \quit

-- 0 or 1: the resource row is the one counter; N > 1: N stripe rows share the
-- free seats, so concurrent buyers commit in parallel
ALTER TABLE booking.resources ADD COLUMN stripes integer NOT NULL DEFAULT 0;

-- one constraint per hot table, not several: the executor re-reads every
-- CHECK of a table for each statement, and these rows are written by every
-- sale.  The last term makes a write of taken on a striped resource (say,
-- from a session still running an older library) fail loudly.
ALTER TABLE booking.resources
    DROP CONSTRAINT resources_capacity_check,
    DROP CONSTRAINT resources_taken_check,
    DROP CONSTRAINT resources_taken_within_capacity,
    ADD CONSTRAINT resources_counter_check CHECK (capacity >= 0 AND taken >= 0
        AND taken <= capacity AND stripes >= 0 AND stripes <= 64
        AND (stripes <= 1 OR taken = 0));
-- the API normalizes during to a non-empty [lower, upper) before it writes
ALTER TABLE booking.bookings
    DROP CONSTRAINT bookings_quantity_check,
    DROP CONSTRAINT bookings_during_check,
    DROP CONSTRAINT bookings_hold_check,
    ADD CONSTRAINT bookings_row_check CHECK (quantity > 0
        AND ((status = 'pending') = (expires_at IS NOT NULL) OR status IN ('cancelled', 'expired')));

CREATE TABLE booking.resource_stripes (
    resource_id bigint NOT NULL REFERENCES booking.resources (id),
    stripe      integer NOT NULL,
    free        integer NOT NULL,
    PRIMARY KEY (resource_id, stripe),
    CONSTRAINT resource_stripes_check CHECK (stripe >= 0 AND free >= 0)
) WITH (fillfactor = 50);   -- room for HOT updates of hot counter rows
COMMENT ON TABLE booking.resource_stripes IS
'free seats of a striped resource, split over rows that buyers lock independently';
SELECT pg_catalog.pg_extension_config_dump('booking.resource_stripes', '');
REVOKE ALL ON booking.resource_stripes FROM PUBLIC;

CREATE FUNCTION booking.set_stripes(resource bigint, stripes integer)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_stripes'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_stripes(bigint, integer) IS
'splits a resource''s free seats over stripes rows (hot inventory); 0 or 1 goes back to one row';
REVOKE ALL ON FUNCTION booking.set_stripes(bigint, integer) FROM PUBLIC;
