--
-- holds: confirm, extend_hold, cancel of holds, lazy expiry, hold_expire
--
-- No test here waits for the clock.  Every hold is an hour long or more, so a
-- hold that must still block does, however slow the machine.  Holds that must
-- lapse are made first and checked to block; then one superuser UPDATE moves
-- their created_at, expires_at and validity (tstzrange(created_at,
-- expires_at, '[)') for a hold) two hours into the past, so that each lapsed
-- an hour ago, as if the clock had run on.  The times printed are fixed ones,
-- or checked by pattern.
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('lifecycle', 100);     -- 1
SELECT booking.create_resource('stay room');          -- 2
SELECT booking.create_resource('lazy seats', 2);      -- 3
SELECT booking.create_resource('lazy room');          -- 4
SELECT booking.create_resource('expire seats', 10);   -- 5
SELECT booking.create_resource('capacity ok', 3);     -- 6
SELECT booking.create_resource('capacity refused', 3);-- 7
SELECT booking.create_resource('busy', 5);            -- 8

--
-- confirm
--
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'ann', 2, '1 hour');
-- pending and unexpired: confirmed, ok 200
SELECT * FROM booking.confirm(1);
SELECT status, expires_at, upper_inf(validity) AS validity_open FROM booking.bookings WHERE id = 1;
-- confirming a confirmed booking: ok 200 again
SELECT * FROM booking.confirm(1);
-- cancelled: invalid_state 409
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'bob', 1, '1 hour');
SELECT ok, code FROM booking.cancel(2);
SELECT * FROM booking.confirm(2);
-- a stay hold
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'cy', '[2030-01-04, 2030-01-07)', '1 hour');
SELECT * FROM booking.confirm(3);
SELECT status, expires_at, validity = tstzrange(created_at, NULL) AS validity
FROM booking.bookings WHERE id = 3;
-- unknown: not_found 404
SELECT * FROM booking.confirm(99);

--
-- extend_hold
--
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'dee', 1, '1 hour');
SELECT expires_at AS dee_expires FROM booking.bookings WHERE id = 4 \gset
SELECT ok, code, booking_id, http_status, replayed,
       message ~ '^The hold on booking 4 now lasts until .+\.$' AS message_ok
FROM booking.extend_hold(4, '30 minutes');
SELECT status, expires_at - :'dee_expires' AS extended_by, validity = tstzrange(created_at, expires_at) AS validity
FROM booking.bookings WHERE id = 4;
-- a stay hold: its validity follows
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'eve', '[2030-01-10, 2030-01-12)', '1 hour');
SELECT ok, code, booking_id FROM booking.extend_hold(5, '1 day');
SELECT status, expires_at - created_at AS hold, validity = tstzrange(created_at, expires_at) AS validity
FROM booking.bookings WHERE id = 5;
-- confirmed or cancelled: invalid_state 409; unknown: not_found 404
SELECT * FROM booking.extend_hold(1, '1 hour');
SELECT * FROM booking.extend_hold(2, '1 hour');
SELECT * FROM booking.extend_hold(99, '1 hour');
-- bad input: raises, nothing changes
SELECT * FROM booking.extend_hold(NULL, '1 hour');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.extend_hold(4, NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.extend_hold(4, '0');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.extend_hold(4, '-1 minute');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.extend_hold(4, '3661 days');
SELECT :'SQLSTATE' AS sqlstate;
SELECT ok, code FROM booking.extend_hold(4, '3000 days');
-- the whole hold may not pass 3660 days either
SELECT * FROM booking.extend_hold(4, '1000 days');
SELECT :'SQLSTATE' AS sqlstate;
SELECT expires_at - :'dee_expires' AS extended_by FROM booking.bookings WHERE id = 4;

-- confirm: bad input
SELECT * FROM booking.confirm(NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.confirm(4, '');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.confirm(4, repeat('k', 256));
SELECT :'SQLSTATE' AS sqlstate;
SELECT status FROM booking.bookings WHERE id = 4;

-- a hold on resource 8, for the busy cases below
SELECT ok, code, booking_id FROM booking.reserve_seat(8, 'uma', 1, '1 hour');

--
-- holds that will lapse: made now, made to lapse below
--
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'fay', 1, '1 hour');   -- confirm after lapse
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'gus', 1, '1 hour');   -- extend after lapse
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'hal', 1, '1 hour');   -- cancel after lapse
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'ida', 1, '1 hour');   -- reached by hold_expire
-- lazy expiry, seats: the hold blocks now
SELECT ok, code, booking_id FROM booking.reserve_seat(3, 'jo', 2, '1 hour');
SELECT ok, code FROM booking.reserve_seat(3, 'kim', 2);
SELECT booking.seats_left(3);
-- lazy expiry, stays: the hold blocks now
SELECT ok, code, booking_id FROM booking.reserve_stay(4, 'lee', '[2030-01-04, 2030-01-07)', '1 hour');
SELECT ok, code FROM booking.reserve_stay(4, 'max', '[2030-01-05, 2030-01-06)');
SELECT * FROM booking.free_slots(4, '[2030-01-01, 2030-01-10)', '0');
-- a stay hold to confirm after another guest took its dates
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'ned', '[2030-02-01, 2030-02-03)', '1 hour');
-- holds for hold_expire to count
SELECT ok, code, booking_id FROM booking.reserve_seat(5, 'pat', 1, '1 hour');
SELECT ok, code, booking_id FROM booking.reserve_seat(5, 'pat', 2, '1 hour');
SELECT ok, code, booking_id FROM booking.reserve_seat(5, 'pat', 3, '1 hour');
-- set_capacity counts unexpired holds as taken
SELECT ok, code, booking_id FROM booking.reserve_seat(6, 'quinn', 1);
SELECT ok, code, booking_id FROM booking.reserve_seat(6, 'ray', 2, '1 hour');
SELECT ok, code FROM booking.set_capacity(6, 1, 1);
SELECT ok, code, booking_id FROM booking.reserve_seat(7, 'sue', 2);
SELECT ok, code, booking_id FROM booking.reserve_seat(7, 'tom', 1, '1 hour');
-- a lapsed hold on a resource that is locked when hold_expire runs
SELECT ok, code, booking_id FROM booking.reserve_seat(8, 'vic', 1, '1 hour');

