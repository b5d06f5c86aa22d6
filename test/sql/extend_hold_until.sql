--
-- extend_hold_until(booking, until): sets a live hold's expiry to until.
-- Unlike extend_hold(booking, by), it is naturally idempotent: a retry with
-- the same until leaves the same expiry, where a retried extend_hold extends
-- twice.  No idempotency key is needed.
--
-- Times depend on the clock, so they are compared, not printed.  This file
-- does not TRUNCATE booking.resources (0.3.0 refuses it), so it numbers its
-- own resources and bookings from 3001.
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SELECT pg_catalog.setval('booking.resources_id_seq', 3000) AS resources_from,
       pg_catalog.setval('booking.bookings_id_seq', 3000) AS bookings_from;

SELECT booking.create_resource('seats', 10);           -- 3001
SELECT booking.create_resource('room');                -- 3002
SELECT booking.create_resource('busy', 5);             -- 3003
SELECT booking.create_resource('striped', 4);          -- 3004
SELECT ok, code FROM booking.set_stripes(3004, 2);

-- moves the given pending holds an hour into the past: lapsed
CREATE FUNCTION pg_temp.lapse(ids bigint[]) RETURNS bigint LANGUAGE sql AS $$
    WITH moved AS (
        UPDATE booking.bookings
           SET created_at = created_at - interval '2 hours',
               expires_at = created_at - interval '1 hour',
               validity = tstzrange(created_at - interval '2 hours', created_at - interval '1 hour', '[)')
         WHERE id = ANY (ids) AND status = 'pending'
        RETURNING 1)
    SELECT count(*) FROM moved
$$;

SELECT ok, code, booking_id FROM booking.reserve_seat(3001, 'ann', 2, hold => '1 hour');    -- 3001
SELECT ok, code, booking_id FROM booking.reserve_seat(3001, 'bob', 1);                      -- 3002
SELECT ok, code, booking_id FROM booking.reserve_seat(3001, 'cy', 1);                       -- 3003
SELECT ok, code FROM booking.cancel(3003);
SELECT ok, code, booking_id FROM booking.reserve_seat(3001, 'dee', 1, hold => '1 hour');    -- 3004
SELECT pg_temp.lapse('{3004}');
-- other files may have left lapsed holds too: at least this one is expired
SELECT booking.hold_expire() >= 1 AS expired;
SELECT ok, code, booking_id FROM booking.reserve_seat(3001, 'eve', 1, hold => '1 hour');    -- 3005
SELECT ok, code, booking_id
FROM booking.reserve_stay(3002, 'fay', '[2030-01-01, 2030-01-03)', hold => '1 hour');      -- 3006
SELECT ok, code, booking_id FROM booking.reserve_seat(3003, 'gus', 1, hold => '1 hour');    -- 3007
SELECT ok, code, booking_id FROM booking.reserve_seat(3004, 'hal', 2, hold => '1 hour');    -- 3008
SELECT ok, code, booking_id FROM booking.reserve_seat(3001, 'ivy', 1, hold => '1 hour');    -- 3009
SELECT id, guest, status FROM booking.bookings WHERE id BETWEEN 3001 AND 3009 ORDER BY id;

-- what a refused or failed call must leave as it is
CREATE TEMP TABLE seen AS
SELECT id, status, expires_at, validity FROM booking.bookings WHERE false;
CREATE FUNCTION pg_temp.mark() RETURNS bigint LANGUAGE sql AS $$
    DELETE FROM seen;
    INSERT INTO seen SELECT id, status, expires_at, validity FROM booking.bookings WHERE id BETWEEN 3001 AND 3099;
    SELECT count(*) FROM seen
$$;
CREATE TEMP VIEW changed AS
SELECT count(*) AS changed
FROM (SELECT id, status, expires_at, validity FROM booking.bookings WHERE id BETWEEN 3001 AND 3099
      EXCEPT SELECT * FROM seen) c;

-- two hours from now, to the second; and half an hour from now
SELECT date_trunc('second', clock_timestamp()) + interval '2 hours' AS until_a,
       date_trunc('second', clock_timestamp()) + interval '30 minutes' AS until_b \gset

--
-- ok 200: the hold now lasts until until; expires_at and validity say so
--
SELECT ok, code, booking_id, http_status, replayed,
       message = format('The hold on booking %s now lasts until %s.', 3001, :'until_a'::timestamptz) AS message_ok
