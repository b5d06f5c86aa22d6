-- contract.sql: the objects of the SQL contract exist with their exact types,
-- argument names, defaults, return types, volatility and security settings.
-- Run by pg_prove against a database with pgtap and booking installed.
BEGIN;
SELECT plan(312);

------------------------------------------------------------------------------
-- schema and types
------------------------------------------------------------------------------
SELECT has_schema('booking');
SELECT has_extension('booking', 'the booking extension is installed');
SELECT has_extension('btree_gist', 'btree_gist is installed (booking requires it)');

SELECT has_enum('booking', 'status', 'enum booking.status exists');
SELECT enum_has_labels('booking', 'status',
    ARRAY['pending', 'confirmed', 'cancelled', 'expired', 'waiting'],
    'booking.status has the labels pending, confirmed, cancelled, expired, waiting in that order');

SELECT has_composite('booking', 'result', 'type booking.result exists');
SELECT results_eq(
    $$SELECT a.attname::text COLLATE "default", pg_catalog.format_type(a.atttypid, a.atttypmod)
        FROM pg_catalog.pg_attribute a
       WHERE a.attrelid = 'booking.result'::regclass AND a.attnum > 0 AND NOT a.attisdropped
       ORDER BY a.attnum$$,
    $$VALUES ('ok', 'boolean'), ('code', 'text'), ('booking_id', 'bigint'),
             ('http_status', 'integer'), ('message', 'text'), ('replayed', 'boolean')$$,
    'booking.result is (ok boolean, code text, booking_id bigint, http_status int, message text, replayed boolean)');

------------------------------------------------------------------------------
-- booking.resources
------------------------------------------------------------------------------
SELECT has_table('booking', 'resources', 'table booking.resources exists');
SELECT col_type_is('booking', 'resources', 'id', 'bigint', 'resources.id is bigint');
SELECT col_type_is('booking', 'resources', 'name', 'text', 'resources.name is text');
SELECT col_type_is('booking', 'resources', 'capacity', 'integer', 'resources.capacity is integer');
SELECT col_type_is('booking', 'resources', 'pool_id', 'bigint', 'resources.pool_id is bigint');
SELECT col_type_is('booking', 'resources', 'version', 'bigint', 'resources.version is bigint');
SELECT col_type_is('booking', 'resources', 'meta', 'jsonb', 'resources.meta is jsonb');
-- 0.4.0: home (the shard a row lives in on Citus; 0 on one server) leads every key
SELECT col_is_pk('booking', 'resources', ARRAY['home', 'id'], 'resources: (home, id) is the primary key');
SELECT col_not_null('booking', 'resources', 'home', 'resources.home is NOT NULL');
SELECT col_has_default('booking', 'resources', 'id', 'resources.id is generated');
SELECT col_is_null('booking', 'resources', 'pool_id', 'resources.pool_id is nullable');
-- 0.5.0: a per-guest limit and buffers between stays
SELECT col_type_is('booking', 'resources', 'guest_limit', 'integer', 'resources.guest_limit is integer');
SELECT col_is_null('booking', 'resources', 'guest_limit', 'resources.guest_limit is nullable (no limit)');
SELECT col_type_is('booking', 'resources', 'buffer_before', 'interval', 'resources.buffer_before is interval');
SELECT col_type_is('booking', 'resources', 'buffer_after', 'interval', 'resources.buffer_after is interval');
SELECT fk_ok('booking', 'resources', ARRAY['home', 'pool_id'], 'booking', 'resources', ARRAY['home', 'id'],
    'resources (home, pool_id) references resources (home, id): a unit lives in its pool''s shard');

------------------------------------------------------------------------------
-- booking.bookings
------------------------------------------------------------------------------
SELECT has_table('booking', 'bookings', 'table booking.bookings exists');
SELECT col_type_is('booking', 'bookings', 'id', 'bigint', 'bookings.id is bigint');
SELECT col_type_is('booking', 'bookings', 'resource_id', 'bigint', 'bookings.resource_id is bigint');
SELECT col_type_is('booking', 'bookings', 'guest', 'text', 'bookings.guest is text');
SELECT col_type_is('booking', 'bookings', 'quantity', 'integer', 'bookings.quantity is integer');
SELECT col_type_is('booking', 'bookings', 'during', 'tstzrange', 'bookings.during is tstzrange');
SELECT col_type_is('booking', 'bookings', 'status', 'booking', 'status', 'bookings.status is booking.status');
SELECT col_type_is('booking', 'bookings', 'expires_at', 'timestamp with time zone', 'bookings.expires_at is timestamptz');
SELECT col_type_is('booking', 'bookings', 'created_at', 'timestamp with time zone', 'bookings.created_at is timestamptz');
SELECT col_is_pk('booking', 'bookings', ARRAY['home', 'id'], 'bookings: (home, id) is the primary key');
SELECT col_not_null('booking', 'bookings', 'home', 'bookings.home is NOT NULL');
SELECT col_is_pk('booking', 'resource_stripes', ARRAY['home', 'resource_id', 'stripe'],
    'resource_stripes: (home, resource_id, stripe) is the primary key');
