--
-- metadata and get_booking (0.8.0): the caller's own data on every booking,
-- in its key's fingerprint and in every event of it; a booking read without
-- SELECT on the tables
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET IntervalStyle = 'postgres';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys,
    booking.events, booking.event_heads, booking.consumers, booking.deliveries RESTART IDENTITY;
-- events are written while a consumer is registered
SELECT booking.add_consumer('metadata');

SELECT booking.create_resource('show', 10) AS show \gset
SELECT booking.create_resource('room') AS room \gset
SELECT booking.create_resource('pool') AS pool \gset
SELECT booking.create_resource('unit 1', 1, :pool) AS unit1 \gset
SELECT booking.create_resource('room b') AS roomb \gset
SELECT booking.create_resource('tiny', 1) AS tiny \gset

-- what a refused call must leave untouched
CREATE TEMP VIEW written AS
SELECT (SELECT count(*) FROM booking.bookings) AS bookings,
       (SELECT count(*) FROM booking.events) AS events,
       (SELECT count(*) FROM booking.idempotency_keys) AS keys;

--
-- bad metadata: 22023 naming metadata and saying what arrived; nothing written
--
\set VERBOSITY default
SELECT * FROM booking.reserve_seat(:show, 'ann', metadata => '[1, 2]');
SELECT * FROM booking.reserve_seat(:show, 'ann', metadata => '"order 7"');
SELECT * FROM booking.reserve_seat(:show, 'ann', metadata => '42');
SELECT * FROM booking.reserve_seat(:show, 'ann',
    metadata => jsonb_build_object('note', repeat('x', 8200)));
SELECT * FROM booking.reserve_stay(:room, 'ann', '[2030-01-01, 2030-01-02)', metadata => '[]');
SELECT * FROM booking.reserve_stays(ARRAY[:room], 'ann', '[2030-01-01, 2030-01-02)', metadata => 'null');
SELECT * FROM booking.reserve_stay_any(:pool, 'ann', '[2030-01-01, 2030-01-02)', metadata => 'true');
SELECT * FROM booking.reserve_seats(ARRAY[:show], 'ann', metadata => '[{}]');
SELECT * FROM booking.join_waitlist(:show, 'ann', metadata => '1.5');
\set VERBOSITY terse
SELECT * FROM written;

-- at most 8 kB as text: exactly 8192 bytes is fine, one more is not
SELECT length(jsonb_build_object('n', repeat('y', 8183))::text) AS bytes;
SELECT code FROM booking.reserve_seat(:show, 'max', metadata => jsonb_build_object('n', repeat('y', 8183)));
SELECT code FROM booking.reserve_seat(:show, 'max', metadata => jsonb_build_object('n', repeat('y', 8184)));

--
-- stored with the booking, read back by get_booking, NULL when not given
--
SELECT code, http_status FROM booking.reserve_seat(:show, 'ann', 2, '1 hour',
    metadata => '{"order_id": "A-1001", "cart": {"lines": [1, 2]}, "note": null}');
SELECT code FROM booking.reserve_seat(:show, 'bob');
SELECT id AS ann FROM booking.bookings WHERE guest = 'ann' \gset
SELECT id AS bob FROM booking.bookings WHERE guest = 'bob' \gset
SELECT id = :ann AS id, resource_id = :show AS resource, guest, quantity, during, status,
       expires_at > now() AS held, created_at <= clock_timestamp() AS created, metadata, group_id
FROM booking.get_booking(:ann);
SELECT guest, status, metadata IS NULL AS no_metadata FROM booking.get_booking(:bob);
-- an unknown id: no row (and the columns a screen reads, in their order)
SELECT * FROM booking.get_booking(999999);
SELECT * FROM booking.get_booking(NULL);

-- every call that creates a booking stores it
SELECT code FROM booking.reserve_stay(:room, 'cat', '[2030-01-01, 2030-01-03)', metadata => '{"k": "stay"}');
SELECT code FROM booking.reserve_stays(ARRAY[:roomb], 'dan', '[2030-02-01, 2030-02-03)', metadata => '{"k": "stays"}');
SELECT code FROM booking.reserve_stay_any(:pool, 'eve', '[2030-03-01, 2030-03-03)', metadata => '{"k": "any"}');
SELECT code FROM booking.reserve_seats(ARRAY[:show], 'fay', ARRAY[1], metadata => '{"k": "seats"}');
SELECT code FROM booking.reserve_seat(:tiny, 'gus', metadata => '{"k": "tiny"}');
SELECT code FROM booking.join_waitlist(:tiny, 'hal', metadata => '{"k": "line"}');
SELECT guest, status, metadata FROM booking.bookings WHERE metadata ? 'k' ORDER BY id;

