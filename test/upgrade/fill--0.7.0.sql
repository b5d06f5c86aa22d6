-- fill--0.7.0.sql: what 0.7.0 adds that an update must keep: the grants of
-- the roles (grant_client, and EXECUTE an administrator gave by hand), which
-- 0.8.0 keeps although it replaces the functions they are on
DO $$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'booking_upgrade_client') THEN
        CREATE ROLE booking_upgrade_client NOLOGIN;
    END IF;
    IF NOT EXISTS (SELECT 1 FROM pg_catalog.pg_roles WHERE rolname = 'booking_upgrade_direct') THEN
        CREATE ROLE booking_upgrade_direct NOLOGIN;
    END IF;
END
$$;
SELECT booking.grant_client('booking_upgrade_client');
GRANT USAGE ON SCHEMA booking TO booking_upgrade_direct;
GRANT EXECUTE ON FUNCTION booking.reserve_stay(bigint, text, tstzrange, interval, text, interval)
    TO booking_upgrade_direct WITH GRANT OPTION;