SELECT col_is_pk('booking', 'idempotency_keys', ARRAY['home', 'key'], 'idempotency_keys: (home, key) is the primary key');
SELECT col_is_null('booking', 'bookings', 'during', 'bookings.during is nullable (NULL for seats)');
SELECT col_is_null('booking', 'bookings', 'expires_at', 'bookings.expires_at is nullable');
-- 0.5.0: a stay's footprint, and the rows a guest limit counts
SELECT col_type_is('booking', 'bookings', 'blocked', 'tstzrange', 'bookings.blocked is tstzrange (a stay''s footprint)');
SELECT col_type_is('booking', 'bookings', 'limited', 'boolean', 'bookings.limited is boolean');
-- 0.8.0: the caller's metadata, and the key of forget_guest's pseudonyms
SELECT col_type_is('booking', 'bookings', 'metadata', 'jsonb', 'bookings.metadata is jsonb');
SELECT col_is_null('booking', 'bookings', 'metadata', 'bookings.metadata is nullable (NULL: none given)');
SELECT has_table('booking', 'secrets', 'table booking.secrets exists');
-- no foreign key since 0.3.0 (its check locked the resource row on every
-- striped sale): triggers keep every booking's resource in place instead
SELECT hasnt_fk('booking', 'bookings', 'bookings has no foreign key');
SELECT trigger_is('booking', 'resources', 'resources_no_delete', 'booking', 'refuse_resource_delete',
    'resources refuses DELETE and UPDATE OF id');
SELECT trigger_is('booking', 'resources', 'resources_no_orphans', 'booking', 'refuse_resource_delete',
    'resources refuses TRUNCATE while bookings has rows');
SELECT ok(EXISTS (
    SELECT 1 FROM pg_catalog.pg_constraint c
     WHERE c.conrelid = 'booking.bookings'::regclass AND c.contype = 'x'
       AND pg_catalog.pg_get_constraintdef(c.oid) ~ 'resource_id WITH =.*blocked WITH &&'),
    'bookings has an exclusion constraint on (resource_id WITH =, blocked WITH &&): footprints never overlap');

SELECT has_table('booking', 'idempotency_keys', 'table booking.idempotency_keys exists');

------------------------------------------------------------------------------
-- functions: the exact set, then each one's signature and settings
------------------------------------------------------------------------------
SELECT functions_are('booking', ARRAY[
    'create_resource', 'set_capacity', 'seats_left', 'reserve_seat', 'reserve_stay',
    'reserve_stays', 'reserve_stay_any', 'free_slots', 'confirm', 'cancel',
    'extend_hold', 'extend_hold_until', 'hold_expire', 'set_stripes', 'refuse_resource_delete',
    'distribute', 'delegate_calls', 'shard_reserve_seat', 'shard_reserve_stay', 'shard_reserve_stays',
    'shard_reserve_stay_any', 'shard_confirm', 'shard_cancel', 'shard_extend_hold',
    'shard_extend_hold_until', 'shard_set_capacity', 'shard_set_stripes', 'shard_stay_member',
    'set_guest_limit', 'set_buffer', 'reserve_seats', 'reduce', 'move_stay',
    'shard_set_guest_limit', 'shard_set_buffer', 'shard_reserve_seats', 'shard_seat_member',
    'shard_reduce', 'shard_move_stay', 'join_waitlist', 'shard_join_waitlist',
    'add_consumer', 'drop_consumer', 'claim_events', 'ack_events', 'health', 'stats', 'stats_reset',
    'grant_client', 'grant_relay', 'grant_admin', 'get_booking', 'forget_guest',
    'set_time_zone', 'set_check_times', 'reserve_nights', 'reserve_series', 'shard_set_time_zone',
    'shard_set_check_times', 'shard_reserve_nights', 'shard_reserve_series', 'cancel_group', 'set_opening_hours',
    'shard_set_opening_hours', 'reserve_slot', 'slots_left', 'shard_reserve_slot'],
    'schema booking holds exactly the functions of the contract (the trigger function, distribute and the Citus twins, the statistics and the grant sets)');

