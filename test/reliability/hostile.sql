-- hostile.sql: bad calls to every function of the API, in a database set up
-- by hostile_fixture.sql.  Each call must either raise a clear programmer
-- error (the SQLSTATE given, and a message that begins with the argument's
-- name) or return the documented result; nothing may crash the backend.
-- Prints one "ok - ..." / "not ok - ..." line per call, then one line that
-- checks every function of the extension was called.  {name} in a call is
-- replaced by the id public.hostile_fixture holds under that name.
--
-- At SERIALIZABLE the friendly pre-checks are skipped (docs/concurrency.md),
-- so a taken range is refused by the constraint: unavailable or just_taken.
\set ON_ERROR_STOP 1
SET client_min_messages = warning;
SET TimeZone = 'UTC';

CREATE TEMP TABLE hostile_case (
    n           serial PRIMARY KEY,
    fn          text NOT NULL,      -- the function aimed at
    what        text NOT NULL,      -- what is wrong with the call
    call        text NOT NULL,      -- a query returning one text value
    want_state  text,               -- an error: its SQLSTATE ...
    want_arg    text,               -- ... and the argument its message begins with
    want_result text                -- or a result: a regular expression for the value
);

INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result) VALUES
-- create_resource(name, capacity, pool, meta)
('create_resource', 'name NULL', $$SELECT booking.create_resource(NULL)::text$$, '22004', 'name', NULL),
('create_resource', 'name empty', $$SELECT booking.create_resource('')::text$$, '22023', 'name', NULL),
('create_resource', 'name of 100 KB', $$SELECT booking.create_resource(repeat('n', 102400))::text$$, '22023', 'name', NULL),
('create_resource', 'capacity -1', $$SELECT booking.create_resource('x', -1)::text$$, '22023', 'capacity', NULL),
('create_resource', 'capacity -2^31', $$SELECT booking.create_resource('x', -2147483648)::text$$, '22023', 'capacity', NULL),
('create_resource', 'capacity NULL (default), pool unknown (2^63-1)', $$SELECT booking.create_resource('x', NULL, 9223372036854775807)::text$$, '22023', 'pool', NULL),
('create_resource', 'pool 0', $$SELECT booking.create_resource('x', 1, 0)::text$$, '22023', 'pool', NULL),
('create_resource', 'pool -1, meta NULL (default)', $$SELECT booking.create_resource('x', 1, -1, NULL)::text$$, '22023', 'pool', NULL),
('create_resource', 'meta NULL (default), capacity -1', $$SELECT booking.create_resource('x', -1, NULL, NULL)::text$$, '22023', 'capacity', NULL),
-- set_capacity(resource, capacity, expected_version)
('set_capacity', 'resource NULL', $$SELECT code FROM booking.set_capacity(NULL, 5, 1)$$, '22004', 'resource', NULL),
('set_capacity', 'capacity NULL', $$SELECT code FROM booking.set_capacity({seat}, NULL, 1)$$, '22004', 'capacity', NULL),
('set_capacity', 'expected_version NULL', $$SELECT code FROM booking.set_capacity({seat}, 5, NULL)$$, '22004', 'expected_version', NULL),
('set_capacity', 'capacity -1', $$SELECT code FROM booking.set_capacity({seat}, -1, 1)$$, '22023', 'capacity', NULL),
('set_capacity', 'capacity -2^31', $$SELECT code FROM booking.set_capacity({seat}, -2147483648, 1)$$, '22023', 'capacity', NULL),
('set_capacity', 'capacity 2^31-1, stale version 0', $$SELECT code || ' ' || http_status FROM booking.set_capacity({seat}, 2147483647, 0)$$, NULL, NULL, '^version_conflict 409$'),
('set_capacity', 'expected_version -2^63', $$SELECT code || ' ' || http_status FROM booking.set_capacity({seat}, 5, -9223372036854775808)$$, NULL, NULL, '^version_conflict 409$'),
('set_capacity', 'unknown resource -1', $$SELECT code || ' ' || http_status FROM booking.set_capacity(-1, 5, 1)$$, NULL, NULL, '^not_found 404$'),
('set_capacity', 'capacity 0 below the 3 seats taken', $$SELECT code || ' ' || http_status FROM booking.set_capacity({seat}, 0, 1)$$, NULL, NULL, '^capacity_below_taken 409$'),
-- seats_left(resource)
('seats_left', 'resource NULL', $$SELECT booking.seats_left(NULL)::text$$, '22004', 'resource', NULL),
('seats_left', 'unknown resource 2^63-1', $$SELECT coalesce(booking.seats_left(9223372036854775807)::text, 'NULL')$$, NULL, NULL, '^NULL$'),
('seats_left', 'unknown resource -2^63', $$SELECT coalesce(booking.seats_left(-9223372036854775808)::text, 'NULL')$$, NULL, NULL, '^NULL$'),
-- reserve_seat(resource, guest, quantity, hold, idempotency_key, lock_timeout)
('reserve_seat', 'resource NULL', $$SELECT code FROM booking.reserve_seat(NULL, 'g', 1)$$, '22004', 'resource', NULL),
('reserve_seat', 'guest NULL', $$SELECT code FROM booking.reserve_seat({seat}, NULL, 1)$$, '22004', 'guest', NULL),
('reserve_seat', 'quantity NULL', $$SELECT code FROM booking.reserve_seat({seat}, 'g', NULL)$$, '22004', 'quantity', NULL),
('reserve_seat', 'hold, idempotency_key, lock_timeout NULL (defaults), unknown resource', $$SELECT code || ' ' || http_status FROM booking.reserve_seat(-1, 'g', 1, NULL, NULL, NULL)$$, NULL, NULL, '^not_found 404$'),
('reserve_seat', 'guest empty', $$SELECT code FROM booking.reserve_seat({seat}, '', 1)$$, '22023', 'guest', NULL),
('reserve_seat', 'guest of 100 KB', $$SELECT code FROM booking.reserve_seat({seat}, repeat('g', 102400), 1)$$, '22023', 'guest', NULL),
('reserve_seat', 'quantity 0', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 0)$$, '22023', 'quantity', NULL),
('reserve_seat', 'quantity -1', $$SELECT code FROM booking.reserve_seat({seat}, 'g', -1)$$, '22023', 'quantity', NULL),
('reserve_seat', 'quantity -2^31', $$SELECT code FROM booking.reserve_seat({seat}, 'g', -2147483648)$$, '22023', 'quantity', NULL),
('reserve_seat', 'quantity 2^31-1 on 10 seats, 3 taken', $$SELECT code || ' ' || http_status FROM booking.reserve_seat({seat}, 'g', 2147483647)$$, NULL, NULL, '^sold_out 409$'),
('reserve_seat', 'quantity 2^31-1 on 2^31-1 seats, 1 taken', $$SELECT code || ' ' || http_status FROM booking.reserve_seat({big}, 'g', 2147483647)$$, NULL, NULL, '^sold_out 409$'),
('reserve_seat', 'quantity 2^31-1, lock_timeout 0 (NOWAIT)', $$SELECT code || ' ' || http_status FROM booking.reserve_seat({big}, 'g', 2147483647, lock_timeout => '0')$$, NULL, NULL, '^sold_out 409$'),
('reserve_seat', 'hold 0', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, hold => '0')$$, '22023', 'hold', NULL),
('reserve_seat', 'hold -1 second', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, hold => '-1 second')$$, '22023', 'hold', NULL),
('reserve_seat', 'hold 1 mon -30 days (zero)', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, hold => '1 mon -30 days')$$, '22023', 'hold', NULL),
('reserve_seat', 'hold 3661 days', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, hold => '3661 days')$$, '22023', 'hold', NULL),
('reserve_seat', 'hold 178,000,000 years', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, hold => '178000000 years')$$, '22023', 'hold', NULL),
('reserve_seat', 'hold -178,000,000 years', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, hold => '-178000000 years')$$, '22023', 'hold', NULL),
('reserve_seat', 'idempotency_key of 0 bytes', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, idempotency_key => '')$$, '22023', 'idempotency_key', NULL),
('reserve_seat', 'idempotency_key of 100 KB', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, idempotency_key => repeat('k', 102400))$$, '22023', 'idempotency_key', NULL),
('reserve_seat', 'idempotency_key of 256 bytes in 128 characters', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, idempotency_key => repeat('é', 128))$$, '22023', 'idempotency_key', NULL),
('reserve_seat', 'lock_timeout -1 ms', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, lock_timeout => '-1 millisecond')$$, '22023', 'lock_timeout', NULL),
('reserve_seat', 'lock_timeout 25 days (over 2^31-1 ms)', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, lock_timeout => '25 days')$$, '22023', 'lock_timeout', NULL),
('reserve_seat', 'lock_timeout 178,000,000 years', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, lock_timeout => '178000000 years')$$, '22023', 'lock_timeout', NULL),
('reserve_seat', 'lock_timeout 2147483647.5 ms (over 2^31-1 ms once rounded)', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, lock_timeout => '2147483647.5 ms')$$, '22023', 'lock_timeout', NULL),
('reserve_seat', 'unknown resource 0', $$SELECT code || ' ' || http_status FROM booking.reserve_seat(0, 'g', 1)$$, NULL, NULL, '^not_found 404$'),
('reserve_seat', 'unknown resource -2^63', $$SELECT code || ' ' || http_status FROM booking.reserve_seat(-9223372036854775808, 'g', 1)$$, NULL, NULL, '^not_found 404$'),
('reserve_seat', 'unknown resource 2^63-1', $$SELECT code || ' ' || http_status FROM booking.reserve_seat(9223372036854775807, 'g', 1)$$, NULL, NULL, '^not_found 404$'),
-- reserve_stay(resource, guest, during, hold, idempotency_key, lock_timeout)
('reserve_stay', 'resource NULL', $$SELECT code FROM booking.reserve_stay(NULL, 'g', '[2030-01-01, 2030-01-02)')$$, '22004', 'resource', NULL),
('reserve_stay', 'guest NULL', $$SELECT code FROM booking.reserve_stay({room}, NULL, '[2030-01-01, 2030-01-02)')$$, '22004', 'guest', NULL),
('reserve_stay', 'during NULL', $$SELECT code FROM booking.reserve_stay({room}, 'g', NULL)$$, '22004', 'during', NULL),
('reserve_stay', 'hold, idempotency_key, lock_timeout NULL (defaults), unknown resource', $$SELECT code || ' ' || http_status FROM booking.reserve_stay(-1, 'g', '[2030-01-01, 2030-01-02)', NULL, NULL, NULL)$$, NULL, NULL, '^not_found 404$'),
('reserve_stay', 'during empty', $$SELECT code FROM booking.reserve_stay({room}, 'g', 'empty')$$, '22023', 'during', NULL),
('reserve_stay', 'during without an upper bound', $$SELECT code FROM booking.reserve_stay({room}, 'g', '[2030-01-01,)')$$, '22023', 'during', NULL),
('reserve_stay', 'during without a lower bound', $$SELECT code FROM booking.reserve_stay({room}, 'g', '(,2030-01-01)')$$, '22023', 'during', NULL),
('reserve_stay', 'during (,)', $$SELECT code FROM booking.reserve_stay({room}, 'g', '(,)')$$, '22023', 'during', NULL),
('reserve_stay', 'during from -infinity', $$SELECT code FROM booking.reserve_stay({room}, 'g', '[-infinity, 2030-01-01)')$$, '22023', 'during', NULL),
('reserve_stay', 'during to infinity', $$SELECT code FROM booking.reserve_stay({room}, 'g', '[2030-01-01, infinity)')$$, '22023', 'during', NULL),
('reserve_stay', 'during [a,a] (one instant)', $$SELECT code FROM booking.reserve_stay({room}, 'g', '[2030-01-01, 2030-01-01]')$$, '22023', 'during', NULL),
('reserve_stay', 'guest of 100 KB', $$SELECT code FROM booking.reserve_stay({room}, repeat('g', 102400), '[2030-01-01, 2030-01-02)')$$, '22023', 'guest', NULL),
('reserve_stay', 'hold -1 day', $$SELECT code FROM booking.reserve_stay({room}, 'g', '[2030-01-01, 2030-01-02)', hold => '-1 day')$$, '22023', 'hold', NULL),
('reserve_stay', 'idempotency_key of 0 bytes', $$SELECT code FROM booking.reserve_stay({room}, 'g', '[2030-01-01, 2030-01-02)', idempotency_key => '')$$, '22023', 'idempotency_key', NULL),
('reserve_stay', 'lock_timeout -1 s', $$SELECT code FROM booking.reserve_stay({room}, 'g', '[2030-01-01, 2030-01-02)', lock_timeout => '-1 s')$$, '22023', 'lock_timeout', NULL),
('reserve_stay', 'lock_timeout 2147483647.5 ms (over 2^31-1 ms once rounded)', $$SELECT code FROM booking.reserve_stay({room}, 'g', '[2030-01-01, 2030-01-02)', lock_timeout => '2147483647.5 ms')$$, '22023', 'lock_timeout', NULL),
('reserve_stay', 'a range overlapping a confirmed stay', $$SELECT code || ' ' || http_status FROM booking.reserve_stay({room}, 'g', '[2030-06-03, 2030-06-05)')$$, NULL, NULL, '^(unavailable|just_taken) 409$'),
('reserve_stay', 'a taken range just before the end of time', $$SELECT code || ' ' || http_status FROM booking.reserve_stay({room2}, 'g', '[294276-12-30 00:00+00, 294276-12-31 00:00+00)')$$, NULL, NULL, '^(unavailable|just_taken) 409$'),
-- reserve_stays(resources, guest, during, hold, idempotency_key, lock_timeout)
('reserve_stays', 'resources NULL', $$SELECT code FROM booking.reserve_stays(NULL, 'g', '[2030-01-01, 2030-01-02)')$$, '22004', 'resources', NULL),
('reserve_stays', 'guest NULL', $$SELECT code FROM booking.reserve_stays(ARRAY[{g1}, {g2}], NULL, '[2030-01-01, 2030-01-02)')$$, '22004', 'guest', NULL),
('reserve_stays', 'during NULL', $$SELECT code FROM booking.reserve_stays(ARRAY[{g1}, {g2}], 'g', NULL)$$, '22004', 'during', NULL),
('reserve_stays', 'hold, idempotency_key, lock_timeout NULL (defaults), unknown resources', $$SELECT code || ' ' || http_status FROM booking.reserve_stays(ARRAY[-1, -2]::bigint[], 'g', '[2030-01-01, 2030-01-02)', NULL, NULL, NULL)$$, NULL, NULL, '^not_found 404$'),
('reserve_stays', 'resources empty', $$SELECT code FROM booking.reserve_stays('{}', 'g', '[2030-01-01, 2030-01-02)')$$, '22023', 'resources', NULL),
('reserve_stays', 'resources {NULL}', $$SELECT code FROM booking.reserve_stays('{NULL}', 'g', '[2030-01-01, 2030-01-02)')$$, '22004', 'resources', NULL),
('reserve_stays', 'resources with a NULL element', $$SELECT code FROM booking.reserve_stays(ARRAY[{g1}, NULL], 'g', '[2030-01-01, 2030-01-02)')$$, '22004', 'resources', NULL),
('reserve_stays', 'resources with a duplicate', $$SELECT code FROM booking.reserve_stays(ARRAY[{g1}, {g2}, {g1}], 'g', '[2030-01-01, 2030-01-02)')$$, '22023', 'resources', NULL),
('reserve_stays', 'resources of 10,000 elements', $$SELECT code FROM booking.reserve_stays((SELECT array_agg(g::bigint) FROM generate_series(1, 10000) g), 'g', '[2030-01-01, 2030-01-02)')$$, '22023', 'resources', NULL),
('reserve_stays', 'resources of 10,000 elements, with NULLs and duplicates', $$SELECT code FROM booking.reserve_stays((SELECT array_agg(CASE WHEN g % 7 = 0 THEN NULL ELSE g % 100 END::bigint) FROM generate_series(1, 10000) g), 'g', '[2030-01-01, 2030-01-02)')$$, '22023', 'resources', NULL),
('reserve_stays', 'resources of 101 elements', $$SELECT code FROM booking.reserve_stays((SELECT array_agg(-g::bigint) FROM generate_series(1, 101) g), 'g', '[2030-01-01, 2030-01-02)')$$, '22023', 'resources', NULL),
('reserve_stays', 'resources two-dimensional', $$SELECT code FROM booking.reserve_stays(ARRAY[[{g1}, {g2}], [-1, -2]], 'g', '[2030-01-01, 2030-01-02)')$$, '22023', 'resources', NULL),
('reserve_stays', 'one known and one unknown resource', $$SELECT code || ' ' || http_status FROM booking.reserve_stays(ARRAY[{g1}, -5], 'g', '[2030-01-01, 2030-01-02)')$$, NULL, NULL, '^not_found 404$'),
('reserve_stays', 'a group overlapping a confirmed stay', $$SELECT code || ' ' || http_status FROM booking.reserve_stays(ARRAY[{g1}, {room}], 'g', '[2030-06-02, 2030-06-03)')$$, NULL, NULL, '^(unavailable|just_taken) 409$'),
('reserve_stays', 'a group on a taken range just before the end of time', $$SELECT code || ' ' || http_status FROM booking.reserve_stays(ARRAY[{g1}, {room2}], 'g', '[294276-12-30 00:00+00, 294276-12-31 00:00+00)')$$, NULL, NULL, '^(unavailable|just_taken) 409$'),
('reserve_stays', 'during empty', $$SELECT code FROM booking.reserve_stays(ARRAY[{g1}, {g2}], 'g', 'empty')$$, '22023', 'during', NULL),
('reserve_stays', 'during to infinity', $$SELECT code FROM booking.reserve_stays(ARRAY[{g1}, {g2}], 'g', '[2030-01-01, infinity]')$$, '22023', 'during', NULL),
('reserve_stays', 'idempotency_key of 100 KB', $$SELECT code FROM booking.reserve_stays(ARRAY[{g1}, {g2}], 'g', '[2030-01-01, 2030-01-02)', idempotency_key => repeat('k', 102400))$$, '22023', 'idempotency_key', NULL),
('reserve_stays', 'lock_timeout 2147483647.5 ms (over 2^31-1 ms once rounded)', $$SELECT code FROM booking.reserve_stays(ARRAY[{g1}, {g2}], 'g', '[2030-01-01, 2030-01-02)', lock_timeout => '2147483647.5 ms')$$, '22023', 'lock_timeout', NULL),
-- reserve_stay_any(pool, guest, during, hold, idempotency_key, lock_timeout)
('reserve_stay_any', 'pool NULL', $$SELECT code FROM booking.reserve_stay_any(NULL, 'g', '[2030-01-01, 2030-01-02)')$$, '22004', 'pool', NULL),
('reserve_stay_any', 'guest NULL', $$SELECT code FROM booking.reserve_stay_any({pool}, NULL, '[2030-01-01, 2030-01-02)')$$, '22004', 'guest', NULL),
('reserve_stay_any', 'during NULL', $$SELECT code FROM booking.reserve_stay_any({pool}, 'g', NULL)$$, '22004', 'during', NULL),
('reserve_stay_any', 'hold, idempotency_key, lock_timeout NULL (defaults), unknown pool', $$SELECT code || ' ' || http_status FROM booking.reserve_stay_any(-1, 'g', '[2030-01-01, 2030-01-02)', NULL, NULL, NULL)$$, NULL, NULL, '^not_found 404$'),
('reserve_stay_any', 'unknown pool 2^63-1', $$SELECT code || ' ' || http_status FROM booking.reserve_stay_any(9223372036854775807, 'g', '[2030-01-01, 2030-01-02)')$$, NULL, NULL, '^not_found 404$'),
('reserve_stay_any', 'wrong pool: a resource with no units', $$SELECT code || ' ' || http_status FROM booking.reserve_stay_any({lonely}, 'g', '[2030-01-01, 2030-01-02)')$$, NULL, NULL, '^sold_out 409$'),
('reserve_stay_any', 'wrong pool: a unit, not its pool', $$SELECT code || ' ' || http_status FROM booking.reserve_stay_any({unit1}, 'g', '[2030-01-01, 2030-01-02)')$$, NULL, NULL, '^sold_out 409$'),
('reserve_stay_any', 'during to infinity', $$SELECT code FROM booking.reserve_stay_any({pool}, 'g', '[2030-01-01, infinity)')$$, '22023', 'during', NULL),
('reserve_stay_any', 'hold 3661 days', $$SELECT code FROM booking.reserve_stay_any({pool}, 'g', '[2030-01-01, 2030-01-02)', hold => '3661 days')$$, '22023', 'hold', NULL),
('reserve_stay_any', 'lock_timeout -1 s', $$SELECT code FROM booking.reserve_stay_any({pool}, 'g', '[2030-01-01, 2030-01-02)', lock_timeout => '-1 s')$$, '22023', 'lock_timeout', NULL),
('reserve_stay_any', 'lock_timeout 2147483647.5 ms (over 2^31-1 ms once rounded)', $$SELECT code FROM booking.reserve_stay_any({pool}, 'g', '[2030-01-01, 2030-01-02)', lock_timeout => '2147483647.5 ms')$$, '22023', 'lock_timeout', NULL),
('reserve_stay_any', 'idempotency_key of 0 bytes', $$SELECT code FROM booking.reserve_stay_any({pool}, 'g', '[2030-01-01, 2030-01-02)', idempotency_key => '')$$, '22023', 'idempotency_key', NULL),
-- free_slots(resource, within, min_length)
('free_slots', 'resource NULL', $$SELECT count(*)::text FROM booking.free_slots(NULL, '[2030-01-01, 2030-02-01)', '1 day')$$, '22004', 'resource', NULL),
('free_slots', 'within NULL', $$SELECT count(*)::text FROM booking.free_slots({room}, NULL, '1 day')$$, '22004', 'within', NULL),
('free_slots', 'min_length NULL', $$SELECT count(*)::text FROM booking.free_slots({room}, '[2030-01-01, 2030-02-01)', NULL)$$, '22004', 'min_length', NULL),
('free_slots', 'within empty', $$SELECT count(*)::text FROM booking.free_slots({room}, 'empty', '1 day')$$, '22023', 'within', NULL),
('free_slots', 'within without an upper bound', $$SELECT count(*)::text FROM booking.free_slots({room}, '[2030-01-01,)', '1 day')$$, '22023', 'within', NULL),
('free_slots', 'within [-infinity, infinity]', $$SELECT count(*)::text FROM booking.free_slots({room}, '[-infinity, infinity]', '1 day')$$, '22023', 'within', NULL),
('free_slots', 'min_length -1 day', $$SELECT count(*)::text FROM booking.free_slots({room}, '[2030-01-01, 2030-02-01)', '-1 day')$$, '22023', 'min_length', NULL),
('free_slots', 'min_length 178,000,000 years', $$SELECT count(*)::text FROM booking.free_slots({room}, '[2030-01-01, 2030-02-01)', '178000000 years')$$, '22023', 'min_length', NULL),
('free_slots', 'min_length -178,000,000 years', $$SELECT count(*)::text FROM booking.free_slots({room}, '[2030-01-01, 2030-02-01)', '-178000000 years')$$, '22023', 'min_length', NULL),
('free_slots', 'unknown resource (no slots)', $$SELECT count(*)::text FROM booking.free_slots(-1, '[2030-01-01, 2030-02-01)', '0')$$, NULL, NULL, '^0$'),
('free_slots', 'all of time around one stay', $$SELECT string_agg(s::text, ' ') FROM booking.free_slots({room}, '[4713-01-01 00:00+00 BC, 294276-12-31 00:00+00)', '0') s$$, NULL, NULL,
    '^\["4713-01-01 00:00:00\+00 BC","2030-06-01 00:00:00\+00"\) \["2030-06-04 00:00:00\+00","294276-12-31 00:00:00\+00"\)$'),
