-- roles.sql (0.7.0): grant_client, grant_relay and grant_admin give each kind
-- of role exactly its calls; only a superuser or the extension's owner may
-- run them; and no grant on schema booking, however broad, lets a role that
-- is neither call an internal function (the shard_* twins).
BEGIN;
SELECT plan(44);

SET LOCAL TimeZone = 'UTC';

CREATE ROLE booking_tap_client NOLOGIN;
CREATE ROLE booking_tap_relay NOLOGIN;
CREATE ROLE booking_tap_admin NOLOGIN;
-- the broadest grant an administrator might give: every function and table
CREATE ROLE booking_tap_all NOLOGIN;
GRANT USAGE ON SCHEMA booking TO booking_tap_all;
GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA booking TO booking_tap_all;
GRANT SELECT ON ALL TABLES IN SCHEMA booking TO booking_tap_all;

SELECT matches(booking.grant_client('booking_tap_client'),
    '^booking_tap_client may now make reservations: 20 calls', 'grant_client says what it granted');
SELECT matches(booking.grant_relay('booking_tap_relay'),
    '^booking_tap_relay may now relay events', 'grant_relay says what it granted');
SELECT matches(booking.grant_admin('booking_tap_admin'),
    '^booking_tap_admin may now run booking: 16 calls', 'grant_admin says what it granted');
SELECT lives_ok($$SELECT booking.grant_client('booking_tap_client')$$, 'grant_client can run again');
SELECT throws_ok($$SELECT booking.grant_client(NULL)$$, '22004', 'role must not be null',
    'grant_client names a NULL role');
SELECT throws_ok($$SELECT booking.grant_admin('booking_tap_nosuchrole')$$, '42704', NULL,
    'grant_admin of an unknown role: the regrole cast refuses it');

------------------------------------------------------------------------------
-- exactly each set, as the catalog says
------------------------------------------------------------------------------
CREATE TEMP VIEW tap_callable AS
    SELECT (r.rolname::text COLLATE "default") AS role, p.oid::regprocedure::text AS fn
      FROM pg_catalog.pg_proc p, pg_catalog.pg_roles r
     WHERE p.pronamespace = 'booking'::regnamespace
       AND r.rolname IN ('booking_tap_client', 'booking_tap_relay', 'booking_tap_admin')
       AND pg_catalog.has_function_privilege(r.oid, p.oid, 'EXECUTE');
GRANT SELECT ON tap_callable TO PUBLIC;

SELECT results_eq(
    $$SELECT fn FROM tap_callable WHERE role = 'booking_tap_client' ORDER BY fn$$,
    $$VALUES ('booking.cancel(bigint,text)'),
             ('booking.cancel_group(bigint,timestamp with time zone,text)'),
             ('booking.confirm(bigint,text)'),
             ('booking.extend_hold(bigint,interval)'),
             ('booking.extend_hold_until(bigint,timestamp with time zone)'),
             ('booking.free_slots(bigint,tstzrange,interval)'),
             ('booking.get_booking(bigint)'),
             ('booking.join_waitlist(bigint,text,integer,text,jsonb)'),
             ('booking.move_stay(bigint,tstzrange,text,interval)'),
             ('booking.reduce(bigint,integer,text)'),
             ('booking.reserve_nights(bigint,text,date,date,interval,text,interval,jsonb)'),
             ('booking.reserve_seat(bigint,text,integer,interval,text,interval,jsonb)'),
             ('booking.reserve_seats(bigint[],text,integer[],interval,text,interval,jsonb)'),
             ('booking.reserve_series(bigint,text,tstzrange,interval,integer,interval,text,interval,jsonb)'),
             ('booking.reserve_slot(bigint,text,tstzrange,integer,interval,text,interval,jsonb)'),
             ('booking.reserve_stay(bigint,text,tstzrange,interval,text,interval,jsonb)'),
             ('booking.reserve_stay_any(bigint,text,tstzrange,interval,text,interval,jsonb)'),
             ('booking.reserve_stays(bigint[],text,tstzrange,interval,text,interval,jsonb)'),
             ('booking.seats_left(bigint)'),
             ('booking.slots_left(bigint,tstzrange)')$$,
    'grant_client: exactly the reservation calls');