CREATE TEMP TABLE contract_fn (name text, args text, identity text, returns text, vol text)
    ON COMMIT DROP;
INSERT INTO contract_fn VALUES
 ('create_resource',
  'name text, capacity integer DEFAULT 1, pool bigint DEFAULT NULL::bigint, meta jsonb DEFAULT ''{}''::jsonb',
  'text, integer, bigint, jsonb', 'bigint', 'volatile'),
 ('set_capacity',
  'resource bigint, capacity integer, expected_version bigint',
  'bigint, integer, bigint', 'booking.result', 'volatile'),
 ('seats_left',
  'resource bigint',
  'bigint', 'integer', 'stable'),
 ('reserve_seat',
  'resource bigint, guest text, quantity integer DEFAULT 1, hold interval DEFAULT NULL::interval, idempotency_key text DEFAULT NULL::text, lock_timeout interval DEFAULT NULL::interval, metadata jsonb DEFAULT NULL::jsonb',
  'bigint, text, integer, interval, text, interval, jsonb', 'booking.result', 'volatile'),
 ('reserve_stay',
  'resource bigint, guest text, during tstzrange, hold interval DEFAULT NULL::interval, idempotency_key text DEFAULT NULL::text, lock_timeout interval DEFAULT NULL::interval, metadata jsonb DEFAULT NULL::jsonb',
  'bigint, text, tstzrange, interval, text, interval, jsonb', 'booking.result', 'volatile'),
 ('reserve_stays',
  'resources bigint[], guest text, during tstzrange, hold interval DEFAULT NULL::interval, idempotency_key text DEFAULT NULL::text, lock_timeout interval DEFAULT NULL::interval, metadata jsonb DEFAULT NULL::jsonb',
  'bigint[], text, tstzrange, interval, text, interval, jsonb', 'booking.result', 'volatile'),
 ('reserve_stay_any',
  'pool bigint, guest text, during tstzrange, hold interval DEFAULT NULL::interval, idempotency_key text DEFAULT NULL::text, lock_timeout interval DEFAULT NULL::interval, metadata jsonb DEFAULT NULL::jsonb',
  'bigint, text, tstzrange, interval, text, interval, jsonb', 'booking.result', 'volatile'),
 ('free_slots',
  'resource bigint, within tstzrange, min_length interval',
  'bigint, tstzrange, interval', 'SETOF tstzrange', 'stable'),
 ('confirm',
  'booking bigint, idempotency_key text DEFAULT NULL::text',
  'bigint, text', 'booking.result', 'volatile'),
 ('cancel',
  'booking bigint, idempotency_key text DEFAULT NULL::text',
  'bigint, text', 'booking.result', 'volatile'),
 ('extend_hold',
  'booking bigint, by interval',
  'bigint, interval', 'booking.result', 'volatile'),
 ('extend_hold_until',
  'booking bigint, until timestamp with time zone',
  'bigint, timestamp with time zone', 'booking.result', 'volatile'),
 ('hold_expire',
  'batch integer DEFAULT 1000',
  'integer', 'bigint', 'volatile'),
 ('set_stripes',
  'resource bigint, stripes integer',
  'bigint, integer', 'booking.result', 'volatile'),
 ('set_guest_limit',
  'resource bigint, max_per_guest integer',
  'bigint, integer', 'booking.result', 'volatile'),
 ('set_buffer',
  'resource bigint, before interval, after interval',
  'bigint, interval, interval', 'booking.result', 'volatile'),
 ('reserve_seats',
  'resources bigint[], guest text, quantities integer[] DEFAULT NULL::integer[], hold interval DEFAULT NULL::interval, idempotency_key text DEFAULT NULL::text, lock_timeout interval DEFAULT NULL::interval, metadata jsonb DEFAULT NULL::jsonb',
  'bigint[], text, integer[], interval, text, interval, jsonb', 'booking.result', 'volatile'),
 ('reduce',
  'booking bigint, quantity integer, idempotency_key text DEFAULT NULL::text',
  'bigint, integer, text', 'booking.result', 'volatile'),
 ('move_stay',
  'booking bigint, during tstzrange, idempotency_key text DEFAULT NULL::text, lock_timeout interval DEFAULT NULL::interval',
  'bigint, tstzrange, text, interval', 'booking.result', 'volatile'),
 ('set_time_zone',
  'resource bigint, time_zone text',
  'bigint, text', 'booking.result', 'volatile'),
 ('set_check_times',
  'resource bigint, check_in time without time zone DEFAULT ''00:00:00''::time without time zone, check_out time without time zone DEFAULT ''00:00:00''::time without time zone',
  'bigint, time without time zone, time without time zone', 'booking.result', 'volatile'),
 ('reserve_nights',
  'resource bigint, guest text, arrival date, departure date, hold interval DEFAULT NULL::interval, idempotency_key text DEFAULT NULL::text, lock_timeout interval DEFAULT NULL::interval, metadata jsonb DEFAULT NULL::jsonb',
  'bigint, text, date, date, interval, text, interval, jsonb', 'booking.result', 'volatile'),
 ('reserve_series',
  'resource bigint, guest text, first tstzrange, every interval, count integer, hold interval DEFAULT NULL::interval, idempotency_key text DEFAULT NULL::text, lock_timeout interval DEFAULT NULL::interval, metadata jsonb DEFAULT NULL::jsonb',
  'bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb', 'booking.result', 'volatile'),
 ('reserve_slot',
  'resource bigint, guest text, during tstzrange, quantity integer DEFAULT 1, hold interval DEFAULT NULL::interval, idempotency_key text DEFAULT NULL::text, lock_timeout interval DEFAULT NULL::interval, metadata jsonb DEFAULT NULL::jsonb',
  'bigint, text, tstzrange, integer, interval, text, interval, jsonb', 'booking.result', 'volatile'),
 ('slots_left',
  'resource bigint, within tstzrange',
  'bigint, tstzrange', 'TABLE(during tstzrange, free integer)', 'stable'),
 ('set_opening_hours',
  'resource bigint, hours jsonb',
  'bigint, jsonb', 'booking.result', 'volatile'),
 ('cancel_group',
  'group_id bigint, from_time timestamp with time zone DEFAULT NULL::timestamp with time zone, idempotency_key text DEFAULT NULL::text',
  'bigint, timestamp with time zone, text', 'booking.result', 'volatile'),
 ('join_waitlist',
  'resource bigint, guest text, quantity integer DEFAULT 1, idempotency_key text DEFAULT NULL::text, metadata jsonb DEFAULT NULL::jsonb',
  'bigint, text, integer, text, jsonb', 'booking.result', 'volatile'),
 ('add_consumer', 'name text', 'text', 'boolean', 'volatile'),
 ('drop_consumer', 'name text', 'text', 'boolean', 'volatile'),
 ('claim_events',
  'consumer text, batch integer DEFAULT 100, lease interval DEFAULT ''00:00:30''::interval',
  'text, integer, interval',
  'TABLE(event_id bigint, lease_token bigint, resource_id bigint, seq bigint, booking_id bigint, guest text, kind text, payload jsonb, created_at timestamp with time zone, attempts integer)',
  'volatile'),
 ('ack_events', 'consumer text, lease_token bigint, events bigint[]', 'text, bigint, bigint[]',
  'integer', 'volatile'),
 ('health', '', '', 'TABLE(metric text, subject text, value double precision)', 'stable'),
 ('get_booking', 'booking bigint', 'bigint',
  'TABLE(id bigint, resource_id bigint, guest text, quantity integer, during tstzrange, status booking.status, expires_at timestamp with time zone, created_at timestamp with time zone, metadata jsonb, group_id bigint)',
  'stable'),
 ('forget_guest', 'guest text', 'text', 'bigint', 'volatile');

