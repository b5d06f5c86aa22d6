--
-- waitlist_reclaim (issue 24): seats that free up are offered to the head
-- of the line under the resource lock, and that offer reclaims lapsed
-- holds when the free seats fall short.  When even the reclaimed seats do
-- not make up the head's quantity, the offer is refused, but the holds it
-- expired stay expired (nothing rolls the offer back, unlike a refused
-- reserve_seat): their seats must go back to the counter in that same
-- transaction, or they are lost for good, since nothing counts them again.
--
-- Holds are made to lapse by moving them into the past (as the superuser),
-- not by sleeping.
--
SET TimeZone = 'UTC';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys,
    booking.events, booking.event_heads, booking.consumers, booking.deliveries RESTART IDENTITY;

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
-- seats of its stripes), the seats of confirmed bookings and live holds
-- (blocking), the seats of lapsed holds still pending, the line, and
-- seats_left; taken = blocking + lapsed must hold at every step
CREATE TEMP VIEW totals AS
SELECT r.id, r.capacity,
       CASE WHEN r.stripes > 1
            THEN r.capacity - (SELECT sum(s.free) FROM booking.resource_stripes s WHERE s.resource_id = r.id)
            ELSE r.taken END AS taken,
       (SELECT COALESCE(sum(b.quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.id
         AND (b.status = 'confirmed' OR (b.status = 'pending' AND b.expires_at > now())))::int AS blocking,
       (SELECT COALESCE(sum(b.quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.id
         AND b.status = 'pending' AND b.expires_at <= now())::int AS lapsed,
       r.waiting, booking.seats_left(r.id) AS seats_left
FROM booking.resources r ORDER BY r.id;
CREATE TEMP VIEW line AS
SELECT b.resource_id AS res, b.id, b.guest, b.quantity, b.status,
       b.status = 'pending' AND b.expires_at > now() AS live_hold
FROM booking.bookings b ORDER BY b.resource_id, b.id;

--
-- one counter row: 5 seats; ann has 1 confirmed, bob and cy hold 2 each;
-- dan waits for all 5
--
SELECT booking.create_resource('row', 5);                                       -- 1
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'ann', 1);               -- 1
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'bob', 2, hold => '1 hour'); -- 2
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'cy', 2, hold => '1 hour');  -- 3
SELECT ok, code, booking_id FROM booking.join_waitlist(1, 'dan', 5);              -- 4
-- both holds lapse; nothing has reclaimed them yet
SELECT pg_temp.lapse(1);
SELECT * FROM totals WHERE id = 1;
-- bob cancels his lapsed hold: 2 seats back, 2 free.  The offer to dan
-- (5) reclaims cy's lapsed hold (2 more): 4 free, still short, so dan keeps
-- waiting, cy's hold is expired, and the counter gives its 2 seats back:
-- taken is ann's 1 seat
SELECT ok, code, booking_id FROM booking.cancel(2);
SELECT * FROM line WHERE res = 1;
SELECT * FROM totals WHERE id = 1;
SELECT taken = blocking AS exact FROM totals WHERE id = 1;
-- ann cancels too: all 5 seats are free, and dan is offered them
SELECT ok, code, booking_id FROM booking.cancel(1);
SELECT * FROM line WHERE res = 1;
SELECT * FROM totals WHERE id = 1;

--
-- the same on a striped resource (2 stripes): the refused offer spreads
-- the reclaimed seats over the stripes
--
SELECT booking.create_resource('striped', 5);                                   -- 2
SELECT ok, code FROM booking.set_stripes(2, 2);
SELECT ok, code, booking_id FROM booking.reserve_seat(2, 'ann', 1);               -- 5
SELECT ok, code, booking_id FROM booking.reserve_seat(2, 'bob', 2, hold => '1 hour'); -- 6
SELECT ok, code, booking_id FROM booking.reserve_seat(2, 'cy', 2, hold => '1 hour');  -- 7
SELECT ok, code, booking_id FROM booking.join_waitlist(2, 'dan', 5);              -- 8
SELECT pg_temp.lapse(2);
SELECT * FROM totals WHERE id = 2;
SELECT ok, code, booking_id FROM booking.cancel(6);
SELECT * FROM line WHERE res = 2;
SELECT * FROM totals WHERE id = 2;
SELECT stripe, free FROM booking.resource_stripes WHERE resource_id = 2 ORDER BY stripe;
SELECT ok, code, booking_id FROM booking.cancel(5);
SELECT * FROM line WHERE res = 2;
SELECT * FROM totals WHERE id = 2;

-- every counter of this file is exact
SELECT id, taken = blocking + lapsed AS exact FROM totals;