SELECT results_eq(
    $$SELECT fn FROM tap_callable WHERE role = 'booking_tap_relay' ORDER BY fn$$,
    $$VALUES ('booking.ack_events(text,bigint,bigint[])'),
             ('booking.claim_events(text,integer,interval)')$$,
    'grant_relay: exactly claim_events and ack_events');
SELECT results_eq(
    $$SELECT fn FROM tap_callable WHERE role = 'booking_tap_admin' ORDER BY fn$$,
    $$VALUES ('booking.add_consumer(text)'),
             ('booking.create_resource(text,integer,bigint,jsonb)'),
             ('booking.distribute(integer)'), ('booking.drop_consumer(text)'),
             ('booking.forget_guest(text)'),
             ('booking.health()'), ('booking.hold_expire(integer)'),
             ('booking.set_buffer(bigint,interval,interval)'),
             ('booking.set_capacity(bigint,integer,bigint)'),
             ('booking.set_check_times(bigint,time without time zone,time without time zone)'),
             ('booking.set_guest_limit(bigint,integer)'),
             ('booking.set_opening_hours(bigint,jsonb)'),
             ('booking.set_stripes(bigint,integer)'),
             ('booking.set_time_zone(bigint,text)'),
             ('booking.stats()'), ('booking.stats_reset()')$$,
    'grant_admin: exactly resources, settings, consumers, hold_expire, forget_guest, statistics and distribute');
SELECT is_empty(
    $$SELECT role || ' ' || fn FROM tap_callable WHERE fn LIKE 'booking.shard\_%' OR fn LIKE 'booking.grant\_%'$$,
    'no set gives a twin or a grant_* function');
SELECT results_eq(
    $$SELECT (r.rolname::text COLLATE "default"), (c.relname::text COLLATE "default"), pg_catalog.has_table_privilege(r.oid, c.oid, 'SELECT'),
             pg_catalog.has_table_privilege(r.oid, c.oid, 'INSERT, UPDATE, DELETE, TRUNCATE')
        FROM pg_catalog.pg_class c, pg_catalog.pg_roles r
       WHERE c.relnamespace = 'booking'::regnamespace AND c.relkind = 'r'
         AND r.rolname IN ('booking_tap_client', 'booking_tap_relay', 'booking_tap_admin')
         AND pg_catalog.has_table_privilege(r.oid, c.oid, 'SELECT, INSERT, UPDATE, DELETE, TRUNCATE')
       ORDER BY 1, 2$$,
    $$VALUES ('booking_tap_admin', 'bookings', true, false), ('booking_tap_admin', 'resources', true, false),
             ('booking_tap_client', 'bookings', true, false), ('booking_tap_client', 'resources', true, false)$$,
    'tables: SELECT on resources and bookings for clients and admins, nothing else, no writes');

------------------------------------------------------------------------------
-- each role at work, and refused what is not its kind's
------------------------------------------------------------------------------
SET LOCAL ROLE booking_tap_admin;
SELECT ok(booking.create_resource('tap roles seats', 4) > 0, 'admin: create_resource');
SELECT ok(booking.add_consumer('tap_roles'), 'admin: add_consumer');
SELECT is((SELECT code FROM booking.set_capacity((SELECT id FROM booking.resources WHERE name = 'tap roles seats'), 5, 1)),
    'ok', 'admin: set_capacity');
SELECT lives_ok($$SELECT booking.hold_expire()$$, 'admin: hold_expire');
SET LOCAL client_min_messages = warning;
SELECT lives_ok($$SELECT booking.stats_reset()$$, 'admin: stats_reset (EXECUTE is its gate)');
RESET client_min_messages;
SELECT throws_ok($$SELECT booking.reserve_seat(1, 'admin')$$,
    '42501', 'permission denied for function reserve_seat', 'admin: reserve_seat is a client''s call');
