--
-- set_buffer: time kept free before and after every stay (cleaning,
-- preparing); a stay's footprint, bookings.blocked, is what the exclusion
-- constraint compares
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET IntervalStyle = 'postgres';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('boundaries');         -- 1
SELECT booking.create_resource('grow');               -- 2
SELECT booking.create_resource('under way');          -- 3
SELECT booking.create_resource('slots');              -- 4
SELECT booking.create_resource('answers');            -- 5
SELECT booking.create_resource('shrink');             -- 6
SELECT booking.create_resource('holds');              -- 7

--
-- answers: ok 200, stored as hours, the version bumped
--
-- none to begin with
SELECT buffer_before, buffer_after FROM booking.resources WHERE id = 5;
SELECT version AS v5 FROM booking.resources WHERE id = 5 \gset
SELECT * FROM booking.set_buffer(5, '1 day', '90 minutes');
SELECT buffer_before, buffer_after, version - :v5 AS bumped FROM booking.resources WHERE id = 5;
SELECT ok, code, booking_id, http_status, replayed FROM booking.set_buffer(5, '366 days', '0');
SELECT buffer_before, buffer_after, version - :v5 AS bumped FROM booking.resources WHERE id = 5;
SELECT ok, code, booking_id, http_status, replayed FROM booking.set_buffer(5, '0', '0');
SELECT buffer_before, buffer_after, version - :v5 AS bumped FROM booking.resources WHERE id = 5;
-- unknown resource: not_found 404
SELECT * FROM booking.set_buffer(99, '1 hour', '1 hour');

