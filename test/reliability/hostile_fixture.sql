-- hostile_fixture.sql: the data hostile.sql aims at, in a fresh database with
-- the extension.  The ids are kept in public.hostile_fixture (outside schema
-- booking, so that the checksums of the extension's tables ignore it).
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET TimeZone = 'UTC';

CREATE TABLE public.hostile_fixture (name text PRIMARY KEY, id bigint NOT NULL);

INSERT INTO public.hostile_fixture
VALUES ('seat', booking.create_resource('concert', 10)),
       ('big', booking.create_resource('stadium', 2147483647)),
       ('room', booking.create_resource('room')),
       ('room2', booking.create_resource('room at the end of time')),
       ('g1', booking.create_resource('family room 1')),
       ('g2', booking.create_resource('family room 2')),
       ('pool', booking.create_resource('double rooms', 0)),
       ('lonely', booking.create_resource('a resource that is no pool', 0));
INSERT INTO public.hostile_fixture
SELECT 'unit' || n, booking.create_resource('double ' || n, 1, (SELECT id FROM public.hostile_fixture WHERE name = 'pool'))
  FROM generate_series(1, 2) n;

-- seats: 2 confirmed, 1 held for a day, 1 cancelled, 1 expired; 3 of 10 taken
INSERT INTO public.hostile_fixture
SELECT 'b_conf', booking_id FROM booking.reserve_seat((SELECT id FROM public.hostile_fixture WHERE name = 'seat'), 'ann', 2);
INSERT INTO public.hostile_fixture
SELECT 'b_hold', booking_id FROM booking.reserve_seat((SELECT id FROM public.hostile_fixture WHERE name = 'seat'), 'bob', 1, hold => '1 day');
INSERT INTO public.hostile_fixture
SELECT 'b_can', booking_id FROM booking.reserve_seat((SELECT id FROM public.hostile_fixture WHERE name = 'seat'), 'cid', 1);
SELECT code FROM booking.cancel((SELECT id FROM public.hostile_fixture WHERE name = 'b_can')) \g /dev/null
INSERT INTO public.hostile_fixture
SELECT 'b_exp', booking_id FROM booking.reserve_seat((SELECT id FROM public.hostile_fixture WHERE name = 'seat'), 'dan', 1, hold => '1 millisecond');
SELECT pg_sleep(0.01) \g /dev/null
SELECT booking.hold_expire() \g /dev/null
-- one seat of the stadium is taken
SELECT code FROM booking.reserve_seat((SELECT id FROM public.hostile_fixture WHERE name = 'big'), 'eve', 1) \g /dev/null

-- stays: June 1-4, 2030 on room; the last days before the end of time on room2
INSERT INTO public.hostile_fixture
SELECT 'b_stay', booking_id FROM booking.reserve_stay((SELECT id FROM public.hostile_fixture WHERE name = 'room'), 'gus', '[2030-06-01, 2030-06-04)');
SELECT code FROM booking.reserve_stay((SELECT id FROM public.hostile_fixture WHERE name = 'room2'), 'hal',
    '[294276-12-25 00:00+00, 294276-12-31 00:00+00)') \g /dev/null

SELECT CASE WHEN count(*) = 15 AND count(*) FILTER (WHERE id IS NULL) = 0
            AND (SELECT count(*) FROM booking.bookings WHERE status = 'expired') = 1
            AND (SELECT count(*) FROM booking.bookings WHERE during IS NOT NULL) = 2
       THEN 'fixture ready' ELSE 'fixture broken' END
  FROM public.hostile_fixture;
