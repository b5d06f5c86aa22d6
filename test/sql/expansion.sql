--
-- expansion (0.7.0): SELECT (booking.f(...)).* makes PostgreSQL evaluate the
-- call once per column of booking.result.  Each such copy answers the first
-- one's result and acts no more than once: one booking, one cancel, one
-- extension of a hold.  Calls the query writes twice, rows of a set, and
-- statements of a function each still act.
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('show', 100);          -- 1
SELECT booking.create_resource('room');               -- 2
SELECT booking.create_resource('pool', 0);            -- 3
SELECT booking.create_resource('unit', 1, 3);         -- 4
SELECT booking.create_resource('hall', 3);            -- 5
SELECT booking.create_resource('hot', 20);            -- 6
SELECT code FROM booking.set_stripes(6, 4);

-- the seats a resource has out, and its bookings
CREATE FUNCTION pg_temp.out(r bigint) RETURNS text LANGUAGE sql AS $$
    SELECT pg_catalog.format('%s bookings, %s seats left', pg_catalog.count(*), booking.seats_left(r))
      FROM booking.bookings WHERE resource_id = r
$$;

-- reserve_seat: one booking, and every column is that booking's
SELECT (booking.reserve_seat(1, 'ann', 2)).*;
SELECT pg_temp.out(1);
SELECT (booking.reserve_seat(6, 'ann', 1)).*;
SELECT pg_temp.out(6);
-- with a hold: extend_hold pushes it once, not six times
SELECT (booking.reserve_seat(1, 'bob', 1, hold => '10 minutes')).ok;
SELECT ok, code, booking_id FROM (SELECT (booking.extend_hold(3, '1 hour')).*) AS e;
SELECT expires_at - created_at AS held_for FROM booking.bookings WHERE id = 3;
SELECT (booking.extend_hold_until(3, created_at + interval '2 hours')).code FROM booking.bookings WHERE id = 3;
SELECT expires_at - created_at AS held_for FROM booking.bookings WHERE id = 3;
-- confirm and cancel: each answers ok in every column
SELECT (booking.confirm(3)).*;
SELECT (booking.cancel(3)).*;
SELECT id, status FROM booking.bookings WHERE id = 3;
SELECT (booking.cancel(2)).code;
SELECT pg_temp.out(6);
SELECT pg_temp.out(1);
-- reduce gives back one seat once
SELECT (booking.reduce(1, 1)).*;
SELECT id, quantity, status FROM booking.bookings WHERE id = 1;
-- a pass: one booking per member
SELECT (booking.reserve_seats(ARRAY[5, 1], 'cat', ARRAY[1, 2])).code;
SELECT pg_temp.out(1), pg_temp.out(5);

-- stays: one booking each; move_stay moves once
SELECT (booking.reserve_stay(2, 'dan', '[2031-01-01, 2031-01-03)')).*;
SELECT (booking.reserve_stays(ARRAY[2], 'eve', '[2031-02-01, 2031-02-03)')).code;
SELECT (booking.reserve_stay_any(3, 'fay', '[2031-01-01, 2031-01-03)')).*;
SELECT (booking.move_stay(6, '[2031-03-01, 2031-03-03)')).*;
SELECT id, resource_id, guest, during FROM booking.bookings WHERE resource_id IN (2, 4) ORDER BY id;

-- the waitlist: one place in line
SELECT code FROM booking.reserve_seat(5, 'gus', 2);
SELECT (booking.join_waitlist(5, 'hal', 2)).*;
SELECT id, guest, status FROM booking.bookings WHERE resource_id = 5 ORDER BY id;

-- settings: one new version each
SELECT version FROM booking.resources WHERE id = 1;
SELECT (booking.set_capacity(1, 120, 1)).*;
SELECT (booking.set_guest_limit(1, 5)).code;
SELECT (booking.set_buffer(2, '1 hour', '0')).code;
SELECT (booking.set_stripes(6, 2)).code;
SELECT id, version, capacity, stripes FROM booking.resources WHERE id IN (1, 2, 6) ORDER BY id;
SELECT code FROM booking.set_guest_limit(1, NULL);

-- an idempotency key: the copies answer the first result, not a replay
SELECT (booking.reserve_seat(1, 'ivy', 1, idempotency_key => 'exp-1')).*;
SELECT (booking.reserve_seat(1, 'ivy', 1, idempotency_key => 'exp-1')).*;