('free_slots', 'all of time before a stay at the end of time', $$SELECT coalesce(string_agg(s::text, ' '), 'none') FROM booking.free_slots({room2}, '[4713-01-01 00:00+00 BC, 294276-12-31 00:00+00)', '1 day') s$$, NULL, NULL,
    '^\["4713-01-01 00:00:00\+00 BC","294276-12-25 00:00:00\+00"\)$'),
-- confirm(booking, idempotency_key)
('confirm', 'booking NULL', $$SELECT code FROM booking.confirm(NULL)$$, '22004', 'booking', NULL),
('confirm', 'idempotency_key NULL (default), unknown booking', $$SELECT code || ' ' || http_status FROM booking.confirm(-1, NULL)$$, NULL, NULL, '^not_found 404$'),
('confirm', 'idempotency_key of 0 bytes', $$SELECT code FROM booking.confirm({b_hold}, '')$$, '22023', 'idempotency_key', NULL),
('confirm', 'idempotency_key of 100 KB', $$SELECT code FROM booking.confirm({b_hold}, repeat('k', 102400))$$, '22023', 'idempotency_key', NULL),
('confirm', 'unknown booking 0', $$SELECT code || ' ' || http_status FROM booking.confirm(0)$$, NULL, NULL, '^not_found 404$'),
('confirm', 'unknown booking 2^63-1', $$SELECT code || ' ' || http_status FROM booking.confirm(9223372036854775807)$$, NULL, NULL, '^not_found 404$'),
('confirm', 'a cancelled booking', $$SELECT code || ' ' || http_status FROM booking.confirm({b_can})$$, NULL, NULL, '^invalid_state 409$'),
('confirm', 'an expired hold', $$SELECT code || ' ' || http_status FROM booking.confirm({b_exp})$$, NULL, NULL, '^hold_expired 410$'),
-- cancel(booking, idempotency_key)
('cancel', 'booking NULL', $$SELECT code FROM booking.cancel(NULL)$$, '22004', 'booking', NULL),
('cancel', 'idempotency_key NULL (default), unknown booking', $$SELECT code || ' ' || http_status FROM booking.cancel(-1, NULL)$$, NULL, NULL, '^not_found 404$'),
('cancel', 'idempotency_key of 0 bytes', $$SELECT code FROM booking.cancel({b_conf}, '')$$, '22023', 'idempotency_key', NULL),
('cancel', 'idempotency_key of 100 KB', $$SELECT code FROM booking.cancel({b_conf}, repeat('k', 102400))$$, '22023', 'idempotency_key', NULL),
('cancel', 'unknown booking -2^63', $$SELECT code || ' ' || http_status FROM booking.cancel(-9223372036854775808)$$, NULL, NULL, '^not_found 404$'),
('cancel', 'a cancelled booking', $$SELECT code || ' ' || http_status FROM booking.cancel({b_can})$$, NULL, NULL, '^invalid_state 409$'),
('cancel', 'an expired hold', $$SELECT code || ' ' || http_status FROM booking.cancel({b_exp})$$, NULL, NULL, '^invalid_state 409$'),
-- extend_hold(booking, by)
('extend_hold', 'booking NULL', $$SELECT code FROM booking.extend_hold(NULL, '1 hour')$$, '22004', 'booking', NULL),
('extend_hold', 'by NULL', $$SELECT code FROM booking.extend_hold({b_hold}, NULL)$$, '22004', 'by', NULL),
('extend_hold', 'by 0', $$SELECT code FROM booking.extend_hold({b_hold}, '0')$$, '22023', 'by', NULL),
('extend_hold', 'by -1 hour', $$SELECT code FROM booking.extend_hold({b_hold}, '-1 hour')$$, '22023', 'by', NULL),
('extend_hold', 'by 3661 days', $$SELECT code FROM booking.extend_hold({b_hold}, '3661 days')$$, '22023', 'by', NULL),
('extend_hold', 'by 3660 days on a 1-day hold', $$SELECT code FROM booking.extend_hold({b_hold}, '3660 days')$$, '22023', 'by', NULL),
('extend_hold', 'by 178,000,000 years', $$SELECT code FROM booking.extend_hold({b_hold}, '178000000 years')$$, '22023', 'by', NULL),
('extend_hold', 'by -178,000,000 years', $$SELECT code FROM booking.extend_hold({b_hold}, '-178000000 years')$$, '22023', 'by', NULL),
('extend_hold', 'unknown booking', $$SELECT code || ' ' || http_status FROM booking.extend_hold(-1, '1 hour')$$, NULL, NULL, '^not_found 404$'),
('extend_hold', 'a confirmed booking', $$SELECT code || ' ' || http_status FROM booking.extend_hold({b_conf}, '1 hour')$$, NULL, NULL, '^invalid_state 409$'),
('extend_hold', 'a cancelled booking', $$SELECT code || ' ' || http_status FROM booking.extend_hold({b_can}, '1 hour')$$, NULL, NULL, '^invalid_state 409$'),
('extend_hold', 'an expired hold', $$SELECT code || ' ' || http_status FROM booking.extend_hold({b_exp}, '1 hour')$$, NULL, NULL, '^hold_expired 410$'),
-- hold_expire(batch)
('hold_expire', 'batch 0', $$SELECT booking.hold_expire(0)::text$$, '22023', 'batch', NULL),
('hold_expire', 'batch -1', $$SELECT booking.hold_expire(-1)::text$$, '22023', 'batch', NULL),
('hold_expire', 'batch -2^31', $$SELECT booking.hold_expire(-2147483648)::text$$, '22023', 'batch', NULL),
('hold_expire', 'batch NULL (default), nothing lapsed', $$SELECT booking.hold_expire(NULL)::text$$, NULL, NULL, '^0$'),
('hold_expire', 'batch 2^31-1, nothing lapsed', $$SELECT booking.hold_expire(2147483647)::text$$, NULL, NULL, '^0$');