-- the holds above lapse: each now lasted from two hours ago to one hour ago
WITH lapsed AS (
    UPDATE booking.bookings
       SET created_at = created_at - interval '2 hours',
           expires_at = created_at - interval '1 hour',
           validity = tstzrange(created_at - interval '2 hours', created_at - interval '1 hour', '[)')
     WHERE id BETWEEN 7 AND 21 AND status = 'pending'
    RETURNING id, guest, expires_at < statement_timestamp() AS lapsed,
              validity = tstzrange(created_at, expires_at, '[)') AS validity
)
SELECT * FROM lapsed ORDER BY id;

-- confirm of a lapsed hold: hold_expired 410, and the hold ends expired
SELECT ok, code, booking_id, http_status, replayed,
       message ~ '^The hold on booking 7 expired at .+; reserve again\.$' AS message_ok
FROM booking.confirm(7);
SELECT ok, code, booking_id, http_status FROM booking.confirm(7);
-- extend_hold of a lapsed hold: hold_expired 410, ends expired
SELECT ok, code, booking_id, http_status FROM booking.extend_hold(8, '1 hour');
SELECT ok, code, booking_id, http_status FROM booking.extend_hold(8, '1 hour');
-- cancel of a lapsed hold that hold_expire has not reached: ok 200, cancelled
SELECT * FROM booking.cancel(9);
SELECT id, guest, status FROM booking.bookings WHERE id BETWEEN 7 AND 10 ORDER BY id;

-- lazy expiry, seats: the lapsed hold counts as free before anything ran
SELECT booking.seats_left(3);
SELECT * FROM booking.reserve_seat(3, 'kim', 2);
SELECT id, guest, status FROM booking.bookings WHERE resource_id = 3 ORDER BY id;
-- lazy expiry, stays: the lapsed hold is still pending and does not block
SELECT * FROM booking.free_slots(4, '[2030-01-01, 2030-01-10)', '0');
SELECT * FROM booking.reserve_stay(4, 'max', '[2030-01-05, 2030-01-06)');
SELECT id, guest, during, status FROM booking.bookings WHERE resource_id = 4 ORDER BY id;
-- another guest takes the lapsed hold's dates; its confirm is refused
SELECT * FROM booking.reserve_stay(2, 'ola', '[2030-02-01, 2030-02-03)');
SELECT ok, code, booking_id, http_status FROM booking.confirm(13);
SELECT id, guest, during, status FROM booking.bookings WHERE resource_id = 2 ORDER BY id;

-- set_capacity: a lapsed hold does not count as taken
SELECT * FROM booking.set_capacity(6, 1, 1);
SELECT id, capacity, version, taken FROM booking.resources WHERE id = 6;
-- still below after the lapsed hold is given back: refused, capacity unchanged
SELECT * FROM booking.set_capacity(7, 1, 1);
SELECT id, capacity, version, taken FROM booking.resources WHERE id = 7;
SELECT id, guest, status FROM booking.bookings WHERE resource_id IN (6, 7) ORDER BY id;

--
-- the resource row is held by another transaction: the lifecycle calls
-- answer busy 503 naming it; hold_expire skips it instead of waiting
--
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_seat(8, ''peer'')).code');
SET booking.lock_timeout = 0;
SELECT * FROM booking.confirm(6);
SELECT * FROM booking.extend_hold(6, '1 minute');
SELECT * FROM booking.cancel(6);
RESET booking.lock_timeout;

--
-- hold_expire: moves at most batch lapsed holds to expired, frees their seats
--
SELECT id, taken, booking.seats_left(id) FROM booking.resources WHERE id IN (1, 5, 8) ORDER BY id;
SELECT booking.hold_expire(1);
SELECT booking.hold_expire();
SELECT booking.hold_expire();
SELECT peer_exec('ROLLBACK');
SELECT dblink_disconnect('peer');
SELECT booking.hold_expire(NULL);
SELECT booking.hold_expire();
SELECT id, taken, booking.seats_left(id) FROM booking.resources WHERE id IN (1, 5, 8) ORDER BY id;
-- bad input
SELECT booking.hold_expire(0);
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.hold_expire(-1);
SELECT :'SQLSTATE' AS sqlstate;

-- an expired hold: cancel is invalid_state, confirm and extend are hold_expired
SELECT * FROM booking.cancel(10);
SELECT ok, code, booking_id, http_status FROM booking.confirm(10);
SELECT ok, code, booking_id, http_status FROM booking.extend_hold(10, '1 hour');

-- the busy hold goes through once the lock is gone
SELECT * FROM booking.confirm(6);

-- every booking in exactly one state; counters exact
SELECT id, resource_id, guest, status FROM booking.bookings ORDER BY id;
SELECT * FROM seat_counters;
