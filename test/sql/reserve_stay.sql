--
-- reserve_stay: range inventory, guarded by the exclusion constraint
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('room 1');        -- 1
SELECT booking.create_resource('room 2');        -- 2
SELECT booking.create_resource('suite', 5);      -- 3
SELECT booking.create_resource('long stay');     -- 4
SELECT booking.create_resource('lapses');        -- 5
SELECT booking.create_resource('integrity');     -- 6
SELECT booking.create_resource('busy');          -- 7

--
-- adjacency and overlap
--
SELECT * FROM booking.reserve_stay(1, 'ann', '[2030-01-04, 2030-01-07)');
-- [4,7) and [7,9) do not clash, nor do [1,4) and [4,7)
SELECT * FROM booking.reserve_stay(1, 'bob', '[2030-01-07, 2030-01-09)');
SELECT * FROM booking.reserve_stay(1, 'cy', '[2030-01-01, 2030-01-04)');
-- overlapping, contained, containing: unavailable 409, with the next free
-- slot of the same length in the message
SELECT * FROM booking.reserve_stay(1, 'dee', '[2030-01-06, 2030-01-08)');
SELECT * FROM booking.reserve_stay(1, 'dee', '[2030-01-05, 2030-01-06)');
SELECT * FROM booking.reserve_stay(1, 'dee', '[2029-12-31, 2030-01-10)');
SELECT * FROM written;
-- the same range on another room is fine
SELECT * FROM booking.reserve_stay(2, 'eve', '[2030-01-04, 2030-01-07)');

-- a closed range is stored half-open; so is an open one
SELECT * FROM booking.reserve_stay(1, 'fay', '[2030-01-10, 2030-01-12]');
SELECT * FROM booking.reserve_stay(1, 'gus', '(2030-01-12, 2030-01-13)');
SELECT id, resource_id, guest, quantity, during, status, expires_at, upper_inf(validity) AS validity_open
FROM booking.bookings ORDER BY id;
-- so the day after a closed range is free
SELECT ok, code FROM booking.reserve_stay(1, 'hal', '[2030-01-09, 2030-01-10]');

--
-- holds block while unexpired
--
SELECT ok, code, booking_id, http_status, replayed,
       message ~ '^Held resource 2 from 2030-01-10 00:00:00\+00 to 2030-01-12 00:00:00\+00 until .+; confirm before then\.$' AS message_ok
FROM booking.reserve_stay(2, 'ida', '[2030-01-10, 2030-01-12)', '1 hour');
SELECT status, expires_at - created_at AS hold, validity = tstzrange(created_at, expires_at) AS validity
FROM booking.bookings WHERE guest = 'ida';
SELECT ok, code, http_status FROM booking.reserve_stay(2, 'jo', '[2030-01-11, 2030-01-12)');

--
-- cancel frees the dates; cancelled and expired rows never block
--
SELECT ok, code, http_status FROM booking.cancel(1);
SELECT * FROM booking.reserve_stay(1, 'kim', '[2030-01-05, 2030-01-06)');
-- two holds that lapse at once
SELECT ok, code, booking_id FROM booking.reserve_stay(5, 'lee', '[2030-01-04, 2030-01-07)', '1 ms');
SELECT ok, code, booking_id FROM booking.reserve_stay(5, 'max', '[2030-01-10, 2030-01-12)', '1 ms');
SELECT pg_sleep(0.01);
-- still pending, but lapsed: it does not block
SELECT * FROM booking.reserve_stay(5, 'ned', '[2030-01-04, 2030-01-07)');
SELECT booking.hold_expire();
-- expired: does not block
SELECT * FROM booking.reserve_stay(5, 'ola', '[2030-01-10, 2030-01-12)');
SELECT id, guest, during, status FROM booking.bookings WHERE resource_id IN (1, 5) ORDER BY id;

