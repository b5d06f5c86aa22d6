--
-- opening_hours (0.9.0): per weekday, local windows a stay must lie in;
-- closed (409) names the first closed instant; free_slots lists only open
-- time; the windows are wall-clock on the days the clocks change
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('court');               -- 1, Paris
SELECT booking.create_resource('night club');          -- 2, Paris
SELECT booking.create_resource('pool');                -- 3, a pool of two units
SELECT booking.create_resource('unit a', 1, 3);        -- 4
SELECT booking.create_resource('unit b', 1, 3);        -- 5
SELECT id, (booking.set_time_zone(id, 'Europe/Paris')).code FROM booking.resources ORDER BY id;

-- Monday 09:00-12:00 and 14:00-18:00, nothing else
SELECT * FROM booking.set_opening_hours(1, '{"mon": [["09:00", "12:00"], ["14:00", "18:00"]]}');
SELECT opening_hours FROM booking.resources WHERE id = 1;
-- 2030-03-04 is a Monday; Paris is UTC+1 then
SELECT ok, code FROM booking.reserve_stay(1, 'ann', '[2030-03-04 08:00+00, 2030-03-04 09:00+00)');  -- 09-10 local
SELECT * FROM booking.reserve_stay(1, 'bob', '[2030-03-04 10:30+00, 2030-03-04 11:30+00)');         -- 11:30-12:30
SELECT ok, code, message FROM booking.reserve_stay(1, 'bob', '[2030-03-04 06:00+00, 2030-03-04 07:30+00)');  -- before opening
SELECT ok, code, message FROM booking.reserve_stay(1, 'bob', '[2030-03-05 08:00+00, 2030-03-05 09:00+00)');  -- a Tuesday
-- taken: the next free slot quoted is an open one (13:00 UTC, not 09:00,
-- whose three hours would run past closing)
SELECT ok, code, message FROM booking.reserve_stay(1, 'bob', '[2030-03-04 08:30+00, 2030-03-04 11:30+00)');
-- free_slots: only open time, cut around ann's stay
SELECT * FROM booking.free_slots(1, '[2030-03-04 00:00+00, 2030-03-06 00:00+00)', '0');
SELECT * FROM booking.free_slots(1, '[2030-03-04 00:00+00, 2030-03-06 00:00+00)', '3 hours');
-- nights, series and moves are held to the hours too
SELECT ok, code FROM booking.reserve_nights(1, 'cat', '2030-03-04', '2030-03-05');
SELECT ok, code, message FROM booking.reserve_series(1, 'dan', '[2030-03-04 13:00+00, 2030-03-04 14:00+00)', '1 week', 3);
-- daily from Monday: the Tuesday is closed, named as occurrence 2
SELECT ok, code, message FROM booking.reserve_series(1, 'dan', '[2030-03-04 15:00+00, 2030-03-04 16:00+00)', '1 day', 2);
SELECT ok, code, message FROM booking.move_stay(1, '[2030-03-04 16:30+00, 2030-03-04 17:30+00)');
SELECT ok, code FROM booking.move_stay(1, '[2030-03-04 15:30+00, 2030-03-04 16:30+00)');
-- reserve_stays: one closed member refuses the group
SELECT ok, code, message FROM booking.reserve_stays(ARRAY[1, 2], 'eve', '[2030-03-11 07:00+00, 2030-03-11 08:00+00)');
SELECT count(*) FROM booking.bookings WHERE guest = 'eve';

-- a night club: Saturday 22:00 to Sunday 06:00 is one stretch (the windows touch)
SELECT ok, code FROM booking.set_opening_hours(2, '{"sat": [["22:00", "24:00"]], "sun": [["00:00", "06:00"]]}');
-- the spring night (2030-03-31: 02:00 -> 03:00): 00:00-06:00 is five hours,
-- the stretch from Saturday 22:00 seven
SELECT u, upper(u) - lower(u) AS open FROM booking.free_slots(2, '[2030-03-30 00:00+00, 2030-04-01 00:00+00)', '0') u;
-- the autumn night (2030-10-27: 03:00 -> 02:00): seven, the stretch nine
SELECT u, upper(u) - lower(u) AS open FROM booking.free_slots(2, '[2030-10-26 00:00+00, 2030-10-28 00:00+00)', '0') u;
-- the whole spring night is bookable; a week later, one minute more is not
SELECT ok, code FROM booking.reserve_stay(2, 'fay', '[2030-03-30 21:00+00, 2030-03-31 04:00+00)');
SELECT ok, code, message FROM booking.reserve_stay(2, 'gus', '[2030-04-06 21:00+00, 2030-04-07 04:01+00)');

