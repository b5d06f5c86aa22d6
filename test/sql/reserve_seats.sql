--
-- reserve_seats: seats of several resources at once, all or nothing
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('day 1', 10);          -- 1
SELECT booking.create_resource('day 2', 10);          -- 2
SELECT booking.create_resource('day 3', 3);           -- 3
SELECT booking.create_resource('venue quota', 5);     -- 4
SELECT booking.create_resource('hot A', 20);          -- 5: striped below
SELECT booking.create_resource('hot B', 20);          -- 6: striped below
SELECT booking.create_resource('lapsing', 2);         -- 7
SELECT booking.create_resource('busy', 10);           -- 8
SELECT booking.create_resource('bad input', 10);      -- 9
SELECT booking.create_resource('lapsing hot', 4);     -- 10: striped below

--
-- ok: one row per resource, group_id = booking_id = the member on the lowest
-- resource id; quantities NULL means 1 each
--
SELECT * FROM booking.reserve_seats('{2,1}', 'ann');
SELECT id, resource_id, guest, quantity, status, expires_at, group_id
FROM booking.bookings ORDER BY id;
SELECT booking.seats_left(1) AS left_1, booking.seats_left(2) AS left_2;
-- quantities follow the order the resources are given in; the members are
-- written (and their resources locked) in ascending id order whatever that
-- order is
SELECT * FROM booking.reserve_seats('{4,1,3}', 'bob', '{2,3,1}');
SELECT id, resource_id, guest, quantity, status, group_id
FROM booking.bookings WHERE guest = 'bob' ORDER BY id;
SELECT bool_and(resource_id = expected) AS ascending
FROM (SELECT resource_id, row_number() OVER (ORDER BY id) AS n FROM booking.bookings WHERE guest = 'bob') b
JOIN (VALUES (1, 1), (2, 3), (3, 4)) AS e(n, expected) USING (n);
SELECT booking.seats_left(1) AS left_1, booking.seats_left(3) AS left_3, booking.seats_left(4) AS left_4;
-- a group of one
SELECT * FROM booking.reserve_seats('{2}', 'cy', '{4}');
SELECT id, resource_id, quantity, group_id FROM booking.bookings WHERE guest = 'cy';

--
-- hold: every member pending with the same expires_at; confirm and cancel
-- act per booking id
--
SELECT ok, code, booking_id, http_status, replayed
FROM booking.reserve_seats('{2,1}', 'dee', '{1,2}', '1 hour');
SELECT id, resource_id, quantity, status, group_id, expires_at - created_at AS hold
FROM booking.bookings WHERE guest = 'dee' ORDER BY id;
SELECT count(DISTINCT expires_at) AS expiries, count(*) AS members
FROM booking.bookings WHERE guest = 'dee';
SELECT ok, code FROM booking.confirm(7);
SELECT ok, code FROM booking.cancel(8);
SELECT id, resource_id, status, expires_at IS NULL AS no_expiry FROM booking.bookings WHERE guest = 'dee' ORDER BY id;
SELECT * FROM seat_counters WHERE id BETWEEN 1 AND 4;

--
-- sold_out: names the first resource (ascending id) that cannot serve;
-- nothing is written, no seat is taken on the others
--
SELECT booking.seats_left(1) AS left_1, booking.seats_left(2) AS left_2,
       booking.seats_left(3) AS left_3, booking.seats_left(4) AS left_4;
SELECT bookings, keys, taken FROM written;
-- resource 3 has 2 left
SELECT * FROM booking.reserve_seats('{4,3,1}', 'eve', '{1,3,1}');
SELECT bookings, keys, taken FROM written;
-- resources 3 and 4 both short: resource 3 is named, whatever the order
SELECT * FROM booking.reserve_seats('{4,3}', 'eve', '{9,9}');
SELECT * FROM booking.reserve_seats('{3,4}', 'eve', '{9,9}');
SELECT bookings, keys, taken FROM written;
SELECT count(*) AS eves FROM booking.bookings WHERE guest = 'eve';
SELECT booking.seats_left(1) AS left_1, booking.seats_left(2) AS left_2,
       booking.seats_left(3) AS left_3, booking.seats_left(4) AS left_4;