-- 0.2.0: set_stripes(resource, stripes)
INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result)
SELECT * FROM (VALUES
('set_stripes', 'resource NULL', $$SELECT code FROM booking.set_stripes(NULL, 4)$$, '22004', 'resource', NULL),
('set_stripes', 'stripes NULL', $$SELECT code FROM booking.set_stripes({seat}, NULL)$$, '22004', 'stripes', NULL),
('set_stripes', 'stripes -1', $$SELECT code FROM booking.set_stripes({seat}, -1)$$, '22023', 'stripes', NULL),
('set_stripes', 'stripes 65', $$SELECT code FROM booking.set_stripes({seat}, 65)$$, '22023', 'stripes', NULL),
('set_stripes', 'stripes 2^31-1', $$SELECT code FROM booking.set_stripes({seat}, 2147483647)$$, '22023', 'stripes', NULL),
('set_stripes', 'stripes -2^31', $$SELECT code FROM booking.set_stripes({seat}, -2147483648)$$, '22023', 'stripes', NULL),
('set_stripes', 'unknown resource', $$SELECT code || ' ' || http_status FROM booking.set_stripes(-1, 4)$$, NULL, NULL, '^not_found 404$')
) v WHERE to_regproc('booking.set_stripes') IS NOT NULL;

-- 0.3.0: extend_hold_until(booking, until)
INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result)
SELECT * FROM (VALUES
('extend_hold_until', 'booking NULL', $$SELECT code FROM booking.extend_hold_until(NULL, clock_timestamp() + interval '1 hour')$$, '22004', 'booking', NULL),
('extend_hold_until', 'until NULL', $$SELECT code FROM booking.extend_hold_until({b_hold}, NULL)$$, '22004', 'until', NULL),
('extend_hold_until', 'until infinity', $$SELECT code FROM booking.extend_hold_until({b_hold}, 'infinity')$$, '22023', 'until', NULL),
('extend_hold_until', 'until -infinity', $$SELECT code FROM booking.extend_hold_until({b_hold}, '-infinity')$$, '22023', 'until', NULL),
('extend_hold_until', 'until in the past', $$SELECT code FROM booking.extend_hold_until({b_hold}, '2000-01-01 00:00+00')$$, '22023', 'until', NULL),
('extend_hold_until', 'until at the start of the transaction', $$SELECT code FROM booking.extend_hold_until({b_hold}, now())$$, '22023', 'until', NULL),
('extend_hold_until', 'until 3661 days ahead', $$SELECT code FROM booking.extend_hold_until({b_hold}, clock_timestamp() + interval '3661 days')$$, '22023', 'until', NULL),
('extend_hold_until', 'until at the end of time', $$SELECT code FROM booking.extend_hold_until({b_hold}, '294276-12-31 00:00+00')$$, '22023', 'until', NULL),
('extend_hold_until', 'unknown booking', $$SELECT code || ' ' || http_status FROM booking.extend_hold_until(-1, clock_timestamp() + interval '1 hour')$$, NULL, NULL, '^not_found 404$'),
('extend_hold_until', 'a confirmed booking', $$SELECT code || ' ' || http_status FROM booking.extend_hold_until({b_conf}, clock_timestamp() + interval '1 hour')$$, NULL, NULL, '^invalid_state 409$'),
('extend_hold_until', 'a cancelled booking', $$SELECT code || ' ' || http_status FROM booking.extend_hold_until({b_can}, clock_timestamp() + interval '1 hour')$$, NULL, NULL, '^invalid_state 409$'),
('extend_hold_until', 'an expired hold', $$SELECT code || ' ' || http_status FROM booking.extend_hold_until({b_exp}, clock_timestamp() + interval '1 hour')$$, NULL, NULL, '^hold_expired 410$')
) v WHERE to_regproc('booking.extend_hold_until') IS NOT NULL;

