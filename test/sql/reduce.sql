--
-- reduce: give back some seats of a seat booking at once; all of them
-- cancels it
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('show', 10);           -- 1
SELECT booking.create_resource('room');               -- 2
SELECT booking.create_resource('hot', 20);            -- 3: striped below
SELECT booking.create_resource('busy', 10);           -- 4
SELECT booking.create_resource('pass B', 10);         -- 5

--
-- confirmed booking: a partial reduce, then the rest
--
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'ann', 5);
SELECT booking.seats_left(1);
SELECT * FROM booking.reduce(1, 2);
SELECT id, quantity, status FROM booking.bookings WHERE id = 1;
SELECT booking.seats_left(1);
SELECT * FROM booking.reduce(1, 1);
SELECT id, quantity, status FROM booking.bookings WHERE id = 1;
SELECT booking.seats_left(1);
-- reduce to zero: cancelled, ok 200, the quantity column unchanged
SELECT * FROM booking.reduce(1, 2);
SELECT id, quantity, status, expires_at FROM booking.bookings WHERE id = 1;
SELECT booking.seats_left(1);
-- a cancelled booking: invalid_state
SELECT ok, code, booking_id, http_status, replayed FROM booking.reduce(1, 1);
SELECT id, quantity, status FROM booking.bookings WHERE id = 1;

--
-- more than held: invalid_state, nothing changes
--
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'bob', 2);
SELECT ok, code, booking_id, http_status, replayed FROM booking.reduce(2, 3);
SELECT ok, code, booking_id, http_status, replayed FROM booking.reduce(2, 2147483647);
SELECT id, quantity, status FROM booking.bookings WHERE id = 2;
SELECT booking.seats_left(1);

--
-- a pending hold that has not lapsed: stays pending with its expires_at
--
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'cy', 4, '1 hour');
SELECT expires_at AS cy_expires FROM booking.bookings WHERE id = 3 \gset
SELECT * FROM booking.reduce(3, 3);
SELECT id, quantity, status, expires_at = :'cy_expires' AS same_expiry FROM booking.bookings WHERE id = 3;
SELECT booking.seats_left(1);
-- the contract's message, "all its Q seats were given back.", with Q = 1
-- (in either number: "1 seats were" or "1 seat was")
SELECT ok, code, booking_id, http_status, replayed,
       message ~ '^Booking 3 is cancelled: all its 1 (seats were|seat was) given back\.$' AS message_ok
FROM booking.reduce(3, 1);
SELECT id, quantity, status FROM booking.bookings WHERE id = 3;
SELECT booking.seats_left(1);

--
-- a lapsed hold: expired now, hold_expired 410; then invalid_state
--
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'dee', 3, '1 millisecond');
SELECT pg_sleep(0.01);
SELECT booking.seats_left(1);
SELECT ok, code, booking_id, http_status, replayed FROM booking.reduce(4, 1);
SELECT id, quantity, status FROM booking.bookings WHERE id = 4;
SELECT booking.seats_left(1);
SELECT ok, code, booking_id, http_status, replayed FROM booking.reduce(4, 1);
SELECT * FROM seat_counters WHERE id = 1;

--
-- a stay: invalid_state; unknown booking: not_found
--
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'eve', '[2030-01-04, 2030-01-07)');
SELECT ok, code, booking_id, http_status, replayed FROM booking.reduce(5, 1);
SELECT id, quantity, during, status FROM booking.bookings WHERE id = 5;
SELECT * FROM booking.reduce(99, 1);

--
-- a striped resource: the seats go back at once
--
SELECT ok, code FROM booking.set_stripes(3, 4);
SELECT ok, code, booking_id FROM booking.reserve_seat(3, 'fay', 6);
SELECT booking.seats_left(3), (SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = 3) AS stripes_free;
SELECT ok, code, booking_id, http_status FROM booking.reduce(6, 4);
SELECT id, quantity, status FROM booking.bookings WHERE id = 6;
SELECT booking.seats_left(3), (SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = 3) AS stripes_free;
SELECT ok, code, booking_id, http_status FROM booking.reduce(6, 2);
SELECT id, quantity, status FROM booking.bookings WHERE id = 6;
SELECT booking.seats_left(3), (SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = 3) AS stripes_free;
-- a lapsed hold on a stripe
SELECT ok, code, booking_id FROM booking.reserve_seat(3, 'gus', 5, '1 millisecond');
SELECT pg_sleep(0.01);
SELECT ok, code, booking_id, http_status FROM booking.reduce(7, 1);
SELECT id, quantity, status FROM booking.bookings WHERE id = 7;
SELECT booking.seats_left(3), (SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = 3) AS stripes_free;

--
-- a member of a group is reduced on its own
--
SELECT ok, code, booking_id FROM booking.reserve_seats('{1,5}', 'hal', '{2,3}');
SELECT ok, code, booking_id, http_status FROM booking.reduce(9, 1);
SELECT id, resource_id, quantity, status, group_id FROM booking.bookings WHERE guest = 'hal' ORDER BY id;
SELECT booking.seats_left(1) AS left_1, booking.seats_left(5) AS left_5;

--
-- idempotency: a replay gives back nothing more; another call with the key
-- is a mismatch
--
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'ida', 4);
SELECT * FROM booking.reduce(10, 1, 'reduce-1');
SELECT * FROM booking.reduce(10, 1, 'reduce-1');
SELECT id, quantity, status FROM booking.bookings WHERE id = 10;
SELECT ok, code, booking_id, http_status, replayed FROM booking.reduce(10, 2, 'reduce-1');
SELECT ok, code, booking_id, http_status, replayed FROM booking.reduce(2, 1, 'reduce-1');
SELECT id, quantity, status FROM booking.bookings WHERE id IN (2, 10) ORDER BY id;
-- a refusal is replayed too
SELECT ok, code, booking_id, http_status, replayed FROM booking.reduce(10, 9, 'reduce-2');
SELECT ok, code, booking_id, http_status, replayed FROM booking.reduce(10, 9, 'reduce-2');
SELECT key FROM booking.idempotency_keys ORDER BY key;
SELECT booking.seats_left(1);

--
-- busy: the resource row is held by another transaction; waits
-- booking.lock_timeout at most
--
SELECT ok, code, booking_id FROM booking.reserve_seat(4, 'jo', 3);
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_seat(4, ''peer'')).code');
SET booking.lock_timeout = 0;
SELECT * FROM booking.reduce(11, 1);
SET booking.lock_timeout = '50ms';
SELECT * FROM booking.reduce(11, 1);
RESET booking.lock_timeout;
SELECT id, quantity, status FROM booking.bookings WHERE id = 11;
SELECT peer_exec('ROLLBACK');
SELECT dblink_disconnect('peer');
SELECT ok, code, booking_id, http_status FROM booking.reduce(11, 1);
SELECT id, quantity, status FROM booking.bookings WHERE id = 11;

--
-- bad input: raises 22004/22023 naming the argument, writes nothing
--
SELECT * FROM written;
SELECT * FROM booking.reduce(NULL, 1);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reduce(11, NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reduce(11, 0);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reduce(11, -1);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reduce(11, 1, '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reduce(11, 1, repeat('k', 256));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT id, quantity, status FROM booking.bookings WHERE id = 11;

-- every counter exact
SELECT id, exact FROM seat_counters WHERE id <> 3;
SELECT r.capacity - (SELECT sum(free) FROM booking.resource_stripes s WHERE s.resource_id = r.id) AS taken,
       (SELECT COALESCE(sum(quantity), 0) FROM booking.bookings b
         WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed')) AS blocking
FROM booking.resources r WHERE r.id = 3;
