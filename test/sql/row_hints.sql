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