--
-- idempotency: metadata is part of the request
--
SELECT code, replayed FROM booking.reserve_seat(:show, 'ivy', idempotency_key => 'm-1',
    metadata => '{"order_id": "B-1"}');
-- the same metadata written otherwise (key order, spaces) is the same request
SELECT code, replayed FROM booking.reserve_seat(:show, 'ivy', idempotency_key => 'm-1',
    metadata => '{ "order_id" :"B-1" }');
SELECT code, replayed FROM booking.reserve_seat(:show, 'ivy', idempotency_key => 'm-1',
    metadata => '{"order_id": "B-2"}');
SELECT code, replayed FROM booking.reserve_seat(:show, 'ivy', idempotency_key => 'm-1');
-- a key used without metadata matches only without it
SELECT code, replayed FROM booking.reserve_stay(:room, 'jon', '[2030-04-01, 2030-04-02)', idempotency_key => 'm-2');
SELECT code, replayed FROM booking.reserve_stay(:room, 'jon', '[2030-04-01, 2030-04-02)', idempotency_key => 'm-2');
SELECT code, replayed FROM booking.reserve_stay(:room, 'jon', '[2030-04-01, 2030-04-02)', idempotency_key => 'm-2',
    metadata => '{}');
SELECT count(*) AS ivy_rows FROM booking.bookings WHERE guest = 'ivy';

--
-- every event of a booking carries its metadata, as given (nulls inside kept)
--
SELECT code FROM booking.confirm(:ann);
SELECT code FROM booking.reduce(:ann, 1);
SELECT id AS cat FROM booking.bookings WHERE guest = 'cat' \gset
SELECT code FROM booking.move_stay(:cat, '[2030-01-05, 2030-01-06)');
SELECT code FROM booking.cancel(:cat);
SELECT e.booking_id = :ann AS ann, e.kind, e.payload -> 'metadata' AS metadata
FROM booking.events e WHERE e.booking_id IN (:ann, :cat) ORDER BY e.id;
-- reduce and move_stay keep it on the booking
SELECT guest, quantity, during, status, metadata FROM booking.bookings WHERE id IN (:ann, :cat) ORDER BY id;
-- an event of a booking without metadata has no metadata key
SELECT count(*) AS without FROM booking.events WHERE booking_id = :bob AND NOT payload ? 'metadata';
-- the waitlist's offer keeps the entry's metadata
SELECT id AS gus FROM booking.bookings WHERE guest = 'gus' \gset
SELECT code FROM booking.cancel(:gus);
SELECT guest, status, metadata FROM booking.bookings WHERE guest = 'hal';
SELECT kind, payload -> 'metadata' AS metadata FROM booking.events
WHERE booking_id = (SELECT id FROM booking.bookings WHERE guest = 'hal') ORDER BY id;

--
-- get_booking for a role without SELECT on the tables
--
CREATE ROLE booking_meta_client NOLOGIN;
SELECT booking.grant_client('booking_meta_client') ~ '20 calls' AS granted;
REVOKE SELECT ON booking.resources, booking.bookings FROM booking_meta_client;
SET ROLE booking_meta_client;
SELECT guest, quantity, status, metadata ->> 'order_id' AS order_id FROM booking.get_booking(:ann);
SELECT count(*) FROM booking.bookings;
RESET ROLE;
DROP OWNED BY booking_meta_client;
DROP ROLE booking_meta_client;

--
-- the payload written in C (3_frame/events.c) is the object the statement
-- builds with jsonb_build_object: every key and form, the NULL ones left out,
-- the metadata as given (nulls inside kept), times in the session's zone
--
SET TimeZone = 'America/New_York';
CREATE TEMP VIEW payload_as_sql AS
SELECT e.id, e.kind, e.payload = (pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(
           'quantity', b.quantity, 'during', b.during, 'expires_at', b.expires_at,
           'group_id', b.group_id, 'status_before', e.payload ->> 'status_before',
           'status_after', b.status::text, 'code', e.payload ->> 'code'))
       || CASE WHEN b.metadata IS NULL THEN '{}'::jsonb
          ELSE pg_catalog.jsonb_build_object('metadata', b.metadata) END) AS same,
       (SELECT array_agg(k ORDER BY k) FROM jsonb_object_keys(e.payload) k) AS keys