-- a pool: a closed unit is passed over; all closed answers closed
SELECT ok, code FROM booking.set_opening_hours(4, '{"mon": [["09:00", "18:00"]]}');
SELECT ok, code FROM booking.set_opening_hours(5, '{"tue": [["09:00", "18:00"]]}');
SELECT ok, code, message FROM booking.reserve_stay_any(3, 'hal', '[2030-03-04 09:00+00, 2030-03-04 10:00+00)');
SELECT ok, code, message FROM booking.reserve_stay_any(3, 'ida', '[2030-03-06 09:00+00, 2030-03-06 10:00+00)');

-- an empty object: closed every day; NULL: always open again
SELECT ok, code FROM booking.set_opening_hours(1, '{}');
SELECT ok, code, message FROM booking.reserve_stay(1, 'jon', '[2030-03-11 08:00+00, 2030-03-11 09:00+00)');
SELECT * FROM booking.set_opening_hours(1, NULL);
SELECT ok, code FROM booking.reserve_stay(1, 'jon', '[2030-03-12 02:00+00, 2030-03-12 03:00+00)');
-- a key stores closed like any refusal
SELECT ok, code FROM booking.set_opening_hours(1, '{"mon": [["09:00", "10:00"]]}');
SELECT ok, code, replayed FROM booking.reserve_stay(1, 'kim', '[2030-03-18 12:00+00, 2030-03-18 13:00+00)', idempotency_key => 'oh-1');
SELECT ok, code, replayed FROM booking.reserve_stay(1, 'kim', '[2030-03-18 12:00+00, 2030-03-18 13:00+00)', idempotency_key => 'oh-1');

-- malformed hours: 22023 naming hours, nothing written
SELECT * FROM booking.set_opening_hours(1, '[["09:00", "10:00"]]');
SELECT * FROM booking.set_opening_hours(1, '"always"');
SELECT * FROM booking.set_opening_hours(1, '{"monday": [["09:00", "10:00"]]}');
SELECT * FROM booking.set_opening_hours(1, '{"mon": ["09:00", "10:00"]}');
SELECT * FROM booking.set_opening_hours(1, '{"mon": [["09:00"]]}');
SELECT * FROM booking.set_opening_hours(1, '{"mon": [["9:00", "10:00"]]}');
SELECT * FROM booking.set_opening_hours(1, '{"mon": [["10:00", "09:00"]]}');
SELECT * FROM booking.set_opening_hours(1, '{"mon": [["24:00", "24:00"]]}');
SELECT * FROM booking.set_opening_hours(1, '{"mon": [["09:00", "24:30"]]}');
SELECT * FROM booking.set_opening_hours(1, '{"mon": [[9, 10]]}');
SELECT * FROM booking.set_opening_hours(1, '{"mon": {"from": "09:00"}}');
SELECT * FROM booking.set_opening_hours(NULL, '{}');
SELECT ok, code, http_status FROM booking.set_opening_hours(99, '{}');
SELECT opening_hours, version FROM booking.resources WHERE id = 1;

-- a 23-hour and a 25-hour day: open all Sunday in New York and in Sydney
SELECT booking.create_resource('new york hall');       -- 6
SELECT booking.create_resource('sydney hall');         -- 7
SELECT ok, code FROM booking.set_time_zone(6, 'America/New_York');
SELECT ok, code FROM booking.set_time_zone(7, 'Australia/Sydney');
SELECT ok, code FROM booking.set_opening_hours(6, '{"sun": [["00:00", "24:00"]]}');
SELECT ok, code FROM booking.set_opening_hours(7, '{"sun": [["00:00", "24:00"]]}');
SELECT 'new york ' || d AS day, u, upper(u) - lower(u) AS open
FROM (VALUES ('2027-03-14'), ('2027-11-07')) v(d),
     LATERAL booking.free_slots(6, tstzrange(d::date - 1, d::date + 2), '0') u;
SELECT 'sydney ' || d AS day, u, upper(u) - lower(u) AS open
FROM (VALUES ('2027-04-04'), ('2027-10-03')) v(d),
     LATERAL booking.free_slots(7, tstzrange(d::date - 1, d::date + 2), '0') u;