-- each function exists with exactly these argument types (27)
SELECT ok(pg_catalog.to_regprocedure(format('booking.%I(%s)', name, identity)) IS NOT NULL,
          format('function booking.%s(%s) exists', name, identity))
  FROM contract_fn ORDER BY name;

-- exact argument names and defaults (27)
SELECT is(pg_catalog.pg_get_function_arguments(pg_catalog.to_regprocedure(format('booking.%I(%s)', name, identity))),
          args, format('booking.%s has the arguments (%s)', name, args))
  FROM contract_fn ORDER BY name;

-- return types (27)
SELECT is(pg_catalog.pg_get_function_result(pg_catalog.to_regprocedure(format('booking.%I(%s)', name, identity))),
          returns, format('booking.%s returns %s', name, returns))
  FROM contract_fn ORDER BY name;

-- volatility (27)
SELECT is(CASE p.provolatile WHEN 'v' THEN 'volatile' WHEN 's' THEN 'stable' WHEN 'i' THEN 'immutable' END,
          f.vol, format('booking.%s is %s', f.name, f.vol))
  FROM contract_fn f
  LEFT JOIN pg_catalog.pg_proc p ON p.oid = pg_catalog.to_regprocedure(format('booking.%I(%s)', f.name, f.identity))
 ORDER BY f.name;