-- 0.4.0: distribute(shard_count), and the twins booking.shard_<name>(..., home)
-- that a Citus coordinator calls (on one server every home is 0)
INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result)
SELECT * FROM (VALUES
('distribute', 'shard_count 0', $$SELECT booking.distribute(0)$$, '22023', 'shard_count', NULL),
('distribute', 'shard_count -2^31', $$SELECT booking.distribute(-2147483648)$$, '22023', 'shard_count', NULL),
('distribute', 'shard_count 2^31-1', $$SELECT booking.distribute(2147483647)$$, '22023', 'shard_count', NULL),
('distribute', 'shard_count NULL (default), no Citus', $$SELECT booking.distribute(NULL)$$, '55000', 'booking.distribute()', NULL),
('delegate_calls', 'no Citus', $$SELECT booking.delegate_calls()$$, '55000', 'booking.delegate_calls()', NULL),
('delegate_calls', 'enabled NULL (default), no Citus', $$SELECT booking.delegate_calls(NULL)$$, '55000', 'booking.delegate_calls()', NULL),
('delegate_calls', 'enabled false, no Citus', $$SELECT booking.delegate_calls(false)$$, '55000', 'booking.delegate_calls()', NULL),
('shard_reserve_seat', 'home NULL', $$SELECT code FROM booking.shard_reserve_seat({seat}, 'g', 1, NULL, NULL, NULL, NULL, NULL)$$, '22004', 'home', NULL),
('shard_reserve_seat', 'home not the resource''s', $$SELECT code FROM booking.shard_reserve_seat({seat}, 'g', 1, NULL, NULL, NULL, NULL, 1)$$, '22023', 'home', NULL),
('shard_reserve_seat', 'resource NULL', $$SELECT code FROM booking.shard_reserve_seat(NULL, 'g', 1, NULL, NULL, NULL, NULL, 0)$$, '22004', 'resource', NULL),
('shard_reserve_stay', 'home -2^63', $$SELECT code FROM booking.shard_reserve_stay({room}, 'g', '[2031-01-01, 2031-01-02)', NULL, NULL, NULL, NULL, -9223372036854775808)$$, '22023', 'home', NULL),
('shard_reserve_stay', 'during NULL', $$SELECT code FROM booking.shard_reserve_stay({room}, 'g', NULL, NULL, NULL, NULL, NULL, 0)$$, '22004', 'during', NULL),
('shard_reserve_stays', 'home 2^63-1', $$SELECT code FROM booking.shard_reserve_stays(ARRAY[{room}], 'g', '[2031-01-01, 2031-01-02)', NULL, NULL, NULL, NULL, 9223372036854775807)$$, '22023', 'home', NULL),
('shard_reserve_stays', 'resources NULL', $$SELECT code FROM booking.shard_reserve_stays(NULL, 'g', '[2031-01-01, 2031-01-02)', NULL, NULL, NULL, NULL, 0)$$, '22004', 'resources', NULL),
('shard_reserve_stay_any', 'home NULL', $$SELECT code FROM booking.shard_reserve_stay_any({pool}, 'g', '[2031-01-01, 2031-01-02)', NULL, NULL, NULL, NULL, NULL)$$, '22004', 'home', NULL),
('shard_confirm', 'home 1', $$SELECT code FROM booking.shard_confirm({b_conf}, NULL, 1)$$, '22023', 'home', NULL),
('shard_confirm', 'the right home: a confirmed booking', $$SELECT code || ' ' || http_status FROM booking.shard_confirm({b_conf}, NULL, 0)$$, NULL, NULL, '^ok 200$'),
('shard_cancel', 'home NULL', $$SELECT code FROM booking.shard_cancel({b_conf}, NULL, NULL)$$, '22004', 'home', NULL),
('shard_extend_hold', 'home 1', $$SELECT code FROM booking.shard_extend_hold({b_hold}, '1 minute', 1)$$, '22023', 'home', NULL),
('shard_extend_hold_until', 'home NULL', $$SELECT code FROM booking.shard_extend_hold_until({b_hold}, clock_timestamp() + interval '1 hour', NULL)$$, '22004', 'home', NULL),
('shard_set_capacity', 'home 1', $$SELECT code FROM booking.shard_set_capacity({seat}, 5, 1, 1)$$, '22023', 'home', NULL),
('shard_set_stripes', 'home NULL', $$SELECT code FROM booking.shard_set_stripes({seat}, 4, NULL)$$, '22004', 'home', NULL),
('shard_stay_member', 'home 1', $$SELECT code FROM booking.shard_stay_member({room}, 'g', '[2031-01-01, 2031-01-02)', NULL, NULL, NULL, NULL, 1)$$, '22023', 'home', NULL),
('shard_stay_member', 'guest NULL', $$SELECT code FROM booking.shard_stay_member({room}, NULL, '[2031-01-01, 2031-01-02)', NULL, NULL, NULL, NULL, 0)$$, '22004', 'guest', NULL)
) v WHERE to_regproc('booking.distribute') IS NOT NULL;

