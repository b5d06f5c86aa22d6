--
-- seats_left: free seats, counting lapsed holds as free.  It is STABLE, so
-- within one statement every call must agree, even when a hold lapses while
-- the statement runs: whether a hold lapsed is judged by the statement's
-- start time (statement_timestamp()), not by the clock of each call, and
-- not by the transaction's start either.
--
-- This file does not TRUNCATE booking.resources (0.3.0 refuses it), so it
-- numbers its own resources from 4001.
--
SET TimeZone = 'UTC';
SELECT pg_catalog.setval('booking.resources_id_seq', 4000) AS resources_from;

SELECT booking.create_resource('sampled', 5);          -- 4001
SELECT booking.create_resource('in a transaction', 5); -- 4002
SELECT booking.create_resource('striped', 8);          -- 4003
SELECT ok, code FROM booking.set_stripes(4003, 2);

-- a 1 s hold of 2 seats, then one statement that samples seats_left 40 times
-- over 2 s: one value (3 while the hold runs, 5 once it lapsed; on a runner
-- so slow that it lapsed before the statement began, one value too)
SELECT ok, code FROM booking.reserve_seat(4001, 'ann', 2, hold => '1 s');
SELECT count(DISTINCT s) AS distinct_values
FROM (SELECT booking.seats_left(4001) AS s
        FROM (SELECT pg_sleep(0.05) FROM generate_series(1, 40)) z) y;
-- a later statement sees the hold lapsed
SELECT booking.seats_left(4001);

-- the same on a striped resource
SELECT ok, code FROM booking.reserve_seat(4003, 'bob', 3, hold => '1 s');
SELECT count(DISTINCT s) AS distinct_values
FROM (SELECT booking.seats_left(4003) AS s
        FROM (SELECT pg_sleep(0.05) FROM generate_series(1, 40)) z) y;
SELECT booking.seats_left(4003);

-- the statement's time, not the transaction's: a hold made and lapsed
-- within one transaction is free again for the statements after it
BEGIN;
SELECT ok, code FROM booking.reserve_seat(4002, 'cy', 2, hold => '200 ms');
SELECT pg_sleep(0.3);
SELECT booking.seats_left(4002);
COMMIT;

-- bad input, and an unknown resource
SELECT booking.seats_left(NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.seats_left(4099) IS NULL AS unknown_is_null;
