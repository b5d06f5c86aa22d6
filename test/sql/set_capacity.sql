--
-- set_capacity: an optimistic write for a slow human edit
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('show', 5);   -- 1
SELECT booking.create_resource('room', 1);   -- 2
SELECT booking.create_resource('busy', 5);   -- 3

-- success: ok 200, the version goes up by one
SELECT * FROM booking.set_capacity(1, 10, 1);
SELECT id, capacity, version, taken FROM booking.resources WHERE id = 1;

-- a stale (or made-up) version: version_conflict 409, nothing changed
SELECT * FROM booking.set_capacity(1, 8, 1);
SELECT * FROM booking.set_capacity(1, 8, 3);
SELECT id, capacity, version, taken FROM booking.resources WHERE id = 1;

-- below what is taken (confirmed plus unexpired holds): capacity_below_taken
-- 409, nothing changed
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'ann', 3);
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'bob', 1, '1 hour');
SELECT * FROM booking.set_capacity(1, 3, 2);
SELECT id, capacity, version, taken FROM booking.resources WHERE id = 1;
SELECT id, status FROM booking.bookings ORDER BY id;
-- exactly what is taken is fine; then the show is sold out
SELECT * FROM booking.set_capacity(1, 4, 2);
SELECT booking.seats_left(1);
SELECT ok, code FROM booking.reserve_seat(1, 'cy');
-- cancelling the hold makes room to go lower
SELECT ok, code FROM booking.cancel(2);
SELECT * FROM booking.set_capacity(1, 3, 3);
SELECT id, capacity, version, taken FROM booking.resources WHERE id = 1;
SELECT booking.seats_left(1);
-- and back up
SELECT * FROM booking.set_capacity(1, 6, 4);
SELECT ok, code FROM booking.reserve_seat(1, 'cy', 3);
SELECT booking.seats_left(1);

-- zero is a valid capacity
SELECT * FROM booking.set_capacity(3, 0, 1);
SELECT ok, code FROM booking.reserve_seat(3, 'dee');
SELECT * FROM booking.set_capacity(3, 5, 2);

-- stays do not consult capacity: a room with stays can go to capacity 0
-- and is still booked one stay at a time
SELECT ok, code FROM booking.reserve_stay(2, 'eve', '[2030-01-04, 2030-01-07)');
SELECT * FROM booking.set_capacity(2, 0, 1);
SELECT ok, code FROM booking.reserve_stay(2, 'fay', '[2030-01-07, 2030-01-09)');
SELECT ok, code FROM booking.reserve_stay(2, 'gus', '[2030-01-08, 2030-01-10)');

-- unknown resource: not_found 404
SELECT * FROM booking.set_capacity(99, 5, 1);

-- the resource row is held by another transaction: busy 503
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_seat(3, ''peer'')).code');
SET booking.lock_timeout = 0;
SELECT * FROM booking.set_capacity(3, 7, 3);
SET booking.lock_timeout = '50ms';
SELECT * FROM booking.set_capacity(3, 7, 3);
RESET booking.lock_timeout;
SELECT peer_exec('ROLLBACK');
SELECT dblink_disconnect('peer');
SELECT id, capacity, version FROM booking.resources WHERE id = 3;

-- bad input: raises, nothing changed
SELECT * FROM booking.set_capacity(NULL, 5, 1);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_capacity(1, NULL, 5);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_capacity(1, -1, 5);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_capacity(1, 5, NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT id, capacity, version, taken FROM booking.resources ORDER BY id;

SELECT * FROM seat_counters;