FROM booking.extend_hold_until(3001, :'until_a');
SELECT status, expires_at = :'until_a' AS expires_at_is_until,
       validity = tstzrange(created_at, :'until_a', '[)') AS validity_ends_at_until
FROM booking.bookings WHERE id = 3001;
-- retried (the client never saw the answer): the same answer, the same expiry
SELECT pg_temp.mark();
SELECT ok, code, booking_id, http_status, replayed,
       message = format('The hold on booking %s now lasts until %s.', 3001, :'until_a'::timestamptz) AS message_ok
FROM booking.extend_hold_until(3001, :'until_a');
SELECT ok, code, booking_id, http_status, replayed,
       message = format('The hold on booking %s now lasts until %s.', 3001, :'until_a'::timestamptz) AS message_ok
FROM booking.extend_hold_until(3001, :'until_a');
SELECT * FROM changed;
SELECT expires_at = :'until_a' AS expires_at_is_until FROM booking.bookings WHERE id = 3001;
-- an earlier time that is still to come shortens the hold
SELECT ok, code, booking_id, http_status,
       message = format('The hold on booking %s now lasts until %s.', 3001, :'until_b'::timestamptz) AS message_ok
FROM booking.extend_hold_until(3001, :'until_b');
SELECT expires_at = :'until_b' AS expires_at_is_until,
       validity = tstzrange(created_at, :'until_b', '[)') AS validity_ends_at_until
FROM booking.bookings WHERE id = 3001;
-- up to 3660 days ahead
SELECT ok, code, http_status FROM booking.extend_hold_until(3001, clock_timestamp() + interval '3659 days');
SELECT expires_at > now() + interval '3658 days' AS ten_years FROM booking.bookings WHERE id = 3001;
SELECT ok, code, http_status FROM booking.extend_hold_until(3001, :'until_a');
SELECT expires_at = :'until_a' AS expires_at_is_until FROM booking.bookings WHERE id = 3001;
-- a stay hold: its validity, which the exclusion constraint reads, ends at until
SELECT ok, code, booking_id, http_status, replayed,
       message = format('The hold on booking %s now lasts until %s.', 3006, :'until_a'::timestamptz) AS message_ok
FROM booking.extend_hold_until(3006, :'until_a');
SELECT status, expires_at = :'until_a' AS expires_at_is_until, upper(validity) = :'until_a' AS validity_ends_at_until
FROM booking.bookings WHERE id = 3006;
-- a hold on a striped resource
SELECT ok, code, booking_id, http_status FROM booking.extend_hold_until(3008, :'until_a');
SELECT expires_at = :'until_a' AS expires_at_is_until FROM booking.bookings WHERE id = 3008;
-- the hold keeps its seats all along
SELECT * FROM seat_counters WHERE id = 3001;

--
-- the relative extend_hold, retried, extends twice; the absolute form does not
--
SELECT expires_at AS ivy_expiry FROM booking.bookings WHERE id = 3009 \gset
SELECT ok, code, http_status FROM booking.extend_hold(3009, '10 minutes');
SELECT ok, code, http_status FROM booking.extend_hold(3009, '10 minutes');
SELECT expires_at - :'ivy_expiry'::timestamptz AS extended_by FROM booking.bookings WHERE id = 3009;
SELECT ok, code, http_status FROM booking.extend_hold_until(3009, :'until_a');
SELECT ok, code, http_status FROM booking.extend_hold_until(3009, :'until_a');
SELECT expires_at = :'until_a' AS expires_at_is_until FROM booking.bookings WHERE id = 3009;

--
-- refusals: nothing changes but a lapsed hold, which ends expired
--
SELECT pg_temp.mark();
-- unknown booking: not_found 404
SELECT * FROM booking.extend_hold_until(3999, :'until_a');
-- confirmed or cancelled: invalid_state 409
SELECT * FROM booking.extend_hold_until(3002, :'until_a');
SELECT * FROM booking.extend_hold_until(3003, :'until_a');
-- an expired hold: hold_expired 410
SELECT ok, code, booking_id, http_status, replayed,
       message ~ '^The hold on booking 3004 expired at .+; reserve again\.$' AS message_ok