-- 0.5.0: set_guest_limit, set_buffer, reserve_seats, reduce, move_stay and
-- their twins.  Only errors and refusals that write nothing: a refused pass
-- fails on its first member, so no booking id is drawn.
INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result)
SELECT * FROM (VALUES
('set_guest_limit', 'resource NULL', $$SELECT code FROM booking.set_guest_limit(NULL, 2)$$, '22004', 'resource', NULL),
('set_guest_limit', 'max_per_guest 0', $$SELECT code FROM booking.set_guest_limit({seat}, 0)$$, '22023', 'max_per_guest', NULL),
('set_guest_limit', 'max_per_guest -2^31', $$SELECT code FROM booking.set_guest_limit({seat}, -2147483648)$$, '22023', 'max_per_guest', NULL),
('set_guest_limit', 'unknown resource 2^63-1, max_per_guest NULL', $$SELECT code || ' ' || http_status FROM booking.set_guest_limit(9223372036854775807, NULL)$$, NULL, NULL, '^not_found 404$'),
('set_buffer', 'resource NULL', $$SELECT code FROM booking.set_buffer(NULL, '1 hour', '1 hour')$$, '22004', 'resource', NULL),
('set_buffer', 'before NULL', $$SELECT code FROM booking.set_buffer({room}, NULL, '1 hour')$$, '22004', 'before', NULL),
('set_buffer', 'after NULL', $$SELECT code FROM booking.set_buffer({room}, '1 hour', NULL)$$, '22004', 'after', NULL),
('set_buffer', 'before -1 microsecond', $$SELECT code FROM booking.set_buffer({room}, '-1 microsecond', '0')$$, '22023', 'before', NULL),
('set_buffer', 'after 1 month', $$SELECT code FROM booking.set_buffer({room}, '0', '1 month')$$, '22023', 'after', NULL),
('set_buffer', 'after 178,000,000 years', $$SELECT code FROM booking.set_buffer({room}, '0', '178000000 years')$$, '22023', 'after', NULL),
('set_buffer', 'before 367 days', $$SELECT code FROM booking.set_buffer({room}, '367 days', '0')$$, '22023', 'before', NULL),
('set_buffer', 'before 2^31-1 days', $$SELECT code FROM booking.set_buffer({room}, '2147483647 days', '0')$$, '22023', 'before', NULL),
('set_buffer', 'before -2^63 microseconds', $$SELECT code FROM booking.set_buffer({room}, '-9223372036854775808 microseconds', '0')$$, '22023', 'before', NULL),
('set_buffer', 'unknown resource -1', $$SELECT code || ' ' || http_status FROM booking.set_buffer(-1, '0', '0')$$, NULL, NULL, '^not_found 404$'),
('reserve_seats', 'resources NULL', $$SELECT code FROM booking.reserve_seats(NULL, 'g')$$, '22004', 'resources', NULL),
('reserve_seats', 'resources empty', $$SELECT code FROM booking.reserve_seats('{}', 'g')$$, '22023', 'resources', NULL),
('reserve_seats', 'resources with a NULL', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}, NULL], 'g')$$, '22004', 'resources', NULL),
('reserve_seats', 'resources with a duplicate', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}, {seat}], 'g')$$, '22023', 'resources', NULL),
('reserve_seats', 'resources of 101 elements', $$SELECT code FROM booking.reserve_seats(ARRAY(SELECT g::bigint FROM generate_series(1, 101) g), 'g')$$, '22023', 'resources', NULL),
('reserve_seats', 'resources of 1,000,000 elements', $$SELECT code FROM booking.reserve_seats(array_fill(1::bigint, ARRAY[1000000]), 'g')$$, '22023', 'resources', NULL),
('reserve_seats', 'resources two-dimensional', $$SELECT code FROM booking.reserve_seats(ARRAY[[{seat}], [{big}]], 'g')$$, '22023', 'resources', NULL),
('reserve_seats', 'resources with id 0', $$SELECT code FROM booking.reserve_seats(ARRAY[0, {seat}], 'g')$$, '22023', 'resources', NULL),
('reserve_seats', 'resources with id -2^63', $$SELECT code FROM booking.reserve_seats(ARRAY[-9223372036854775808, {seat}], 'g')$$, '22023', 'resources', NULL),
('reserve_seats', 'guest NULL', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}], NULL)$$, '22004', 'guest', NULL),
('reserve_seats', 'guest of 100 KB', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}], repeat('g', 102400))$$, '22023', 'guest', NULL),
('reserve_seats', 'quantities shorter than resources', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}, {big}], 'g', ARRAY[1])$$, '22023', 'quantities', NULL),
('reserve_seats', 'quantities empty', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}], 'g', '{}')$$, '22023', 'quantities', NULL),
('reserve_seats', 'quantities with a NULL', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}, {big}], 'g', ARRAY[1, NULL])$$, '22004', 'quantities', NULL),
('reserve_seats', 'quantities with 0', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}, {big}], 'g', ARRAY[1, 0])$$, '22023', 'quantities', NULL),
('reserve_seats', 'quantities with -2^31', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}], 'g', ARRAY[-2147483648])$$, '22023', 'quantities', NULL),
('reserve_seats', 'quantities two-dimensional', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}, {big}], 'g', ARRAY[[1], [1]])$$, '22023', 'quantities', NULL),
('reserve_seats', 'hold -1 hour', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}], 'g', NULL, '-1 hour')$$, '22023', 'hold', NULL),
('reserve_seats', 'idempotency_key of 256 bytes', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}], 'g', NULL, NULL, repeat('k', 256))$$, '22023', 'idempotency_key', NULL),
('reserve_seats', 'lock_timeout -1 second', $$SELECT code FROM booking.reserve_seats(ARRAY[{seat}], 'g', NULL, NULL, NULL, '-1 second')$$, '22023', 'lock_timeout', NULL),
('reserve_seats', 'quantity 2^31-1 of the first member (10 seats, 3 taken)', $$SELECT code || ' ' || http_status FROM booking.reserve_seats(ARRAY[{big}, {seat}], 'g', ARRAY[1, 2147483647])$$, NULL, NULL, '^sold_out 409$'),
('reserve_seats', 'unknown first member 2^63-1', $$SELECT code || ' ' || http_status FROM booking.reserve_seats(ARRAY[9223372036854775807], 'g')$$, NULL, NULL, '^not_found 404$'),
('reduce', 'booking NULL', $$SELECT code FROM booking.reduce(NULL, 1)$$, '22004', 'booking', NULL),
('reduce', 'quantity NULL', $$SELECT code FROM booking.reduce({b_conf}, NULL)$$, '22004', 'quantity', NULL),
('reduce', 'quantity 0', $$SELECT code FROM booking.reduce({b_conf}, 0)$$, '22023', 'quantity', NULL),
('reduce', 'quantity -2^31', $$SELECT code FROM booking.reduce({b_conf}, -2147483648)$$, '22023', 'quantity', NULL),
('reduce', 'idempotency_key empty', $$SELECT code FROM booking.reduce({b_conf}, 1, '')$$, '22023', 'idempotency_key', NULL),
('reduce', 'quantity 2^31-1 of a booking of 2 seats', $$SELECT code || ' ' || http_status FROM booking.reduce({b_conf}, 2147483647)$$, NULL, NULL, '^invalid_state 409$'),
('reduce', 'a cancelled booking', $$SELECT code || ' ' || http_status FROM booking.reduce({b_can}, 1)$$, NULL, NULL, '^invalid_state 409$'),
('reduce', 'a stay', $$SELECT code || ' ' || http_status FROM booking.reduce({b_stay}, 1)$$, NULL, NULL, '^invalid_state 409$'),
('reduce', 'unknown booking -2^63', $$SELECT code || ' ' || http_status FROM booking.reduce(-9223372036854775808, 1)$$, NULL, NULL, '^not_found 404$'),
('move_stay', 'booking NULL', $$SELECT code FROM booking.move_stay(NULL, '[2031-01-01, 2031-01-02)')$$, '22004', 'booking', NULL),
('move_stay', 'during NULL', $$SELECT code FROM booking.move_stay({b_stay}, NULL)$$, '22004', 'during', NULL),
('move_stay', 'during empty', $$SELECT code FROM booking.move_stay({b_stay}, 'empty')$$, '22023', 'during', NULL),
('move_stay', 'during unbounded', $$SELECT code FROM booking.move_stay({b_stay}, '(,)')$$, '22023', 'during', NULL),
('move_stay', 'during to infinity', $$SELECT code FROM booking.move_stay({b_stay}, '[2031-01-01, infinity)')$$, '22023', 'during', NULL),
('move_stay', 'lock_timeout -1 second', $$SELECT code FROM booking.move_stay({b_stay}, '[2031-01-01, 2031-01-02)', NULL, '-1 second')$$, '22023', 'lock_timeout', NULL),
('move_stay', 'idempotency_key of 100 KB', $$SELECT code FROM booking.move_stay({b_stay}, '[2031-01-01, 2031-01-02)', repeat('k', 102400))$$, '22023', 'idempotency_key', NULL),
('move_stay', 'a seat booking', $$SELECT code || ' ' || http_status FROM booking.move_stay({b_conf}, '[2031-01-01, 2031-01-02)')$$, NULL, NULL, '^invalid_state 409$'),
('move_stay', 'a cancelled booking', $$SELECT code || ' ' || http_status FROM booking.move_stay({b_can}, '[2031-01-01, 2031-01-02)')$$, NULL, NULL, '^invalid_state 409$'),
('move_stay', 'unknown booking 2^63-1', $$SELECT code || ' ' || http_status FROM booking.move_stay(9223372036854775807, '[2031-01-01, 2031-01-02)')$$, NULL, NULL, '^not_found 404$'),
('shard_set_guest_limit', 'home 1', $$SELECT code FROM booking.shard_set_guest_limit({seat}, 2, 1)$$, '22023', 'home', NULL),
('shard_set_buffer', 'home NULL', $$SELECT code FROM booking.shard_set_buffer({room}, '0', '0', NULL)$$, '22004', 'home', NULL),
('shard_reserve_seats', 'home 1', $$SELECT code FROM booking.shard_reserve_seats(ARRAY[{seat}], 'g', NULL, NULL, NULL, NULL, NULL, 1)$$, '22023', 'home', NULL),
('shard_seat_member', 'home NULL', $$SELECT code FROM booking.shard_seat_member({seat}, 'g', 1, NULL, NULL, NULL, NULL, NULL)$$, '22004', 'home', NULL),
('shard_seat_member', 'expires_at infinity', $$SELECT code FROM booking.shard_seat_member({seat}, 'g', 1, 'infinity', NULL, NULL, NULL, 0)$$, '22023', 'expires_at', NULL),
('shard_seat_member', 'expires_at in 2300 (0.7.0: past what a hold can reach)', $$SELECT code FROM booking.shard_seat_member({seat}, 'g', 1, '2300-01-01', NULL, NULL, NULL, 0)$$, '22023', 'expires_at', NULL),
('shard_seat_member', 'expires_at a year ago (0.7.0: lapsed when made)', $$SELECT code FROM booking.shard_seat_member({seat}, 'g', 1, clock_timestamp() - interval '1 year', NULL, NULL, NULL, 0)$$, '22023', 'expires_at', NULL),
('shard_seat_member', 'group_id 0 (0.7.0)', $$SELECT code FROM booking.shard_seat_member({seat}, 'g', 1, NULL, 0, NULL, NULL, 0)$$, '22023', 'group_id', NULL),
('shard_stay_member', 'expires_at in 2300 (0.7.0)', $$SELECT code FROM booking.shard_stay_member({room}, 'g', '[2031-01-01, 2031-01-02)', '2300-01-01', NULL, NULL, NULL, 0)$$, '22023', 'expires_at', NULL),
('shard_stay_member', 'group_id -1 (0.7.0)', $$SELECT code FROM booking.shard_stay_member({room}, 'g', '[2031-01-01, 2031-01-02)', NULL, -1, NULL, NULL, 0)$$, '22023', 'group_id', NULL),
('shard_reduce', 'home 1', $$SELECT code FROM booking.shard_reduce({b_conf}, 1, NULL, 1)$$, '22023', 'home', NULL),
('shard_move_stay', 'home NULL', $$SELECT code FROM booking.shard_move_stay({b_stay}, '[2031-01-01, 2031-01-02)', NULL, NULL, NULL)$$, '22004', 'home', NULL)
) v WHERE to_regproc('booking.reserve_seats') IS NOT NULL;