--
-- a stay is exclusive: capacity is not consulted
--
SELECT ok, code FROM booking.reserve_stay(3, 'pat', '[2030-01-04, 2030-01-07)');
SELECT ok, code FROM booking.reserve_stay(3, 'quinn', '[2030-01-05, 2030-01-06)');

--
-- the next free slot in the message
--
SELECT ok, code FROM booking.reserve_stay(4, 'ray', '[2030-01-01, 2032-01-01)');
-- a slot of the same length starting where the busy time ends
SELECT * FROM booking.reserve_stay(4, 'sue', '[2031-12-31, 2032-01-02)');
-- nothing free within a year: no next slot is offered
SELECT * FROM booking.reserve_stay(4, 'sue', '[2030-06-01, 2030-06-02)');

--
-- just_taken: losing at the constraint after the pre-check passed.  The
-- sneak trigger (see setup) plays the concurrent writer that commits in
-- between; the message carries the next free slot.
--
CREATE TRIGGER sneak BEFORE INSERT ON booking.bookings
    FOR EACH ROW EXECUTE FUNCTION sneak();
SET sneak.resource = 2;
SELECT * FROM booking.reserve_stay(2, 'loser', '[2030-02-01, 2030-02-04)');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM booking.reserve_stay(2, 'loser', '[2030-03-01, 2030-03-04)');
ROLLBACK;
DROP TRIGGER sneak ON booking.bookings;
SELECT id, guest, during, status FROM booking.bookings WHERE resource_id = 2 ORDER BY id;

--
-- any other error surfaces as itself, never as just_taken: a user's trigger,
-- CHECK constraint, foreign key or exclusion constraint on booking.bookings.
-- (The failed INSERT draws an id: sequences are not transactional.)
--
\set VERBOSITY terse
CREATE FUNCTION public.refuse_mallory() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.guest = 'mallory' THEN
        RAISE EXCEPTION 'no bookings for mallory' USING ERRCODE = 'P0001';
    END IF;
    RETURN NEW;
END
$$;
CREATE TRIGGER refuse_mallory BEFORE INSERT ON booking.bookings
    FOR EACH ROW EXECUTE FUNCTION refuse_mallory();
