--
-- local_time: a resource's wall clock (set_time_zone, set_check_times),
-- nights in it (reserve_nights) and weekly series over the days the clocks
-- change (reserve_series), in Europe/Paris, America/New_York and
-- Australia/Sydney
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('paris room');         -- 1
SELECT booking.create_resource('new york room');      -- 2
SELECT booking.create_resource('sydney room');        -- 3
SELECT booking.create_resource('utc room');           -- 4
SELECT booking.create_resource('lesson room');        -- 5
SELECT booking.create_resource('sydney lesson room'); -- 6

-- the defaults: UTC, check-in and check-out at midnight
SELECT id, time_zone, check_in, check_out FROM booking.resources WHERE id = 4;

--
-- set_time_zone: an IANA name, stored as the server spells it
--
SELECT * FROM booking.set_time_zone(1, 'europe/paris');
SELECT ok, code FROM booking.set_time_zone(2, 'America/New_York');
SELECT ok, code FROM booking.set_time_zone(3, 'Australia/Sydney');
SELECT ok, code FROM booking.set_time_zone(5, 'Europe/Paris');
SELECT ok, code FROM booking.set_time_zone(6, 'Australia/Sydney');
SELECT id, time_zone FROM booking.resources ORDER BY id;
SELECT ok, code, http_status FROM booking.set_time_zone(99, 'UTC');
-- bad names: nothing is written
SELECT * FROM booking.set_time_zone(4, 'Mars/Olympus');
SELECT * FROM booking.set_time_zone(4, '+03');
SELECT * FROM booking.set_time_zone(4, 'EST5EDT,M3.2.0,M11.1.0');
SELECT * FROM booking.set_time_zone(4, NULL);
SELECT * FROM booking.set_time_zone(4, repeat('x', 100));
SELECT time_zone, version FROM booking.resources WHERE id = 4;

--
-- set_check_times: times of day before 24:00
--
SELECT * FROM booking.set_check_times(1, '15:00', '11:00');
SELECT ok, code FROM booking.set_check_times(2, '16:00', '10:00');
SELECT ok, code FROM booking.set_check_times(3, '14:00', '10:00');
SELECT * FROM booking.set_check_times(4, '24:00', '11:00');
SELECT * FROM booking.set_check_times(4, '15:00', NULL);
SELECT ok, code, http_status FROM booking.set_check_times(99);
SELECT id, check_in, check_out FROM booking.resources WHERE id <= 4 ORDER BY id;

