--
-- waitlist_newcomer (issue 24): while anyone waits, a newcomer gets
-- sold_out even when the seats it asks for are free, and the head keeps its
-- place.  The head needs 2 seats, 1 is free, and the newcomer asks for 1:
-- only the line refuses it.  Each isolation level takes another path to the
-- counter, so each is asked: READ COMMITTED (the row read and locked in C;
-- a striped session's stripes step aside for the line and the call decides
-- under the resource row), REPEATABLE READ (a first attempt without
-- waiting, then a waiting one) and SERIALIZABLE (the waiting one only), on
-- one counter row and on stripes.  iso_waitlist_queued covers a line that
-- forms while the newcomer queues for the row.
--
SET TimeZone = 'UTC';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys,
    booking.events, booking.event_heads, booking.consumers, booking.deliveries RESTART IDENTITY;

-- per resource: the counter, the seats of confirmed bookings and live
-- holds, seats_left, the line; and every booking
CREATE TEMP VIEW totals AS
SELECT r.id, r.capacity, r.stripes,
       CASE WHEN r.stripes > 1
            THEN r.capacity - (SELECT sum(s.free) FROM booking.resource_stripes s WHERE s.resource_id = r.id)
            ELSE r.taken END AS taken,
       (SELECT COALESCE(sum(b.quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.id
         AND (b.status = 'confirmed' OR (b.status = 'pending' AND b.expires_at > now())))::int AS blocking,
       booking.seats_left(r.id) AS seats_left, r.waiting
FROM booking.resources r ORDER BY r.id;
CREATE TEMP VIEW line AS
SELECT b.resource_id AS res, b.id, b.guest, b.quantity, b.status,
       b.status = 'pending' AND b.expires_at > now() AS live_hold
FROM booking.bookings b ORDER BY b.resource_id, b.id;

-- 1: one counter row, 3 seats; 2: the same over 2 stripes.  ann takes 2
-- of each, and hd joins the line of each for 2 (1 is free)
SELECT booking.create_resource('row', 3);                                     -- 1
SELECT booking.create_resource('striped', 3);                                 -- 2
SELECT ok, code FROM booking.set_stripes(2, 2);
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'ann', 2);             -- 1
SELECT ok, code, booking_id FROM booking.reserve_seat(2, 'ann', 2);             -- 2
SELECT ok, code, booking_id FROM booking.join_waitlist(1, 'hd', 2);             -- 3
SELECT ok, code, booking_id FROM booking.join_waitlist(2, 'hd', 2);             -- 4
SELECT * FROM totals;
SELECT stripe, limited FROM booking.resource_stripes WHERE resource_id = 2 ORDER BY stripe;

--
-- the newcomer asks for the 1 free seat: sold_out at every level, nothing
-- written
--
-- READ COMMITTED
SELECT * FROM booking.reserve_seat(1, 'new', 1);
SELECT * FROM booking.reserve_seat(2, 'new', 1);
-- REPEATABLE READ
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT * FROM booking.reserve_seat(1, 'new', 1);
SELECT * FROM booking.reserve_seat(2, 'new', 1);
COMMIT;
-- SERIALIZABLE
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT ok, code, http_status FROM booking.reserve_seat(1, 'new', 1);
SELECT ok, code, http_status FROM booking.reserve_seat(2, 'new', 1);
COMMIT;
-- lock_timeout 0 (do not wait) at every level, the row free: sold_out
-- too, never busy (0.6.0 answered busy at REPEATABLE READ on the one-row
-- session, so a client that retries on busy looped while the line stood)
SELECT ok, code, http_status FROM booking.reserve_seat(1, 'new', 1, lock_timeout => '0');
SELECT ok, code, http_status FROM booking.reserve_seat(2, 'new', 1, lock_timeout => '0');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT ok, code, http_status FROM booking.reserve_seat(1, 'new', 1, lock_timeout => '0');
SELECT ok, code, http_status FROM booking.reserve_seat(2, 'new', 1, lock_timeout => '0');
COMMIT;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT ok, code, http_status FROM booking.reserve_seat(1, 'new', 1, lock_timeout => '0');
SELECT ok, code, http_status FROM booking.reserve_seat(2, 'new', 1, lock_timeout => '0');
COMMIT;
-- in a pass of both (reserve_seats), at READ COMMITTED and REPEATABLE READ
SELECT ok, code, http_status FROM booking.reserve_seats('{1,2}', 'new', '{1,1}');
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT ok, code, http_status FROM booking.reserve_seats('{1,2}', 'new', '{1,1}');
COMMIT;
SELECT count(*) AS newcomer_bookings FROM booking.bookings WHERE guest = 'new';
SELECT * FROM line;
SELECT * FROM totals;

--
-- the head keeps its place: ann gives 1 seat back, 2 are free, and hd is
-- offered them; the line is empty
--
SELECT ok, code FROM booking.reduce(1, 1);
SELECT ok, code FROM booking.reduce(2, 1);
SELECT * FROM line;
SELECT * FROM totals;
SELECT stripe, limited FROM booking.resource_stripes WHERE resource_id = 2 ORDER BY stripe;
-- with nobody in line, the seat ann frees is the newcomer's
SELECT ok, code FROM booking.cancel(1);
SELECT ok, code FROM booking.cancel(2);
SELECT ok, code FROM booking.reserve_seat(1, 'new', 1);
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT ok, code FROM booking.reserve_seat(2, 'new', 1);
COMMIT;
SELECT * FROM totals;
SELECT id, taken = blocking AS exact FROM totals;
