--
-- reclaim: reserve_seat reclaims lapsed seat holds when the free seats are
-- not enough.  When even the lapsed holds do not make up the quantity, the
-- answer is sold_out and the reclaim is rolled back: the lapsed holds stay
-- pending and counted until a sale that succeeds or hold_expire reclaims
-- them.  Either way the seat counter (one row) and the stripes stay exact:
-- taken = capacity - free = the seats of pending and confirmed bookings.
--
-- Holds are made to lapse by moving them into the past (as the superuser),
-- not by sleeping.  This file does not TRUNCATE booking.resources (0.3.0
-- refuses it), so it numbers its own resources and bookings from 1001.
--
SET TimeZone = 'UTC';
SELECT pg_catalog.setval('booking.resources_id_seq', 1000) AS resources_from,
       pg_catalog.setval('booking.bookings_id_seq', 1000) AS bookings_from;

-- moves every pending hold of a resource an hour into the past (lapsed, as
-- if its time had run out) and says how many it moved
CREATE FUNCTION pg_temp.lapse(resource bigint) RETURNS bigint LANGUAGE sql AS $$
    WITH moved AS (
        UPDATE booking.bookings
           SET created_at = created_at - interval '2 hours',
               expires_at = created_at - interval '1 hour',
               validity = tstzrange(created_at - interval '2 hours', created_at - interval '1 hour', '[)')
         WHERE resource_id = resource AND status = 'pending'
        RETURNING 1)
    SELECT count(*) FROM moved
$$;

-- per resource: the counter (the row's taken, or capacity minus the free
-- seats of its stripes), the seats of its blocking bookings, the seats of
-- lapsed holds among them, and seats_left (which counts lapsed holds free)
CREATE TEMP VIEW counts AS
SELECT r.id, r.capacity,
       CASE WHEN r.stripes > 1
            THEN r.capacity - (SELECT sum(s.free) FROM booking.resource_stripes s WHERE s.resource_id = r.id)
            ELSE r.taken END AS taken,
       (SELECT COALESCE(sum(b.quantity), 0) FROM booking.bookings b
         WHERE b.resource_id = r.id AND b.during IS NULL AND b.status IN ('pending', 'confirmed')) AS blocking,
       (SELECT COALESCE(sum(b.quantity), 0) FROM booking.bookings b
         WHERE b.resource_id = r.id AND b.status = 'pending' AND b.expires_at <= now()) AS lapsed,
       booking.seats_left(r.id) AS seats_left
FROM booking.resources r WHERE r.id BETWEEN 1001 AND 1010 ORDER BY r.id;

--
-- one counter row: 6 seats, 2 confirmed, holds of 2 and 1 lapsed, 1 free
--
SELECT booking.create_resource('one row', 6);          -- 1001
SELECT ok, code FROM booking.reserve_seat(1001, 'ann', 2);
SELECT ok, code FROM booking.reserve_seat(1001, 'bob', 2, hold => '1 hour');
SELECT ok, code FROM booking.reserve_seat(1001, 'cy', 1, hold => '1 hour');
SELECT pg_temp.lapse(1001);
SELECT * FROM counts WHERE id = 1001;
-- 5 seats asked, 1 free + 3 lapsed: sold_out; the holds stay pending
SELECT ok, code, http_status, message, replayed FROM booking.reserve_seat(1001, 'dan', 5);
SELECT * FROM counts WHERE id = 1001;
SELECT guest, quantity, status FROM booking.bookings WHERE resource_id = 1001 ORDER BY id;
-- the same in a transaction that goes on: nothing of the refusal stays
BEGIN;
SELECT ok, code FROM booking.reserve_seat(1001, 'dan', 5);
SELECT * FROM counts WHERE id = 1001;
COMMIT;
-- 4 seats asked, 1 free + 3 lapsed: ok, the lapsed holds are reclaimed
SELECT ok, code, http_status, message, replayed FROM booking.reserve_seat(1001, 'eve', 4);
SELECT * FROM counts WHERE id = 1001;
SELECT guest, quantity, status FROM booking.bookings WHERE resource_id = 1001 ORDER BY id;
SELECT ok, code FROM booking.reserve_seat(1001, 'fay', 1);
SELECT * FROM counts WHERE id = 1001;

