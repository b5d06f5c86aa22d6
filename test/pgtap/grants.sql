-- grants.sql: a role with only the documented grants (booking.grant_client
-- and booking.grant_admin: a shop's back office that also sells) can use the
-- whole API and cannot write the tables or read the stored idempotency
-- results; a role without EXECUTE cannot call anything, because no function
-- is executable by PUBLIC.  roles.sql checks each set on its own.
BEGIN;
SELECT plan(68);

SET LOCAL TimeZone = 'UTC';

CREATE ROLE booking_tap_app NOLOGIN;
SELECT booking.grant_client('booking_tap_app') IS NOT NULL AS granted \gset
SELECT booking.grant_admin('booking_tap_app') IS NOT NULL AS granted \gset

-- the same schema usage and table reads, but no EXECUTE
CREATE ROLE booking_tap_nobody NOLOGIN;
GRANT USAGE ON SCHEMA booking TO booking_tap_nobody;
GRANT SELECT ON booking.resources, booking.bookings TO booking_tap_nobody;

------------------------------------------------------------------------------
-- the catalog: nothing is executable by PUBLIC
------------------------------------------------------------------------------
SELECT is_empty(
    $$SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
       WHERE p.pronamespace = 'booking'::regnamespace
         AND (p.proacl IS NULL  -- NULL means the default: EXECUTE to PUBLIC
              OR EXISTS (SELECT 1 FROM pg_catalog.aclexplode(p.proacl) a
                          WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))$$,
    'no function in schema booking is executable by PUBLIC');
SELECT is_empty(
    $$SELECT c.relname::text FROM pg_catalog.pg_class c
       WHERE c.relnamespace = 'booking'::regnamespace AND c.relkind IN ('r', 'S')
         AND EXISTS (SELECT 1 FROM pg_catalog.aclexplode(c.relacl) a WHERE a.grantee = 0)$$,
    'no table or sequence in schema booking grants anything to PUBLIC');
SELECT is(
    (SELECT pg_catalog.count(*) FROM pg_catalog.pg_proc p
      WHERE p.pronamespace = 'booking'::regnamespace
        AND pg_catalog.has_function_privilege('booking_tap_nobody', p.oid, 'EXECUTE')),
    0::bigint, 'a role without the EXECUTE grant can execute no function of schema booking');
SELECT ok(NOT COALESCE(pg_catalog.has_function_privilege('public',
              pg_catalog.to_regprocedure('booking.extend_hold_until(bigint, timestamp with time zone)'), 'EXECUTE'), true),
          'booking.extend_hold_until exists and is not executable by PUBLIC');

------------------------------------------------------------------------------
-- the application role uses the whole API
------------------------------------------------------------------------------
SET LOCAL ROLE booking_tap_app;

SELECT ok(booking.create_resource('tap seats', 10) > 0, 'app: create_resource makes a seat session');
SELECT ok(booking.create_resource('tap room a') > 0, 'app: create_resource makes a room');
SELECT ok(booking.create_resource('tap room b') > 0, 'app: create_resource makes a second room');
SELECT ok(booking.create_resource('tap pool', 0) > 0, 'app: create_resource makes a pool');
SELECT ok(booking.create_resource('tap unit', 1,
              pool => (SELECT id FROM booking.resources WHERE name = 'tap pool'),
              meta => '{"floor": 2}') > 0,
          'app: create_resource makes a pool unit with meta');
SELECT is((SELECT pg_catalog.count(*) FROM booking.resources WHERE name LIKE 'tap %'), 5::bigint,
          'app: can SELECT booking.resources');

-- counted inventory
SELECT is(row(r.ok, r.code, r.http_status, r.replayed), row(true, 'ok'::text, 201, false),
          'app: reserve_seat confirmed')
  FROM booking.reserve_seat((SELECT id FROM booking.resources WHERE name = 'tap seats'), 'ann', 2) r;
SELECT is(row(r.ok, r.code, r.http_status, r.replayed), row(true, 'ok'::text, 201, false),
          'app: reserve_seat with a hold')
  FROM booking.reserve_seat((SELECT id FROM booking.resources WHERE name = 'tap seats'), 'bob', 3,
                            hold => '1 hour') r;
SELECT is(booking.seats_left((SELECT id FROM booking.resources WHERE name = 'tap seats')), 5,
          'app: seats_left counts confirmed seats and holds');
SELECT is(row(r.code, r.http_status), row('ok'::text, 200), 'app: extend_hold')
  FROM booking.extend_hold((SELECT id FROM booking.bookings WHERE guest = 'bob'), '10 minutes') r;
SELECT is(row(r.code, r.http_status), row('ok'::text, 200), 'app: extend_hold_until')
  FROM booking.extend_hold_until((SELECT id FROM booking.bookings WHERE guest = 'bob'),
                                 pg_catalog.clock_timestamp() + interval '2 hours') r;
SELECT is(row(r.code, r.http_status), row('ok'::text, 200), 'app: confirm')
  FROM booking.confirm((SELECT id FROM booking.bookings WHERE guest = 'bob')) r;
SELECT is((SELECT status::text FROM booking.bookings WHERE guest = 'bob'), 'confirmed',
          'app: can SELECT booking.bookings and sees the confirmed hold');
SELECT is(row(r.code, r.http_status), row('ok'::text, 200), 'app: cancel')
  FROM booking.cancel((SELECT id FROM booking.bookings WHERE guest = 'ann')) r;
SELECT is(booking.seats_left((SELECT id FROM booking.resources WHERE name = 'tap seats')), 7,
          'app: cancel freed the seats');
SELECT is(row(r.code, r.http_status), row('ok'::text, 200), 'app: set_capacity')
  FROM booking.set_capacity((SELECT id FROM booking.resources WHERE name = 'tap seats'), 20,
                            (SELECT version FROM booking.resources WHERE name = 'tap seats')) r;
SELECT is(booking.seats_left((SELECT id FROM booking.resources WHERE name = 'tap seats')), 17,
          'app: seats_left after set_capacity');
SELECT is(row(r.code, r.http_status), row('ok'::text, 200), 'app: set_stripes')
  FROM booking.set_stripes((SELECT id FROM booking.resources WHERE name = 'tap seats'), 4) r;
SELECT is(row(r.code, r.http_status), row('ok'::text, 201), 'app: reserve_seat on a striped resource')
  FROM booking.reserve_seat((SELECT id FROM booking.resources WHERE name = 'tap seats'), 'stripe', 2) r;
SELECT is(booking.seats_left((SELECT id FROM booking.resources WHERE name = 'tap seats')), 15,
          'app: seats_left of a striped resource');

-- idempotency keys work for the role (the key row is written on its behalf)
SELECT is(row(r.code, r.http_status, r.replayed), row('ok'::text, 201, false), 'app: reserve_seat with a key')
  FROM booking.reserve_seat((SELECT id FROM booking.resources WHERE name = 'tap seats'), 'cat', 1,
                            idempotency_key => 'tap-grants-key-1') r;
SELECT is(row(r.code, r.http_status, r.replayed,
              r.booking_id = (SELECT id FROM booking.bookings WHERE guest = 'cat')),
          row('ok'::text, 201, true, true), 'app: the same key replays the stored result')
  FROM booking.reserve_seat((SELECT id FROM booking.resources WHERE name = 'tap seats'), 'cat', 1,
                            idempotency_key => 'tap-grants-key-1') r;

-- range inventory
SELECT is(row(r.ok, r.code, r.http_status), row(true, 'ok'::text, 201), 'app: reserve_stay')
  FROM booking.reserve_stay((SELECT id FROM booking.resources WHERE name = 'tap room a'), 'dan',
                            '[2030-01-01,2030-01-03)') r;
SELECT is(row(r.ok, r.code, r.http_status), row(true, 'ok'::text, 201), 'app: reserve_stays')
  FROM booking.reserve_stays(ARRAY(SELECT id FROM booking.resources WHERE name IN ('tap room a', 'tap room b')),
                             'eve', '[2030-02-01,2030-02-04)') r;
SELECT is((SELECT pg_catalog.count(*) FROM booking.bookings WHERE guest = 'eve'), 2::bigint,
          'app: reserve_stays booked both rooms');
SELECT is(row(r.ok, r.code, r.http_status), row(true, 'ok'::text, 201), 'app: reserve_stay_any')
  FROM booking.reserve_stay_any((SELECT id FROM booking.resources WHERE name = 'tap pool'), 'fay',
                                '[2030-01-01,2030-01-02)') r;
SELECT is((SELECT resource_id FROM booking.bookings WHERE guest = 'fay'),
          (SELECT id FROM booking.resources WHERE name = 'tap unit'),
          'app: reserve_stay_any booked the pool unit');
SELECT results_eq(
    $$SELECT s FROM booking.free_slots((SELECT id FROM booking.resources WHERE name = 'tap room a'),
                                       '[2030-01-01,2030-01-10)', '1 day') s$$,
    $$VALUES (tstzrange('2030-01-03', '2030-01-10'))$$,
    'app: free_slots');
SELECT is(row(r.code, r.http_status), row('ok'::text, 200), 'app: cancel of a stay')
  FROM booking.cancel((SELECT id FROM booking.bookings WHERE guest = 'dan')) r;

-- lifecycle maintenance
SELECT is(booking.hold_expire(), 0::bigint, 'app: hold_expire runs (nothing lapsed)');
SELECT is(booking.hold_expire(batch => 5), 0::bigint, 'app: hold_expire with a batch');

-- statistics: the role reads them, but cannot stop the counting
-- (on a server that does not preload booking, stats() says so in a NOTICE)
SET LOCAL client_min_messages = warning;
SELECT lives_ok($$SELECT pg_catalog.count(*) FROM booking.stats()$$, 'app: stats runs');
RESET client_min_messages;
SELECT throws_ok($$SET LOCAL booking.track_stats = off$$,
    '42501', 'permission denied to set parameter "booking.track_stats"',
    'app: cannot SET booking.track_stats');

-- settings: the role may bound its own waits, but not change how long
-- everyone's stored idempotency results are kept (hold_expire purges with it)
SELECT lives_ok($$SET LOCAL booking.lock_timeout = '250ms'$$, 'app: may SET booking.lock_timeout');
SELECT throws_ok($$SET LOCAL booking.idempotency_retention = 1$$,
    '42501', 'permission denied to set parameter "booking.idempotency_retention"',
    'app: cannot SET booking.idempotency_retention');
SELECT throws_ok($$SELECT pg_catalog.set_config('booking.idempotency_retention', '1', true)$$,
    '42501', 'permission denied to set parameter "booking.idempotency_retention"',
    'app: cannot set_config booking.idempotency_retention');

------------------------------------------------------------------------------
-- ... and cannot write the tables nor read the stored results
------------------------------------------------------------------------------
SELECT throws_ok(
    $$INSERT INTO booking.bookings (resource_id, guest, quantity, status, validity)
      SELECT id, 'mallory', 1, 'confirmed', tstzrange(now(), NULL) FROM booking.resources WHERE name = 'tap seats'$$,
    '42501', 'permission denied for table bookings', 'app: cannot INSERT into booking.bookings');
SELECT throws_ok($$UPDATE booking.bookings SET status = 'cancelled'$$,
    '42501', 'permission denied for table bookings', 'app: cannot UPDATE booking.bookings');
SELECT throws_ok($$DELETE FROM booking.bookings$$,
    '42501', 'permission denied for table bookings', 'app: cannot DELETE from booking.bookings');
SELECT throws_ok($$TRUNCATE booking.bookings$$,
    '42501', 'permission denied for table bookings', 'app: cannot TRUNCATE booking.bookings');
SELECT throws_ok($$INSERT INTO booking.resources (name, capacity) VALUES ('mallory', 1000)$$,
    '42501', 'permission denied for table resources', 'app: cannot INSERT into booking.resources');
SELECT throws_ok($$UPDATE booking.resources SET capacity = capacity + 100$$,
    '42501', 'permission denied for table resources', 'app: cannot UPDATE booking.resources');
SELECT throws_ok($$DELETE FROM booking.resources$$,
    '42501', 'permission denied for table resources', 'app: cannot DELETE from booking.resources');
SELECT throws_ok($$SELECT * FROM booking.idempotency_keys$$,
    '42501', 'permission denied for table idempotency_keys', 'app: cannot read booking.idempotency_keys');
SELECT throws_ok($$DELETE FROM booking.idempotency_keys$$,
    '42501', 'permission denied for table idempotency_keys', 'app: cannot DELETE from booking.idempotency_keys');
SELECT throws_ok($$SELECT pg_catalog.nextval('booking.bookings_id_seq')$$,
    '42501', 'permission denied for sequence bookings_id_seq', 'app: cannot advance the bookings id sequence');

RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM booking.bookings b JOIN booking.resources r ON r.id = b.resource_id
            WHERE r.name LIKE 'tap %'), 8::bigint,
          'the role''s calls wrote exactly the 8 bookings of the API calls');
