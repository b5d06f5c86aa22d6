--
-- free_slots: the maximal free gaps inside a window, in time order
-- (no ORDER BY below: the order is the function's own)
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('room ' || i) FROM generate_series(1, 5) i;

-- the whole window free: one slot, the window itself
SELECT * FROM booking.free_slots(3, '[2030-01-01, 2030-01-31)', '0');
-- min_length is inclusive: a 30-day window is a 30-day slot
SELECT * FROM booking.free_slots(3, '[2030-01-01, 2030-01-31)', '30 days');
SELECT count(*) FROM booking.free_slots(3, '[2030-01-01, 2030-01-31)', '31 days');
-- a closed window is taken half-open
SELECT * FROM booking.free_slots(3, '[2030-01-01, 2030-01-31]', '0');

-- room 1: stays across both window edges, two adjacent stays, one short one
SELECT ok, code FROM booking.reserve_stay(1, 'ann', '[2029-12-30, 2030-01-02)');
SELECT ok, code FROM booking.reserve_stay(1, 'bob', '[2030-01-29, 2030-02-02)');
SELECT ok, code FROM booking.reserve_stay(1, 'cy', '[2030-01-07, 2030-01-09)');
SELECT ok, code FROM booking.reserve_stay(1, 'dee', '[2030-01-04, 2030-01-07)');
SELECT ok, code FROM booking.reserve_stay(1, 'eve', '[2030-01-20, 2030-01-21)');
-- another room's stays do not matter
SELECT ok, code FROM booking.reserve_stay(2, 'fay', '[2030-01-10, 2030-01-25)');
-- gaps clipped to the window, no gap between adjacent stays
SELECT * FROM booking.free_slots(1, '[2030-01-01, 2030-01-31)', '0');
-- min_length filter
SELECT * FROM booking.free_slots(1, '[2030-01-01, 2030-01-31)', '2 days');
SELECT * FROM booking.free_slots(1, '[2030-01-01, 2030-01-31)', '49 hours');
SELECT * FROM booking.free_slots(1, '[2030-01-01, 2030-01-31)', '9 days');
SELECT * FROM booking.free_slots(1, '[2030-01-01, 2030-01-31)', '12 days');
-- windows against stays: inside a stay, exactly a gap, bounded by stays
SELECT * FROM booking.free_slots(1, '[2030-01-05, 2030-01-06)', '0');
SELECT * FROM booking.free_slots(1, '[2030-01-02, 2030-01-04)', '0');
SELECT * FROM booking.free_slots(1, '[2030-01-04, 2030-01-09)', '0');
SELECT * FROM booking.free_slots(1, '[2030-01-03, 2030-01-10)', '0');
-- bookings at the edges, none inside
SELECT * FROM booking.free_slots(1, '[2030-01-09, 2030-01-20)', '0');

-- no gaps at all
SELECT ok, code FROM booking.reserve_stay(4, 'gus', '[2030-01-01, 2030-01-31)');
SELECT count(*) FROM booking.free_slots(4, '[2030-01-01, 2030-01-31)', '0');
SELECT count(*) FROM booking.free_slots(4, '[2030-01-10, 2030-01-11)', '0');

-- blocking bookings only: cancelled and expired ones are free, an
-- unexpired hold is not
SELECT ok, code, booking_id FROM booking.reserve_stay(5, 'hal', '[2030-01-10, 2030-01-12)');
SELECT ok, code, booking_id FROM booking.cancel(8);
SELECT ok, code FROM booking.reserve_stay(5, 'ida', '[2030-01-15, 2030-01-16)', '1 hour');
SELECT ok, code FROM booking.reserve_stay(5, 'jo', '[2030-01-20, 2030-01-22)', '1 ms');
SELECT pg_sleep(0.01);
-- the lapsed hold is still pending, and already free
SELECT * FROM booking.free_slots(5, '[2030-01-01, 2030-01-31)', '0');
SELECT booking.hold_expire();
SELECT * FROM booking.free_slots(5, '[2030-01-01, 2030-01-31)', '0');
SELECT guest, during, status FROM booking.bookings WHERE resource_id = 5 ORDER BY id;

-- an unknown resource has no free slots
SELECT count(*) FROM booking.free_slots(99, '[2030-01-01, 2030-01-31)', '0');

--
-- bad input: raises 22004/22023 naming the argument
--
SELECT * FROM booking.free_slots(NULL, '[2030-01-01, 2030-01-31)', '0');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.free_slots(1, NULL, '0');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.free_slots(1, 'empty', '0');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.free_slots(1, '[2030-01-01,)', '0');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.free_slots(1, '[-infinity, 2030-01-31)', '0');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.free_slots(1, '[2030-01-01, 2030-01-31)', NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.free_slots(1, '[2030-01-01, 2030-01-31)', '-1 day');
SELECT :'SQLSTATE' AS sqlstate;

--
-- STABLE: within one statement every call agrees, even when a hold lapses
-- while the statement runs (whether a hold lapsed is judged by the
-- statement's start time).  A 1 s hold, then one statement that lists the
-- slots 40 times over 2 s: one answer.  (On a runner so slow that the hold
-- lapsed before the statement began, the answer is one too.)
--
SELECT booking.create_resource('sampled room');        -- 6
SELECT ok, code FROM booking.reserve_stay(6, 'kai', '[2030-01-02, 2030-01-03)', '1 s');
SELECT count(DISTINCT slots) AS distinct_answers
FROM (SELECT (SELECT string_agg(f::text, ' ') FROM booking.free_slots(6, '[2030-01-01, 2030-01-05)', z.i * interval '0') f) AS slots
        FROM (SELECT i, pg_sleep(0.05) FROM generate_series(1, 40) i) z) s;
-- a later statement sees the hold lapsed
SELECT * FROM booking.free_slots(6, '[2030-01-01, 2030-01-05)', '0');