--
-- one counter row, a refusal, then hold_expire reclaims the lapsed hold
--
SELECT booking.create_resource('expired later', 4);    -- 1002
SELECT ok, code FROM booking.reserve_seat(1002, 'gus', 1);
SELECT ok, code FROM booking.reserve_seat(1002, 'hal', 2, hold => '1 hour');
SELECT pg_temp.lapse(1002);
SELECT ok, code FROM booking.reserve_seat(1002, 'ivy', 4);
SELECT * FROM counts WHERE id = 1002;
-- other files may have left lapsed holds of their own: at least this one
SELECT booking.hold_expire() >= 1 AS expired;
SELECT guest, status FROM booking.bookings WHERE resource_id = 1002 ORDER BY id;
SELECT * FROM counts WHERE id = 1002;
SELECT ok, code FROM booking.reserve_seat(1002, 'ivy', 4);
SELECT ok, code FROM booking.reserve_seat(1002, 'ivy', 3);
SELECT * FROM counts WHERE id = 1002;

--
-- stripes: 10 seats over 4 stripes, 2 confirmed, holds of 3 and 3 lapsed,
-- 2 free.  A quantity no stripe holds goes to the slow path, which reclaims.
--
SELECT booking.create_resource('striped', 10);         -- 1003
SELECT ok, code FROM booking.set_stripes(1003, 4);
SELECT ok, code FROM booking.reserve_seat(1003, 'jo', 2);
SELECT ok, code FROM booking.reserve_seat(1003, 'kim', 3, hold => '1 hour');
SELECT ok, code FROM booking.reserve_seat(1003, 'lee', 3, hold => '1 hour');
SELECT pg_temp.lapse(1003);
SELECT * FROM counts WHERE id = 1003;
-- 9 seats asked, 2 free + 6 lapsed: sold_out; the holds stay pending
SELECT ok, code, http_status, message, replayed FROM booking.reserve_seat(1003, 'max', 9);
SELECT * FROM counts WHERE id = 1003;
SELECT count(*) AS stripes, sum(free) AS free FROM booking.resource_stripes WHERE resource_id = 1003;
SELECT guest, quantity, status FROM booking.bookings WHERE resource_id = 1003 ORDER BY id;
-- 8 seats asked: ok, the lapsed holds are reclaimed
SELECT ok, code, http_status, message, replayed FROM booking.reserve_seat(1003, 'ned', 8);
SELECT * FROM counts WHERE id = 1003;
SELECT count(*) AS stripes, sum(free) AS free FROM booking.resource_stripes WHERE resource_id = 1003;
SELECT guest, quantity, status FROM booking.bookings WHERE resource_id = 1003 ORDER BY id;
SELECT ok, code FROM booking.reserve_seat(1003, 'ola', 1);

--
-- stripes, a lapsed hold and more seats asked than the capacity: refused,
-- and the refusal changes nothing either
--
SELECT booking.create_resource('striped small', 4);    -- 1004
SELECT ok, code FROM booking.set_stripes(1004, 2);
SELECT ok, code FROM booking.reserve_seat(1004, 'pat', 3, hold => '1 hour');
SELECT pg_temp.lapse(1004);
SELECT ok, code FROM booking.reserve_seat(1004, 'quinn', 5);
SELECT * FROM counts WHERE id = 1004;
SELECT guest, status FROM booking.bookings WHERE resource_id = 1004 ORDER BY id;
SELECT ok, code FROM booking.reserve_seat(1004, 'quinn', 4);
SELECT * FROM counts WHERE id = 1004;
SELECT guest, status FROM booking.bookings WHERE resource_id = 1004 ORDER BY id;

-- every counter of this file is exact
SELECT id, taken = blocking AS exact FROM counts;