FROM booking.extend_hold_until(3004, :'until_a');
SELECT * FROM changed;
-- a hold that lapsed but was not expired yet: hold_expired 410, and it ends
-- expired with its seat given back (to the counter, or to a stripe)
SELECT pg_temp.lapse('{3005,3008}');
SELECT booking.seats_left(3001), booking.seats_left(3004);
SELECT ok, code, booking_id, http_status, replayed,
       message ~ '^The hold on booking 3005 expired at .+; reserve again\.$' AS message_ok
FROM booking.extend_hold_until(3005, :'until_a');
SELECT ok, code, booking_id, http_status, replayed,
       message ~ '^The hold on booking 3008 expired at .+; reserve again\.$' AS message_ok
FROM booking.extend_hold_until(3008, :'until_a');
SELECT id, status FROM booking.bookings WHERE id IN (3005, 3008) ORDER BY id;
SELECT * FROM seat_counters WHERE id = 3001;
SELECT (SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = 3004) AS free,
       (SELECT COALESCE(sum(quantity), 0) FROM booking.bookings
         WHERE resource_id = 3004 AND status IN ('pending', 'confirmed')) AS blocking;
-- and once expired it stays so
SELECT ok, code, http_status FROM booking.extend_hold_until(3005, :'until_a');

--
-- the resource row held by another transaction: busy 503 after
-- booking.lock_timeout (the function takes no lock_timeout argument)
--
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_seat(3003, ''peer'')).code');
SELECT pg_temp.mark();
SET booking.lock_timeout = 0;
SELECT * FROM booking.extend_hold_until(3007, :'until_a');
SET booking.lock_timeout = '50ms';
SELECT * FROM booking.extend_hold_until(3007, :'until_a');
RESET booking.lock_timeout;
SELECT * FROM changed;
SELECT peer_exec('ROLLBACK');
SELECT ok, code, http_status FROM booking.extend_hold_until(3007, :'until_a');
SELECT expires_at = :'until_a' AS expires_at_is_until FROM booking.bookings WHERE id = 3007;

--
-- REPEATABLE READ: the resource changed after the snapshot: retry 409,
-- nothing written; a new transaction goes through
--
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT booking.seats_left(3001);
SELECT peer('SELECT (booking.reserve_seat(3001, ''peer'')).code');
SELECT * FROM booking.extend_hold_until(3001, :'until_b');
ROLLBACK;
SELECT expires_at = :'until_a' AS unchanged FROM booking.bookings WHERE id = 3001;
SELECT dblink_disconnect('peer');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT ok, code, http_status FROM booking.extend_hold_until(3001, :'until_b');
COMMIT;
SELECT expires_at = :'until_b' AS expires_at_is_until FROM booking.bookings WHERE id = 3001;

--
-- bad input: raises 22004/22023 naming the argument, writes nothing.  Only
-- the first line of each error is shown: it is the contract.
--
SELECT pg_temp.mark();
\set VERBOSITY terse
SELECT * FROM booking.extend_hold_until(NULL, :'until_a');
SELECT :'SQLSTATE' AS sqlstate, * FROM changed;
SELECT * FROM booking.extend_hold_until(3001, NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM changed;
SELECT * FROM booking.extend_hold_until(3001, 'infinity');
SELECT :'SQLSTATE' AS sqlstate, * FROM changed;
SELECT * FROM booking.extend_hold_until(3001, '-infinity');
SELECT :'SQLSTATE' AS sqlstate, * FROM changed;
-- until must be later than the time of the call
SELECT * FROM booking.extend_hold_until(3001, clock_timestamp() - interval '1 hour');
SELECT :'SQLSTATE' AS sqlstate, * FROM changed;
SELECT * FROM booking.extend_hold_until(3001, '2000-01-01 00:00+00');
SELECT :'SQLSTATE' AS sqlstate, * FROM changed;
-- now() is the start of the transaction, before the call
BEGIN;
SELECT pg_sleep(0.01);
SELECT * FROM booking.extend_hold_until(3001, now());
\echo :SQLSTATE
ROLLBACK;
-- at most 3660 days after the call
SELECT * FROM booking.extend_hold_until(3001, clock_timestamp() + interval '3661 days');
SELECT :'SQLSTATE' AS sqlstate, * FROM changed;
SELECT * FROM booking.extend_hold_until(3001, '294276-12-31 00:00+00');
SELECT :'SQLSTATE' AS sqlstate, * FROM changed;
\set VERBOSITY default
SELECT expires_at = :'until_b' AS expires_at_is_until FROM booking.bookings WHERE id = 3001;
