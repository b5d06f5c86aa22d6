--
-- move_stay: the same booking gets a new range, or keeps its old one
-- untouched
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('room 1');             -- 1
SELECT booking.create_resource('room 2');             -- 2
SELECT booking.create_resource('buffered room');      -- 3
SELECT booking.create_resource('seats', 10);          -- 4
SELECT booking.create_resource('busy room');          -- 5

--
-- to a free range: ok 200, the same id
--
SELECT ok, code, booking_id FROM booking.reserve_stay(1, 'ann', '[2030-01-04, 2030-01-07)');
SELECT * FROM booking.move_stay(1, '[2030-02-01, 2030-02-03)');
SELECT id, resource_id, guest, during, blocked, status FROM booking.bookings WHERE id = 1;
-- the old range is free again
SELECT * FROM booking.free_slots(1, '[2030-01-01, 2030-01-10)', '0');
-- one night later, overlapping its own old range
SELECT * FROM booking.move_stay(1, '[2030-02-02, 2030-02-04)');
SELECT id, during, blocked, status FROM booking.bookings WHERE id = 1;
-- one night earlier again, and the very same range
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(1, '[2030-02-01, 2030-02-03)');
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(1, '[2030-02-01, 2030-02-03)');
-- a longer and a shorter stay, over its own range
SELECT ok, code, booking_id, http_status FROM booking.move_stay(1, '[2030-01-31, 2030-02-05)');
SELECT ok, code, booking_id, http_status FROM booking.move_stay(1, '[2030-02-02, 2030-02-03)');
SELECT id, during, status FROM booking.bookings WHERE id = 1;
-- a closed range is taken half-open, as reserve_stay does
SELECT ok, code, booking_id, http_status FROM booking.move_stay(1, '[2030-02-01, 2030-02-02]');
SELECT id, during FROM booking.bookings WHERE id = 1;
SELECT count(*) AS rows FROM booking.bookings;

--
-- refused: unavailable 409, the old range untouched
--
SELECT ok, code, booking_id FROM booking.reserve_stay(1, 'bob', '[2030-03-01, 2030-03-05)');
SELECT * FROM written;
SELECT * FROM booking.move_stay(1, '[2030-03-03, 2030-03-06)');
SELECT * FROM booking.move_stay(1, '[2030-02-25, 2030-03-02)');
SELECT * FROM written;
SELECT id, during, blocked, status FROM booking.bookings WHERE id = 1;
-- adjacent ranges do not clash
SELECT ok, code, booking_id, http_status FROM booking.move_stay(1, '[2030-03-05, 2030-03-07)');
SELECT ok, code, booking_id, http_status FROM booking.move_stay(2, '[2030-02-27, 2030-03-05)');
SELECT id, guest, during FROM booking.bookings WHERE resource_id = 1 ORDER BY id;
-- an unexpired hold blocks a move
SELECT ok, code, booking_id FROM booking.reserve_stay(1, 'cy', '[2030-04-01, 2030-04-03)', '1 hour');
SELECT ok, code, booking_id, http_status FROM booking.move_stay(1, '[2030-04-02, 2030-04-04)');
SELECT id, during FROM booking.bookings WHERE id = 1;

--
-- a pending stay keeps its expires_at (and stays pending)
--
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'dee', '[2030-01-04, 2030-01-07)', '1 hour');
SELECT expires_at AS dee_expires, validity AS dee_validity FROM booking.bookings WHERE id = 4 \gset
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(4, '[2030-01-05, 2030-01-08)');
SELECT id, during, status, expires_at = :'dee_expires' AS same_expiry,
       validity = :'dee_validity' AS same_validity
FROM booking.bookings WHERE id = 4;
SELECT ok, code FROM booking.confirm(4);
SELECT ok, code, booking_id, http_status FROM booking.move_stay(4, '[2030-01-10, 2030-01-12)');
SELECT id, during, status, expires_at FROM booking.bookings WHERE id = 4;