SELECT * FROM booking.reserve_stay(6, 'mallory', '[2030-04-01, 2030-04-05)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM booking.reserve_stay(6, 'mallory', '[2030-04-01, 2030-04-05)');
ROLLBACK;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
DROP TRIGGER refuse_mallory ON booking.bookings;
DROP FUNCTION public.refuse_mallory();

ALTER TABLE booking.bookings ADD CONSTRAINT no_trudy CHECK (guest <> 'trudy');
SELECT * FROM booking.reserve_stay(6, 'trudy', '[2030-04-01, 2030-04-05)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT * FROM booking.reserve_stay(6, 'trudy', '[2030-04-01, 2030-04-05)');
ROLLBACK;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
ALTER TABLE booking.bookings DROP CONSTRAINT no_trudy;

CREATE TABLE public.guests (name text PRIMARY KEY);
INSERT INTO public.guests VALUES ('alice');
ALTER TABLE booking.bookings ADD CONSTRAINT bookings_guest_fk
    FOREIGN KEY (guest) REFERENCES public.guests (name) NOT VALID;
SELECT * FROM booking.reserve_stay(6, 'oscar', '[2030-04-01, 2030-04-05)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM booking.reserve_stay(6, 'oscar', '[2030-04-01, 2030-04-05)');
ROLLBACK;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
SELECT * FROM booking.reserve_stay(6, 'alice', '[2030-04-01, 2030-04-05)');
ALTER TABLE booking.bookings DROP CONSTRAINT bookings_guest_fk;
DROP TABLE public.guests;

-- another exclusion constraint (23P01 too): one place at a time per guest
ALTER TABLE booking.bookings ADD CONSTRAINT one_place_per_guest
    EXCLUDE USING gist (guest WITH =, during WITH &&)
    WHERE (during IS NOT NULL AND status IN ('pending', 'confirmed'));
SELECT * FROM booking.reserve_stay(2, 'alice', '[2030-04-02, 2030-04-03)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM booking.reserve_stay(2, 'alice', '[2030-04-02, 2030-04-03)');
ROLLBACK;
SELECT :'LAST_ERROR_SQLSTATE' AS sqlstate;
ALTER TABLE booking.bookings DROP CONSTRAINT one_place_per_guest;
\set VERBOSITY default
SELECT * FROM booking.reserve_stay(2, 'alice', '[2030-04-02, 2030-04-03)');

--
-- the resource row is held by another transaction: busy 503
--
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_stay(7, ''peer'', ''[2030-01-01, 2030-01-02)'')).code');
SELECT * FROM booking.reserve_stay(7, 'tom', '[2030-05-01, 2030-05-02)', lock_timeout => '0');
SELECT * FROM booking.reserve_stay(7, 'tom', '[2030-05-01, 2030-05-02)', lock_timeout => '50 ms');
-- below 1 ms rounds up to 1 ms (a wait, not NOWAIT); above 2^31-1 ms once
-- rounded is refused before anything is read or written
SELECT * FROM booking.reserve_stay(7, 'tom', '[2030-05-01, 2030-05-02)', lock_timeout => '0.5 ms');
SELECT * FROM booking.reserve_stay(7, 'tom', '[2030-05-01, 2030-05-02)', lock_timeout => '2147483647.5 ms');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT peer_exec('ROLLBACK');
SELECT * FROM booking.reserve_stay(7, 'tom', '[2030-05-01, 2030-05-02)', lock_timeout => '0');

--
-- REPEATABLE READ: an overlapping stay committed after the snapshot is seen
-- by the friendly check, which reads the latest committed rows: unavailable
-- 409; a stay that does not overlap goes through in the same transaction
--
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM booking.bookings WHERE resource_id = 7;
SELECT peer('SELECT (booking.reserve_stay(7, ''peer'', ''[2030-06-01, 2030-06-05)'')).code');
SELECT * FROM booking.reserve_stay(7, 'uma', '[2030-06-03, 2030-06-04)');
SELECT * FROM booking.reserve_stay(7, 'uma', '[2030-07-03, 2030-07-04)');
COMMIT;
SELECT dblink_disconnect('peer');
SELECT guest, during FROM booking.bookings WHERE resource_id = 7 ORDER BY during;

--
-- unknown resource: not_found 404, nothing written
--
SELECT * FROM booking.reserve_stay(99, 'vic', '[2030-01-04, 2030-01-07)');
SELECT * FROM written;

--
-- bad input: raises 22004/22023 naming the argument, writes nothing
--
SELECT * FROM booking.reserve_stay(NULL, 'vic', '[2030-01-04, 2030-01-07)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, NULL, '[2030-01-04, 2030-01-07)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, '', '[2030-01-04, 2030-01-07)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', 'empty');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
-- [a,a] is not empty as a tstzrange, but is empty once half-open
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-13, 2030-02-13]');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-13,)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', '(,2030-02-13)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-13, infinity)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', '[-infinity, 2030-02-13)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-13, 2030-02-14)', '0');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-13, 2030-02-14)', '-1 hour');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-13, 2030-02-14)', lock_timeout => '-1 s');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-13, 2030-02-14)', lock_timeout => '2147483647.5 ms');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-13, 2030-02-14)', idempotency_key => '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-13, 2030-02-14)', idempotency_key => repeat('k', 256));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
-- explicit NULLs mean the defaults
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-13, 2030-02-14)', NULL, NULL, NULL);
-- the largest wait, and a wait below 1 ms, are fine
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-20, 2030-02-21)', lock_timeout => '2147483647 ms');
SELECT * FROM booking.reserve_stay(1, 'vic', '[2030-02-21, 2030-02-22)', lock_timeout => '0.5 ms');

-- stays never touch the seat counter
SELECT * FROM seat_counters;
