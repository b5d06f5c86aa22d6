--
-- reserve_seat: counted inventory
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('show', 5);            -- 1
SELECT booking.create_resource('held', 3);            -- 2
SELECT booking.create_resource('defaults', 10);       -- 3
SELECT booking.create_resource('pending counts', 2);  -- 4
SELECT booking.create_resource('busy', 10);           -- 5
SELECT booking.create_resource('bulk', 100);          -- 6
SELECT booking.create_resource('bad input', 10);      -- 7

--
-- capacity and sold_out
--
-- quantity defaults to 1; ok is 201; no hold means confirmed
SELECT * FROM booking.reserve_seat(1, 'ann');
SELECT * FROM booking.reserve_seat(1, 'bob', 3);
SELECT booking.seats_left(1);
-- more than is left: sold_out 409, and the message says what is left
SELECT * FROM booking.reserve_seat(1, 'cy', 2);
SELECT * FROM written;
-- exactly what is left
SELECT * FROM booking.reserve_seat(1, 'cy', 1);
SELECT booking.seats_left(1);
SELECT * FROM booking.reserve_seat(1, 'dee');
-- more than the whole capacity
SELECT * FROM booking.reserve_seat(2, 'dee', 4);
SELECT * FROM written;
SELECT id, resource_id, guest, quantity, during, status, expires_at, upper_inf(validity) AS validity_open
FROM booking.bookings ORDER BY id;

--
-- hold: pending, expires_at = the time of the call + hold
--
-- In a transaction that started earlier, the hold still runs from the call:
-- the time of the call is not now() (the start of the transaction).
BEGIN;
SELECT pg_sleep(0.02);
SELECT ok, code, booking_id, http_status, replayed,
       message ~ '^Held 2 seats on resource 2 until .+; confirm before then\.$' AS message_ok
FROM booking.reserve_seat(2, 'eve', 2, '10 minutes');
SELECT status, quantity, created_at - now() >= interval '20 ms' AS after_transaction_start,
       expires_at - created_at AS hold, validity = tstzrange(created_at, expires_at, '[)') AS validity
FROM booking.bookings WHERE guest = 'eve';
COMMIT;
-- the message names expires_at
SELECT message AS fay_message FROM booking.reserve_seat(2, 'fay', 1, '1 hour') \gset
SELECT position(expires_at::text IN :'fay_message') > 0 AS message_names_expires_at
FROM booking.bookings WHERE guest = 'fay';
SELECT id, status, expires_at - created_at AS hold FROM booking.bookings WHERE resource_id = 2 ORDER BY id;
-- pending rows count as taken
SELECT booking.seats_left(2);
SELECT * FROM booking.reserve_seat(2, 'gus');
SELECT ok, code, booking_id, http_status, replayed FROM booking.reserve_seat(4, 'hal', 1, '1 hour');
SELECT * FROM booking.reserve_seat(4, 'ida', 2);
SELECT booking.seats_left(4);
SELECT * FROM booking.reserve_seat(4, 'ida', 1);
SELECT * FROM booking.reserve_seat(4, 'jo', 1);

--
-- explicit NULL means the default (hold, idempotency_key, lock_timeout)
--
SELECT * FROM booking.reserve_seat(3, 'kim', 1, NULL, NULL, NULL);
SELECT * FROM booking.reserve_seat(resource => 3, guest => 'kim', quantity => 2, hold => NULL,
                                   idempotency_key => NULL, lock_timeout => NULL);
SELECT status, expires_at FROM booking.bookings WHERE resource_id = 3 ORDER BY id;
-- a NULL key stores nothing
SELECT count(*) AS keys FROM booking.idempotency_keys;

