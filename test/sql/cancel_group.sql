--
-- cancel_group (0.9.0): every blocking booking of a group that starts at or
-- after from_time, at once; seats back to their counter and line; one
-- cancelled event each
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;
SELECT booking.add_consumer('cancel_group_test');

SELECT booking.create_resource('lesson room');        -- 1
SELECT booking.create_resource('room a');             -- 2
SELECT booking.create_resource('room b');             -- 3
SELECT booking.create_resource('seats x', 2);         -- 4
SELECT booking.create_resource('seats y', 3);         -- 5

-- a series of four, cancelled whole
SELECT ok, code, booking_id FROM booking.reserve_series(1, 'ann', '[2030-01-07 09:00+00, 2030-01-07 10:00+00)', '1 week', 4);
SELECT * FROM booking.cancel_group(1);
SELECT id, status FROM booking.bookings WHERE group_id = 1 ORDER BY id;
SELECT kind, count(*) FROM booking.events WHERE booking_id IN (SELECT id FROM booking.bookings WHERE group_id = 1)
GROUP BY kind ORDER BY kind;
-- again: none of them blocks
SELECT * FROM booking.cancel_group(1);
-- the range is free for someone else
SELECT ok, code FROM booking.reserve_series(1, 'bob', '[2030-01-07 09:00+00, 2030-01-07 10:00+00)', '1 week', 4);

-- from the third occurrence on: the first two stay booked
SELECT ok, code, booking_id FROM booking.reserve_series(1, 'cat', '[2030-03-04 09:00+00, 2030-03-04 10:00+00)', '1 week', 4);
SELECT * FROM booking.cancel_group(9, from_time => '2030-03-18 09:00+00');
SELECT id, lower(during), status FROM booking.bookings WHERE group_id = 9 ORDER BY id;
-- one already cancelled by hand is not counted again
SELECT ok, code FROM booking.cancel(9);
SELECT ok, code, message FROM booking.cancel_group(9);
-- a from_time after every start
SELECT ok, code FROM booking.reserve_series(1, 'dan', '[2030-05-06 09:00+00, 2030-05-06 10:00+00)', '1 day', 2);
SELECT ok, code, http_status FROM booking.cancel_group(13, from_time => '2031-01-01');

-- a reserve_stays group over two rooms
SELECT ok, code, booking_id FROM booking.reserve_stays(ARRAY[3, 2], 'eve', '[2030-06-01, 2030-06-03)');
SELECT ok, code, message FROM booking.cancel_group(15);
SELECT resource_id, status FROM booking.bookings WHERE group_id = 15 ORDER BY resource_id;

-- a pass of seats: the seats go back, and to the line of the resource first
SELECT ok, code, booking_id FROM booking.reserve_seats(ARRAY[4, 5], 'fay', ARRAY[2, 1]);
SELECT ok, code FROM booking.join_waitlist(4, 'gus', 2);
SELECT booking.seats_left(4), booking.seats_left(5);
-- seats have no start: a from_time leaves them alone
SELECT ok, code FROM booking.cancel_group(17, from_time => '2000-01-01');
SELECT ok, code, message FROM booking.cancel_group(17);
SELECT booking.seats_left(4), booking.seats_left(5);
SELECT guest, status, quantity FROM booking.bookings WHERE resource_id = 4 ORDER BY id;

-- an idempotency key replays the first answer
SELECT ok, code FROM booking.reserve_series(1, 'hal', '[2030-08-05 09:00+00, 2030-08-05 10:00+00)', '1 week', 3);
SELECT ok, code, replayed FROM booking.cancel_group(20, idempotency_key => 'cg-1');
SELECT ok, code, replayed FROM booking.cancel_group(20, idempotency_key => 'cg-1');
SELECT ok, code FROM booking.cancel_group(20, from_time => '2030-08-06', idempotency_key => 'cg-1');

-- unknown group, bad arguments (nothing written)
SELECT ok, code, http_status FROM booking.cancel_group(999);
SELECT * FROM booking.cancel_group(NULL);
SELECT * FROM booking.cancel_group(1, 'infinity');
SELECT booking.drop_consumer('cancel_group_test');
