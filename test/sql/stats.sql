-- stats: booking.stats() and booking.stats_reset().  The counters live in
-- shared memory, so they need booking in shared_preload_libraries:
-- expected/stats.out is the output on a server that preloads it, as
-- test/run.sh's cluster does (and test/reliability/stats.sh's).  There is no
-- output for a server that does not: there stats() counts nothing and says
-- so, and this test fails.  The counters are cluster-wide: nothing else may
-- call the API while this runs.
SET client_min_messages = notice;
SELECT booking.stats_reset();

SELECT booking.create_resource('stats session', 2) AS sess \gset

-- two seats: ok, ok, then sold_out
SELECT code FROM booking.reserve_seat(:sess, 'ann', 1);
SELECT code FROM booking.reserve_seat(:sess, 'bob', 1);
SELECT code FROM booking.reserve_seat(:sess, 'cat', 1);

-- times are not deterministic: only their relations are shown
SELECT function, code, calls, total_ms >= max_ms AND max_ms >= 0 AS times_ok,
       lock_wait_ms >= 0 AS lock_wait_ok
  FROM booking.stats() ORDER BY function, code;

-- a twin counts under its public name; a group member's twin is part of
-- its group and is not counted; a call that raises an error is not counted
SELECT code FROM booking.shard_reserve_seat(:sess, 'dan', 1, NULL, NULL, NULL, NULL, 0);
SELECT code FROM booking.shard_seat_member(:sess, 'eve', 1, NULL, NULL, NULL, NULL, 0);
SELECT code FROM booking.reserve_seat(:sess, 'fay', 0);
-- cancel answers ok with 200, reserve_seat with 201: one code, ok
SELECT code, http_status FROM booking.cancel(
    (SELECT min(id) FROM booking.bookings WHERE resource_id = :sess));
SELECT function, code, calls FROM booking.stats() ORDER BY function, code;

-- booking.track_stats = off counts nothing (superuser only)
SET booking.track_stats = off;
SELECT code FROM booking.reserve_seat(:sess, 'gus', 1);
RESET booking.track_stats;
SELECT coalesce(sum(calls), 0) AS calls FROM booking.stats();
SELECT context FROM pg_catalog.pg_settings WHERE name = 'booking.track_stats';

-- an error that leaves a call midway (a write in a read-only transaction),
-- caught by a savepoint: that call is not counted, the next one is
SELECT booking.create_resource('stats room', 5) AS room \gset
BEGIN;
SAVEPOINT s;
SET LOCAL transaction_read_only = on;
\set VERBOSITY terse
SELECT code FROM booking.reserve_seat(:room, 'hal', 1);
\set VERBOSITY default
ROLLBACK TO SAVEPOINT s;
SELECT code FROM booking.reserve_seat(:room, 'ivy', 1);
COMMIT;
SELECT code FROM booking.reserve_seat(-1, 'jo', 1);
SELECT function, code, calls FROM booking.stats() ORDER BY function, code;

SELECT booking.stats_reset();
SELECT count(*) AS rows FROM booking.stats();