--
-- lock_timeout
--
-- '0' on a row nobody holds: the call goes through
SELECT * FROM booking.reserve_seat(3, 'lee', 1, lock_timeout => '0');
SELECT * FROM booking.reserve_seat(3, 'lee', 1, lock_timeout => '100 ms');
SET booking.lock_timeout = 0;
SELECT * FROM booking.reserve_seat(3, 'lee', 1);
RESET booking.lock_timeout;
-- the row held by another transaction: busy 503, at once with 0, after the
-- wait otherwise; the GUC applies when the argument is NULL
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_seat(5, ''peer'')).code');
SELECT * FROM booking.reserve_seat(5, 'max', lock_timeout => '0');
SELECT * FROM booking.reserve_seat(5, 'max', lock_timeout => '50 ms');
SET booking.lock_timeout = '50ms';
SELECT * FROM booking.reserve_seat(5, 'max');
SELECT * FROM booking.reserve_seat(5, 'max', lock_timeout => NULL);
RESET booking.lock_timeout;
-- a wait below 1 ms rounds up to 1 ms: it waits, it never means NOWAIT
SELECT * FROM booking.reserve_seat(5, 'max', lock_timeout => '0.5 ms');
-- just above the largest wait (2^31-1 ms once rounded): refused before
-- anything is read or written, not turned into a negative lock_timeout
SELECT * FROM booking.reserve_seat(5, 'max', lock_timeout => '2147483647.5 ms');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
-- the same at REPEATABLE READ, where the call sets lock_timeout for its
-- whole frame (PostgreSQL's own lock_timeout bounds the test if it waits)
SET lock_timeout = '5s';
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM booking.reserve_seat(5, 'max', lock_timeout => '2147483647.5 ms');
\echo :SQLSTATE
ROLLBACK;
RESET lock_timeout;
SELECT * FROM written;
-- an unknown resource is not_found, not busy
SELECT * FROM booking.reserve_seat(99, 'max', lock_timeout => '0');
-- more seats than the committed state has left: sold_out at once, without
-- waiting for the lock
SELECT * FROM booking.reserve_seat(5, 'max', 11, lock_timeout => '0');
SELECT count(*) AS bookings_of_5 FROM booking.bookings WHERE resource_id = 5;
SELECT peer_exec('ROLLBACK');
SELECT * FROM booking.reserve_seat(5, 'max', lock_timeout => '0');

--
-- isolation levels
--
-- REPEATABLE READ: the resource changed after this transaction's snapshot:
-- retry 409, nothing written
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT booking.seats_left(5);
SELECT peer('SELECT (booking.reserve_seat(5, ''peer'')).code');
SELECT * FROM booking.reserve_seat(5, 'ned');
SELECT count(*) AS neds FROM booking.bookings WHERE guest = 'ned';
ROLLBACK;
-- with a fresh snapshot it goes through
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM booking.reserve_seat(5, 'ned');
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT * FROM booking.reserve_seat(5, 'ned', 2);
COMMIT;
SELECT booking.seats_left(5);

-- many calls in one transaction, and in one statement
BEGIN;
SELECT (r).code, (r).http_status, count(*)
FROM (SELECT booking.reserve_seat(6, 'crowd') AS r FROM generate_series(1, 150)) s
GROUP BY 1, 2 ORDER BY 1;
SELECT * FROM booking.reserve_seat(6, 'crowd');
COMMIT;
SELECT booking.seats_left(6);
SELECT sum(quantity) FROM booking.bookings WHERE resource_id = 6;

--
-- unknown resource: not_found 404, nothing written
--
SELECT * FROM written;
SELECT * FROM booking.reserve_seat(99, 'ola');
SELECT * FROM written;

--
-- bad input: raises 22004/22023 naming the argument, writes nothing
--
SELECT * FROM booking.reserve_seat(NULL, 'pat');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, repeat('g', 1025));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', 0);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', -1);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', 1, '0');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', 1, '-1 minute');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', 1, '3661 days');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', lock_timeout => '-1 ms');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', lock_timeout => '1000 days');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
-- checked after rounding: 2147483647.5 ms rounds up past 2^31-1 ms
SELECT * FROM booking.reserve_seat(7, 'pat', lock_timeout => '2147483647.5 ms');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', lock_timeout => '2147483.6475 s');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', idempotency_key => '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_seat(7, 'pat', idempotency_key => repeat('k', 256));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
-- the limit is in bytes: 128 two-byte characters are 256 bytes
SELECT * FROM booking.reserve_seat(7, 'pat', idempotency_key => repeat('é', 128));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
-- 255 bytes is fine
SELECT * FROM booking.reserve_seat(7, 'pat', idempotency_key => repeat('k', 255));
SELECT * FROM booking.reserve_seat(7, 'pat', idempotency_key => repeat('é', 127) || 'k');
SELECT octet_length(key) FROM booking.idempotency_keys ORDER BY 1;
-- the largest wait, and a wait below 1 ms, are fine
SELECT * FROM booking.reserve_seat(7, 'pat', lock_timeout => '2147483647 ms');
SELECT * FROM booking.reserve_seat(7, 'pat', lock_timeout => '0.5 ms');

--
-- the counter of every resource equals the sum of its blocking quantities
--
SELECT * FROM seat_counters;
SELECT dblink_disconnect('peer');