-- explicit NULL for an argument means its default: no function may be STRICT (27)
SELECT is(p.proisstrict, false, format('booking.%s is not STRICT (NULL means the default)', f.name))
  FROM contract_fn f
  LEFT JOIN pg_catalog.pg_proc p ON p.oid = pg_catalog.to_regprocedure(format('booking.%I(%s)', f.name, f.identity))
 ORDER BY f.name;

-- every function that writes or reads the tables runs as its owner (27) ...
SELECT is(p.prosecdef, true, format('booking.%s is SECURITY DEFINER', f.name))
  FROM contract_fn f
  LEFT JOIN pg_catalog.pg_proc p ON p.oid = pg_catalog.to_regprocedure(format('booking.%I(%s)', f.name, f.identity))
 ORDER BY f.name;

-- ... with a pinned search_path (27)
SELECT is(p.proconfig, ARRAY['search_path=pg_catalog, pg_temp'],
          format('booking.%s pins search_path = pg_catalog, pg_temp', f.name))
  FROM contract_fn f
  LEFT JOIN pg_catalog.pg_proc p ON p.oid = pg_catalog.to_regprocedure(format('booking.%I(%s)', f.name, f.identity))
 ORDER BY f.name;

-- the statistics (src/stats.c): no argument, and no table touched, so they
-- run as the caller
SELECT is(pg_catalog.pg_get_function_result('booking.stats()'::regprocedure),
          'TABLE(function text, code text, calls bigint, total_ms double precision, max_ms double precision, lock_wait_ms double precision)',
          'booking.stats() returns TABLE(function text, code text, calls bigint, total_ms, max_ms, lock_wait_ms double precision)');
SELECT is(pg_catalog.pg_get_function_result('booking.stats_reset()'::regprocedure), 'void',
          'booking.stats_reset() returns void');
SELECT is((SELECT p.provolatile::text || ' ' || p.prosecdef::text FROM pg_catalog.pg_proc p
            WHERE p.oid = 'booking.stats()'::regprocedure), 'v false',
          'booking.stats() is volatile and runs as the caller');
SELECT is((SELECT p.provolatile::text || ' ' || p.prosecdef::text FROM pg_catalog.pg_proc p
            WHERE p.oid = 'booking.stats_reset()'::regprocedure), 'v false',
          'booking.stats_reset() is volatile and runs as the caller');