-- exactly what is left on each
SELECT ok, code, booking_id, http_status FROM booking.reserve_seats('{3,4}', 'eve', '{2,3}');
SELECT booking.seats_left(3) AS left_3, booking.seats_left(4) AS left_4;
SELECT * FROM booking.reserve_seats('{1,3}', 'fay');

--
-- not_found: the first unknown resource (ascending id); nothing written
--
SELECT bookings, keys, taken FROM written;
SELECT * FROM booking.reserve_seats('{1,99}', 'gus');
SELECT * FROM booking.reserve_seats('{99,98,1}', 'gus');
SELECT bookings, keys, taken FROM written;

--
-- striped members
--
SELECT ok, code FROM booking.set_stripes(5, 4);
SELECT ok, code FROM booking.set_stripes(6, 4);
SELECT ok, code, booking_id, http_status FROM booking.reserve_seats('{6,5,1}', 'hal', '{7,2,1}');
SELECT resource_id, quantity, status, group_id FROM booking.bookings WHERE guest = 'hal' ORDER BY id;
SELECT booking.seats_left(5) AS left_5, booking.seats_left(6) AS left_6;
SELECT resource_id, 20 - sum(free) AS taken FROM booking.resource_stripes WHERE resource_id IN (5, 6)
GROUP BY resource_id ORDER BY resource_id;
-- a striped member short of seats (it spans its stripes first): sold_out
-- naming it, and the other striped member keeps its seats
SELECT * FROM booking.reserve_seats('{5,6}', 'ida', '{1,14}');
SELECT booking.seats_left(5) AS left_5, booking.seats_left(6) AS left_6;
SELECT resource_id, 20 - sum(free) AS taken FROM booking.resource_stripes WHERE resource_id IN (5, 6)
GROUP BY resource_id ORDER BY resource_id;
-- exactly what is left, across stripes
SELECT ok, code, http_status FROM booking.reserve_seats('{5,6}', 'ida', '{18,13}');
SELECT booking.seats_left(5) AS left_5, booking.seats_left(6) AS left_6;
SELECT count(*) AS idas FROM booking.bookings WHERE guest = 'ida';

--
-- lapsed holds are reclaimed for a member
--
SELECT ok, code FROM booking.set_stripes(10, 2);
SELECT ok, code, booking_id FROM booking.reserve_seat(7, 'jo', 2, '1 millisecond');
SELECT ok, code, booking_id FROM booking.reserve_seat(10, 'jo', 4, '1 millisecond');
SELECT pg_sleep(0.01);
-- both lapsed
SELECT resource_id, expires_at < now() AS lapsed FROM booking.bookings WHERE guest = 'jo' ORDER BY id;
SELECT booking.seats_left(7) AS left_7, booking.seats_left(10) AS left_10;
SELECT ok, code, http_status FROM booking.reserve_seats('{10,7}', 'kim', '{4,2}');
SELECT resource_id, guest, quantity, status FROM booking.bookings WHERE guest IN ('jo', 'kim') ORDER BY id;
SELECT booking.seats_left(7) AS left_7, booking.seats_left(10) AS left_10;
SELECT * FROM seat_counters WHERE id = 7;

--
-- idempotency: a replay answers the stored result, a different call with
-- the same key is idempotency_mismatch
--
SELECT * FROM booking.reserve_seats('{2,1}', 'lee', '{1,1}', idempotency_key => 'pass-1');
SELECT * FROM booking.reserve_seats('{2,1}', 'lee', '{1,1}', idempotency_key => 'pass-1');
SELECT count(*) AS lees FROM booking.bookings WHERE guest = 'lee';
SELECT ok, code, booking_id, http_status, replayed
FROM booking.reserve_seats('{2,1}', 'lee', '{2,1}', idempotency_key => 'pass-1');
SELECT ok, code, booking_id, http_status, replayed
FROM booking.reserve_seats('{2,1}', 'max', '{1,1}', idempotency_key => 'pass-1');
SELECT count(*) AS lees FROM booking.bookings WHERE guest IN ('lee', 'max');
-- a refusal is stored and replayed too
SELECT * FROM booking.reserve_seats('{3,1}', 'ned', '{5,1}', idempotency_key => 'pass-sold');
SELECT * FROM booking.reserve_seats('{3,1}', 'ned', '{5,1}', idempotency_key => 'pass-sold');
SELECT key, http_status FROM booking.idempotency_keys ORDER BY key;

