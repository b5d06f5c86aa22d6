--
-- forget_guest (0.8.0): a guest's name replaced by a stable pseudonym in
-- bookings, waitlist entries, stored requests and events
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET IntervalStyle = 'postgres';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys,
    booking.events, booking.event_heads, booking.consumers, booking.deliveries RESTART IDENTITY;
DELETE FROM booking.secrets;
SELECT booking.add_consumer('forget');

SELECT booking.create_resource('show', 4) AS show \gset
SELECT booking.create_resource('room') AS room \gset
SELECT booking.create_resource('tiny', 1) AS tiny \gset
SELECT code FROM booking.set_guest_limit(:show, 2);

-- carol: two seats (one keyed), a stay, a place in a line; dave beside her
SELECT code FROM booking.reserve_seat(:show, 'carol', idempotency_key => 'carol-1');
SELECT code FROM booking.reserve_seat(:show, 'carol', hold => '1 hour');
SELECT code FROM booking.reserve_stay(:room, 'carol', '[2030-01-01, 2030-01-03)', idempotency_key => 'carol-2');
SELECT code FROM booking.reserve_seat(:tiny, 'dave');
SELECT code FROM booking.join_waitlist(:tiny, 'carol');
SELECT code FROM booking.reserve_seat(:show, 'dave', idempotency_key => 'dave-1');

-- bad input: 22004 / 22023 naming guest; nothing changed
\set VERBOSITY terse
SELECT booking.forget_guest(NULL);
SELECT booking.forget_guest('');
SELECT count(*) AS keys FROM booking.secrets;
-- at READ COMMITTED only: each statement must see what others committed
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT booking.forget_guest('carol');
ROLLBACK;

-- 4 bookings, the events of those bookings (4 reserved/joined), 2 requests
SELECT booking.forget_guest('carol') AS changed;
SELECT count(*) FILTER (WHERE guest = 'carol') AS carol_left,
       count(DISTINCT guest) FILTER (WHERE guest LIKE 'forgotten-%') AS pseudonyms,
       count(*) FILTER (WHERE guest LIKE 'forgotten-%') AS forgotten_rows
FROM booking.bookings;
SELECT guest AS pseudonym FROM booking.bookings WHERE guest LIKE 'forgotten-%' LIMIT 1 \gset
SELECT length(:'pseudonym') AS length, :'pseudonym' ~ '^forgotten-[0-9a-f]{64}$' AS form;
-- the waitlist entry too, still in line
SELECT status, guest = :'pseudonym' AS forgotten FROM booking.bookings WHERE resource_id = :tiny ORDER BY id;
-- no event, no stored request names her any more; dave's are as they were
SELECT count(*) FILTER (WHERE guest = 'carol') AS carol_events,
       count(*) FILTER (WHERE guest = :'pseudonym') AS forgotten_events,
       count(*) FILTER (WHERE guest = 'dave') AS dave_events
FROM booking.events;
SELECT key, strpos(request, 'carol') = 0 AS no_name, strpos(request, :'pseudonym') > 0 AS pseudonym
FROM booking.idempotency_keys ORDER BY key;
-- one guest_forgotten event per resource touched
SELECT resource_id, kind, payload ->> 'guest' = :'pseudonym' AS pseudonym, payload -> 'bookings' AS bookings
FROM booking.events WHERE kind = 'guest_forgotten' ORDER BY resource_id;

-- stable: the same name gets the same pseudonym later; forgetting twice
-- changes nothing; another name gets another one
SELECT booking.forget_guest('carol') AS again;
SELECT code FROM booking.reserve_seat(:room, 'carol', hold => '1 hour');
SELECT code FROM booking.reserve_stay(:room, 'carol', '[2030-02-01, 2030-02-02)');
SELECT booking.forget_guest('carol') AS changed;
SELECT count(DISTINCT guest) AS pseudonyms FROM booking.bookings WHERE guest LIKE 'forgotten-%';
SELECT booking.forget_guest(:'pseudonym') AS pseudonym_again;
SELECT booking.forget_guest('dave') > 0 AS dave;
SELECT count(DISTINCT guest) AS pseudonyms FROM booking.bookings WHERE guest LIKE 'forgotten-%';
SELECT booking.forget_guest('nobody') AS nobody;

-- the guest limit still counts one guest's rows as one guest's: the two
-- seats carol held count for her pseudonym
SELECT code FROM booking.reserve_seat(:show, :'pseudonym');
-- a retry of carol's keyed call under her name no longer matches
SELECT code, replayed FROM booking.reserve_seat(:show, 'carol', idempotency_key => 'carol-1');

-- the key is one row, never readable by an application role
SELECT count(*) AS keys, length(value) AS bytes FROM booking.secrets GROUP BY 2;
CREATE ROLE booking_forget_client NOLOGIN;
SELECT booking.grant_client('booking_forget_client') IS NOT NULL AS granted;
SET ROLE booking_forget_client;
SELECT count(*) FROM booking.secrets;
SELECT booking.forget_guest('x');
RESET ROLE;
DROP OWNED BY booking_forget_client;
DROP ROLE booking_forget_client;
