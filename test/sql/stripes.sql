--
-- stripes: hot inventory (booking.set_stripes) keeps every promise of
-- reserve_seat: exact counts, sold_out only when the whole resource is short
-- (quantities span stripes), holds, cancel, expiry and seats_left unchanged.
--
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;
SET TimeZone = 'UTC';

SELECT booking.create_resource('hot show', 10);
SELECT ok, code, http_status, message FROM booking.set_stripes(1, 4);
SELECT stripe, free FROM booking.resource_stripes ORDER BY stripe;
SELECT stripes, taken FROM booking.resources WHERE id = 1;

-- one stripe serves a small quantity
SELECT ok, code, booking_id, http_status FROM booking.reserve_seat(1, 'ann', 2);
SELECT booking.seats_left(1);

-- a quantity no single stripe holds spans stripes (the slow path rebalances);
-- which stripe served ann depends on her backend's pid, so only totals here
SELECT sum(free), max(free) FROM booking.resource_stripes;
SELECT ok, code, booking_id, http_status FROM booking.reserve_seat(1, 'bob', 5);
SELECT stripe, free FROM booking.resource_stripes ORDER BY stripe;
SELECT booking.seats_left(1);

-- more than is left: sold_out, nothing written
SELECT ok, code, http_status, message FROM booking.reserve_seat(1, 'cat', 4);
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'cat', 3);
SELECT ok, code, http_status FROM booking.reserve_seat(1, 'dan', 1);
SELECT booking.seats_left(1), (SELECT sum(free) FROM booking.resource_stripes);

-- cancel gives the seats back to a stripe at once
SELECT ok, code, http_status FROM booking.cancel(2);
SELECT booking.seats_left(1), (SELECT sum(free) FROM booking.resource_stripes);
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'dan', 5);

-- a lapsed hold never blocks: the slow path reclaims it
SELECT booking.seats_left(1);
SELECT ok, code, booking_id FROM booking.cancel(4);
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'eve', 5, hold => '1 ms');
SELECT pg_sleep(0.01);
SELECT booking.seats_left(1);
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'fay', 5);
SELECT id, guest, quantity, status FROM booking.bookings ORDER BY id;

-- the invariant: capacity - free = seats of pending and confirmed bookings
SELECT r.capacity - (SELECT sum(free) FROM booking.resource_stripes s WHERE s.resource_id = r.id) AS taken,
       (SELECT sum(quantity) FROM booking.bookings b
         WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed')) AS blocking
FROM booking.resources r WHERE r.id = 1;

-- hold_expire and confirm on a striped resource
SELECT ok, code, booking_id FROM booking.cancel(6);
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'gil', 2, hold => '1 ms');
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'hal', 2, hold => '1 hour');
SELECT pg_sleep(0.01);
SELECT booking.hold_expire();
SELECT ok, code, http_status FROM booking.confirm(7);
SELECT ok, code, http_status FROM booking.confirm(8);
SELECT booking.seats_left(1), (SELECT sum(free) FROM booking.resource_stripes);

-- set_capacity: refused below what is taken, else the stripes get the difference
SELECT ok, code, http_status FROM booking.set_capacity(1, 6, 1);
SELECT ok, code, http_status FROM booking.set_capacity(1, 20, 1);
SELECT booking.seats_left(1), (SELECT sum(free) FROM booking.resource_stripes);

-- back to one counter row: the counter takes over exactly
SELECT ok, code, message FROM booking.set_stripes(1, 0);
SELECT stripes, capacity, taken FROM booking.resources WHERE id = 1;
SELECT count(*) FROM booking.resource_stripes;
SELECT booking.seats_left(1);

-- this backend saw the session striped; that hint is stale now and must not
-- matter: the seat comes from the counter row
SELECT ok, code FROM booking.reserve_seat(1, 'ivy');
SELECT stripes, capacity, taken FROM booking.resources WHERE id = 1;
-- striped again, over fewer stripes than this backend last saw
SELECT ok, code FROM booking.set_stripes(1, 3);
SELECT ok, code FROM booking.reserve_seat(1, 'jo', 2);
SELECT ok, code FROM booking.reserve_seat(1, 'kai', 2);
SELECT booking.seats_left(1), (SELECT sum(free) FROM booking.resource_stripes),
       (SELECT count(*) FROM booking.resource_stripes);
SELECT ok, code FROM booking.set_stripes(1, 0);

-- bad input names the argument; nothing is written
SELECT * FROM booking.set_stripes(1, NULL);
SELECT * FROM booking.set_stripes(NULL, 4);
SELECT * FROM booking.set_stripes(1, -1);
SELECT * FROM booking.set_stripes(1, 65);
SELECT ok, code, http_status FROM booking.set_stripes(99, 4);
SELECT stripes, taken FROM booking.resources WHERE id = 1;
