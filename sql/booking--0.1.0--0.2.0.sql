/* booking--0.1.0--0.2.0.sql: hot inventory (striped counters) */

\echo Use "ALTER EXTENSION booking UPDATE TO '0.2.0'" to load this file. \quit

-- 0 or 1: the resource row is the one counter; N > 1: N stripe rows share the
-- free seats, so concurrent buyers commit in parallel
ALTER TABLE booking.resources
    ADD COLUMN stripes integer NOT NULL DEFAULT 0 CHECK (stripes >= 0 AND stripes <= 64);
-- a striped resource's counter is its stripes: a write of taken (say, from a
-- session still running an older library) fails loudly
ALTER TABLE booking.resources
    ADD CONSTRAINT resources_striped_taken CHECK (stripes <= 1 OR taken = 0);

CREATE TABLE booking.resource_stripes (
    resource_id bigint NOT NULL REFERENCES booking.resources (id),
    stripe      integer NOT NULL CHECK (stripe >= 0),
    free        integer NOT NULL CHECK (free >= 0),
    PRIMARY KEY (resource_id, stripe)
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