--
-- the answers that move nothing
--
-- a seat booking: invalid_state
SELECT ok, code, booking_id FROM booking.reserve_seat(4, 'eve', 2);
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(5, '[2030-01-04, 2030-01-07)');
SELECT id, during, quantity, status FROM booking.bookings WHERE id = 5;
-- cancelled: invalid_state
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'fay', '[2030-02-04, 2030-02-07)');
SELECT ok, code FROM booking.cancel(6);
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(6, '[2030-02-10, 2030-02-12)');
SELECT id, during, status FROM booking.bookings WHERE id = 6;
-- a lapsed hold: hold_expired 410, and it is expired from then on
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'gus', '[2030-03-04, 2030-03-07)', '1 millisecond');
SELECT pg_sleep(0.01);
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(7, '[2030-03-10, 2030-03-12)');
SELECT id, during, status FROM booking.bookings WHERE id = 7;
-- expired: invalid_state
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(7, '[2030-03-10, 2030-03-12)');
SELECT id, during, status FROM booking.bookings WHERE id = 7;
-- unknown: not_found
SELECT * FROM booking.move_stay(99, '[2030-03-10, 2030-03-12)');

--
-- idempotency: a replay moves nothing again; another call with the key is
-- a mismatch
--
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'hal', '[2030-05-01, 2030-05-03)');
SELECT * FROM booking.move_stay(8, '[2030-05-10, 2030-05-12)', 'move-1');
-- another guest takes the old range meanwhile; the replay still answers ok
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'ida', '[2030-05-01, 2030-05-03)');
SELECT * FROM booking.move_stay(8, '[2030-05-10, 2030-05-12)', 'move-1');
SELECT id, during, status FROM booking.bookings WHERE id = 8;
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(8, '[2030-05-20, 2030-05-22)', 'move-1');
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(9, '[2030-05-10, 2030-05-12)', 'move-1');
SELECT id, during FROM booking.bookings WHERE id IN (8, 9) ORDER BY id;
-- a refusal is replayed too, even once the range is free
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(8, '[2030-05-02, 2030-05-04)', 'move-2');
SELECT ok, code FROM booking.cancel(9);
SELECT ok, code, booking_id, http_status, replayed FROM booking.move_stay(8, '[2030-05-02, 2030-05-04)', 'move-2');
SELECT id, during FROM booking.bookings WHERE id = 8;
SELECT key FROM booking.idempotency_keys ORDER BY key;

--
-- buffers: a move respects them (set_buffer's own tests are in set_buffer)
--
SELECT ok, code FROM booking.set_buffer(3, '0', '1 day');
SELECT ok, code, booking_id FROM booking.reserve_stay(3, 'jo', '[2030-01-10, 2030-01-12)');
SELECT ok, code, booking_id FROM booking.reserve_stay(3, 'kim', '[2030-01-20, 2030-01-22)');
SELECT id, during, blocked FROM booking.bookings WHERE resource_id = 3 ORDER BY id;
-- inside jo's cleaning day: unavailable
SELECT ok, code, booking_id, http_status FROM booking.move_stay(11, '[2030-01-12, 2030-01-14)');
-- kim's own cleaning day would reach jo's stay: unavailable
SELECT ok, code, booking_id, http_status FROM booking.move_stay(11, '[2030-01-08, 2030-01-10)');
SELECT id, during, blocked FROM booking.bookings WHERE id = 11;
-- exactly at the buffer on either side: ok, and blocked follows
SELECT ok, code, booking_id, http_status FROM booking.move_stay(11, '[2030-01-13, 2030-01-15)');
SELECT id, during, blocked FROM booking.bookings WHERE id = 11;
SELECT ok, code, booking_id, http_status FROM booking.move_stay(11, '[2030-01-07, 2030-01-09)');
SELECT id, during, blocked FROM booking.bookings WHERE id = 11;
-- one night later, over its own footprint
SELECT ok, code, booking_id, http_status FROM booking.move_stay(11, '[2030-01-06, 2030-01-08)');
SELECT id, during, blocked FROM booking.bookings WHERE id = 11;

--
-- busy: the room row is held by another transaction
--
SELECT booking_id AS lee FROM booking.reserve_stay(5, 'lee', '[2030-01-04, 2030-01-07)') \gset
SELECT :lee AS lee;
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_stay(5, ''peer'', ''[2030-06-01, 2030-06-02)'')).code');
SELECT * FROM booking.move_stay(:lee, '[2030-01-10, 2030-01-12)', lock_timeout => '0');
SELECT * FROM booking.move_stay(:lee, '[2030-01-10, 2030-01-12)', lock_timeout => '50 ms');
SELECT id, during FROM booking.bookings WHERE id = :lee;
SELECT peer_exec('ROLLBACK');
SELECT dblink_disconnect('peer');
SELECT ok, code, booking_id, http_status FROM booking.move_stay(:lee, '[2030-01-10, 2030-01-12)', lock_timeout => '0');