-- 0.6.0: the waitlist (join_waitlist and its twin), the outbox
-- (add_consumer, drop_consumer, claim_events, ack_events) and health().
-- Only errors and answers that write nothing: no consumer is registered in
-- the fixture, so every claim and ack names an unknown one or fails on its
-- arguments first, and drop_consumer of an unknown name removes nothing.
INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result)
SELECT * FROM (VALUES
('join_waitlist', 'resource NULL', $$SELECT code FROM booking.join_waitlist(NULL, 'g')$$, '22004', 'resource', NULL),
('join_waitlist', 'unknown resource 0', $$SELECT code || ' ' || http_status FROM booking.join_waitlist(0, 'g')$$, NULL, NULL, '^not_found 404$'),
('join_waitlist', 'unknown resource -2^63', $$SELECT code || ' ' || http_status FROM booking.join_waitlist(-9223372036854775808, 'g')$$, NULL, NULL, '^not_found 404$'),
('join_waitlist', 'guest NULL', $$SELECT code FROM booking.join_waitlist({seat}, NULL)$$, '22004', 'guest', NULL),
('join_waitlist', 'guest empty', $$SELECT code FROM booking.join_waitlist({seat}, '')$$, '22023', 'guest', NULL),
('join_waitlist', 'guest of 100 KB', $$SELECT code FROM booking.join_waitlist({seat}, repeat('g', 102400))$$, '22023', 'guest', NULL),
('join_waitlist', 'quantity NULL', $$SELECT code FROM booking.join_waitlist({seat}, 'g', NULL)$$, '22004', 'quantity', NULL),
('join_waitlist', 'quantity 0', $$SELECT code FROM booking.join_waitlist({seat}, 'g', 0)$$, '22023', 'quantity', NULL),
('join_waitlist', 'quantity -2^31', $$SELECT code FROM booking.join_waitlist({seat}, 'g', -2147483648)$$, '22023', 'quantity', NULL),
('join_waitlist', 'idempotency_key empty', $$SELECT code FROM booking.join_waitlist({seat}, 'g', 1, '')$$, '22023', 'idempotency_key', NULL),
('join_waitlist', 'idempotency_key of 100 KB', $$SELECT code FROM booking.join_waitlist({seat}, 'g', 1, repeat('k', 102400))$$, '22023', 'idempotency_key', NULL),
('join_waitlist', 'quantity 2^31-1 (more than the 10 seats in all)', $$SELECT code || ' ' || http_status FROM booking.join_waitlist({seat}, 'g', 2147483647)$$, NULL, NULL, '^sold_out 409$'),
('join_waitlist', 'seats free, nobody waiting', $$SELECT code || ' ' || http_status FROM booking.join_waitlist({big}, 'g', 1)$$, NULL, NULL, '^seats_available 409$'),
('join_waitlist', 'unknown resource 2^63-1', $$SELECT code || ' ' || http_status FROM booking.join_waitlist(9223372036854775807, 'g')$$, NULL, NULL, '^not_found 404$'),
('shard_join_waitlist', 'home NULL', $$SELECT code FROM booking.shard_join_waitlist({seat}, 'g', 1, NULL, NULL, NULL)$$, '22004', 'home', NULL),
('shard_join_waitlist', 'home 1', $$SELECT code FROM booking.shard_join_waitlist({seat}, 'g', 1, NULL, NULL, 1)$$, '22023', 'home', NULL),
('shard_join_waitlist', 'quantity NULL', $$SELECT code FROM booking.shard_join_waitlist({seat}, 'g', NULL, NULL, NULL, 0)$$, '22004', 'quantity', NULL),
('add_consumer', 'name NULL', $$SELECT booking.add_consumer(NULL)::text$$, '22004', 'name', NULL),
('add_consumer', 'name empty', $$SELECT booking.add_consumer('')::text$$, '22023', 'name', NULL),
('add_consumer', 'name of 201 bytes', $$SELECT booking.add_consumer(repeat('c', 201))::text$$, '22023', 'name', NULL),
('add_consumer', 'name of 100 KB', $$SELECT booking.add_consumer(repeat('c', 102400))::text$$, '22023', 'name', NULL),
('drop_consumer', 'name NULL', $$SELECT booking.drop_consumer(NULL)::text$$, '22004', 'name', NULL),
('drop_consumer', 'name empty', $$SELECT booking.drop_consumer('')::text$$, '22023', 'name', NULL),
('drop_consumer', 'name of 100 KB', $$SELECT booking.drop_consumer(repeat('c', 102400))::text$$, '22023', 'name', NULL),
('drop_consumer', 'unknown name', $$SELECT booking.drop_consumer('nobody')::text$$, NULL, NULL, '^false$'),
('claim_events', 'consumer NULL', $$SELECT count(*)::text FROM booking.claim_events(NULL)$$, '22004', 'consumer', NULL),
('claim_events', 'consumer empty', $$SELECT count(*)::text FROM booking.claim_events('')$$, '22023', 'consumer', NULL),
('claim_events', 'consumer of 100 KB', $$SELECT count(*)::text FROM booking.claim_events(repeat('c', 102400))$$, '22023', 'consumer', NULL),
('claim_events', 'consumer unknown', $$SELECT count(*)::text FROM booking.claim_events('nobody')$$, '22023', 'consumer', NULL),
('claim_events', 'batch NULL (the default) of an unknown consumer', $$SELECT count(*)::text FROM booking.claim_events('nobody', NULL)$$, '22023', 'consumer', NULL),
('claim_events', 'batch 0', $$SELECT count(*)::text FROM booking.claim_events('nobody', 0)$$, '22023', 'batch', NULL),
('claim_events', 'batch -2^31', $$SELECT count(*)::text FROM booking.claim_events('nobody', -2147483648)$$, '22023', 'batch', NULL),
('claim_events', 'batch 10001', $$SELECT count(*)::text FROM booking.claim_events('nobody', 10001)$$, '22023', 'batch', NULL),
('claim_events', 'batch 2^31-1', $$SELECT count(*)::text FROM booking.claim_events('nobody', 2147483647)$$, '22023', 'batch', NULL),
('claim_events', 'lease NULL (the default) of an unknown consumer', $$SELECT count(*)::text FROM booking.claim_events('nobody', 1, NULL)$$, '22023', 'consumer', NULL),
('claim_events', 'lease 0', $$SELECT count(*)::text FROM booking.claim_events('nobody', 1, '0')$$, '22023', 'lease', NULL),
('claim_events', 'lease -1 microsecond', $$SELECT count(*)::text FROM booking.claim_events('nobody', 1, '-1 microsecond')$$, '22023', 'lease', NULL),
('claim_events', 'lease 178,000,000 years', $$SELECT count(*)::text FROM booking.claim_events('nobody', 1, '178000000 years')$$, '22023', 'lease', NULL),
('claim_events', 'lease -2^63 microseconds', $$SELECT count(*)::text FROM booking.claim_events('nobody', 1, '-9223372036854775808 microseconds')$$, '22023', 'lease', NULL),
('ack_events', 'consumer NULL', $$SELECT booking.ack_events(NULL, 1, '{1}')::text$$, '22004', 'consumer', NULL),
('ack_events', 'consumer empty', $$SELECT booking.ack_events('', 1, '{1}')::text$$, '22023', 'consumer', NULL),
('ack_events', 'consumer unknown', $$SELECT booking.ack_events('nobody', 1, '{1}')::text$$, '22023', 'consumer', NULL),
('ack_events', 'lease_token NULL', $$SELECT booking.ack_events('nobody', NULL, '{1}')::text$$, '22004', 'lease_token', NULL),
('ack_events', 'events NULL', $$SELECT booking.ack_events('nobody', 1, NULL)::text$$, '22004', 'events', NULL),
('ack_events', 'events with a NULL', $$SELECT booking.ack_events('nobody', 1, '{1,NULL}')::text$$, '22004', 'events', NULL),
('ack_events', 'events two-dimensional', $$SELECT booking.ack_events('nobody', 1, '{{1},{2}}')::text$$, '22023', 'events', NULL),
('ack_events', 'events of 10,001 elements', $$SELECT booking.ack_events('nobody', 1, array_fill(1::bigint, ARRAY[10001]))::text$$, '22023', 'events', NULL),
('ack_events', 'events of 1,000,000 elements', $$SELECT booking.ack_events('nobody', 1, array_fill(1::bigint, ARRAY[1000000]))::text$$, '22023', 'events', NULL),
('health', 'no arguments: one row per figure, never an error', $$SELECT count(*)::text FROM booking.health() WHERE value IS NOT NULL AND value >= 0$$, NULL, NULL, '^[0-9]+$')
) v WHERE to_regproc('booking.join_waitlist') IS NOT NULL;

-- stats() and stats_reset() take no argument: their calls check that the
-- counters stay consistent whatever was called before them (on a server that
-- does not preload booking both say why they count nothing, in a NOTICE
-- below client_min_messages)
INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result)
SELECT * FROM (VALUES
('stats', 'no row has zero calls', $$SELECT count(*)::text FROM booking.stats() WHERE calls < 1 OR code IS NULL OR function IS NULL$$, NULL, NULL, '^0$'),
('stats', 'times are consistent', $$SELECT count(*)::text FROM booking.stats() WHERE NOT (total_ms >= max_ms AND max_ms >= 0 AND lock_wait_ms >= 0)$$, NULL, NULL, '^0$'),
('stats_reset', 'after the bad calls', $$SELECT booking.stats_reset()::text$$, NULL, NULL, '^$'),
('stats', 'after a reset: no row', $$SELECT count(*)::text FROM booking.stats()$$, NULL, NULL, '^0$'),
('stats_reset', 'twice', $$SELECT booking.stats_reset()::text || booking.stats_reset()::text$$, NULL, NULL, '^$')
) v WHERE to_regproc('booking.stats') IS NOT NULL;

