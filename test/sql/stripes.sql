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

--
-- a give-back lands on the stripe the call locked, whatever this backend's
-- pid.  A call picks the stripe it gives seats back to from an offset of its
-- pid, so a fault that writes another stripe (or none) shows only for some
-- pids.  Here a peer session holds every stripe but one, so the call can
-- lock that one only, and exactly that stripe must get the seats back, the
-- others unchanged: cancel, reduce and hold_expire, each on its own stripe.
-- A write to a stripe the peer holds would wait: statement_timeout ends it.
--
SELECT booking.create_resource('give back', 30) AS gb \gset
SELECT ok, code FROM booking.set_stripes(:gb, 4);
-- holds every stripe of resource :gb but one, in the peer's open transaction
CREATE FUNCTION pg_temp.peer_holds_all_but(res bigint, keep int) RETURNS text LANGUAGE sql AS $$
    SELECT public.peer(pg_catalog.format(
        'SELECT pg_catalog.count(*) FROM (SELECT 1 FROM booking.resource_stripes WHERE resource_id = %s '
        'AND stripe <> %s ORDER BY stripe FOR NO KEY UPDATE) AS held', res, keep))
$$;
CREATE TEMP VIEW gb_stripes AS
SELECT pg_catalog.string_agg(s.stripe || ':' || s.free, ' ' ORDER BY s.stripe) AS free_by_stripe,
       sum(s.free) AS free
FROM booking.resource_stripes s WHERE s.resource_id = pg_catalog.current_setting('gb.id')::bigint;
SELECT pg_catalog.set_config('gb.id', :'gb', false) IS NOT NULL AS set;
-- quantities no single stripe has: each sale takes the slow path, which
-- spreads what is left evenly, so this state does not depend on the pid
SELECT ok, code FROM booking.reserve_seat(:gb, 'm9', 9);
SELECT ok, code FROM booking.reserve_seat(:gb, 'm7', 7);
SELECT ok, code FROM booking.reserve_seat(:gb, 'm5', 5);
SELECT ok, code FROM booking.reserve_seat(:gb, 'm4', 4, hold => '1 hour');
SELECT ok, code FROM booking.reserve_seat(:gb, 'm3', 3);
SELECT * FROM gb_stripes;
SELECT id AS m9 FROM booking.bookings WHERE guest = 'm9' \gset
SELECT id AS m7 FROM booking.bookings WHERE guest = 'm7' \gset
SELECT id AS m5 FROM booking.bookings WHERE guest = 'm5' \gset
SELECT id AS m4 FROM booking.bookings WHERE guest = 'm4' \gset
SELECT id AS m3 FROM booking.bookings WHERE guest = 'm3' \gset
SET statement_timeout = '5s';
SELECT peer_open();
-- cancel of m9 with only stripe 2 free to lock: 9 seats back to stripe 2
SELECT peer_exec('BEGIN');
SELECT pg_temp.peer_holds_all_but(:gb, 2) AS held;
SELECT ok, code FROM booking.cancel(:m9);
SELECT peer_exec('ROLLBACK');
SELECT * FROM gb_stripes;
-- cancel of m7, only stripe 3: 7 seats back to stripe 3
SELECT peer_exec('BEGIN');
SELECT pg_temp.peer_holds_all_but(:gb, 3) AS held;
SELECT ok, code FROM booking.cancel(:m7);
SELECT peer_exec('ROLLBACK');
SELECT * FROM gb_stripes;
-- cancel of m5, only stripe 1: 5 seats back to stripe 1
SELECT peer_exec('BEGIN');
SELECT pg_temp.peer_holds_all_but(:gb, 1) AS held;
SELECT ok, code FROM booking.cancel(:m5);
SELECT peer_exec('ROLLBACK');
SELECT * FROM gb_stripes;
-- reduce of m3 by 1, only stripe 0: 1 seat back to stripe 0
SELECT peer_exec('BEGIN');
SELECT pg_temp.peer_holds_all_but(:gb, 0) AS held;
SELECT ok, code FROM booking.reduce(:m3, 1);
SELECT peer_exec('ROLLBACK');
SELECT * FROM gb_stripes;
-- m4's hold lapses; hold_expire, with only stripe 3: 4 seats back to stripe 3
UPDATE booking.bookings
   SET created_at = created_at - interval '2 hours', expires_at = created_at - interval '1 hour',
       validity = tstzrange(created_at - interval '2 hours', created_at - interval '1 hour', '[)')
 WHERE id = :m4;
SELECT peer_exec('BEGIN');
SELECT pg_temp.peer_holds_all_but(:gb, 3) AS held;
SELECT booking.hold_expire() >= 1 AS expired;
SELECT peer_exec('ROLLBACK');
SELECT * FROM gb_stripes;
SELECT dblink_disconnect('peer');
RESET statement_timeout;
SELECT guest, quantity, status FROM booking.bookings WHERE resource_id = :gb ORDER BY id;
-- capacity - free = the seats of pending and confirmed bookings
SELECT 30 - free AS taken,
       (SELECT sum(quantity) FROM booking.bookings b
         WHERE b.resource_id = :gb AND b.status IN ('pending', 'confirmed')) AS blocking
FROM gb_stripes;
