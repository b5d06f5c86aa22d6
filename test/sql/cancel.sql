--
-- cancel: frees seats and dates at once
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('seats', 2);   -- 1
SELECT booking.create_resource('room', 1);    -- 2
SELECT booking.create_resource('lapsed', 5);  -- 3
SELECT booking.create_resource('busy', 5);    -- 4

--
-- seats
--
SELECT * FROM booking.reserve_seat(1, 'ann', 2);
SELECT * FROM booking.reserve_seat(1, 'bob');
-- ok is 200 for cancel; the seats are free at once
SELECT * FROM booking.cancel(1);
SELECT id, status FROM booking.bookings WHERE id = 1;
SELECT booking.seats_left(1);
SELECT * FROM booking.reserve_seat(1, 'bob');
-- cancelling a cancelled booking: invalid_state 409, nothing changes
SELECT * FROM booking.cancel(1);
SELECT * FROM written;
-- a pending hold can be cancelled too
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'cy', 1, '1 hour');
SELECT booking.seats_left(1);
SELECT * FROM booking.cancel(3);
SELECT id, status FROM booking.bookings WHERE id = 3;
SELECT booking.seats_left(1);

--
-- stays
--
SELECT * FROM booking.reserve_stay(2, 'dan', '[2030-01-04, 2030-01-07)');
SELECT ok, code, http_status FROM booking.reserve_stay(2, 'eli', '[2030-01-05, 2030-01-06)');
SELECT * FROM booking.cancel(4);
SELECT * FROM booking.reserve_stay(2, 'eli', '[2030-01-05, 2030-01-06)');
SELECT * FROM booking.cancel(4);
SELECT id, during, status FROM booking.bookings WHERE resource_id = 2 ORDER BY id;

--
-- lapsed and expired holds
--
SELECT ok, code, booking_id FROM booking.reserve_seat(3, 'dee', 1, '1 ms');
SELECT ok, code, booking_id FROM booking.reserve_seat(3, 'eve', 1, '1 ms');
SELECT pg_sleep(0.01);
-- a lapsed hold that hold_expire has not reached yet: ok, it ends cancelled
SELECT * FROM booking.cancel(6);
SELECT booking.hold_expire();
-- an expired one: invalid_state
SELECT * FROM booking.cancel(7);
SELECT id, status FROM booking.bookings WHERE resource_id = 3 ORDER BY id;

--
-- unknown booking: not_found 404, nothing written
--
SELECT * FROM booking.cancel(99);
SELECT * FROM written;

--
-- the resource row is held by another transaction: busy 503 naming it
--
SELECT ok, code, booking_id FROM booking.reserve_seat(4, 'fay');
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_seat(4, ''peer'')).code');
SET booking.lock_timeout = 0;
SELECT * FROM booking.cancel(8);
SET booking.lock_timeout = '50ms';
SELECT * FROM booking.cancel(8);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL booking.lock_timeout = 0;
SELECT * FROM booking.cancel(8);
ROLLBACK;
RESET booking.lock_timeout;
SELECT id, status FROM booking.bookings WHERE id = 8;
SELECT peer_exec('ROLLBACK');
SELECT dblink_disconnect('peer');
SELECT * FROM booking.cancel(8);

--
-- bad input: raises, writes nothing
--
SELECT * FROM booking.cancel(NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.cancel(2, '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.cancel(2, repeat('k', 256));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT id, status FROM booking.bookings WHERE id = 2;

SELECT * FROM seat_counters;