--
-- reserve_nights: from check-in on arrival to check-out on departure
--
-- Paris, the spring night (2027-03-28: 02:00 -> 03:00): 15:00 CET is 14:00
-- UTC, 11:00 CEST is 09:00 UTC
SELECT * FROM booking.reserve_nights(1, 'ann', '2027-03-27', '2027-03-29');
-- the changeover day is shared: ann leaves at 11:00, bob arrives at 15:00
SELECT ok, code, booking_id FROM booking.reserve_nights(1, 'bob', '2027-03-29', '2027-03-31');
-- a night over ann's: unavailable, nothing written
SELECT ok, code, http_status FROM booking.reserve_nights(1, 'cat', '2027-03-28', '2027-03-29');
-- the autumn night (2027-10-31: 03:00 -> 02:00): 21 hours from 15:00 to
-- 11:00 instead of 20; the spring one had 19 (ann's two nights: 43, not 44)
SELECT ok, code FROM booking.reserve_nights(1, 'dan', '2027-10-30', '2027-10-31');
SELECT id, guest, during, upper(during) - lower(during) AS length
FROM booking.bookings WHERE resource_id = 1 ORDER BY id;
-- New York: 2027-03-14 (spring) and 2027-11-07 (autumn)
SELECT ok, code FROM booking.reserve_nights(2, 'eve', '2027-03-13', '2027-03-14');
SELECT ok, code FROM booking.reserve_nights(2, 'eve', '2027-11-06', '2027-11-07');
-- Sydney: the clocks go back on 2027-04-04 and forward on 2027-10-03
SELECT ok, code FROM booking.reserve_nights(3, 'fay', '2027-04-03', '2027-04-04');
SELECT ok, code FROM booking.reserve_nights(3, 'fay', '2027-10-02', '2027-10-03');
SELECT resource_id, during, upper(during) - lower(during) AS length
FROM booking.bookings WHERE resource_id IN (2, 3) ORDER BY id;
-- a hold, a key (replayed), metadata
SELECT ok, code, booking_id FROM booking.reserve_nights(4, 'gus', '2028-01-01', '2028-01-03',
    hold => '15 minutes', idempotency_key => 'nights-1', metadata => '{"order": 7}');
SELECT ok, code, booking_id, replayed FROM booking.reserve_nights(4, 'gus', '2028-01-01', '2028-01-03',
    hold => '15 minutes', idempotency_key => 'nights-1', metadata => '{"order": 7}');
SELECT ok, code FROM booking.reserve_nights(4, 'gus', '2028-01-01', '2028-01-04',
    hold => '15 minutes', idempotency_key => 'nights-1', metadata => '{"order": 7}');
SELECT guest, during, status, metadata FROM booking.bookings WHERE resource_id = 4;
-- the times in force when the call ran: a later change leaves stays alone
SELECT ok, code FROM booking.set_check_times(4, '12:00', '12:00');
SELECT during FROM booking.bookings WHERE resource_id = 4;
-- the guest limit counts nights as stays
SELECT ok, code FROM booking.set_guest_limit(4, 1);
SELECT ok, code, http_status FROM booking.reserve_nights(4, 'gus', '2028-02-01', '2028-02-02');
SELECT ok, code FROM booking.set_guest_limit(4, NULL);
-- unknown resource
SELECT ok, code, http_status FROM booking.reserve_nights(99, 'x', '2028-01-01', '2028-01-02');
-- bad arguments: class 22, named, nothing written
SELECT * FROM booking.reserve_nights(4, 'x', '2028-01-02', '2028-01-02');
SELECT * FROM booking.reserve_nights(4, 'x', '2028-01-02', '2028-01-01');
SELECT * FROM booking.reserve_nights(4, 'x', NULL, '2028-01-01');
SELECT * FROM booking.reserve_nights(4, 'x', '2028-01-01', 'infinity');
SELECT * FROM booking.reserve_nights(4, 'x', '-infinity', '2028-01-01');
SELECT * FROM booking.reserve_nights(4, 'x', '5000000-01-01', '5000000-01-02');
SELECT * FROM booking.reserve_nights(4, NULL, '2028-01-01', '2028-01-02');
SELECT count(*) FROM booking.bookings WHERE guest = 'x';

--
-- reserve_series: a weekly 09:00 lesson stays at 09:00 local time
--
-- Paris, 09:00-10:00 every Monday from 2027-03-15: the fourth is after the
-- spring change (07:00 UTC instead of 08:00)
SELECT * FROM booking.reserve_series(5, 'hal', '[2027-03-15 08:00+00, 2027-03-15 09:00+00)', '1 week', 4);
SELECT id, group_id, during, (lower(during) AT TIME ZONE 'Europe/Paris')::time AS local
FROM booking.bookings WHERE resource_id = 5 ORDER BY id;
-- over the autumn change as well
SELECT ok, code, booking_id FROM booking.reserve_series(5, 'hal', '[2027-10-18 07:00+00, 2027-10-18 08:00+00)', '1 week', 3);
SELECT during, (lower(during) AT TIME ZONE 'Europe/Paris')::time AS local
FROM booking.bookings WHERE resource_id = 5 AND group_id = (SELECT max(group_id) FROM booking.bookings) ORDER BY id;
-- any taken occurrence refuses the whole series, naming the first one
SELECT * FROM booking.reserve_series(5, 'ida', '[2027-03-01 08:00+00, 2027-03-01 09:00+00)', '1 week', 6);
SELECT count(*) FROM booking.bookings WHERE guest = 'ida';
-- New York and Sydney over their changes; a UTC resource is plain weeks
SELECT ok, code FROM booking.reserve_series(2, 'jon', '[2027-03-01 14:00+00, 2027-03-01 15:00+00)', '1 week', 3);
SELECT ok, code FROM booking.reserve_series(3, 'kim', '[2027-03-22 22:00+00, 2027-03-22 23:00+00)', '1 week', 3);
SELECT ok, code FROM booking.reserve_series(4, 'lou', '[2027-03-22 09:00+00, 2027-03-22 10:00+00)', '1 week', 3);
SELECT b.resource_id, r.time_zone, b.during, (lower(b.during) AT TIME ZONE r.time_zone)::time AS local
FROM booking.bookings b JOIN booking.resources r ON r.id = b.resource_id
WHERE b.guest IN ('jon', 'kim', 'lou') ORDER BY b.id;
-- an occurrence in the hour the clocks skip (Sydney, 2027-10-03 02:00 ->
-- 03:00): PostgreSQL reads 02:30 as 03:30, and it keeps its length
SELECT ok, code FROM booking.reserve_series(6, 'kit', '[2027-10-01 16:30+00, 2027-10-01 17:00+00)', '1 day', 3);
SELECT during, (lower(during) AT TIME ZONE 'Australia/Sydney') AS local_start, upper(during) - lower(during) AS length
FROM booking.bookings WHERE guest = 'kit' ORDER BY id;
-- months are calendar months, days are calendar days
SELECT ok, code FROM booking.reserve_series(4, 'max', '[2027-01-31 09:00+00, 2027-01-31 10:00+00)', '1 month', 3);
SELECT during FROM booking.bookings WHERE guest = 'max' ORDER BY id;
-- a hold on every occurrence, a key replayed, metadata on each
SELECT ok, code, booking_id FROM booking.reserve_series(4, 'ned', '[2029-01-01 09:00+00, 2029-01-01 10:00+00)', '1 day', 3,
    hold => '10 minutes', idempotency_key => 'series-1', metadata => '{"term": "spring"}');
SELECT ok, code, booking_id, replayed FROM booking.reserve_series(4, 'ned', '[2029-01-01 09:00+00, 2029-01-01 10:00+00)', '1 day', 3,
    hold => '10 minutes', idempotency_key => 'series-1', metadata => '{"term": "spring"}');
SELECT ok, code FROM booking.reserve_series(4, 'ned', '[2029-01-01 09:00+00, 2029-01-01 10:00+00)', '1 day', 4,
    hold => '10 minutes', idempotency_key => 'series-1', metadata => '{"term": "spring"}');
SELECT count(*), count(DISTINCT group_id), bool_and(status = 'pending'), bool_and(metadata = '{"term": "spring"}')
FROM booking.bookings WHERE guest = 'ned';
-- each occurrence is a booking: confirm one, cancel another
SELECT ok, code FROM booking.confirm((SELECT min(id) FROM booking.bookings WHERE guest = 'ned'));
SELECT ok, code FROM booking.cancel((SELECT max(id) FROM booking.bookings WHERE guest = 'ned'));
SELECT status, count(*) FROM booking.bookings WHERE guest = 'ned' GROUP BY status ORDER BY status;
-- the guest limit counts every occurrence
SELECT ok, code FROM booking.set_guest_limit(4, 2);
SELECT ok, code, http_status FROM booking.reserve_series(4, 'oli', '[2030-01-01 09:00+00, 2030-01-01 10:00+00)', '1 day', 3);
SELECT ok, code FROM booking.reserve_series(4, 'oli', '[2030-01-01 09:00+00, 2030-01-01 10:00+00)', '1 day', 2);
SELECT ok, code FROM booking.set_guest_limit(4, NULL);
-- one reserved event per occurrence
SELECT booking.add_consumer('local_time_test');
SELECT ok, code FROM booking.reserve_series(4, 'pat', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '1 day', 3);
SELECT e.kind, count(*) FROM booking.events e JOIN booking.bookings b ON b.id = e.booking_id
WHERE b.guest = 'pat' GROUP BY e.kind;
SELECT booking.drop_consumer('local_time_test');
-- unknown resource
SELECT ok, code, http_status FROM booking.reserve_series(99, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '1 day', 2);
-- bad arguments: class 22, named, nothing written
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '1 day', 0);
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '1 day', 521);
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '1 day', NULL);
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '0', 2);
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '-1 day', 2);
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '1 day -1 hour', 2);
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '30 minutes', 2);
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', NULL, 2);
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '1000000 years', 3);
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00, 2031-01-01 10:00+00)', '100000000 days', 520);
SELECT * FROM booking.reserve_series(4, 'x', 'empty', '1 day', 2);
SELECT * FROM booking.reserve_series(4, 'x', '[2031-01-01 09:00+00,)', '1 day', 2);
SELECT * FROM booking.reserve_series(4, 'x', NULL, '1 day', 2);
SELECT count(*) FROM booking.bookings WHERE guest = 'x';