SELECT is((SELECT pg_catalog.count(*) FROM booking.idempotency_keys WHERE key = 'tap-grants-key-1'), 1::bigint,
          'the role''s keyed call stored its key');

------------------------------------------------------------------------------
-- a role without EXECUTE can call nothing
------------------------------------------------------------------------------
SET LOCAL ROLE booking_tap_nobody;

SELECT throws_ok($$SELECT booking.create_resource('nobody', 1)$$,
    '42501', 'permission denied for function create_resource', 'nobody: create_resource refused');
SELECT throws_ok($$SELECT booking.reserve_seat(1, 'nobody')$$,
    '42501', 'permission denied for function reserve_seat', 'nobody: reserve_seat refused');
SELECT throws_ok($$SELECT booking.reserve_stay(1, 'nobody', '[2030-01-01,2030-01-02)')$$,
    '42501', 'permission denied for function reserve_stay', 'nobody: reserve_stay refused');
SELECT throws_ok($$SELECT booking.reserve_stays('{1,2}', 'nobody', '[2030-01-01,2030-01-02)')$$,
    '42501', 'permission denied for function reserve_stays', 'nobody: reserve_stays refused');
SELECT throws_ok($$SELECT booking.reserve_stay_any(1, 'nobody', '[2030-01-01,2030-01-02)')$$,
    '42501', 'permission denied for function reserve_stay_any', 'nobody: reserve_stay_any refused');