FROM booking.events e JOIN booking.bookings b ON b.id = e.booking_id;
SELECT max(id) AS mark FROM booking.events \gset
SELECT booking.create_resource('payload hall', 10) AS hall \gset
SELECT code FROM booking.reserve_seat(:hall, 'kim', 2, '1 hour',
    metadata => '{"n": null, "a": [1, {"b": "\u00e9"}], "t": true, "x": 1.50}');
SELECT kind, same, keys FROM payload_as_sql WHERE id > :mark ORDER BY id;
SELECT max(id) AS mark FROM booking.events \gset
SELECT id AS kim FROM booking.bookings WHERE guest = 'kim' \gset
SELECT code FROM booking.confirm(:kim);
SELECT kind, same, keys FROM payload_as_sql WHERE id > :mark ORDER BY id;
SELECT max(id) AS mark FROM booking.events \gset
SELECT code FROM booking.reserve_stays(ARRAY[:room, :roomb], 'lou', '[2031-01-01 10:30, 2031-01-02)', '1 hour');
SELECT kind, same, keys FROM payload_as_sql WHERE id > :mark ORDER BY id;
SELECT max(id) AS mark FROM booking.events \gset
SELECT code FROM booking.reserve_stay(:room, 'ned', '[2031-02-01 10:30, 2031-02-02)', '1 hour',
    metadata => '{"k": "stay"}');
SELECT code FROM booking.reserve_stay(:room, 'ned', '[2031-03-01, 2031-03-02)');
SELECT code FROM booking.reserve_seat(:hall, 'ned');
SELECT kind, same, keys FROM payload_as_sql WHERE id > :mark ORDER BY id;
SET TimeZone = 'UTC';

-- a trigger or CHECK constraint added to booking.events applies to every
-- event, as reference.md promises (the row is then written by a statement)
CREATE TABLE public.events_seen (kind text);
CREATE FUNCTION public.see_event() RETURNS trigger LANGUAGE plpgsql AS
$$BEGIN INSERT INTO public.events_seen VALUES (NEW.kind); RETURN NEW; END$$;
CREATE TRIGGER see_event AFTER INSERT ON booking.events FOR EACH ROW EXECUTE FUNCTION public.see_event();
SELECT code FROM booking.reserve_seat(:hall, 'may');
SELECT kind FROM public.events_seen;
DROP TRIGGER see_event ON booking.events;
ALTER TABLE booking.events ADD CONSTRAINT no_zed CHECK (guest IS DISTINCT FROM 'zed');
\set VERBOSITY terse
SELECT code FROM booking.reserve_seat(:hall, 'zed');
\set VERBOSITY default
SELECT count(*) AS zed FROM booking.bookings WHERE guest = 'zed';
ALTER TABLE booking.events DROP CONSTRAINT no_zed;
SELECT code FROM booking.reserve_seat(:hall, 'zed');
DROP TABLE public.events_seen;
DROP FUNCTION public.see_event();

-- a new booking's event is written from the values the call inserted,
-- unless booking.bookings has a trigger, which may have changed the row
CREATE FUNCTION public.tag_booking() RETURNS trigger LANGUAGE plpgsql AS
$$BEGIN NEW.metadata := '{"tagged": true}'; RETURN NEW; END$$;
CREATE TRIGGER tag_booking BEFORE INSERT ON booking.bookings FOR EACH ROW EXECUTE FUNCTION public.tag_booking();
SELECT max(id) AS mark FROM booking.events \gset
SELECT code FROM booking.reserve_seat(:hall, 'oli');
SELECT code FROM booking.reserve_stay(:room, 'oli', '[2031-04-01, 2031-04-02)');
SELECT kind, payload -> 'metadata' AS metadata FROM booking.events WHERE id > :mark ORDER BY id;
DROP TRIGGER tag_booking ON booking.bookings;
DROP FUNCTION public.tag_booking();