--
-- bad input: raises 22004/22023 naming the argument, changes nothing
--
SELECT ok, code FROM booking.set_buffer(5, '1 hour', '2 hours');
SELECT version AS v5 FROM booking.resources WHERE id = 5 \gset
SELECT * FROM booking.set_buffer(NULL, '1 hour', '1 hour');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_buffer(5, NULL, '1 hour');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_buffer(5, '1 hour', NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_buffer(5, '-1 hour', '1 hour');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_buffer(5, '1 hour', '-1 microsecond');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_buffer(5, '1 day -25 hours', '1 hour');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_buffer(5, '1 mon', '1 hour');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_buffer(5, '1 hour', '1 year');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_buffer(5, '367 days', '1 hour');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_buffer(5, '1 hour', '366 days 1 second');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_buffer(5, '8785 hours', '1 hour');
SELECT :'SQLSTATE' AS sqlstate;
SELECT buffer_before, buffer_after, version - :v5 AS bumped FROM booking.resources WHERE id = 5;

--
-- the buffers add up: A then B need A.after + B.before between them
-- (resource 1: before 2 hours, after 3 hours)
--
SELECT ok, code FROM booking.set_buffer(1, '2 hours', '3 hours');
SELECT ok, code, booking_id FROM booking.reserve_stay(1, 'ann', '[2030-01-10 10:00, 2030-01-10 12:00)');
SELECT id, during, blocked FROM booking.bookings WHERE id = 1;
-- after A: a stay may begin at 17:00 (12:00 + 3 h + 2 h), not a microsecond
-- or a minute earlier
SELECT * FROM booking.reserve_stay(1, 'bob', '[2030-01-10 16:59:59.999999, 2030-01-10 18:00)');
SELECT ok, code, booking_id, http_status FROM booking.reserve_stay(1, 'bob', '[2030-01-10 16:59, 2030-01-10 18:00)');
SELECT ok, code, booking_id, http_status FROM booking.reserve_stay(1, 'bob', '[2030-01-10 14:00, 2030-01-10 15:00)');
SELECT ok, code, booking_id, http_status FROM booking.reserve_stay(1, 'bob', '[2030-01-10 17:00, 2030-01-10 18:00)');
-- before A: a stay may end at 05:00 (10:00 - 2 h - 3 h), not a microsecond
-- or a minute later
SELECT ok, code, booking_id, http_status FROM booking.reserve_stay(1, 'cy', '[2030-01-10 04:00, 2030-01-10 05:00:00.000001)');
SELECT ok, code, booking_id, http_status FROM booking.reserve_stay(1, 'cy', '[2030-01-10 04:00, 2030-01-10 05:01)');
SELECT ok, code, booking_id, http_status FROM booking.reserve_stay(1, 'cy', '[2030-01-10 04:00, 2030-01-10 05:00)');
SELECT id, guest, during, blocked FROM booking.bookings WHERE resource_id = 1 ORDER BY lower(during);
-- between two stays (footprints [08:00, 15:00) and [06:00, 13:00) the next
-- day): a new stay needs 2 h after the first footprint and 3 h before the
-- second, so [17:00, 03:00) fits exactly
SELECT ok, code FROM booking.reserve_stay(1, 'dee', '[2030-01-11 10:00, 2030-01-11 12:00)');
SELECT ok, code FROM booking.reserve_stay(1, 'fay', '[2030-01-12 08:00, 2030-01-12 10:00)');
SELECT ok, code, http_status FROM booking.reserve_stay(1, 'eve', '[2030-01-11 17:00, 2030-01-12 03:00:00.000001)');
SELECT ok, code, http_status FROM booking.reserve_stay(1, 'eve', '[2030-01-11 16:59:59.999999, 2030-01-12 03:00)');
SELECT ok, code, http_status FROM booking.reserve_stay(1, 'eve', '[2030-01-11 17:00, 2030-01-12 03:00)');
SELECT guest, during, blocked FROM booking.bookings WHERE resource_id = 1 ORDER BY lower(during);
-- a cancelled stay's footprint is free again: ann's range, and no more,
-- between cy's and bob's footprints
SELECT ok, code FROM booking.cancel(1);
SELECT ok, code, http_status FROM booking.reserve_stay(1, 'gus', '[2030-01-10 09:59, 2030-01-10 12:00)');
SELECT ok, code, http_status FROM booking.reserve_stay(1, 'gus', '[2030-01-10 10:00, 2030-01-10 12:01)');
SELECT ok, code, http_status FROM booking.reserve_stay(1, 'gus', '[2030-01-10 10:00, 2030-01-10 12:00)');

--
-- free_slots: where a NEW stay may lie, the gaps between footprints less
-- the new stay's before and after (resource 4: before 2 hours, after 3 hours)
--
SELECT ok, code FROM booking.set_buffer(4, '2 hours', '3 hours');
SELECT ok, code FROM booking.reserve_stay(4, 'hal', '[2030-03-10 10:00, 2030-03-10 12:00)');
SELECT ok, code FROM booking.reserve_stay(4, 'ida', '[2030-03-10 20:00, 2030-03-10 22:00)');
SELECT guest, during, blocked FROM booking.bookings WHERE resource_id = 4 ORDER BY lower(during);
-- footprints [08:00, 15:00) and [18:00, 01:00): the 3-hour gap between them
-- is too short for a new stay (2 h + 3 h), the others shrink by them
SELECT * FROM booking.free_slots(4, '[2030-03-10 00:00, 2030-03-11 06:00)', '0');
SELECT * FROM booking.free_slots(4, '[2030-03-10 00:00, 2030-03-11 06:00)', '3 hours');
SELECT * FROM booking.free_slots(4, '[2030-03-10 00:00, 2030-03-11 06:00)', '4 hours');
-- a footprint outside the window still counts: one that ends at 02:00
SELECT ok, code FROM booking.reserve_stay(4, 'jo', '[2030-03-09 20:00, 2030-03-09 23:00)');
SELECT * FROM booking.free_slots(4, '[2030-03-10 00:00, 2030-03-11 06:00)', '0');
-- each slot can be booked whole, and no more
BEGIN;
SELECT ok, code FROM booking.reserve_stay(4, 'kim', '[2030-03-10 04:00, 2030-03-10 05:00)');
SELECT ok, code FROM booking.reserve_stay(4, 'kim', '[2030-03-11 03:00, 2030-03-11 06:00)');
ROLLBACK;
SELECT ok, code FROM booking.reserve_stay(4, 'kim', '[2030-03-10 03:59, 2030-03-10 05:00)');
SELECT ok, code FROM booking.reserve_stay(4, 'kim', '[2030-03-10 04:00, 2030-03-10 05:01)');
SELECT ok, code FROM booking.reserve_stay(4, 'kim', '[2030-03-11 02:59, 2030-03-11 06:00)');
-- the next free slot of an unavailable answer follows the same rule
SELECT * FROM booking.reserve_stay(4, 'kim', '[2030-03-10 13:00, 2030-03-10 14:00)');
SELECT * FROM booking.reserve_stay(4, 'kim', '[2030-03-10 02:00, 2030-03-10 04:00)');

--
-- growing a buffer: existing stays that have not ended are padded, or
-- nothing changes (resource 2: two stays with 4 hours between them)
--
SELECT ok, code FROM booking.reserve_stay(2, 'lee', '[2030-02-01 10:00, 2030-02-01 12:00)');
SELECT ok, code FROM booking.reserve_stay(2, 'max', '[2030-02-01 16:00, 2030-02-01 18:00)');
SELECT ok, code FROM booking.reserve_stay(2, 'ned', '[2001-02-01 10:00, 2001-02-01 12:00)');
SELECT version AS v2 FROM booking.resources WHERE id = 2 \gset
-- 2 h after lee + 2 h before max: exactly the gap; both re-padded, the
-- ended stay is not
SELECT * FROM booking.set_buffer(2, '2 hours', '2 hours');
SELECT guest, during, blocked FROM booking.bookings WHERE resource_id = 2 ORDER BY lower(during);
SELECT buffer_before, buffer_after, version - :v2 AS bumped FROM booking.resources WHERE id = 2;
-- a second more: unavailable, nothing changes
SELECT ok, code, booking_id, http_status, replayed FROM booking.set_buffer(2, '2 hours', '02:00:01');
SELECT ok, code, booking_id, http_status, replayed FROM booking.set_buffer(2, '0', '4 hours 1 minute');
SELECT ok, code, booking_id, http_status, replayed FROM booking.set_buffer(2, '4 hours 1 minute', '0');
SELECT guest, during, blocked FROM booking.bookings WHERE resource_id = 2 ORDER BY lower(during);
SELECT buffer_before, buffer_after, version - :v2 AS bumped FROM booking.resources WHERE id = 2;
-- the same sum split another way fits
SELECT ok, code, http_status FROM booking.set_buffer(2, '3 hours', '1 hour');
SELECT guest, during, blocked FROM booking.bookings WHERE resource_id = 2 ORDER BY lower(during);
SELECT buffer_before, buffer_after, version - :v2 AS bumped FROM booking.resources WHERE id = 2;
-- an unexpired hold is padded and counted too; a cancelled stay is not
-- (resource 7: a hold, 22 hours, then a confirmed stay; a cancelled stay
-- between them)
SELECT ok, code FROM booking.reserve_stay(7, 'ola', '[2030-02-02 10:00, 2030-02-02 12:00)', '1 hour');
SELECT ok, code FROM booking.reserve_stay(7, 'pat', '[2030-02-03 10:00, 2030-02-03 12:00)');
SELECT booking_id AS cat FROM booking.reserve_stay(7, 'cat', '[2030-02-02 14:00, 2030-02-02 16:00)') \gset
SELECT ok, code FROM booking.cancel(:cat);
SELECT ok, code, http_status FROM booking.set_buffer(7, '0', '22:00:01');
SELECT ok, code, http_status FROM booking.set_buffer(7, '00:00:01', '22 hours');
SELECT guest, during, blocked, status FROM booking.bookings WHERE resource_id = 7 ORDER BY lower(during);
SELECT ok, code, http_status FROM booking.set_buffer(7, '0', '22 hours');
SELECT guest, during, blocked, status FROM booking.bookings WHERE resource_id = 7 ORDER BY lower(during);

--
-- a stay under way only gets the after buffer; an ended one none
-- (resource 3)
--
-- times relative to one fixed instant t0, a little before the calls
SELECT now() AS t0 \gset
SELECT ok, code FROM booking.reserve_stay(3, 'quinn', tstzrange(:'t0'::timestamptz - interval '3 hours', :'t0'::timestamptz - interval '1 hour'));
SELECT ok, code FROM booking.reserve_stay(3, 'ray', tstzrange(:'t0'::timestamptz - interval '1 hour', :'t0'::timestamptz + interval '1 hour'));
SELECT ok, code FROM booking.reserve_stay(3, 'sue', '[2030-04-01, 2030-04-02)');
SELECT ok, code, http_status FROM booking.set_buffer(3, '2 hours', '3 hours');
SELECT guest, lower(blocked) = lower(during) AS same_start, upper(blocked) = upper(during) AS same_end,
       lower(during) - lower(blocked) AS before, upper(blocked) - upper(during) AS after
FROM booking.bookings WHERE resource_id = 3 ORDER BY lower(during);
-- the next stay must leave the 3 hours after ray and its own 2 hours before
SELECT ok, code, http_status FROM booking.reserve_stay(3, 'tom', tstzrange(:'t0'::timestamptz + interval '6 hours' - interval '1 microsecond', :'t0'::timestamptz + interval '7 hours'));
SELECT ok, code, http_status FROM booking.reserve_stay(3, 'tom', tstzrange(:'t0'::timestamptz + interval '6 hours', :'t0'::timestamptz + interval '7 hours'));

--
-- shrinking: future stays lose their padding, so stays fit closer
-- (resource 6)
--
SELECT ok, code FROM booking.set_buffer(6, '1 day', '1 day');
SELECT ok, code FROM booking.reserve_stay(6, 'uma', '[2030-05-10, 2030-05-12)');
SELECT ok, code, http_status FROM booking.reserve_stay(6, 'vic', '[2030-05-12, 2030-05-14)');
SELECT ok, code, http_status FROM booking.set_buffer(6, '0', '12 hours');
SELECT buffer_before, buffer_after FROM booking.resources WHERE id = 6;
SELECT guest, during, blocked FROM booking.bookings WHERE resource_id = 6 ORDER BY lower(during);
SELECT ok, code, http_status FROM booking.reserve_stay(6, 'vic', '[2030-05-12, 2030-05-14)');
SELECT ok, code, http_status FROM booking.reserve_stay(6, 'vic', '[2030-05-12 12:00, 2030-05-14)');
SELECT ok, code, http_status FROM booking.set_buffer(6, '0', '0');
SELECT ok, code, http_status FROM booking.reserve_stay(6, 'wes', '[2030-05-14, 2030-05-15)');
SELECT guest, during, blocked FROM booking.bookings WHERE resource_id = 6 ORDER BY lower(during);
SELECT * FROM booking.free_slots(6, '[2030-05-09, 2030-05-16)', '0');

--
-- a change that moves footprints both ways (before grows, after shrinks)
-- fits in the end, whatever order the stays are re-padded in: the later
-- stay, booked first, must not meet the earlier stay's old, longer after
-- (resource 7)
--
SELECT booking.create_resource('both ways') AS r7 \gset
SELECT ok, code FROM booking.set_buffer(:r7, '0', '3 hours');
SELECT ok, code FROM booking.reserve_stay(:r7, 'late', tstzrange(:'t0'::timestamptz + interval '4 hours', :'t0'::timestamptz + interval '6 hours'));
SELECT ok, code FROM booking.reserve_stay(:r7, 'now', tstzrange(:'t0'::timestamptz - interval '1 hour', :'t0'::timestamptz + interval '1 hour'));
-- now: under way, footprint to t0 + 1 h + 1 h; late: from t0 + 4 h - 2 h
SELECT ok, code, http_status FROM booking.set_buffer(:r7, '2 hours', '1 hour');
SELECT guest, lower(during) - lower(blocked) AS before, upper(blocked) - upper(during) AS after
FROM booking.bookings WHERE resource_id = :r7 ORDER BY lower(during);

--
-- buffers near the ends of time: a footprint stops at the first or last
-- instant PostgreSQL can represent, in C (reserve_stay) as in SQL
-- (reserve_stays, reserve_stay_any, free_slots), instead of an error
--
SELECT booking.create_resource('edges') AS r8 \gset
SELECT booking.create_resource('edge pool') AS pool8 \gset
SELECT booking.create_resource('edge unit', 1, :pool8) AS unit8 \gset
SELECT ok, code FROM booking.set_buffer(:r8, '366 days', '366 days');
SELECT ok, code FROM booking.set_buffer(:unit8, '366 days', '366 days');
SELECT ok, code FROM booking.reserve_stay(:r8, 'x', '[4713-01-02 00:00+00 BC, 4713-02-01 00:00+00 BC)');
SELECT lower(blocked) = '4714-11-24 00:00+00 BC'::timestamptz AS starts_at_the_first_instant
FROM booking.bookings WHERE resource_id = :r8;
SELECT count(*) AS slots FROM booking.free_slots(:r8, '[4714-11-25 00:00+00 BC, 4711-01-01 00:00+00 BC)', '1 day');
SELECT ok, code FROM booking.reserve_stays(ARRAY[:r8], 'y', '[294276-11-01 00:00+00, 294276-12-01 00:00+00)');
SELECT ok, code FROM booking.reserve_stay_any(:pool8, 'z', '[294276-11-01 00:00+00, 294276-12-01 00:00+00)');
SELECT count(*) AS slots FROM booking.free_slots(:r8, '[294275-01-01 00:00+00, 294276-12-31 00:00+00)', '1 day');

-- every stay's footprint covers its range
SELECT count(*) FILTER (WHERE NOT blocked @> during) AS bad_footprints, count(*) AS stays
FROM booking.bookings WHERE during IS NOT NULL;