-- the grant sets (0.7.0): one role argument, a sentence back; they run as
-- the caller (a superuser or the extension's owner), with a pinned search_path
SELECT is(pg_catalog.pg_get_function_arguments(pg_catalog.to_regprocedure(format('booking.%s(regrole)', f))),
          'role regrole', format('booking.%s has the arguments (role regrole)', f))
  FROM unnest(ARRAY['grant_client', 'grant_relay', 'grant_admin']) f;
SELECT is((SELECT pg_catalog.pg_get_function_result(p.oid) || ' ' || p.provolatile::text || ' ' || p.prosecdef::text
                  || ' ' || pg_catalog.array_to_string(p.proconfig, ',')
             FROM pg_catalog.pg_proc p WHERE p.oid = pg_catalog.to_regprocedure(format('booking.%s(regrole)', f))),
          'text v false search_path=pg_catalog, pg_temp',
          format('booking.%s returns text, is volatile, runs as the caller and pins search_path', f))
  FROM unnest(ARRAY['grant_client', 'grant_relay', 'grant_admin']) f;
-- the twins (0.7.0) run as the caller, so that they can refuse every role
-- but a superuser and the extension's owner; distribute runs as its owner
SELECT is_empty(
    $$SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
       WHERE p.pronamespace = 'booking'::regnamespace AND p.proname LIKE 'shard\_%'
         AND (p.prosecdef OR p.proconfig IS DISTINCT FROM ARRAY['search_path=pg_catalog, pg_temp'])$$,
    'no twin is SECURITY DEFINER, and every twin pins search_path');
SELECT is((SELECT p.prosecdef FROM pg_catalog.pg_proc p WHERE p.oid = 'booking.distribute(integer)'::regprocedure),
          true, 'booking.distribute is SECURITY DEFINER (an admin role may run it)');
-- (0.9.0) delegate_calls edits Citus's catalog when turned off: a superuser's call
SELECT is((SELECT p.prosecdef::text || ' ' || array_to_string(p.proconfig, ',')
             FROM pg_catalog.pg_proc p WHERE p.oid = 'booking.delegate_calls(boolean)'::regprocedure),
          'false search_path=pg_catalog, pg_temp',
          'booking.delegate_calls runs as the caller and pins search_path');

-- no SECURITY DEFINER function anywhere in the schema lacks a pinned search_path
SELECT is_empty(
    $$SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
       WHERE p.pronamespace = 'booking'::regnamespace AND p.prosecdef
         AND NOT EXISTS (SELECT 1 FROM pg_catalog.unnest(p.proconfig) c WHERE c LIKE 'search\_path=%')$$,
    'every SECURITY DEFINER function in schema booking has a pinned search_path');

-- the writing functions are not parallel safe
SELECT is_empty(
    $$SELECT p.oid::regprocedure::text FROM pg_catalog.pg_proc p
       WHERE p.pronamespace = 'booking'::regnamespace AND p.provolatile = 'v' AND p.proparallel <> 'u'$$,
    'every volatile function in schema booking is PARALLEL UNSAFE');

------------------------------------------------------------------------------
-- GUCs and their defaults
------------------------------------------------------------------------------
LOAD 'booking';
SELECT results_eq(
    $$SELECT name, boot_val, unit FROM pg_catalog.pg_settings
       WHERE name IN ('booking.lock_timeout', 'booking.expire_interval', 'booking.expire_batch',
                      'booking.idempotency_retention', 'booking.event_retention', 'booking.waitlist_offer',
                      'booking.notify')
       ORDER BY name$$,
    $$VALUES ('booking.event_retention'::text, '86400'::text, 's'::text),
             ('booking.expire_batch', '10000', NULL),
             ('booking.expire_interval', '10', 's'),
             ('booking.idempotency_retention', '86400', 's'),
             ('booking.lock_timeout', '3000', 'ms'),
             ('booking.notify', 'on', NULL),
             ('booking.waitlist_offer', '900', 's')$$,
    'GUCs booking.lock_timeout (3s), booking.expire_interval (10s), booking.expire_batch (10000), booking.idempotency_retention (24h) exist with their defaults');

-- who may set them: a setting that changes what other callers get is not
-- user-settable (the retention decides when anyone's stored key is purged);
-- lock_timeout only bounds the caller's own waits
SELECT results_eq(
    $$SELECT name, context FROM pg_catalog.pg_settings
       WHERE name IN ('booking.lock_timeout', 'booking.expire_interval', 'booking.expire_batch',
                      'booking.idempotency_retention', 'booking.event_retention', 'booking.waitlist_offer',
                      'booking.notify')
       ORDER BY name$$,
    $$VALUES ('booking.event_retention'::text, 'superuser'::text),
             ('booking.expire_batch', 'sighup'),
             ('booking.expire_interval', 'sighup'),
             ('booking.idempotency_retention', 'superuser'),
             ('booking.lock_timeout', 'user'),
             ('booking.notify', 'superuser'),
             ('booking.waitlist_offer', 'superuser')$$,
    'booking.idempotency_retention is superuser-only, expire_interval and expire_batch are set in postgresql.conf, lock_timeout by any user');

-- booking.track_stats: on by default; turning it off hides everyone's calls
SELECT results_eq(
    $$SELECT boot_val, context FROM pg_catalog.pg_settings WHERE name = 'booking.track_stats'$$,
    $$VALUES ('on'::text, 'superuser'::text)$$,
    'booking.track_stats exists, is on by default, and only a superuser may set it');

SELECT * FROM finish();
ROLLBACK;
