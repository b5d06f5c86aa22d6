/* booking--0.2.0--0.3.0.sql: hardening.  The library of 0.3.0 expects every
 * change below, so run ALTER EXTENSION booking UPDATE right after installing
 * the build. */

\echo Use "ALTER EXTENSION booking UPDATE TO '0.3.0'" to load this file. \quit

-- Refuse to go on with a schema that someone other than a superuser
-- controls (see booking.sql): fix its ownership first.
DO $check$
DECLARE
    owner_name name;
    owner_super boolean;
BEGIN
    SELECT r.rolname, r.rolsuper INTO owner_name, owner_super
      FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
     WHERE n.nspname OPERATOR(pg_catalog.=) 'booking';
    IF NOT owner_super THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = pg_catalog.format('schema "booking" is owned by role %I, which is not a superuser', owner_name),
            DETAIL = 'The owner of the schema could drop every booking or plant objects that the booking calls would run.',
            HINT = 'Give the schema to a superuser (ALTER SCHEMA booking OWNER TO ...), then update again.';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
                LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.grantee
                WHERE n.nspname OPERATOR(pg_catalog.=) 'booking' AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
                  AND NOT COALESCE(r.rolsuper, false)) THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'schema "booking" lets a role that is not a superuser create objects in it',
            HINT = 'REVOKE CREATE ON SCHEMA booking FROM that role (or PUBLIC), then update again.';
    END IF;
END
$check$;

-- The striped fast path must not lock the resource row: no foreign key from
-- bookings; resource rows are never deleted instead.
ALTER TABLE booking.bookings DROP CONSTRAINT bookings_resource_id_fkey;

CREATE FUNCTION booking.refuse_resource_delete()
    RETURNS trigger
    AS 'MODULE_PATHNAME', 'booking_refuse_resource_delete'
    LANGUAGE C;
COMMENT ON FUNCTION booking.refuse_resource_delete() IS
'trigger: resource rows are never deleted or renumbered, nor truncated while bookings refer to them';
CREATE TRIGGER resources_no_delete BEFORE DELETE OR UPDATE OF id ON booking.resources
    FOR EACH STATEMENT EXECUTE FUNCTION booking.refuse_resource_delete();
CREATE TRIGGER resources_no_orphans AFTER TRUNCATE ON booking.resources
    FOR EACH STATEMENT EXECUTE FUNCTION booking.refuse_resource_delete();

CREATE FUNCTION booking.extend_hold_until(booking bigint, until timestamptz)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_extend_hold_until'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.extend_hold_until(bigint, timestamptz) IS
'sets the expiry of an unexpired hold to until; a retry sets the same expiry again';

REVOKE ALL ON FUNCTION booking.refuse_resource_delete() FROM PUBLIC;
REVOKE ALL ON FUNCTION booking.extend_hold_until(bigint, timestamptz) FROM PUBLIC;