-- ... but what the query asks for more than once is done more than once:
-- a row per call of a set, two calls written in the select list, and the
-- same call in two statements of a transaction or of a function
SELECT pg_temp.out(1);
SELECT (booking.reserve_seat(1, 'jay')).code FROM pg_catalog.generate_series(1, 3);
SELECT pg_temp.out(1);
SELECT (booking.reserve_seat(1, 'kim')).code AS first, (booking.reserve_seat(1, 'kim')).code AS second;
SELECT pg_temp.out(1);
BEGIN;
SELECT (booking.reserve_seat(1, 'lee')).code;
SELECT (booking.reserve_seat(1, 'lee')).code;
COMMIT;
SELECT pg_temp.out(1);
CREATE FUNCTION pg_temp.twice() RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    a text;
    b text;
BEGIN
    a := (booking.reserve_seat(1, 'max')).code;
    b := (booking.reserve_seat(1, 'max')).code;
    RETURN a || ' ' || b;
END
$$;
SELECT pg_temp.twice();
SELECT pg_temp.out(1);
-- the expansion of a set: each row books once
SELECT (booking.reserve_seat(6, g, 2)).code FROM pg_catalog.unnest(ARRAY['nia', 'oli']) AS g;
SELECT pg_temp.out(6);
SELECT (booking.reserve_seat(1, g)).* FROM pg_catalog.unnest(ARRAY['pat', 'quinn']) AS g;
SELECT pg_temp.out(1);
-- the recommended form
SELECT * FROM booking.reserve_seat(1, 'rae');
SELECT pg_temp.out(1);

-- the other calls that write, expanded too: groups book one row per
-- member, settings move the version by one, a hold is pushed once
SELECT booking.create_resource('gala', 10);           -- 7
SELECT booking.create_resource('suite');              -- 8
SELECT booking.create_resource('annex');              -- 9
SELECT ok, code, http_status FROM (SELECT (booking.reserve_seats(ARRAY[7, 1], 'sam', ARRAY[2, 1], hold => '10 minutes')).*) AS e;
SELECT ok, code, http_status FROM (SELECT (booking.reserve_stays(ARRAY[8, 9], 'sam', '[2032-01-01, 2032-01-03)')).*) AS e;
SELECT resource_id, quantity, during, status FROM booking.bookings WHERE guest = 'sam' ORDER BY resource_id;
SELECT pg_temp.out(7);
SELECT ok, code FROM (SELECT (booking.extend_hold_until(b.id, b.created_at + interval '3 hours')).* FROM booking.bookings b
                       WHERE b.guest = 'sam' AND b.resource_id = 7) AS e;
SELECT expires_at - created_at AS held_for FROM booking.bookings WHERE guest = 'sam' AND resource_id IN (1, 7) ORDER BY resource_id;
SELECT id, version FROM booking.resources WHERE id IN (7, 8) ORDER BY id;
SELECT ok, code FROM (SELECT (booking.set_guest_limit(7, 3)).*) AS e;
SELECT ok, code FROM (SELECT (booking.set_buffer(8, '2 hours', '1 hour')).*) AS e;
SELECT ok, code FROM (SELECT (booking.set_stripes(7, 4)).*) AS e;
SELECT id, version, guest_limit, buffer_before, buffer_after, stripes FROM booking.resources WHERE id IN (7, 8) ORDER BY id;
-- metadata (0.8.0) goes along once
SELECT ok, code FROM (SELECT (booking.reserve_seat(7, 'tia', 1, metadata => '{"order": "E1"}')).*) AS e;
SELECT guest, metadata FROM booking.bookings WHERE guest = 'tia';

-- every seat counter equals its blocking seat bookings
SELECT r.id, r.taken, COALESCE(sum(b.quantity), 0) AS blocking
  FROM booking.resources r LEFT JOIN booking.bookings b
    ON b.resource_id = r.id AND b.during IS NULL AND b.status IN ('pending', 'confirmed')
 WHERE r.stripes <= 1
 GROUP BY r.id, r.taken HAVING r.taken <> COALESCE(sum(b.quantity), 0);

-- the 0.9.0 calls: a series, nights and a slot, each booked once
SELECT booking.create_resource('class', 5);           -- 10
SELECT ok, code FROM (SELECT (booking.reserve_series(9, 'uma', '[2031-03-03 09:00+00, 2031-03-03 10:00+00)', '1 week', 2)).*) AS e;
SELECT ok, code FROM (SELECT (booking.reserve_nights(9, 'uma', '2031-04-01', '2031-04-03')).*) AS e;
SELECT ok, code FROM (SELECT (booking.reserve_slot(10, 'uma', '[2031-03-03 09:00+00, 2031-03-03 10:00+00)', 2)).*) AS e;
SELECT resource_id, count(*), sum(quantity) FROM booking.bookings WHERE guest = 'uma' GROUP BY resource_id ORDER BY resource_id;