SELECT throws_ok($$SELECT * FROM booking.claim_events('tap_roles')$$,
    '42501', 'permission denied for function claim_events', 'admin: claim_events is a relay''s call');
SELECT throws_ok($$SELECT booking.grant_client('booking_tap_relay')$$,
    '42501', 'permission denied for function grant_client', 'admin: grant_client is not its call');

SET LOCAL ROLE booking_tap_client;
SELECT is((SELECT code FROM booking.reserve_seat((SELECT id FROM booking.resources WHERE name = 'tap roles seats'), 'ann', 2, hold => '1 hour')),
    'ok', 'client: reserve_seat');
SELECT is((SELECT code FROM booking.confirm((SELECT id FROM booking.bookings WHERE guest = 'ann'))),
    'ok', 'client: confirm');
SELECT is(booking.seats_left((SELECT id FROM booking.resources WHERE name = 'tap roles seats')), 3,
    'client: seats_left');
SELECT is((SELECT code FROM booking.reduce((SELECT id FROM booking.bookings WHERE guest = 'ann'), 1)),
    'ok', 'client: reduce');
SELECT throws_ok($$SELECT booking.add_consumer('mallory')$$,
    '42501', 'permission denied for function add_consumer', 'client: add_consumer refused');
SELECT throws_ok($$SELECT booking.drop_consumer('tap_roles')$$,
    '42501', 'permission denied for function drop_consumer', 'client: drop_consumer refused');
SELECT throws_ok($$SELECT booking.create_resource('mallory', 1000)$$,
    '42501', 'permission denied for function create_resource', 'client: create_resource refused');
SELECT throws_ok($$SELECT booking.set_capacity(1, 1000, 1)$$,
    '42501', 'permission denied for function set_capacity', 'client: set_capacity refused');
SELECT throws_ok($$SELECT * FROM booking.claim_events('tap_roles')$$,
    '42501', 'permission denied for function claim_events', 'client: claim_events refused');
SELECT throws_ok($$SELECT booking.stats_reset()$$,
    '42501', 'permission denied for function stats_reset', 'client: stats_reset refused');

SET LOCAL ROLE booking_tap_relay;
SELECT ok((SELECT pg_catalog.count(*) FROM booking.claim_events('tap_roles', 10)) >= 1,
    'relay: claim_events leases the client''s events');
SELECT throws_ok($$SELECT booking.reserve_seat(1, 'relay')$$,
    '42501', 'permission denied for function reserve_seat', 'relay: reserve_seat refused');
SELECT throws_ok($$SELECT * FROM booking.bookings$$,
    '42501', 'permission denied for table bookings', 'relay: cannot read the bookings');

------------------------------------------------------------------------------
-- the internals: refused whatever is granted, and nothing written
------------------------------------------------------------------------------
RESET ROLE;
CREATE TEMP TABLE tap_before AS SELECT pg_catalog.count(*) AS n FROM booking.bookings;
GRANT SELECT ON tap_before TO PUBLIC;
SET LOCAL ROLE booking_tap_all;

-- issue 24's call: a hold until 2300, inside another guest's pass group
SELECT throws_ok(
    $$SELECT * FROM booking.shard_seat_member((SELECT id FROM booking.resources WHERE name = 'tap roles seats'),
        'mallory', 1, '2300-01-01', (SELECT id FROM booking.bookings WHERE guest = 'ann'), NULL, NULL, 0)$$,
    '42501', 'booking.shard_seat_member is internal',
    'every function granted: shard_seat_member still refuses a client role');
SELECT throws_ok(
    $$SELECT * FROM booking.shard_reserve_seat((SELECT id FROM booking.resources WHERE name = 'tap roles seats'),
        'mallory', 1, NULL, NULL, NULL, NULL, 0)$$,
    '42501', 'booking.shard_reserve_seat is internal',
    'every function granted: shard_reserve_seat still refuses a client role');