SELECT throws_ok($$SELECT * FROM booking.free_slots(1, '[2030-01-01,2030-01-02)', '1 hour')$$,
    '42501', 'permission denied for function free_slots', 'nobody: free_slots refused');
SELECT throws_ok($$SELECT booking.confirm(1)$$,
    '42501', 'permission denied for function confirm', 'nobody: confirm refused');
SELECT throws_ok($$SELECT booking.cancel(1)$$,
    '42501', 'permission denied for function cancel', 'nobody: cancel refused');
SELECT throws_ok($$SELECT booking.extend_hold(1, '1 minute')$$,
    '42501', 'permission denied for function extend_hold', 'nobody: extend_hold refused');
SELECT throws_ok($$SELECT booking.hold_expire()$$,
    '42501', 'permission denied for function hold_expire', 'nobody: hold_expire refused');
SELECT throws_ok($$SELECT booking.extend_hold_until(1, pg_catalog.clock_timestamp() + interval '1 hour')$$,
    '42501', 'permission denied for function extend_hold_until', 'nobody: extend_hold_until refused');
SELECT throws_ok($$SELECT booking.set_capacity(1, 5, 1)$$,
    '42501', 'permission denied for function set_capacity', 'nobody: set_capacity refused');
SELECT throws_ok($$SELECT booking.set_stripes(1, 4)$$,
    '42501', 'permission denied for function set_stripes', 'nobody: set_stripes refused');
SELECT throws_ok($$SELECT booking.seats_left(1)$$,
    '42501', 'permission denied for function seats_left', 'nobody: seats_left refused');
SELECT throws_ok($$SELECT * FROM booking.stats()$$,
    '42501', 'permission denied for function stats', 'nobody: stats refused');
SELECT throws_ok($$SELECT booking.stats_reset()$$,
    '42501', 'permission denied for function stats_reset', 'nobody: stats_reset refused');

RESET ROLE;
SELECT * FROM finish();
ROLLBACK;