-- 0.7.0: the grant sets.  Their one argument is a role; a name that is not
-- one is refused by the regrole cast itself (42704)
INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result)
SELECT * FROM (VALUES
('grant_client', 'role NULL', $$SELECT booking.grant_client(NULL)$$, '22004', 'role', NULL),
('grant_relay', 'role NULL', $$SELECT booking.grant_relay(NULL)$$, '22004', 'role', NULL),
('grant_admin', 'role NULL', $$SELECT booking.grant_admin(NULL)$$, '22004', 'role', NULL),
('grant_client', 'role ''public'' (not a role)', $$SELECT booking.grant_client('public')$$, '42704', 'role', NULL),
('grant_admin', 'a role of 100 KB', $$SELECT booking.grant_admin(repeat('r', 102400)::regrole)$$, '42704', 'role', NULL)
) v WHERE to_regproc('booking.grant_client') IS NOT NULL;

-- 0.8.0: get_booking, forget_guest, and metadata on the calls that create a
-- booking (a JSON object of at most 8 kB as text).  forget_guest checks its
-- argument before it refuses REPEATABLE READ and SERIALIZABLE.
INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result)
SELECT * FROM (VALUES
('get_booking', 'booking NULL', $$SELECT count(*)::text FROM booking.get_booking(NULL)$$, '22004', 'booking', NULL),
('get_booking', 'unknown booking 2^63-1: no row', $$SELECT count(*)::text FROM booking.get_booking(9223372036854775807)$$, NULL, NULL, '^0$'),
('get_booking', 'unknown booking -2^63: no row', $$SELECT count(*)::text FROM booking.get_booking(-9223372036854775808)$$, NULL, NULL, '^0$'),
('forget_guest', 'guest NULL', $$SELECT booking.forget_guest(NULL)::text$$, '22004', 'guest', NULL),
('forget_guest', 'guest empty', $$SELECT booking.forget_guest('')::text$$, '22023', 'guest', NULL),
('forget_guest', 'guest of 100 KB', $$SELECT booking.forget_guest(repeat('g', 102400))::text$$, '22023', 'guest', NULL),
('reserve_seat', 'metadata a JSON array', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, metadata => '[1, 2]')$$, '22023', 'metadata', NULL),
('reserve_seat', 'metadata a JSON string', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, metadata => '"order 7"')$$, '22023', 'metadata', NULL),
('reserve_seat', 'metadata JSON null', $$SELECT code FROM booking.reserve_seat({seat}, 'g', 1, metadata => 'null')$$, '22023', 'metadata', NULL),
('reserve_stay', 'metadata of 100 KB', $$SELECT code FROM booking.reserve_stay({room}, 'g', '[2031-01-01, 2031-01-02)', metadata => jsonb_build_object('k', repeat('m', 102400)))$$, '22023', 'metadata', NULL),
('reserve_stays', 'metadata a JSON number', $$SELECT code FROM booking.reserve_stays(ARRAY[{room}], 'g', '[2031-01-01, 2031-01-02)', metadata => '7')$$, '22023', 'metadata', NULL),
('join_waitlist', 'metadata 8 kB + 1 as text', $$SELECT code FROM booking.join_waitlist({seat}, 'g', 1, metadata => jsonb_build_object('k', repeat('m', 8192 - 9 + 1)))$$, '22023', 'metadata', NULL)
) v WHERE to_regproc('booking.get_booking') IS NOT NULL;

-- 0.9.0: local time and series.  A date or an every far out is named; a
-- zone must be an IANA name
INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result)
SELECT * FROM (VALUES
('set_time_zone', 'resource NULL', $$SELECT code FROM booking.set_time_zone(NULL, 'UTC')$$, '22004', 'resource', NULL),
('set_time_zone', 'time_zone NULL', $$SELECT code FROM booking.set_time_zone({room}, NULL)$$, '22004', 'time_zone', NULL),
('set_time_zone', 'time_zone empty', $$SELECT code FROM booking.set_time_zone({room}, '')$$, '22023', 'time_zone', NULL),
('set_time_zone', 'time_zone a POSIX rule', $$SELECT code FROM booking.set_time_zone({room}, 'XYZ5')$$, '22023', 'time_zone', NULL),
('set_time_zone', 'time_zone of 100 KB', $$SELECT code FROM booking.set_time_zone({room}, repeat('z', 102400))$$, '22023', 'time_zone', NULL),
('set_time_zone', 'unknown resource 2^63-1', $$SELECT code FROM booking.set_time_zone(9223372036854775807, 'UTC')$$, NULL, NULL, '^not_found$'),
('set_check_times', 'resource NULL', $$SELECT code FROM booking.set_check_times(NULL)$$, '22004', 'resource', NULL),
('set_check_times', 'check_in NULL', $$SELECT code FROM booking.set_check_times({room}, NULL, '11:00')$$, '22004', 'check_in', NULL),
('set_check_times', 'check_out 24:00', $$SELECT code FROM booking.set_check_times({room}, '15:00', '24:00')$$, '22023', 'check_out', NULL),
('reserve_nights', 'resource NULL', $$SELECT code FROM booking.reserve_nights(NULL, 'g', '2031-01-01', '2031-01-02')$$, '22004', 'resource', NULL),
('reserve_nights', 'arrival NULL', $$SELECT code FROM booking.reserve_nights({room}, 'g', NULL, '2031-01-02')$$, '22004', 'arrival', NULL),
('reserve_nights', 'departure infinity', $$SELECT code FROM booking.reserve_nights({room}, 'g', '2031-01-01', 'infinity')$$, '22023', 'departure', NULL),
('reserve_nights', 'departure before arrival', $$SELECT code FROM booking.reserve_nights({room}, 'g', '2031-01-02', '2031-01-01')$$, '22023', 'departure', NULL),
('reserve_nights', 'arrival in year 5874897', $$SELECT code FROM booking.reserve_nights({room}, 'g', '5874896-12-30', '5874897-12-31')$$, '22023', 'arrival', NULL),
('reserve_nights', 'arrival the first date (4714 BC)', $$SELECT code FROM booking.reserve_nights({room}, 'g', '4714-11-24 BC', '2031-01-01')$$, '22023', 'arrival', NULL),
('shard_set_time_zone', 'home not the resource''s', $$SELECT code FROM booking.shard_set_time_zone({room}, 'UTC', 1)$$, '22023', 'home', NULL),
('shard_set_check_times', 'home NULL', $$SELECT code FROM booking.shard_set_check_times({room}, '15:00', '11:00', NULL)$$, '22004', 'home', NULL),
('shard_reserve_nights', 'home -2^63', $$SELECT code FROM booking.shard_reserve_nights({room}, 'g', '2031-01-01', '2031-01-02', NULL, NULL, NULL, NULL, -9223372036854775808)$$, '22023', 'home', NULL),
('shard_reserve_series', 'count 0', $$SELECT code FROM booking.shard_reserve_series({room}, 'g', '[2031-01-01, 2031-01-02)', '1 week', 0, NULL, NULL, NULL, NULL, 0)$$, '22023', 'count', NULL),
('reserve_nights', 'unknown resource 2^63-1', $$SELECT code FROM booking.reserve_nights(9223372036854775807, 'g', '2031-01-01', '2031-01-02')$$, NULL, NULL, '^not_found$'),
('set_opening_hours', 'resource NULL', $$SELECT code FROM booking.set_opening_hours(NULL, '{}')$$, '22004', 'resource', NULL),
('set_opening_hours', 'hours an array', $$SELECT code FROM booking.set_opening_hours({room}, '[]')$$, '22023', 'hours', NULL),
('set_opening_hours', 'hours of 100 KB', $$SELECT code FROM booking.set_opening_hours({room}, jsonb_build_object('mon', jsonb_build_array(jsonb_build_array(repeat('9', 102400), '10:00'))))$$, '22023', 'hours', NULL),
('set_opening_hours', 'a window 25:00', $$SELECT code FROM booking.set_opening_hours({room}, '{"mon": [["09:00", "25:00"]]}')$$, '22023', 'hours', NULL),
('set_opening_hours', 'a window of null', $$SELECT code FROM booking.set_opening_hours({room}, '{"mon": [[null, null]]}')$$, '22023', 'hours', NULL),
('set_opening_hours', 'a day null', $$SELECT code FROM booking.set_opening_hours({room}, '{"mon": null}')$$, '22023', 'hours', NULL),
('shard_set_opening_hours', 'home 2^63-1', $$SELECT code FROM booking.shard_set_opening_hours({room}, NULL, 9223372036854775807)$$, '22023', 'home', NULL),
('cancel_group', 'group_id NULL', $$SELECT code FROM booking.cancel_group(NULL)$$, '22004', 'group_id', NULL),
('cancel_group', 'from_time -infinity', $$SELECT code FROM booking.cancel_group(1, '-infinity')$$, '22023', 'from_time', NULL),
('cancel_group', 'unknown group 2^63-1', $$SELECT code FROM booking.cancel_group(9223372036854775807)$$, NULL, NULL, '^not_found$'),
('cancel_group', 'unknown group -2^63', $$SELECT code FROM booking.cancel_group(-9223372036854775808)$$, NULL, NULL, '^not_found$'),
('reserve_series', 'first NULL', $$SELECT code FROM booking.reserve_series({room}, 'g', NULL, '1 week', 2)$$, '22004', 'first', NULL),
('reserve_series', 'every NULL', $$SELECT code FROM booking.reserve_series({room}, 'g', '[2031-01-01, 2031-01-02)', NULL, 2)$$, '22004', 'every', NULL),
('reserve_series', 'count NULL', $$SELECT code FROM booking.reserve_series({room}, 'g', '[2031-01-01, 2031-01-02)', '1 week', NULL)$$, '22004', 'count', NULL),
('reserve_series', 'count -2^31', $$SELECT code FROM booking.reserve_series({room}, 'g', '[2031-01-01, 2031-01-02)', '1 week', -2147483648)$$, '22023', 'count', NULL),
('reserve_series', 'count 2^31-1', $$SELECT code FROM booking.reserve_series({room}, 'g', '[2031-01-01, 2031-01-02)', '1 week', 2147483647)$$, '22023', 'count', NULL),
('reserve_series', 'every 2^31-1 months, 520 times', $$SELECT code FROM booking.reserve_series({room}, 'g', '[2031-01-01, 2031-01-02)', '178956970 years 7 months', 520)$$, '22023', 'every', NULL),
('reserve_series', 'every out past year 294276', $$SELECT code FROM booking.reserve_series({room}, 'g', '[2031-01-01, 2031-01-02)', '200000 years', 3)$$, '22023', 'every', NULL),
('reserve_series', 'every shorter than first', $$SELECT code FROM booking.reserve_series({room}, 'g', '[2031-01-01, 2031-01-02)', '23 hours', 2)$$, '22023', 'every', NULL),
('reserve_series', 'every a month less a day', $$SELECT code FROM booking.reserve_series({room}, 'g', '[2031-01-01, 2031-01-02)', '1 month -1 day', 2)$$, '22023', 'every', NULL),
('reserve_series', 'unknown resource 2^63-1', $$SELECT code FROM booking.reserve_series(9223372036854775807, 'g', '[2031-01-01, 2031-01-02)', '1 week', 2)$$, NULL, NULL, '^not_found$')
) v WHERE to_regproc('booking.reserve_series') IS NOT NULL;