SELECT throws_ok($$SELECT booking.grant_client('booking_tap_all')$$,
    '42501', 'permission denied for function grant_client',
    'every function granted: grant_client still refuses a role that is neither superuser nor owner');
-- every twin, called with NULLs: the caller is refused before anything else
SELECT is(
    (SELECT pg_catalog.count(*) FROM pg_catalog.pg_proc p
      WHERE p.pronamespace = 'booking'::regnamespace AND p.proname LIKE 'shard\_%'),
    24::bigint, 'there are 24 twins');
CREATE FUNCTION pg_temp.tap_twin_states() RETURNS SETOF text LANGUAGE plpgsql AS $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid FROM pg_catalog.pg_proc p
              WHERE p.pronamespace = 'booking'::regnamespace AND p.proname LIKE 'shard\_%' ORDER BY 1 LOOP
        BEGIN
            EXECUTE pg_catalog.format('SELECT %s(%s)', p.oid::regproc,
                (SELECT pg_catalog.string_agg('NULL', ', ') FROM pg_catalog.generate_series(1, p.pronargs)))
              FROM pg_catalog.pg_proc p WHERE p.oid = f;
            RETURN NEXT f::text || ': no error';
        EXCEPTION WHEN OTHERS THEN
            RETURN NEXT CASE WHEN SQLSTATE = '42501' AND SQLERRM LIKE '% is internal' THEN 'internal'
                             ELSE f::text || ': ' || SQLSTATE || ' ' || SQLERRM END;
        END;
    END LOOP;
END
$$;
SELECT results_eq($$SELECT s, pg_catalog.count(*) FROM pg_temp.tap_twin_states() s GROUP BY s$$,
    $$VALUES ('internal', 24::bigint)$$,
    'every twin refuses a client role before it looks at its arguments');
RESET ROLE;
SELECT is((SELECT pg_catalog.count(*) FROM booking.bookings), (SELECT n FROM tap_before),
    'the refused internal calls wrote nothing');

-- the owner (here a superuser) may call a twin, and it checks what it is given
SELECT throws_ok(
    $$SELECT * FROM booking.shard_seat_member((SELECT id FROM booking.resources WHERE name = 'tap roles seats'),
        'su', 1, '2300-01-01', NULL, NULL, NULL, 0)$$,
    '22023', 'expires_at must be at most 3660 days after the time of the call',
    'owner: shard_seat_member refuses a hold no public call could make');
SELECT throws_ok(
    $$SELECT * FROM booking.shard_seat_member((SELECT id FROM booking.resources WHERE name = 'tap roles seats'),
        'su', 1, pg_catalog.clock_timestamp() - interval '2 days', NULL, NULL, NULL, 0)$$,
    '22023', 'expires_at must not lie more than a day before the time of the call',
    'owner: shard_seat_member refuses a hold that lapsed long before it was made');
SELECT throws_ok(
    $$SELECT * FROM booking.shard_seat_member((SELECT id FROM booking.resources WHERE name = 'tap roles seats'),
        'su', 1, NULL, 0, NULL, NULL, 0)$$,
    '22023', 'group_id must be a booking id', 'owner: shard_seat_member refuses group_id 0');
SELECT is((SELECT code FROM booking.shard_seat_member((SELECT id FROM booking.resources WHERE name = 'tap roles seats'),
        'su', 1, pg_catalog.clock_timestamp() + interval '1 hour', NULL, NULL, NULL, 0)),
    'ok', 'owner: shard_seat_member books a member with a sound expiry');
SELECT throws_ok($$SELECT booking.grant_relay(NULL)$$, '22004', 'role must not be null',
    'grant_relay names a NULL role');
SELECT throws_ok($$SELECT booking.grant_admin(NULL)$$, '22004', 'role must not be null',
    'grant_admin names a NULL role');

SELECT * FROM finish();
ROLLBACK;
