-- test/upgrade/fill--0.2.0.sql: data of the kinds 0.2.0 added, written with
-- plain INSERTs on a 0.2.0 schema (upgrade.sh runs it when its path goes on
-- from 0.2.0 to a newer version, after the data of the versions before): a
-- striped session whose stripes hold its free seats, with a confirmed
-- booking, a live hold, a lapsed hold that nothing expired yet (still counted
-- in the stripes) and a cancelled booking.  Ids come from the sequences, so
-- it runs after any other fill; upgrade.sh finds the session by its name.
\set ON_ERROR_STOP 1
SET TimeZone = 'UTC';

-- 20 seats over 4 stripes: 4 taken (uma 2, vic 1, wes 1), 16 free
INSERT INTO booking.resources (name, capacity, stripes, meta)
VALUES ('Arena', 20, 4, '{"striped": true}')
RETURNING id AS arena \gset
INSERT INTO booking.resource_stripes (resource_id, stripe, free) VALUES
    (:arena, 0, 3), (:arena, 1, 4), (:arena, 2, 4), (:arena, 3, 5);

INSERT INTO booking.bookings (resource_id, guest, quantity, status, expires_at, created_at, validity) VALUES
    (:arena, 'uma', 2, 'confirmed', NULL, '2030-02-01 10:00+00',
        tstzrange('2030-02-01 10:00+00', NULL, '[)')),
    -- a live hold
    (:arena, 'vic', 1, 'pending', pg_catalog.clock_timestamp() + interval '1 hour', pg_catalog.clock_timestamp(),
        tstzrange(pg_catalog.clock_timestamp(), pg_catalog.clock_timestamp() + interval '1 hour', '[)')),
    -- a lapsed hold, never expired: still counted in the stripes
    (:arena, 'wes', 1, 'pending', pg_catalog.clock_timestamp() - interval '1 hour', pg_catalog.clock_timestamp() - interval '2 hours',
        tstzrange(pg_catalog.clock_timestamp() - interval '2 hours', pg_catalog.clock_timestamp() - interval '1 hour', '[)')),
    -- cancelled: not counted
    (:arena, 'xia', 3, 'cancelled', NULL, '2030-02-01 11:00+00',
        tstzrange('2030-02-01 11:00+00', NULL, '[)'));
