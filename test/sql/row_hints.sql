--
-- row hints (0.9.0): a backend starts its look for a resource row where it
-- last found the row's latest version and follows the update chain from
-- there (2_locks/rowlock.c).  After the table is rewritten that place may
-- hold another resource's row: the look must see it is not its own and use
-- the primary key, so that every sale lands on its resource.
--
SET statement_timeout = '20s';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys,
    booking.events, booking.event_heads, booking.consumers, booking.deliveries RESTART IDENTITY;
SELECT booking.create_resource('a', 10) AS a \gset
SELECT booking.create_resource('b', 10) AS b \gset
-- b's new version lies before a's, so that a rewrite puts b where a was
SELECT code FROM booking.reserve_seat(:b, 'ann');
SELECT code FROM booking.reserve_seat(:a, 'ann');
SELECT id, ctid FROM booking.resources ORDER BY ctid;
VACUUM FULL booking.resources;
SELECT id, ctid FROM booking.resources ORDER BY ctid;
SELECT code FROM booking.reserve_seat(:a, 'bob');
SELECT code FROM booking.reserve_seat(:b, 'bob');
SELECT code FROM booking.reserve_seat(:a, 'cat', 2);
SELECT name, capacity, taken FROM booking.resources ORDER BY id;
SELECT r.name, count(*) AS bookings, sum(b.quantity) AS seats
FROM booking.bookings b JOIN booking.resources r ON r.id = b.resource_id GROUP BY r.name ORDER BY 1;
--
-- The same for stripes: a backend remembers where it found each stripe of a
-- striped resource.  c's stripes are dropped and vacuumed away, so that d's
-- new stripes, numbered 0 to 3 as c's were, take exactly their places: only
-- the resource says whose they are.
--
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys,
    booking.events, booking.event_heads, booking.consumers, booking.deliveries RESTART IDENTITY;
SELECT booking.create_resource('c', 8) AS c \gset
SELECT booking.create_resource('d', 8) AS d \gset
SELECT code FROM booking.set_stripes(:c, 4);
-- where the sale below finds them
SELECT array_agg(ctid ORDER BY stripe) AS c_places FROM booking.resource_stripes WHERE resource_id = :c \gset
SELECT code FROM booking.reserve_seat(:c, 'ann');
SELECT code FROM booking.set_stripes(:c, 1);
VACUUM booking.resource_stripes;
SELECT code FROM booking.set_stripes(:d, 4);
SELECT code FROM booking.set_stripes(:c, 4);
-- d's stripes now lie where c's were when the backend last looked
SELECT stripe, ctid = (:'c_places'::tid[])[stripe + 1] AS at_c_place
FROM booking.resource_stripes WHERE resource_id = :d ORDER BY stripe;
SELECT code FROM booking.reserve_seat(:c, 'bob');
SELECT code FROM booking.reserve_seat(:c, 'cat');
SELECT code FROM booking.reserve_seat(:d, 'bob');
-- capacity less the stripes' free seats is what the bookings hold
SELECT r.name, r.capacity - (SELECT sum(free) FROM booking.resource_stripes s WHERE s.resource_id = r.id) AS taken,
    (SELECT coalesce(sum(quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.id) AS seats
FROM booking.resources r ORDER BY r.id;
-- a stripe set made again is looked for again: the old places lead nowhere
SELECT code FROM booking.set_stripes(:c, 2);
SELECT code FROM booking.reserve_seat(:c, 'dan');
SELECT code FROM booking.set_stripes(:c, 1);
SELECT code FROM booking.reserve_seat(:c, 'eve');
SELECT code FROM booking.set_stripes(:c, 4);
SELECT code FROM booking.reserve_seat(:c, 'fay');
SELECT r.name, r.stripes, (SELECT count(*) FROM booking.resource_stripes s WHERE s.resource_id = r.id) AS stripe_rows,
    r.capacity - coalesce((SELECT sum(free) FROM booking.resource_stripes s WHERE s.resource_id = r.id), r.capacity - r.taken) AS taken,
    (SELECT coalesce(sum(quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.id) AS seats
FROM booking.resources r ORDER BY r.id;
