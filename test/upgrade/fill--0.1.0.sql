-- test/upgrade/fill--0.1.0.sql: data for a booking 0.1.0 schema, written with
-- plain INSERTs and UPDATEs (the C library targets the newest schema, so the
-- API is not used on the old one).  Every kind of row the API writes is here:
-- seats confirmed, held, held and lapsed, cancelled; stays confirmed, held,
-- expired, lapsed; a group; a pool; a stored idempotency result.  Ids are
-- deterministic (fresh sequences).  upgrade.sh checks what it expects of them.
\set ON_ERROR_STOP 1
SET TimeZone = 'UTC';

-- resources 1..7
INSERT INTO booking.resources (name, capacity, meta) VALUES
    ('Concert A', 3, '{"hall": "A"}'),          -- 1: 2 of 3 seats taken (one a live hold)
    ('Concert B', 3, '{}'),                     -- 2: full, but one taken seat is a lapsed hold
    ('Room 101', 1, '{"floor": 1}'),            -- 3: stays
    ('Double rooms', 0, '{}');                  -- 4: a pool
INSERT INTO booking.resources (name, capacity, pool_id) VALUES
    ('Room 201', 1, 4),                         -- 5: unit of pool 4
    ('Room 202', 1, 4);                         -- 6: unit of pool 4
INSERT INTO booking.resources (name, capacity) VALUES
    ('Concert C', 10);                          -- 7: 6 of 10 seats taken
-- as set_capacity would have left it: two capacity edits
UPDATE booking.resources SET version = 3 WHERE id = 1;

-- seat bookings: the counter taken matches them
INSERT INTO booking.bookings (resource_id, guest, quantity, status, expires_at, created_at, validity) VALUES
    -- 1
    (1, 'alice', 1, 'confirmed', NULL, '2030-01-01 10:00+00',
        tstzrange('2030-01-01 10:00+00', NULL, '[)')),
    -- 2: a live hold (expires in an hour)
    (1, 'bob', 1, 'pending', pg_catalog.clock_timestamp() + interval '1 hour', pg_catalog.clock_timestamp(),
        tstzrange(pg_catalog.clock_timestamp(), pg_catalog.clock_timestamp() + interval '1 hour', '[)')),
    -- 3
    (2, 'carol', 2, 'confirmed', NULL, '2030-01-01 11:00+00',
        tstzrange('2030-01-01 11:00+00', NULL, '[)')),
    -- 4: a lapsed hold, never expired: still counted in taken
    (2, 'dan', 1, 'pending', pg_catalog.clock_timestamp() - interval '1 hour', pg_catalog.clock_timestamp() - interval '2 hours',
        tstzrange(pg_catalog.clock_timestamp() - interval '2 hours', pg_catalog.clock_timestamp() - interval '1 hour', '[)')),
    -- 5: cancelled, not counted
    (2, 'erin', 1, 'cancelled', NULL, '2030-01-01 12:00+00',
        tstzrange('2030-01-01 12:00+00', NULL, '[)')),
    -- 6
    (7, 'zoe', 6, 'confirmed', NULL, '2030-01-01 13:00+00',
        tstzrange('2030-01-01 13:00+00', NULL, '[)'));
UPDATE booking.resources SET taken = 2 WHERE id = 1;
UPDATE booking.resources SET taken = 3 WHERE id = 2;
UPDATE booking.resources SET taken = 6 WHERE id = 7;

-- stays of room 3
INSERT INTO booking.bookings (resource_id, guest, quantity, during, status, expires_at, created_at, validity) VALUES
    -- 7: confirmed, June 1-4
    (3, 'frank', 1, '[2030-06-01, 2030-06-04)', 'confirmed', NULL, '2030-01-02 10:00+00',
        tstzrange('2030-01-02 10:00+00', NULL, '[)')),
    -- 8: expired, June 4-6: does not block
    (3, 'henry', 1, '[2030-06-04, 2030-06-06)', 'expired', NULL, '2030-01-02 11:00+00',
        tstzrange('2030-01-02 11:00+00', '2030-01-02 11:15+00', '[)')),
    -- 9: a live hold, June 10-12
    (3, 'gina', 1, '[2030-06-10, 2030-06-12)', 'pending', pg_catalog.clock_timestamp() + interval '1 hour', pg_catalog.clock_timestamp(),
        tstzrange(pg_catalog.clock_timestamp(), pg_catalog.clock_timestamp() + interval '1 hour', '[)')),
    -- 10: a lapsed hold, August 1-2: hold_expire moves it to expired
    (3, 'pat', 1, '[2030-08-01, 2030-08-02)', 'pending', pg_catalog.clock_timestamp() - interval '1 minute', pg_catalog.clock_timestamp() - interval '20 minutes',
        tstzrange(pg_catalog.clock_timestamp() - interval '20 minutes', pg_catalog.clock_timestamp() - interval '1 minute', '[)'));

-- a group of both units of pool 4, July 1-3: ids 11 and 12, group_id 11
INSERT INTO booking.bookings (id, resource_id, guest, quantity, during, status, created_at, validity, group_id)
SELECT pg_catalog.nextval('booking.bookings_id_seq'), u, 'ivy', 1, '[2030-07-01, 2030-07-03)', 'confirmed',
       '2030-01-03 10:00+00', tstzrange('2030-01-03 10:00+00', NULL, '[)'), NULL
FROM pg_catalog.generate_series(5, 6) AS u;
UPDATE booking.bookings SET group_id = 11 WHERE id IN (11, 12);

-- the stored result of reserve_seat(1, 'alice', 1, idempotency_key => 'upgrade-key-1'),
-- in the canonical request text of src/idempotency.c
INSERT INTO booking.idempotency_keys (key, request, ok, code, booking_id, http_status, message, created_at) VALUES
    ('upgrade-key-1', 'reserve_seat(1:1,5:alice,1:1,-)', true, 'ok', 1, 201,
     'Reserved 1 seat on resource 1.', pg_catalog.clock_timestamp()),
    ('upgrade-key-2', 'cancel(1:5)', false, 'invalid_state', 5, 409,
     'Booking 5 is cancelled; it cannot be cancelled again.', pg_catalog.clock_timestamp());
