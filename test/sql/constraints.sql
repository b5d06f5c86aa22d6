--
-- constraints: the tables themselves refuse a bad write that skips the API,
-- even a superuser's: the CHECK constraints keep every counter within its
-- bounds, and no row of booking.resources can be deleted, nor truncated away
-- from under its bookings (bookings point at their resource without a
-- foreign key since 0.3.0).
--
-- This file does not TRUNCATE for good, so it numbers its own resources and
-- bookings from 2001.
--
SET TimeZone = 'UTC';
SELECT pg_catalog.setval('booking.resources_id_seq', 2000) AS resources_from,
       pg_catalog.setval('booking.bookings_id_seq', 2000) AS bookings_from;

SELECT booking.create_resource('counter', 5);          -- 2001
SELECT booking.create_resource('striped', 8);          -- 2002
SELECT booking.create_resource('never booked', 3);     -- 2003
SELECT booking.create_resource('room');                -- 2004
SELECT ok, code FROM booking.set_stripes(2002, 2);
SELECT ok, code, booking_id FROM booking.reserve_seat(2001, 'ann', 2);
SELECT ok, code, booking_id FROM booking.reserve_seat(2002, 'bob', 3);
SELECT ok, code, booking_id FROM booking.reserve_seat(2001, 'cy', 1, hold => '1 hour');
SELECT ok, code, booking_id FROM booking.reserve_stay(2004, 'dee', '[2030-01-01, 2030-01-03)');

-- what the refused writes below must leave as it is
CREATE TEMP VIEW state AS
SELECT (SELECT pg_catalog.string_agg(pg_catalog.format('%s:%s/%s', id, taken, capacity), ' ' ORDER BY id)
          FROM booking.resources WHERE id BETWEEN 2001 AND 2004) AS resources,
       (SELECT pg_catalog.format('%s stripes, %s free', pg_catalog.count(*), pg_catalog.sum(free))
          FROM booking.resource_stripes WHERE resource_id = 2002) AS stripes,
       (SELECT pg_catalog.string_agg(pg_catalog.format('%s:%s %s', id, quantity, status), ' ' ORDER BY id)
          FROM booking.bookings WHERE resource_id BETWEEN 2001 AND 2004) AS bookings;
SELECT * FROM state;

-- the messages of a refused write end in the failing row or the trigger's
-- context, which name columns that may change; the first line says it all
\set VERBOSITY terse

--
-- CHECK constraints, as the superuser
--
-- the seat counter above capacity, below 0, and capacity below the counter
UPDATE booking.resources SET taken = capacity + 1 WHERE id = 2001;
SELECT :'SQLSTATE' AS sqlstate;
UPDATE booking.resources SET taken = -1 WHERE id = 2001;
SELECT :'SQLSTATE' AS sqlstate;
UPDATE booking.resources SET capacity = taken - 1 WHERE id = 2001;
SELECT :'SQLSTATE' AS sqlstate;
UPDATE booking.resources SET capacity = -1 WHERE id = 2003;
SELECT :'SQLSTATE' AS sqlstate;
-- a counter on a striped resource (its stripes hold the count)
UPDATE booking.resources SET taken = 1 WHERE id = 2002;
SELECT :'SQLSTATE' AS sqlstate;
-- a stripe with fewer than 0 free seats
UPDATE booking.resource_stripes SET free = -1 WHERE resource_id = 2002 AND stripe = 0;
SELECT :'SQLSTATE' AS sqlstate;
UPDATE booking.resource_stripes SET free = free - 100 WHERE resource_id = 2002;
SELECT :'SQLSTATE' AS sqlstate;
-- a booking of 0 or fewer seats
UPDATE booking.bookings SET quantity = 0 WHERE id = 2001;
SELECT :'SQLSTATE' AS sqlstate;
UPDATE booking.bookings SET quantity = -2 WHERE id = 2001;
SELECT :'SQLSTATE' AS sqlstate;
-- a hold without an expiry, a confirmed booking with one
UPDATE booking.bookings SET expires_at = NULL WHERE id = 2003;
SELECT :'SQLSTATE' AS sqlstate;
UPDATE booking.bookings SET expires_at = now() + interval '1 hour' WHERE id = 2001;
SELECT :'SQLSTATE' AS sqlstate;
-- an overlapping blocking stay, written directly: the exclusion constraint
INSERT INTO booking.bookings (resource_id, guest, quantity, during, blocked, status, validity)
VALUES (2004, 'eve', 1, '[2030-01-02, 2030-01-04)', '[2030-01-02, 2030-01-04)', 'confirmed', tstzrange(now(), NULL));
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM state;

--
-- rows of booking.resources cannot be deleted, by anyone: 55000 (on 0.2.0
-- the first and the TRUNCATE ... CASCADE went through: each runs in a
-- transaction rolled back, so the rest of this file still has its rows)
--
-- one that no booking points at
BEGIN;
DELETE FROM booking.resources WHERE id = 2003;
\echo :SQLSTATE
ROLLBACK;
-- one with bookings, and every row
BEGIN;
DELETE FROM booking.resources WHERE id = 2001;
\echo :SQLSTATE
ROLLBACK;
BEGIN;
DELETE FROM booking.resources;
\echo :SQLSTATE
ROLLBACK;
-- TRUNCATE: allowed together with booking.bookings (no booking is left
-- without its resource), refused otherwise, as the foreign key did (a
-- cascade reaches only the tables with foreign keys: not bookings)
SET client_min_messages = warning;
BEGIN;
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources;
\echo :SQLSTATE
ROLLBACK;
BEGIN;
TRUNCATE booking.resources CASCADE;
\echo :SQLSTATE
ROLLBACK;
RESET client_min_messages;
\set VERBOSITY default
SELECT * FROM state;

-- the API still works on the same rows, and every counter is exact
SELECT ok, code, booking_id FROM booking.reserve_seat(2001, 'fay', 2);
SELECT ok, code FROM booking.reserve_seat(2001, 'gus', 1);
SELECT ok, code, booking_id FROM booking.reserve_seat(2002, 'hal', 5);
SELECT ok, code FROM booking.reserve_seat(2002, 'ivy', 1);
SELECT booking.seats_left(2001), booking.seats_left(2002), booking.seats_left(2003);
SELECT * FROM seat_counters WHERE id IN (2001, 2003);
SELECT r.capacity - (SELECT pg_catalog.sum(free) FROM booking.resource_stripes s WHERE s.resource_id = r.id) AS taken,
       (SELECT pg_catalog.sum(quantity) FROM booking.bookings b
         WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed')) AS blocking
FROM booking.resources r WHERE r.id = 2002;