--
-- busy: a member's row held by another transaction; nothing written
--
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_seat(8, ''peer'')).code');
SELECT bookings, keys, taken FROM written;
SELECT * FROM booking.reserve_seats('{8,2}', 'ola', lock_timeout => '0');
SELECT * FROM booking.reserve_seats('{2,8}', 'ola', lock_timeout => '50 ms');
SELECT bookings, keys, taken FROM written;
SELECT peer_exec('ROLLBACK');
SELECT ok, code, http_status FROM booking.reserve_seats('{2,8}', 'ola', lock_timeout => '0');
-- REPEATABLE READ: a member's resource changed after this transaction's
-- snapshot: retry 409, nothing written
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT booking.seats_left(2);
SELECT peer('SELECT (booking.reserve_seat(8, ''peer'')).code');
SELECT ok, code, booking_id, http_status, replayed FROM booking.reserve_seats('{2,8}', 'ola');
SELECT count(*) AS olas FROM booking.bookings WHERE guest = 'ola';
ROLLBACK;
SELECT dblink_disconnect('peer');
SELECT count(*) AS olas FROM booking.bookings WHERE guest = 'ola';

--
-- the group limit: 100 members are fine, 101 are refused
--
SELECT count(booking.create_resource('member ' || i, 1)) FROM generate_series(1, 100) i;
SELECT ok, code, http_status
FROM booking.reserve_seats(ARRAY(SELECT id FROM booking.resources WHERE name LIKE 'member %' ORDER BY id), 'pat');
SELECT count(*) AS members, count(DISTINCT group_id) AS groups, min(id) = min(group_id) AS lowest_names_group
FROM booking.bookings WHERE guest = 'pat';
SELECT * FROM written;
SELECT * FROM booking.reserve_seats(ARRAY(SELECT id FROM booking.resources WHERE name LIKE 'member %' ORDER BY id) || 1::bigint, 'quinn');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;

--
-- bad input: raises 22004/22023 naming the argument, writes nothing
--
SELECT * FROM booking.reserve_seats(NULL, 'ray');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{}', 'ray');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,NULL}', 'ray');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{NULL}', 'ray');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,9}', 'ray');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{2,9,2}', 'ray');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,0}', 'ray');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,-2}', 'ray');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{{9,2},{1,3}}', 'ray');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', '{1}');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', '{1,1,1}');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', '{}');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', '{{1,1}}');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', '{1,NULL}');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', '{1,0}');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', '{-1,1}');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', repeat('g', 1025));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', hold => '0');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', hold => '-1 minute');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', hold => '3661 days');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', lock_timeout => '-1 ms');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', idempotency_key => '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', idempotency_key => repeat('k', 256));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
-- explicit NULLs mean the defaults
SELECT * FROM booking.reserve_seats('{9,2}', 'ray', NULL, NULL, NULL, NULL);
SELECT resource_id, quantity, status, group_id FROM booking.bookings WHERE guest = 'ray' ORDER BY id;

-- every counter exact (the striped resources count in their stripes)
SELECT id, exact FROM seat_counters WHERE id NOT IN (5, 6, 10) AND NOT exact;
SELECT r.id, r.capacity - (SELECT sum(free) FROM booking.resource_stripes s WHERE s.resource_id = r.id) AS taken,
       (SELECT sum(quantity) FROM booking.bookings b
         WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed')) AS blocking
FROM booking.resources r WHERE r.id IN (5, 6, 10) ORDER BY r.id;
