--
-- waitlist (0.6.0): join_waitlist, and the offers that turn the head of a
-- sold-out resource's line into a hold when seats free up
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET IntervalStyle = 'postgres';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys,
    booking.events, booking.event_heads, booking.consumers, booking.deliveries RESTART IDENTITY;
-- events are written while a consumer is registered
SELECT booking.add_consumer('waitlist');

-- per resource: capacity, seats left, the line's length, the seats of
-- confirmed bookings and live holds; capacity = blocking + seats_left must
-- hold (waiting entries take nothing), and taken (or capacity minus the
-- stripes' free seats) counts the blocking seats
CREATE TEMP VIEW totals AS
SELECT r.id, r.capacity, booking.seats_left(r.id) AS seats_left, r.waiting,
       (SELECT COALESCE(sum(b.quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.id
         AND (b.status = 'confirmed' OR (b.status = 'pending' AND b.expires_at > now())))::int AS blocking,
       CASE WHEN r.stripes > 1
            THEN r.capacity - (SELECT sum(s.free) FROM booking.resource_stripes s WHERE s.resource_id = r.id)
            ELSE r.taken END AS taken,
       (SELECT count(*) FROM booking.bookings b WHERE b.resource_id = r.id AND b.status = 'waiting') AS entries
FROM booking.resources r ORDER BY r.id;
-- the bookings of a resource: guest:quantity:status, ':offer' for a live
-- pending hold made from an entry
CREATE TEMP VIEW line AS
SELECT b.resource_id AS res, b.id, b.guest, b.quantity, b.status,
       b.status = 'pending' AND b.expires_at > now() AS live_hold
FROM booking.bookings b ORDER BY b.resource_id, b.id;
CREATE TEMP VIEW ev AS
SELECT e.id, e.resource_id AS res, e.booking_id AS bk, e.guest, e.kind,
       e.payload - 'expires_at' AS payload, e.payload ? 'expires_at' AS expiry
FROM booking.events e ORDER BY e.id;
SELECT 0 AS last_event \gset

SELECT booking.create_resource('solo', 1);             -- 1
SELECT booking.create_resource('trio', 3);             -- 2
SELECT booking.create_resource('room');                -- 3: a stay resource
SELECT booking.create_resource('hot', 4);              -- 4: striped below
SELECT booking.create_resource('grow', 2);             -- 5
SELECT booking.create_resource('lapse', 2);            -- 6

--
-- programmer errors: NULL (22004) and bad arguments (22023), each naming
-- its argument; nothing written
--
\set VERBOSITY terse
SELECT * FROM booking.join_waitlist(NULL, 'ann');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.join_waitlist(1, NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.join_waitlist(1, '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.join_waitlist(1, repeat('g', 1025));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.join_waitlist(1, 'ann', NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.join_waitlist(1, 'ann', 0);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.join_waitlist(1, 'ann', -1);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.join_waitlist(1, 'ann', 1, '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.join_waitlist(1, 'ann', 1, repeat('k', 256));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT count(*) AS events FROM booking.events;
\set VERBOSITY default

--
-- answers
--
-- unknown resource: not_found 404 (0 too, as for reserve_seat)
SELECT * FROM booking.join_waitlist(99, 'ann');
SELECT ok, code, http_status FROM booking.join_waitlist(0, 'ann');
-- seats free and nobody waiting: seats_available 409, nothing written
SELECT * FROM booking.join_waitlist(1, 'ann');
SELECT * FROM booking.join_waitlist(2, 'ann', 3);
-- more than the resource has in all: sold_out (could never be served)
SELECT * FROM booking.join_waitlist(1, 'ann', 2);
SELECT count(*) AS bookings, (SELECT count(*) FROM booking.events) AS events FROM booking.bookings;
-- sold out: waitlisted 202, the entry is a booking in status waiting
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'holder');          -- 1
SELECT * FROM booking.join_waitlist(1, 'ann');                               -- 2
SELECT * FROM booking.join_waitlist(1, 'bob');                               -- 3
-- the same guest again: already_waiting 409 with the entry's id
SELECT * FROM booking.join_waitlist(1, 'ann');
-- an idempotency key: the replay returns the stored result, writes nothing
SELECT ok, code, booking_id, http_status, replayed FROM booking.join_waitlist(1, 'cy', 1, 'wl-1');  -- 4
SELECT ok, code, booking_id, http_status, replayed FROM booking.join_waitlist(1, 'cy', 1, 'wl-1');
SELECT * FROM line WHERE res = 1;
SELECT * FROM totals WHERE id = 1;
-- exactly one event per join, none for the refusals and the replay
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- a stay resource (no seat counter): as observed, seats_available (the
-- contract's waitlist is for counted inventory only)
SELECT ok, code, http_status FROM booking.join_waitlist(3, 'ann');
-- a newcomer while anyone waits: sold_out, with the line in the message
SELECT * FROM booking.reserve_seat(1, 'newcomer');
SELECT * FROM booking.reserve_seats('{1,2}', 'newcomer');

--
-- confirm / extend / reduce of a waiting entry: invalid_state; no event
--
SELECT ok, code, booking_id, http_status FROM booking.confirm(2);
SELECT ok, code, booking_id, http_status FROM booking.extend_hold(2, '1 hour');
SELECT ok, code, booking_id, http_status FROM booking.extend_hold_until(2, now() + interval '1 hour');
SELECT ok, code, booking_id, http_status FROM booking.reduce(2, 1);
SELECT * FROM ev WHERE id > :last_event;

--
-- cancel of a waiting entry: ok, cancelled, leaves the line
--
SELECT ok, code, booking_id, http_status FROM booking.cancel(3);              -- bob
SELECT * FROM line WHERE res = 1;
SELECT * FROM totals WHERE id = 1;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- cancel again: invalid_state
SELECT ok, code, booking_id, http_status FROM booking.cancel(3);

--
-- cancel of the seat holder: the head (ann) is offered the seat as a hold,
-- in the same transaction: event waitlist_offered
--
SELECT ok, code, booking_id FROM booking.cancel(1);
SELECT * FROM line WHERE res = 1;
SELECT * FROM totals WHERE id = 1;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- the offer lasts booking.waitlist_offer (15 minutes by default)
SELECT expires_at > now() + interval '14 minutes' AND expires_at <= now() + interval '15 minutes' AS fifteen_minutes
FROM booking.bookings WHERE id = 2;
-- cy still waits: newcomers are still refused
SELECT ok, code FROM booking.reserve_seat(1, 'newcomer');
-- confirm of the offered hold: ok, confirmed
SELECT ok, code, booking_id FROM booking.confirm(2);
SELECT * FROM line WHERE res = 1;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset

--
-- strict FIFO: a head that needs more seats than are free keeps its place,
-- and everyone behind it waits
--
SELECT ok, code, booking_id FROM booking.reserve_seat(2, 'a1', 1);            -- 5
SELECT ok, code, booking_id FROM booking.reserve_seat(2, 'a2', 2);            -- 6
SELECT ok, code, booking_id FROM booking.join_waitlist(2, 'big', 2);          -- 7: the head
SELECT ok, code, booking_id FROM booking.join_waitlist(2, 'small', 1);        -- 8
-- one seat frees up: big needs 2, so nobody is offered; small waits too
SELECT ok, code, booking_id FROM booking.cancel(5);
SELECT * FROM line WHERE res = 2;
SELECT * FROM totals WHERE id = 2;
-- the free seat is not sold to a newcomer either
SELECT ok, code FROM booking.reserve_seat(2, 'newcomer');
-- a newcomer may still join behind them, though a seat is free
SELECT ok, code, booking_id FROM booking.join_waitlist(2, 'tiny', 1);         -- 9
-- reduce frees one more: big is offered 2; small and tiny keep waiting
SELECT ok, code, booking_id FROM booking.reduce(6, 1);
SELECT * FROM line WHERE res = 2;
SELECT * FROM totals WHERE id = 2;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- the offered head cancels its hold: its 2 seats go to small and tiny, in
-- join order
SELECT ok, code, booking_id FROM booking.cancel(7);
SELECT * FROM line WHERE res = 2;
SELECT * FROM totals WHERE id = 2;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset

--
-- cancel of a waiting head lets the next one in when it fits
--
SELECT ok, code, booking_id FROM booking.reserve_seat(5, 'g1', 2);            -- 10
SELECT ok, code, booking_id FROM booking.join_waitlist(5, 'g2', 2);           -- 11: head
SELECT ok, code, booking_id FROM booking.join_waitlist(5, 'g3', 1);           -- 12
SELECT ok, code FROM booking.reduce(10, 1);
-- g2 needs 2, 1 free: no offer
SELECT * FROM line WHERE res = 5;
-- g2 leaves: g3 (1 seat) is offered the free seat
SELECT ok, code FROM booking.cancel(11);
SELECT * FROM line WHERE res = 5;
SELECT * FROM totals WHERE id = 5;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset

--
-- set_capacity up offers the new seats to the line, in order, while they fit
--
SELECT ok, code, booking_id FROM booking.join_waitlist(5, 'g4', 1);           -- 13
SELECT ok, code, booking_id FROM booking.join_waitlist(5, 'g5', 2);           -- 14
SELECT ok, code, booking_id FROM booking.join_waitlist(5, 'g6', 1);           -- 15
SELECT * FROM totals WHERE id = 5;
-- 2 -> 5: 3 new seats; g4 (1) and g5 (2) are offered, g6 waits
SELECT ok, code FROM booking.set_capacity(5, 5, (SELECT version FROM booking.resources WHERE id = 5));
SELECT * FROM line WHERE res = 5;
SELECT * FROM totals WHERE id = 5;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset

--
-- a lapsed hold: hold_expire expires it and offers its seats to the line
--
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
SELECT ok, code, booking_id FROM booking.reserve_seat(6, 'h1', 2, '1 hour');  -- 16
SELECT ok, code, booking_id FROM booking.join_waitlist(6, 'w1', 1);           -- 17
SELECT ok, code, booking_id FROM booking.join_waitlist(6, 'w2', 1);           -- 18
SELECT pg_temp.lapse(6);
-- lapsed but not yet swept: seats_left counts the lapsed seats free, but
-- the line still waits, and a newcomer is still refused
SELECT * FROM totals WHERE id = 6;
SELECT ok, code FROM booking.reserve_seat(6, 'newcomer');
SELECT * FROM line WHERE res = 6;
SELECT booking.hold_expire() > 0 AS expired_some;
SELECT * FROM line WHERE res = 6;
SELECT * FROM totals WHERE id = 6;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- an offered hold that lapses in turn is offered to the next in line
SELECT ok, code, booking_id FROM booking.join_waitlist(6, 'w3', 1);           -- 19
SELECT pg_temp.lapse(6);
SELECT booking.hold_expire();
SELECT * FROM line WHERE res = 6;
SELECT * FROM totals WHERE id = 6;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset

--
-- a striped resource with a line: the stripes' fast path steps aside
--
SELECT ok, code FROM booking.set_stripes(4, 2);
SELECT ok, code, booking_id FROM booking.reserve_seat(4, 's1', 2);            -- 20
SELECT ok, code, booking_id FROM booking.reserve_seat(4, 's2', 2);            -- 21
SELECT ok, code, booking_id FROM booking.join_waitlist(4, 's3', 1);           -- 22
SELECT ok, code, booking_id FROM booking.join_waitlist(4, 's4', 3);           -- 23
SELECT stripe, free, limited FROM booking.resource_stripes WHERE resource_id = 4 ORDER BY stripe;
SELECT ok, code FROM booking.reserve_seat(4, 'newcomer');
-- s1 reduces by 1: s3 is offered; s4 (3) waits
SELECT ok, code FROM booking.reduce(20, 1);
SELECT * FROM line WHERE res = 4;
SELECT * FROM totals WHERE id = 4;
-- s2 cancels: 2 free, s4 needs 3: waits
SELECT ok, code FROM booking.cancel(21);
SELECT * FROM line WHERE res = 4;
SELECT * FROM totals WHERE id = 4;
-- s4 leaves: nobody waits; the stripes serve sales again
SELECT ok, code FROM booking.cancel(23);
SELECT stripe, limited FROM booking.resource_stripes WHERE resource_id = 4 ORDER BY stripe;
SELECT ok, code FROM booking.reserve_seat(4, 'newcomer', 2);
SELECT * FROM totals WHERE id = 4;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset

--
-- a guest limit: a place in line for more than the guest may hold could
-- never be served, and is refused as reserve_seat refuses it
--
SELECT booking.create_resource('limited', 3);          -- 7
SELECT code FROM booking.set_guest_limit(7, 2);
SELECT ok, code FROM booking.reserve_seat(7, 'lim', 2);
SELECT ok, code FROM booking.reserve_seat(7, 'other', 1);
SELECT ok, code, http_status, booking_id FROM booking.join_waitlist(7, 'lim', 1);
SELECT ok, code FROM booking.join_waitlist(7, 'new', 3);
SELECT ok, code FROM booking.join_waitlist(7, 'new', 2);
SELECT * FROM totals WHERE id = 7;
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset

--
-- a rolled-back join writes nothing
--
BEGIN;
SELECT ok, code FROM booking.join_waitlist(1, 'rolled', 1);
ROLLBACK;
BEGIN;
SAVEPOINT s;
SELECT ok, code FROM booking.join_waitlist(1, 'rolled', 1);
ROLLBACK TO SAVEPOINT s;
COMMIT;
SELECT * FROM totals WHERE id = 1;
SELECT count(*) AS events_after FROM booking.events WHERE id > :last_event;
SELECT count(*) AS rolled FROM booking.bookings WHERE guest = 'rolled';

--
-- health(): waitlist_length, one row per resource with a line
--
SELECT metric, subject, value FROM booking.health() WHERE metric = 'waitlist_length';
SELECT r.id, r.waiting = (SELECT count(*) FROM booking.bookings b WHERE b.resource_id = r.id AND b.status = 'waiting') AS waiting_counts
FROM booking.resources r ORDER BY r.id;

-- the totals of every seat resource
SELECT * FROM totals WHERE capacity > 0;

--
-- set_capacity below what waiting entries ask for (0.7.0): such an entry
-- could never be served and, as the head, would stall the whole line; it
-- leaves the line (cancelled, an event with code sold_out), and the seats
-- go to the next entries that fit
--
SELECT booking.create_resource('shrink', 6) AS sh \gset
SELECT code FROM booking.reserve_seat(:sh, 'owner', 3);
SELECT booking_id AS sh_hold FROM booking.reserve_seat(:sh, 'holder', 3) \gset
SELECT code, booking_id - :sh_hold AS nth FROM booking.join_waitlist(:sh, 'party', 5);   -- the head: 5 of 6
SELECT code, booking_id - :sh_hold AS nth FROM booking.join_waitlist(:sh, 'pair', 2);
SELECT code, booking_id - :sh_hold AS nth FROM booking.join_waitlist(:sh, 'single', 1);
-- 3 seats free up: the party needs 5, so nobody is offered
SELECT code FROM booking.cancel(:sh_hold);
SELECT capacity, seats_left, waiting, entries FROM totals WHERE id = :sh;
SELECT max(id) AS last_event FROM booking.events \gset
-- 6 -> 4: the party of 5 can never be served and leaves the line; pair and
-- single stay (1 seat is free: pair needs 2, single waits behind it)
SELECT ok, code, message FROM booking.set_capacity(:sh, 4, 1);
SELECT guest, quantity, status, live_hold FROM line WHERE res = :sh;
SELECT kind, guest, payload FROM ev WHERE id > :last_event;
SELECT capacity, seats_left, waiting, entries FROM totals WHERE id = :sh;
-- the owner cancels its 3: pair gets 2, single 1, and 1 is left
SELECT max(id) AS last_event FROM booking.events \gset
SELECT code FROM booking.cancel((SELECT id FROM booking.bookings WHERE guest = 'owner' AND resource_id = :sh));
SELECT guest, quantity, status, live_hold FROM line WHERE res = :sh;
SELECT kind, guest FROM ev WHERE id > :last_event;
SELECT capacity, seats_left, waiting, entries, blocking, taken FROM totals WHERE id = :sh;
-- an entry exactly at the new capacity stays; one above it leaves
SELECT booking.create_resource('exact', 4) AS ex \gset
SELECT code FROM booking.reserve_seat(:ex, 'full', 2);
SELECT booking_id AS ex_other FROM booking.reserve_seat(:ex, 'other', 2) \gset
SELECT code FROM booking.join_waitlist(:ex, 'trio', 3);
SELECT code FROM booking.cancel(:ex_other);
SELECT ok, code, message FROM booking.set_capacity(:ex, 3, 1);
SELECT guest, quantity, status FROM line WHERE res = :ex;
SELECT ok, code, message FROM booking.set_capacity(:ex, 2, 2);
SELECT guest, quantity, status FROM line WHERE res = :ex;
SELECT capacity, seats_left, waiting, entries, blocking, taken FROM totals WHERE id = :ex;
-- a newcomer now buys the free seat: nobody waits
SELECT code FROM booking.reserve_seat(:sh, 'late', 1);
SELECT capacity, seats_left, waiting, entries, blocking, taken FROM totals WHERE id = :sh;
SELECT r.id, r.waiting = (SELECT count(*) FROM booking.bookings b WHERE b.resource_id = r.id AND b.status = 'waiting') AS waiting_counts
FROM booking.resources r WHERE r.id IN (:sh, :ex) ORDER BY r.id;