-- capacity over time (0.9.0)
INSERT INTO hostile_case (fn, what, call, want_state, want_arg, want_result)
SELECT * FROM (VALUES
('reserve_slot', 'resource NULL', $$SELECT code FROM booking.reserve_slot(NULL, 'g', '[2031-01-01, 2031-01-02)')$$, '22004', 'resource', NULL),
('reserve_slot', 'guest NULL', $$SELECT code FROM booking.reserve_slot({room}, NULL, '[2031-01-01, 2031-01-02)')$$, '22004', 'guest', NULL),
('reserve_slot', 'during NULL', $$SELECT code FROM booking.reserve_slot({room}, 'g', NULL)$$, '22004', 'during', NULL),
('reserve_slot', 'quantity NULL', $$SELECT code FROM booking.reserve_slot({room}, 'g', '[2031-01-01, 2031-01-02)', NULL)$$, '22004', 'quantity', NULL),
('reserve_slot', 'quantity 0', $$SELECT code FROM booking.reserve_slot({room}, 'g', '[2031-01-01, 2031-01-02)', 0)$$, '22023', 'quantity', NULL),
('reserve_slot', 'quantity -2^31', $$SELECT code FROM booking.reserve_slot({room}, 'g', '[2031-01-01, 2031-01-02)', -2147483648)$$, '22023', 'quantity', NULL),
('reserve_slot', 'quantity 2^31-1', $$SELECT code || ' ' || http_status FROM booking.reserve_slot({room}, 'g', '[2031-01-01, 2031-01-02)', 2147483647)$$, NULL, NULL, '^sold_out 409$'),
('reserve_slot', 'during empty', $$SELECT code FROM booking.reserve_slot({room}, 'g', 'empty')$$, '22023', 'during', NULL),
('reserve_slot', 'during (,)', $$SELECT code FROM booking.reserve_slot({room}, 'g', '(,)')$$, '22023', 'during', NULL),
('reserve_slot', 'during to infinity', $$SELECT code FROM booking.reserve_slot({room}, 'g', '[2031-01-01, infinity)')$$, '22023', 'during', NULL),
('reserve_slot', 'during [a,a] (one instant)', $$SELECT code FROM booking.reserve_slot({room}, 'g', '[2031-01-01, 2031-01-01]')$$, '22023', 'during', NULL),
('reserve_slot', 'guest of 100 KB', $$SELECT code FROM booking.reserve_slot({room}, repeat('g', 102400), '[2031-01-01, 2031-01-02)')$$, '22023', 'guest', NULL),
('reserve_slot', 'hold -1 day', $$SELECT code FROM booking.reserve_slot({room}, 'g', '[2031-01-01, 2031-01-02)', hold => '-1 day')$$, '22023', 'hold', NULL),
('reserve_slot', 'idempotency_key of 0 bytes', $$SELECT code FROM booking.reserve_slot({room}, 'g', '[2031-01-01, 2031-01-02)', idempotency_key => '')$$, '22023', 'idempotency_key', NULL),
('reserve_slot', 'lock_timeout -1 s', $$SELECT code FROM booking.reserve_slot({room}, 'g', '[2031-01-01, 2031-01-02)', lock_timeout => '-1 s')$$, '22023', 'lock_timeout', NULL),
('reserve_slot', 'metadata a JSON array', $$SELECT code FROM booking.reserve_slot({room}, 'g', '[2031-01-01, 2031-01-02)', metadata => '[1]')$$, '22023', 'metadata', NULL),
('reserve_slot', 'unknown resource 2^63-1', $$SELECT code FROM booking.reserve_slot(9223372036854775807, 'g', '[2031-01-01, 2031-01-02)')$$, NULL, NULL, '^not_found$'),
('reserve_slot', 'unknown resource -2^63', $$SELECT code FROM booking.reserve_slot(-9223372036854775808, 'g', '[2031-01-01, 2031-01-02)')$$, NULL, NULL, '^not_found$'),
('shard_reserve_slot', 'home -2^63', $$SELECT code FROM booking.shard_reserve_slot({room}, 'g', '[2031-01-01, 2031-01-02)', 1, NULL, NULL, NULL, NULL, -9223372036854775808)$$, '22023', 'home', NULL),
('shard_reserve_slot', 'quantity 0', $$SELECT code FROM booking.shard_reserve_slot({room}, 'g', '[2031-01-01, 2031-01-02)', 0, NULL, NULL, NULL, NULL, 0)$$, '22023', 'quantity', NULL),
('slots_left', 'resource NULL', $$SELECT count(*)::text FROM booking.slots_left(NULL, '[2031-01-01, 2031-01-02)')$$, '22004', 'resource', NULL),
('slots_left', 'within NULL', $$SELECT count(*)::text FROM booking.slots_left({room}, NULL)$$, '22004', 'within', NULL),
('slots_left', 'within empty', $$SELECT count(*)::text FROM booking.slots_left({room}, 'empty')$$, '22023', 'within', NULL),
('slots_left', 'within (,)', $$SELECT count(*)::text FROM booking.slots_left({room}, '(,)')$$, '22023', 'within', NULL),
('slots_left', 'within all of time', $$SELECT count(*)::text FROM booking.slots_left({room}, '[4713-11-24 00:00+00 BC, 294276-12-31 00:00+00)')$$, NULL, NULL, '^[0-9]+$'),
('slots_left', 'unknown resource 2^63-1', $$SELECT count(*)::text FROM booking.slots_left(9223372036854775807, '[2031-01-01, 2031-01-02)')$$, NULL, NULL, '^0$')
) v WHERE to_regproc('booking.reserve_slot') IS NOT NULL;

-- every case, with the fixture's ids substituted
CREATE FUNCTION pg_temp.hostile_run() RETURNS SETOF text LANGUAGE plpgsql AS $run$
DECLARE
    c       record;
    f       record;
    sql     text;
    got     text;
    state   text;
    msg     text;
    level   text := current_setting('transaction_isolation');
    label   text;
    missing text;
BEGIN
    FOR c IN SELECT * FROM hostile_case ORDER BY n LOOP
        sql := c.call;
        FOR f IN SELECT name, id FROM public.hostile_fixture ORDER BY length(name) DESC LOOP
            sql := replace(sql, '{' || f.name || '}', f.id::text);
        END LOOP;
        label := format('[%s] %s %s(%s)', level, c.n, c.fn, c.what);
        -- 0.7.0: past their argument checks, the outbox's claims, acks
        -- and drops refuse a snapshot isolation level (25000)
        IF level <> 'read committed' AND c.fn IN ('claim_events', 'ack_events', 'drop_consumer')
           AND (c.want_state IS NULL OR (c.want_arg = 'consumer' AND c.what LIKE '%unknown%')) THEN
            c.want_state := '25000';
            c.want_arg := 'booking\.' || c.fn;
        END IF;
        state := NULL;
        BEGIN
            EXECUTE sql INTO got;
        EXCEPTION WHEN OTHERS THEN
            GET STACKED DIAGNOSTICS state = RETURNED_SQLSTATE, msg = MESSAGE_TEXT;
        END;
        IF c.want_state IS NOT NULL THEN
            IF state = c.want_state AND msg ~ ('^' || c.want_arg || '\M') THEN
                RETURN NEXT format('ok - %s: %s "%s"', label, state, msg);
            ELSE
                RETURN NEXT format('not ok - %s: wanted %s naming %s; got %s', label, c.want_state, c.want_arg,
                                   CASE WHEN state IS NULL THEN 'the result ' || coalesce(got, 'NULL')
                                        ELSE format('%s "%s"', state, msg) END);
            END IF;
        ELSE
            IF state IS NULL AND coalesce(got, 'NULL') ~ c.want_result THEN
                RETURN NEXT format('ok - %s: %s', label, coalesce(got, 'NULL'));
            ELSE
                RETURN NEXT format('not ok - %s: wanted %s; got %s', label, c.want_result,
                                   CASE WHEN state IS NULL THEN coalesce(got, 'NULL')
                                        ELSE format('the error %s "%s"', state, msg) END);
            END IF;
        END IF;
    END LOOP;

    -- every function of the extension was aimed at (but trigger functions,
    -- which PostgreSQL itself refuses to call directly)
    SELECT string_agg(DISTINCT p.proname, ', ') INTO missing
      FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e'
      JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'booking'
     WHERE p.proname NOT IN (SELECT fn FROM hostile_case)
       AND p.prorettype <> 'pg_catalog.trigger'::pg_catalog.regtype;
    IF missing IS NULL THEN
        RETURN NEXT format('ok - [%s] every function of the extension got bad calls (%s calls to %s functions)', level,
                           (SELECT count(*) FROM hostile_case), (SELECT count(DISTINCT fn) FROM hostile_case));
    ELSE
        RETURN NEXT format('not ok - [%s] every function of the extension got bad calls; missing: %s', level, missing);
    END IF;
END
$run$;

\pset tuples_only on
\pset format unaligned
SELECT * FROM pg_temp.hostile_run();
