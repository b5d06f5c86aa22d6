--
-- reserve_stay_any: any free unit of a pool
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('doubles', 0);          -- 1: the pool
SELECT booking.create_resource('double A', 1, 1);      -- 2
SELECT booking.create_resource('double B', 1, 1);      -- 3
SELECT booking.create_resource('empty pool', 0);       -- 4: a pool with no units

--
-- picks a free unit (the lowest id first); sold_out when none is free
--
SELECT * FROM booking.reserve_stay_any(1, 'ann', '[2030-01-04, 2030-01-07)');
SELECT * FROM booking.reserve_stay_any(1, 'bob', '[2030-01-04, 2030-01-07)');
SELECT * FROM booking.reserve_stay_any(1, 'cy', '[2030-01-04, 2030-01-07)');
SELECT * FROM booking.reserve_stay_any(1, 'cy', '[2030-01-05, 2030-01-06)');
SELECT * FROM written;
-- adjacent ranges do not clash
SELECT * FROM booking.reserve_stay_any(1, 'cy', '[2030-01-07, 2030-01-09)');
-- a cancelled booking frees its unit
SELECT ok, code FROM booking.cancel(1);
SELECT * FROM booking.reserve_stay_any(1, 'dee', '[2030-01-04, 2030-01-06)');
-- a unit booked directly is skipped
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'eve', '[2030-01-10, 2030-01-12)');
SELECT * FROM booking.reserve_stay_any(1, 'fay', '[2030-01-10, 2030-01-12)');
-- an unexpired hold blocks its unit
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'gus', '[2030-01-20, 2030-01-22)', '1 hour');
SELECT * FROM booking.reserve_stay_any(1, 'hal', '[2030-01-20, 2030-01-22)');
SELECT * FROM booking.reserve_stay_any(1, 'hal', '[2030-01-21, 2030-01-22)');
-- a lapsed one does not
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'ida', '[2030-02-01, 2030-02-02)', '1 ms');
SELECT ok, code, booking_id FROM booking.reserve_stay(3, 'ida', '[2030-02-01, 2030-02-02)');
SELECT pg_sleep(0.01);
SELECT * FROM booking.reserve_stay_any(1, 'jo', '[2030-02-01, 2030-02-02)');
-- the pool row itself is never booked
SELECT id, resource_id, guest, during, status FROM booking.bookings ORDER BY id;

--
-- not_found for an unknown pool; sold_out for a pool without units
--
SELECT * FROM booking.reserve_stay_any(99, 'kim', '[2030-01-04, 2030-01-07)');
SELECT * FROM booking.reserve_stay_any(4, 'kim', '[2030-01-04, 2030-01-07)');
-- a resource that is nobody's pool has no units either
SELECT * FROM booking.reserve_stay_any(2, 'kim', '[2030-03-04, 2030-03-07)');
SELECT * FROM written;

--
-- a unit locked by another transaction is skipped, without waiting; when the
-- only free unit is locked, the call waits up to lock_timeout: busy 503
--
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_stay(2, ''peer'', ''[2030-06-01, 2030-06-02)'')).code');
SELECT * FROM booking.reserve_stay_any(1, 'lee', '[2030-05-01, 2030-05-02)', lock_timeout => '0');
SELECT * FROM booking.reserve_stay_any(1, 'max', '[2030-05-01, 2030-05-02)', lock_timeout => '0');
SELECT * FROM booking.reserve_stay_any(1, 'max', '[2030-05-01, 2030-05-02)', lock_timeout => '50 ms');
-- below 1 ms rounds up to 1 ms (a wait, not NOWAIT); above 2^31-1 ms once
-- rounded is refused before anything is read or written
SELECT * FROM booking.reserve_stay_any(1, 'max', '[2030-05-01, 2030-05-02)', lock_timeout => '0.5 ms');
SELECT * FROM booking.reserve_stay_any(1, 'max', '[2030-05-01, 2030-05-02)', lock_timeout => '2147483647.5 ms');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT count(*) AS maxes FROM booking.bookings WHERE guest = 'max';
SELECT peer_exec('ROLLBACK');
SELECT dblink_disconnect('peer');
SELECT * FROM booking.reserve_stay_any(1, 'max', '[2030-05-01, 2030-05-02)', lock_timeout => '0');

--
-- a unit lost at the constraint (the sneak trigger of setup plays the
-- concurrent writer on unit 2): the call moves on to the next unit
--
CREATE TRIGGER sneak BEFORE INSERT ON booking.bookings
    FOR EACH ROW EXECUTE FUNCTION sneak();
SET sneak.resource = 2;
SELECT * FROM booking.reserve_stay_any(1, 'loser', '[2030-07-01, 2030-07-02)');
DROP TRIGGER sneak ON booking.bookings;
SELECT id, resource_id, guest, status FROM booking.bookings
WHERE during && '[2030-07-01, 2030-07-02)' ORDER BY id;

--
-- bad input: raises 22004/22023 naming the argument, writes nothing
--
SELECT * FROM written;
SELECT * FROM booking.reserve_stay_any(NULL, 'ned', '[2030-08-01, 2030-08-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, NULL, '[2030-08-01, 2030-08-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, '', '[2030-08-01, 2030-08-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, 'ned', NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, 'ned', 'empty');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, 'ned', '(,2030-08-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, 'ned', '[2030-08-01, infinity)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, 'ned', '[2030-08-01, 2030-08-02)', '0');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, 'ned', '[2030-08-01, 2030-08-02)', '-1 hour');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, 'ned', '[2030-08-01, 2030-08-02)', lock_timeout => '-1 s');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, 'ned', '[2030-08-01, 2030-08-02)', lock_timeout => '2147483647.5 ms');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, 'ned', '[2030-08-01, 2030-08-02)', idempotency_key => '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay_any(1, 'ned', '[2030-08-01, 2030-08-02)', idempotency_key => repeat('k', 256));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
-- explicit NULLs mean the defaults
SELECT * FROM booking.reserve_stay_any(1, 'ned', '[2030-08-01, 2030-08-02)', NULL, NULL, NULL);
-- the largest wait, and a wait below 1 ms, are fine
SELECT * FROM booking.reserve_stay_any(1, 'ned', '[2030-08-10, 2030-08-11)', lock_timeout => '2147483647 ms');
SELECT * FROM booking.reserve_stay_any(1, 'ned', '[2030-08-11, 2030-08-12)', lock_timeout => '0.5 ms');
