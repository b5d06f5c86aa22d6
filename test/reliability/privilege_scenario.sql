-- privilege_scenario.sql: the whole API, as the application role, in a fresh
-- database (ids are deterministic).  Run by privilege.sh in a clean database
-- and in one whose public schema is full of hostile objects that come first
-- in the role's search_path; the two outputs must be identical, and equal to
-- privilege_scenario.out.  This file's own SQL qualifies every function and
-- operator, so only the extension could be fooled by the hostile objects.
-- Lines of the striped session (0.2.0) start with "stripes".
\set ON_ERROR_STOP 1
SET TimeZone = 'UTC';
SELECT pg_catalog.to_regproc('booking.set_stripes') IS NOT NULL AS has_stripes \gset

-- resources 1..6: a 3-seat session, two rooms, a pool of two units
SELECT 'create_resource', booking.create_resource('concert', 3);
SELECT 'create_resource', booking.create_resource('room a');
SELECT 'create_resource', booking.create_resource('room b');
SELECT 'create_resource', booking.create_resource('doubles', 0);
SELECT 'create_resource', booking.create_resource('double 1', 1, 4);
SELECT 'create_resource', booking.create_resource('double 2', 1, 4, '{"floor": 2}');

-- five buyers, three seats
SELECT 'reserve_seat', ok, code, booking_id, http_status, replayed FROM booking.reserve_seat(1, 'a1', 1);
SELECT 'reserve_seat', ok, code, booking_id, http_status, replayed FROM booking.reserve_seat(1, 'a2', 1);
SELECT 'reserve_seat', ok, code, booking_id, http_status, replayed FROM booking.reserve_seat(1, 'a3', 1);
SELECT 'reserve_seat', ok, code, booking_id, http_status, replayed FROM booking.reserve_seat(1, 'a4', 1);
SELECT 'reserve_seat', ok, code, booking_id, http_status, replayed FROM booking.reserve_seat(1, 'a5', 2);
SELECT 'seats_left', booking.seats_left(1);
SELECT 'cancel', ok, code, booking_id, http_status, replayed FROM booking.cancel(2);
SELECT 'seats_left', booking.seats_left(1);

-- a hold with a key: replay, mismatch, extend, confirm
SELECT 'reserve_seat hold', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_seat(1, 'h', 1, hold => '1 hour', idempotency_key => 'key-1');
SELECT 'replay', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_seat(1, 'h', 1, hold => '1 hour', idempotency_key => 'key-1');
SELECT 'mismatch', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_seat(1, 'other', 1, hold => '1 hour', idempotency_key => 'key-1');
SELECT 'extend_hold', ok, code, booking_id, http_status, replayed FROM booking.extend_hold(4, '10 minutes');
SELECT 'confirm', ok, code, booking_id, http_status, replayed FROM booking.confirm(4, 'key-2');
SELECT 'confirm replay', ok, code, booking_id, http_status, replayed FROM booking.confirm(4, 'key-2');
SELECT 'status', status FROM booking.bookings WHERE id OPERATOR(pg_catalog.=) 4;
SELECT 'cancel cancelled', ok, code, booking_id, http_status, replayed FROM booking.cancel(2);
SELECT 'confirm unknown', ok, code, booking_id, http_status, replayed FROM booking.confirm(999);

-- capacity edits
SELECT 'set_capacity stale', ok, code, booking_id, http_status, replayed FROM booking.set_capacity(1, 5, 7);
SELECT 'set_capacity', ok, code, booking_id, http_status, replayed FROM booking.set_capacity(1, 5, 1);
SELECT 'set_capacity below', ok, code, booking_id, http_status, replayed FROM booking.set_capacity(1, 1, 2);
SELECT 'version', version, capacity FROM booking.resources WHERE id OPERATOR(pg_catalog.=) 1;
SELECT 'seats_left', booking.seats_left(1);

-- a lapsed hold never blocks; hold_expire moves it
SELECT 'reserve_seat short hold', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_seat(1, 's', 2, hold => '1 millisecond');
SELECT pg_catalog.pg_sleep(0.02) \g /dev/null
SELECT 'seats_left', booking.seats_left(1);
SELECT 'hold_expire', booking.hold_expire();
SELECT 'status', status FROM booking.bookings WHERE id OPERATOR(pg_catalog.=) 5;
SELECT 'reserve_seat', ok, code, booking_id, http_status, replayed FROM booking.reserve_seat(1, 'a6', 2);
SELECT 'reserve_seat', ok, code, booking_id, http_status, replayed FROM booking.reserve_seat(1, 'a7', 1);

-- stays: overlap refused, adjacency allowed, free slots
SELECT 'reserve_stay', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_stay(2, 'b1', '[2030-06-01, 2030-06-04)');
SELECT 'reserve_stay overlap', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_stay(2, 'b2', '[2030-06-03, 2030-06-05)');
SELECT 'reserve_stay adjacent', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_stay(2, 'b3', '[2030-06-04, 2030-06-06)', hold => '1 hour');
SELECT 'free_slots', s FROM booking.free_slots(2, '[2030-05-30, 2030-06-10)', '1 day') s;
SELECT 'reserve_stays overlap', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_stays(ARRAY[3, 2], 'fam', '[2030-06-05, 2030-06-07)');
SELECT 'reserve_stays', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_stays(ARRAY[3, 2], 'fam', '[2030-06-06, 2030-06-08)', idempotency_key => 'key-3');
SELECT 'group', pg_catalog.count(*) FROM booking.bookings WHERE group_id OPERATOR(pg_catalog.=) 9;
SELECT 'reserve_stay_any', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_stay_any(4, 'x1', '[2030-06-01, 2030-06-02)');
SELECT 'reserve_stay_any', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_stay_any(4, 'x2', '[2030-06-01, 2030-06-02)');
SELECT 'reserve_stay_any', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_stay_any(4, 'x3', '[2030-06-01, 2030-06-02)');
SELECT 'units', pg_catalog.string_agg(resource_id::text, ',' ORDER BY resource_id)
  FROM booking.bookings WHERE guest OPERATOR(pg_catalog.~~) 'x%';
SELECT 'cancel stay', ok, code, booking_id, http_status, replayed FROM booking.cancel(7);
SELECT 'reserve_stay freed', ok, code, booking_id, http_status, replayed
  FROM booking.reserve_stay(2, 'b2', '[2030-06-01, 2030-06-04)');
SELECT 'free_slots', s FROM booking.free_slots(2, '[2030-05-30, 2030-06-10)', '1 day') s;

-- the counters, read as the role
SELECT 'taken', id, capacity, taken FROM booking.resources
 WHERE id OPERATOR(pg_catalog.<=) 6 ORDER BY id;
SELECT 'statuses', status, pg_catalog.count(*) FROM booking.bookings GROUP BY status ORDER BY status;

\if :has_stripes
SELECT 'stripes create_resource', booking.create_resource('hot', 10);
SELECT 'stripes set_stripes', ok, code, booking_id, http_status, replayed FROM booking.set_stripes(7, 4);
SELECT 'stripes reserve_seat', ok, code, http_status FROM booking.reserve_seat(7, 'h1', 4);
SELECT 'stripes reserve_seat', ok, code, http_status FROM booking.reserve_seat(7, 'h2', 4);
SELECT 'stripes reserve_seat', ok, code, http_status FROM booking.reserve_seat(7, 'h3', 4);
SELECT 'stripes reserve_seat', ok, code, http_status FROM booking.reserve_seat(7, 'h4', 2);
SELECT 'stripes seats_left', booking.seats_left(7);
\endif