--
-- bad input: raises 22004/22023 naming the argument, writes nothing
--
SELECT * FROM written;
SELECT * FROM booking.move_stay(NULL, '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.move_stay(:lee, NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.move_stay(:lee, 'empty');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.move_stay(:lee, '[2030-07-01, 2030-07-01)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.move_stay(:lee, '[2030-07-01,)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.move_stay(:lee, '(,2030-07-01)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.move_stay(:lee, '[2030-07-01, infinity)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.move_stay(:lee, '[-infinity, 2030-07-01)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.move_stay(:lee, '[2030-07-01, 2030-07-02)', '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.move_stay(:lee, '[2030-07-01, 2030-07-02)', repeat('k', 256));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.move_stay(:lee, '[2030-07-01, 2030-07-02)', lock_timeout => '-1 s');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT id, during FROM booking.bookings WHERE id = :lee;
-- explicit NULLs mean the defaults
SELECT ok, code, booking_id, http_status FROM booking.move_stay(:lee, '[2030-07-01, 2030-07-02)', NULL, NULL);
SELECT id, during FROM booking.bookings WHERE id = :lee;

--
-- the guest limit (0.7.0): a move is checked as the stay booked anew, its
-- other stays counted; a stay that has ended is history and is not moved
--
SELECT booking.create_resource('limited room') AS lim \gset
SELECT code FROM booking.set_guest_limit(:lim, 1);
-- an ended stay (not counted) and a live one: the limit is reached
SELECT booking_id AS past FROM booking.reserve_stay(:lim, 'una', '[2020-01-01, 2020-01-02)') \gset
SELECT booking_id AS live FROM booking.reserve_stay(:lim, 'una', '[2032-01-01, 2032-01-02)') \gset
SELECT code FROM booking.reserve_stay(:lim, 'una', '[2032-02-01, 2032-02-02)');
-- moving the ended stay beside the live one would give her two: refused
SELECT ok, code, booking_id, http_status, message FROM booking.move_stay(:past, '[2032-03-01, 2032-03-02)');
SELECT id, during FROM booking.bookings WHERE id = :past;
-- the live stay moves freely: it is the one she holds
SELECT ok, code, http_status FROM booking.move_stay(:live, '[2032-04-01, 2032-04-02)');
-- two live stays made before the limit was lowered to one: a move of
-- either counts the other, and is refused; a limit of two lets it move
SELECT booking.create_resource('cabin') AS cab \gset
SELECT booking_id AS cab1 FROM booking.reserve_stay(:cab, 'vic', '[2032-01-01, 2032-01-02)') \gset
SELECT booking_id AS cab2 FROM booking.reserve_stay(:cab, 'vic', '[2032-02-01, 2032-02-02)') \gset
SELECT code FROM booking.set_guest_limit(:cab, 1);
SELECT ok, code, http_status, message FROM booking.move_stay(:cab2, '[2032-03-01, 2032-03-02)');
SELECT code FROM booking.set_guest_limit(:cab, 2);
SELECT ok, code, http_status FROM booking.move_stay(:cab2, '[2032-03-01, 2032-03-02)');
-- another guest's stays do not count
SELECT code FROM booking.set_guest_limit(:cab, 1);
SELECT booking_id AS wes FROM booking.reserve_stay(:cab, 'wes', '[2032-05-01, 2032-05-02)') \gset
SELECT ok, code, http_status FROM booking.move_stay(:wes, '[2032-06-01, 2032-06-02)');
-- an ended stay is not moved on a resource without a limit either
SELECT booking_id AS old FROM booking.reserve_stay(:cab, 'xia', '[2020-03-01, 2020-03-02)') \gset
SELECT code FROM booking.set_guest_limit(:cab, NULL);
SELECT ok, code, http_status, message FROM booking.move_stay(:old, '[2032-07-01, 2032-07-02)');
SELECT id, guest, during FROM booking.bookings WHERE resource_id IN (:lim, :cab) ORDER BY id;
