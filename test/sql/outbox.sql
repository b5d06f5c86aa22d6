--
-- outbox (0.6.0): the events every state change writes, and the calls that
-- read them: add_consumer, drop_consumer, claim_events, ack_events; health()
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET IntervalStyle = 'postgres';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys,
    booking.events, booking.event_heads, booking.consumers, booking.deliveries RESTART IDENTITY;
ALTER SEQUENCE booking.lease_token_seq RESTART;

-- the events, with the volatile parts of the payload (expires_at) replaced
-- by whether they are there
CREATE TEMP VIEW ev AS
SELECT e.id, e.resource_id AS res, e.booking_id AS bk, e.guest, e.kind, e.seq,
       e.payload - 'expires_at' AS payload, e.payload ? 'expires_at' AS expiry
FROM booking.events e ORDER BY e.id;
-- what a failed call must leave untouched in the outbox
CREATE TEMP VIEW outbox_written AS
SELECT (SELECT count(*) FROM booking.events) AS events,
       (SELECT CASE WHEN is_called THEN last_value ELSE 0 END FROM booking.events_id_seq) AS event_ids_drawn,
       (SELECT count(*) FROM booking.deliveries) AS deliveries,
       (SELECT count(*) FILTER (WHERE acked_at IS NOT NULL) FROM booking.deliveries) AS acked,
       (SELECT count(*) FROM booking.consumers) AS consumers;
-- the events written since the last call of this: \gset last_event first
SELECT 0 AS last_event \gset

--
-- programmer errors: NULL (22004) and bad arguments (22023), each naming
-- its argument; nothing written
--
\set VERBOSITY terse
SELECT booking.add_consumer(NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.add_consumer('');
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.add_consumer(repeat('c', 201));
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.drop_consumer(NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.drop_consumer('');
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.drop_consumer(repeat('c', 201));
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM outbox_written;
-- 200 bytes is allowed
SELECT booking.add_consumer(repeat('c', 200));
SELECT booking.drop_consumer(repeat('c', 200));
SELECT booking.add_consumer('relay');
-- claim_events
SELECT * FROM booking.claim_events(NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.claim_events('');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.claim_events('nobody');
SELECT :'SQLSTATE' AS sqlstate;
-- NULL means the default (100), as everywhere in the API
SELECT * FROM booking.claim_events('relay', NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.claim_events('relay', 0);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.claim_events('relay', -1);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.claim_events('relay', 10001);
SELECT :'SQLSTATE' AS sqlstate;
-- NULL means the default (30 seconds)
SELECT * FROM booking.claim_events('relay', 100, NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.claim_events('relay', 100, '0');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.claim_events('relay', 100, '-1 second');
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.claim_events('relay', 100, '3661 days');
SELECT :'SQLSTATE' AS sqlstate;
-- the bounds are allowed
SELECT count(*) FROM booking.claim_events('relay', 1, '1 microsecond');
SELECT count(*) FROM booking.claim_events('relay', 10000, '3660 days');
-- ack_events
SELECT booking.ack_events(NULL, 1, '{1}');
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.ack_events('', 1, '{1}');
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.ack_events('nobody', 1, '{1}');
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.ack_events('relay', NULL, '{1}');
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.ack_events('relay', 1, NULL);
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.ack_events('relay', 1, '{1,NULL}');
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.ack_events('relay', 1, '{{1},{2}}');
SELECT :'SQLSTATE' AS sqlstate;
SELECT booking.ack_events('relay', 1, (SELECT array_agg(g) FROM generate_series(1, 10001) g));
SELECT :'SQLSTATE' AS sqlstate;
-- nothing to ack: 0, not an error
SELECT booking.ack_events('relay', 1, '{}');
SELECT booking.ack_events('relay', 1, (SELECT array_agg(g) FROM generate_series(1, 10000) g));
SELECT booking.ack_events('relay', -9223372036854775808, '{-1, 9223372036854775807}');
SELECT * FROM outbox_written;
\set VERBOSITY default

--
-- add_consumer / drop_consumer: true when it changed something
--
SELECT booking.add_consumer('relay');
SELECT booking.drop_consumer('nobody');
SELECT name FROM booking.consumers ORDER BY name;

--
-- the event of each call: exactly one per state change, in the call's
-- transaction; the payload copies the booking after the change
--
SELECT booking.create_resource('show', 10);            -- 1
SELECT booking.create_resource('room');                -- 2
SELECT booking.create_resource('suite');               -- 3
SELECT booking.create_resource('doubles', 0);          -- 4: a pool
SELECT booking.create_resource('double A', 1, 4);      -- 5
SELECT booking.create_resource('talk', 10);            -- 6
-- creating resources writes no event
SELECT * FROM ev;

-- reserve_seat: confirmed, then a hold
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'ann', 2);                -- 1
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'bob', 1, '1 hour');      -- 2
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- confirm of the hold
SELECT ok, code, booking_id FROM booking.confirm(2);
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- extend_hold and extend_hold_until of a new hold
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'cy', 1, '1 hour');       -- 3
SELECT ok, code, booking_id FROM booking.extend_hold(3, '1 hour');
SELECT ok, code, booking_id FROM booking.extend_hold_until(3, now() + interval '3 hours');
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- cancel of a pending hold, and of a confirmed booking
SELECT ok, code, booking_id FROM booking.cancel(3);
SELECT ok, code, booking_id FROM booking.cancel(2);
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- reduce: part, then the rest (a cancel)
SELECT ok, code, booking_id FROM booking.reduce(1, 1);
SELECT ok, code, booking_id FROM booking.reduce(1, 1);
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- stays: reserve_stay, move_stay, reserve_stay_any, reserve_stays
SELECT ok, code, booking_id FROM booking.reserve_stay(2, 'dee', '[2030-01-01, 2030-01-03)');          -- 4
SELECT ok, code, booking_id FROM booking.move_stay(4, '[2030-01-05, 2030-01-07)');
SELECT ok, code, booking_id FROM booking.reserve_stay_any(4, 'eve', '[2030-01-01, 2030-01-03)', '1 hour'); -- 5
SELECT ok, code, booking_id FROM booking.reserve_stays('{2,3}', 'fay', '[2030-02-01, 2030-02-03)');   -- 6, 7
SELECT * FROM ev WHERE id > :last_event;
-- the group's members carry the same group_id, the group's booking id
SELECT count(DISTINCT payload->'group_id') AS groups, bool_and(payload ? 'group_id') AS all_grouped
FROM booking.events WHERE id > :last_event AND guest = 'fay';
SELECT max(id) AS last_event FROM booking.events \gset
-- reserve_seats: one reserved per member
SELECT ok, code, booking_id FROM booking.reserve_seats('{1,6}', 'gus', '{2,3}');
SELECT res, guest, kind, payload - 'group_id' AS payload, payload ? 'group_id' AS grouped FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- set_capacity: capacity_changed of the resource, no booking
SELECT ok, code FROM booking.set_capacity(6, 12, (SELECT version FROM booking.resources WHERE id = 6));
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- set_stripes, set_buffer, set_guest_limit change no booking: no event
SELECT ok, code FROM booking.set_stripes(6, 2);
SELECT ok, code FROM booking.set_buffer(2, '1 hour', '1 hour');
SELECT ok, code FROM booking.set_guest_limit(6, 5);
SELECT * FROM ev WHERE id > :last_event;

--
-- expiry: hold_expire writes expired per hold; confirm, extend, cancel
-- and reduce of a lapsed hold write expired too, and a reserve that
-- reclaims a lapsed hold writes its expired before its own reserved
--
-- moves every pending hold of a resource an hour into the past
CREATE FUNCTION pg_temp.lapse(resource bigint) RETURNS bigint LANGUAGE sql AS $$
    WITH moved AS (
        UPDATE booking.bookings
           SET created_at = created_at - interval '2 hours',
               expires_at = created_at - interval '1 hour',
               validity = tstzrange(created_at - interval '2 hours', created_at - interval '1 hour', '[)')
         WHERE resource_id = resource AND status = 'pending'
        RETURNING 1)
    SELECT count(*) FROM moved
$$;
SELECT booking.create_resource('expiry', 3);           -- 7
SELECT ok, code, booking_id FROM booking.reserve_seat(7, 'h1', 1, '1 hour');
SELECT ok, code, booking_id FROM booking.reserve_seat(7, 'h2', 1, '1 hour');
SELECT ok, code, booking_id FROM booking.reserve_seat(7, 'h3', 1, '1 hour');
SELECT max(id) AS last_event FROM booking.events \gset
SELECT pg_temp.lapse(7);
SELECT ok, code, http_status FROM booking.confirm((SELECT id FROM booking.bookings WHERE guest = 'h1'));
SELECT ok, code, http_status FROM booking.extend_hold((SELECT id FROM booking.bookings WHERE guest = 'h2'), '1 hour');
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- a sale that needs the lapsed seat reclaims it: expired, then reserved
SELECT ok, code FROM booking.reserve_seat(7, 'taker', 3);
SELECT * FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
SELECT ok, code, booking_id FROM booking.cancel((SELECT id FROM booking.bookings WHERE guest = 'taker'));
SELECT ok, code, booking_id FROM booking.reserve_seat(7, 'h4', 1, '1 hour');
SELECT ok, code, booking_id FROM booking.reserve_seat(7, 'h5', 2, '1 hour');
SELECT pg_temp.lapse(7);
SELECT max(id) AS last_event FROM booking.events \gset
SELECT booking.hold_expire();
SELECT * FROM ev WHERE id > :last_event;
-- nothing left to expire: no event
SELECT booking.hold_expire();
SELECT count(*) AS new_events FROM booking.events WHERE id > :last_event + 2;
SELECT max(id) AS last_event FROM booking.events \gset

--
-- refusals, replays and rolled-back calls write no event
--
SELECT ok, code FROM booking.reserve_seat(1, 'zed', 11);                        -- sold_out
SELECT ok, code FROM booking.reserve_seat(99, 'zed');                           -- not_found
SELECT ok, code FROM booking.reserve_stay(2, 'zed', '[2030-01-05, 2030-01-06)'); -- unavailable
SELECT ok, code FROM booking.confirm(1);                                        -- cancelled: invalid_state
SELECT ok, code FROM booking.cancel(1);                                         -- invalid_state
SELECT ok, code FROM booking.reduce(4, 1);                                      -- a stay: invalid_state
SELECT ok, code FROM booking.extend_hold(4, '1 hour');                          -- confirmed: invalid_state
SELECT ok, code FROM booking.set_capacity(6, 1, 0);                             -- version_conflict
SELECT ok, code FROM booking.set_capacity(1, 0, (SELECT version FROM booking.resources WHERE id = 1)); -- capacity_below_taken
SELECT ok, code FROM booking.move_stay(4, '[2030-02-01, 2030-02-02)');          -- onto fay's stay: unavailable
SELECT ok, code FROM booking.reserve_stays('{2,3}', 'zed', '[2030-02-02, 2030-02-04)'); -- a group: unavailable
SELECT ok, code FROM booking.reserve_seats('{1,7}', 'zed', '{1,4}');           -- a pass: sold_out
SELECT * FROM ev WHERE id > :last_event;
-- an idempotency key: the first call writes, the replay does not
SELECT ok, code, booking_id, replayed FROM booking.reserve_seat(1, 'kay', 1, NULL, 'key-1');
SELECT ok, code, booking_id, replayed FROM booking.reserve_seat(1, 'kay', 1, NULL, 'key-1');
SELECT ok, code, booking_id, replayed FROM booking.cancel((SELECT id FROM booking.bookings WHERE guest = 'kay'), 'key-2');
SELECT ok, code, booking_id, replayed FROM booking.cancel((SELECT id FROM booking.bookings WHERE guest = 'kay'), 'key-2');
SELECT res, guest, kind FROM ev WHERE id > :last_event;
SELECT max(id) AS last_event FROM booking.events \gset
-- rolled back: the call's event goes with it
BEGIN;
SAVEPOINT s;
SELECT ok, code FROM booking.reserve_seat(1, 'rolled', 1);
SELECT count(*) AS inside FROM booking.events WHERE id > :last_event;
ROLLBACK TO SAVEPOINT s;
SELECT ok, code FROM booking.set_capacity(6, 13, (SELECT version FROM booking.resources WHERE id = 6));
ROLLBACK TO SAVEPOINT s;
COMMIT;
BEGIN;
SELECT ok, code FROM booking.reserve_seat(1, 'rolled', 1);
ROLLBACK;
SELECT count(*) AS after FROM booking.events WHERE id > :last_event;

--
-- claim and ack: numbering, order, batches, leases, fencing
--
-- nothing was numbered yet
SELECT count(*) FILTER (WHERE seq IS NULL) AS unsequenced, count(*) AS events FROM booking.events;
-- a batch of 5, ordered by (resource_id, seq); one token for the batch
CREATE TEMP TABLE got AS SELECT * FROM booking.claim_events('relay', 5);
SELECT event_id, resource_id, seq, booking_id, guest, kind FROM got;
SELECT count(DISTINCT lease_token) AS tokens, min(attempts), max(attempts) FROM got;
-- every event is numbered now; per resource seq is 1..n with no gap, in id order
SELECT count(*) FILTER (WHERE seq IS NULL) AS unsequenced FROM booking.events;
SELECT resource_id, count(*) AS events, min(seq), max(seq),
       bool_and(seq = rn) AS gap_free_in_id_order
FROM (SELECT resource_id, seq, row_number() OVER (PARTITION BY resource_id ORDER BY id) AS rn
      FROM booking.events) s
GROUP BY resource_id ORDER BY resource_id;
-- the numbering writes no head row: a resource's last number is its highest
-- numbered event (event_heads keeps only what the purge removes)
SELECT count(*) FILTER (WHERE resource_id > 0) AS heads_written FROM booking.event_heads;
-- a second claim gets the next 5, not the leased ones
CREATE TEMP TABLE got2 AS SELECT * FROM booking.claim_events('relay', 5);
SELECT count(*) AS claimed, count(*) FILTER (WHERE event_id IN (SELECT event_id FROM got)) AS overlap,
       count(DISTINCT lease_token) AS tokens,
       min(lease_token) > (SELECT min(lease_token) FROM got) AS newer_token
FROM got2;
-- ack: wrong token 0, right token 5, again 0; the other batch's ids with
-- this token 0
SELECT booking.ack_events('relay', (SELECT min(lease_token) FROM got2), (SELECT array_agg(event_id) FROM got));
SELECT booking.ack_events('relay', (SELECT min(lease_token) FROM got), (SELECT array_agg(event_id) FROM got));
SELECT booking.ack_events('relay', (SELECT min(lease_token) FROM got), (SELECT array_agg(event_id) FROM got));
-- ids listed twice count once
SELECT booking.ack_events('relay', (SELECT min(lease_token) FROM got2),
                          (SELECT array_agg(event_id) || array_agg(event_id) FROM got2));
-- the rest, all in one batch
CREATE TEMP TABLE got3 AS SELECT * FROM booking.claim_events('relay') WITH ORDINALITY AS c(event_id, lease_token, resource_id, seq, booking_id, guest, kind, payload, created_at, attempts, ord);
SELECT count(*) AS claimed, (SELECT count(*) FROM booking.events) - 10 AS expected FROM got3;
-- rows come ordered by (resource_id, seq), not by event id
SELECT count(*) AS pairs,
       count(*) FILTER (WHERE (resource_id, seq) > (prev_resource, prev_seq)) AS in_order,
       count(*) FILTER (WHERE event_id < prev_event) AS id_goes_back
FROM (SELECT event_id, resource_id, seq, lag(resource_id) OVER w AS prev_resource, lag(seq) OVER w AS prev_seq,
             lag(event_id) OVER w AS prev_event
      FROM got3 WINDOW w AS (ORDER BY ord)) x
WHERE prev_resource IS NOT NULL;
-- the leases of got3 are live: nothing to claim now
SELECT count(*) AS live_leases_reclaimed FROM booking.claim_events('relay');
SELECT booking.ack_events('relay', (SELECT min(lease_token) FROM got3), (SELECT array_agg(event_id) FROM got3));
SELECT count(*) AS left_to_claim FROM booking.claim_events('relay');
-- attempts count the claims of a delivery
SELECT attempts, count(*) FROM booking.deliveries GROUP BY attempts ORDER BY attempts;

--
-- a lapsed lease is delivered again under a new token; the old one is fenced
--
SELECT ok, code FROM booking.reserve_seat(6, 'lea', 1);
SELECT max(id) AS lea_event FROM booking.events \gset
CREATE TEMP TABLE short AS SELECT * FROM booking.claim_events('relay', 10, '1 microsecond');
SELECT event_id = :lea_event AS lea, kind FROM short;
SELECT pg_sleep(0.01);
CREATE TEMP TABLE again AS SELECT * FROM booking.claim_events('relay', 10);
SELECT event_id = :lea_event AS lea, lease_token > (SELECT lease_token FROM short) AS new_token,
       attempts AS second_attempt FROM again;
SELECT booking.ack_events('relay', (SELECT lease_token FROM short), ARRAY[:lea_event]::bigint[]) AS old_token;
SELECT booking.ack_events('relay', (SELECT lease_token FROM again), ARRAY[:lea_event]::bigint[]) AS new_token;
SELECT booking.ack_events('relay', (SELECT lease_token FROM short), ARRAY[:lea_event]::bigint[]) AS old_token_after;
SELECT attempts, acked_at IS NOT NULL AS acked FROM booking.deliveries WHERE event_id = :lea_event;

--
-- consumers: a consumer registered later gets only the events numbered
-- after it registered; drop_consumer removes its deliveries
--
SELECT booking.add_consumer('late');
SELECT count(*) AS late_gets_old FROM booking.claim_events('late');
SELECT ok, code FROM booking.reserve_seat(6, 'mo', 1);
SELECT max(id) AS mo_event FROM booking.events \gset
SELECT event_id = :mo_event AS mo, kind, guest FROM booking.claim_events('late');
-- relay gets it too
SELECT event_id = :mo_event AS mo, kind, guest FROM booking.claim_events('relay');
SELECT consumer, count(*) FROM booking.deliveries GROUP BY consumer ORDER BY consumer;
SELECT booking.drop_consumer('late');
SELECT booking.drop_consumer('late');
SELECT consumer, count(*) FROM booking.deliveries GROUP BY consumer ORDER BY consumer;
SELECT * FROM booking.claim_events('late');
-- an event that committed before a consumer registered, but is numbered
-- after: the consumer gets it (it gets every event numbered after it
-- registered)
SELECT ok, code FROM booking.reserve_seat(6, 'before late', 1);
SELECT booking.add_consumer('later');
SELECT guest, kind FROM booking.claim_events('later');
SELECT booking.drop_consumer('later');
-- registered again: a fresh start, nothing old
SELECT booking.add_consumer('late');
SELECT count(*) AS late_again FROM booking.claim_events('late');
SELECT booking.drop_consumer('late');

--
-- health(): one row per figure; waitlist_length per resource with a line
-- (none here), consumer figures per consumer with unacked deliveries
--
SELECT metric, subject, value FROM booking.health()
WHERE metric NOT LIKE '%seconds';
SELECT metric, subject, value >= 0 AS non_negative FROM booking.health()
WHERE metric LIKE '%seconds';
-- a lapsed hold shows up in lapsed_holds and its age
SELECT ok, code FROM booking.reserve_seat(1, 'lapsing', 1, '1 hour');
SELECT pg_temp.lapse(1);
SELECT metric, value FROM booking.health() WHERE metric IN ('lapsed_holds');
SELECT metric, value BETWEEN 3599 AND 3700 AS about_an_hour FROM booking.health()
WHERE metric = 'lapsed_hold_oldest_seconds';
-- events not numbered yet
SELECT metric, value FROM booking.health() WHERE metric = 'events_unsequenced';
-- keys
SELECT metric, value FROM booking.health() WHERE metric = 'idempotency_keys';

--
-- retention: hold_expire purges events older than booking.event_retention
-- that every consumer acked, with their deliveries; unacked ones stay
--
SELECT booking.hold_expire();
SELECT ok, code FROM booking.reserve_seat(6, 'old', 1);
-- number everything and ack all but the 'old' event
CREATE TEMP TABLE fin AS SELECT * FROM booking.claim_events('relay', 10000);
SELECT booking.ack_events('relay', (SELECT min(lease_token) FROM fin),
    (SELECT array_agg(event_id) FROM fin WHERE guest IS DISTINCT FROM 'old')) = (SELECT count(*) - 1 FROM fin) AS acked_all_but_one;
SELECT count(*) AS unacked FROM booking.deliveries WHERE acked_at IS NULL;
-- nothing is old enough yet
SET booking.event_retention = '1h';
SELECT count(*) AS events_before FROM booking.events \gset
SELECT booking.hold_expire();
SELECT count(*) = :events_before AS none_purged FROM booking.events;
SET booking.event_retention = '1s';
SHOW booking.event_retention;
-- everything is a day old now
SELECT max(seq) AS show_last FROM booking.events WHERE resource_id = 1 \gset
UPDATE booking.events SET created_at = created_at - interval '1 day';
SELECT booking.hold_expire();
SELECT id > 0 AS kept, guest, kind FROM booking.events ORDER BY id;
SELECT consumer, acked_at IS NOT NULL AS acked FROM booking.deliveries;
-- the numbering goes on after what the purge removed: resource 1 has no
-- event left, and its next one is numbered after its last purged one
SELECT count(*) AS show_events_left FROM booking.events WHERE resource_id = 1;
SELECT last_seq = :show_last AS head_kept FROM booking.event_heads WHERE resource_id = 1;
INSERT INTO booking.events (home, id, resource_id, kind, created_at)
VALUES (0, nextval('booking.events_id_seq'), 1, 'reserved', clock_timestamp());
CREATE TEMP TABLE after_purge AS SELECT * FROM booking.claim_events('relay', 10000);
SELECT resource_id, seq = :show_last + 1 AS numbered_after_the_purged FROM after_purge;
SELECT booking.ack_events('relay', lease_token, ARRAY[event_id]) AS acked FROM after_purge;
-- unnumbered events while no consumer exists are purged too
SELECT booking.drop_consumer('relay');
SELECT ok, code FROM booking.reserve_seat(6, 'nobody listens', 1);
UPDATE booking.events SET created_at = created_at - interval '1 day';
SELECT booking.hold_expire();
SELECT count(*) AS events_left FROM booking.events;
RESET booking.event_retention;
-- the totals still add up: capacity = seats of live holds and confirmed
-- bookings + seats left, for every seat resource
SELECT booking.hold_expire();
SELECT r.id, r.capacity, booking.seats_left(r.id) AS seats_left,
       (SELECT COALESCE(sum(b.quantity), 0) FROM booking.bookings b WHERE b.resource_id = r.id
         AND (b.status = 'confirmed' OR (b.status = 'pending' AND b.expires_at > now()))) AS blocking
FROM booking.resources r WHERE r.id IN (1, 6, 7)   -- the seat resources
ORDER BY r.id;

--
-- 0.7.0: two-phase commit with a consumer registered.  Nothing notifies
-- from the caller's transaction (this database has no expiry worker: relays
-- poll), so a booking transaction can PREPARE; its event commits with it
--
SELECT booking.add_consumer('tpc');
BEGIN;
SELECT ok, code FROM booking.reserve_seat(6, 'two-phase', 1);
PREPARE TRANSACTION 'booking_outbox_tpc';
COMMIT PREPARED 'booking_outbox_tpc';
SELECT guest, kind FROM booking.events WHERE guest = 'two-phase';
SELECT guest, kind FROM booking.claim_events('tpc');

--
-- 0.7.0: claims, acknowledgements and drop_consumer run at READ COMMITTED
-- only (a stale snapshot would number and lease wrong, and fail with a raw
-- serialization error for another relay's work): a clear error, nothing
-- done
--
SELECT * FROM outbox_written;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT count(*) FROM booking.claim_events('tpc');
ROLLBACK;
BEGIN ISOLATION LEVEL SERIALIZABLE;
SELECT booking.ack_events('tpc', 1, '{1}');
ROLLBACK;
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT booking.drop_consumer('tpc');
ROLLBACK;
SET default_transaction_isolation = 'repeatable read';
SELECT count(*) FROM booking.claim_events('tpc');
RESET default_transaction_isolation;
SELECT * FROM outbox_written;
-- at READ COMMITTED inside a transaction block, as an ORM's relay does
BEGIN ISOLATION LEVEL READ COMMITTED;
SELECT ok, code FROM booking.reserve_seat(6, 'in a block', 1);
COMMIT;
BEGIN;
SELECT guest, kind FROM booking.claim_events('tpc');
COMMIT;

--
-- 0.7.0: deliveries of a consumer that is gone (0.6.0's drop_consumer could
-- race a numbering and leave some) keep no event from the purge, and a
-- consumer registered later under that name does not get them
--
SELECT max(id) AS ghost_event FROM booking.events \gset
INSERT INTO booking.deliveries (home, consumer, event_id) VALUES (0, 'ghost', :ghost_event);
SELECT sum(booking.ack_events('tpc', d.lease_token, ARRAY[d.event_id])) AS acked
  FROM booking.deliveries d WHERE d.consumer = 'tpc' AND d.acked_at IS NULL;
SELECT consumer, acked_at IS NOT NULL AS acked FROM booking.deliveries WHERE event_id = :ghost_event ORDER BY consumer;
SET booking.event_retention = '1s';
UPDATE booking.events SET created_at = created_at - interval '1 day';
SELECT booking.hold_expire();
SELECT count(*) AS ghost_event_left FROM booking.events WHERE id = :ghost_event;
SELECT count(*) AS ghost_deliveries_left FROM booking.deliveries WHERE consumer = 'ghost';
RESET booking.event_retention;
SELECT ok, code FROM booking.reserve_seat(6, 'before ghost', 1);
SELECT count(*) AS numbered FROM booking.claim_events('tpc');
INSERT INTO booking.deliveries (home, consumer, event_id)
SELECT 0, 'ghost', id FROM booking.events WHERE guest = 'before ghost';
SELECT booking.add_consumer('ghost');
SELECT count(*) AS ghost_gets_old FROM booking.claim_events('ghost');
SELECT booking.drop_consumer('ghost');
SELECT booking.drop_consumer('tpc');

--
-- 0.9.0: a backlog the statistics do not know of.  The outbox was analyzed
-- while it had a few numbered events; then 20,000 commit (a relay was
-- down).  The numbering reads its resources' heads once per batch (it
-- joined the batch with them in a nested loop, scanning the heads once per
-- event), and a claim and an acknowledgement read their batch's key range
-- of the deliveries, not every open delivery of the consumer (the claim
-- joined the picked rows to all of them, the acknowledgement filtered all
-- of them: a whole backlog read per call).  Autovacuum is
-- kept out so that the statistics stay stale.
--
ALTER TABLE booking.events SET (autovacuum_enabled = off);
ALTER TABLE booking.deliveries SET (autovacuum_enabled = off);
ALTER TABLE booking.event_heads SET (autovacuum_enabled = off);
SELECT booking.add_consumer('backlog');
ANALYZE booking.events, booking.deliveries, booking.event_heads;
INSERT INTO booking.events (home, id, resource_id, kind, created_at)
SELECT 0, nextval('booking.events_id_seq'), 900000 + g % 1000, 'reserved', clock_timestamp()
  FROM generate_series(1, 20000) g;
SELECT pg_stat_force_next_flush();
SELECT seq_scan AS heads_scans_before FROM pg_stat_user_tables WHERE relid = 'booking.event_heads'::regclass \gset
-- two claims number the backlog (10,000 each) and lease 100 each; the heads
-- of a batch's 1,000 resources are read in one statement per batch, not
-- scanned once per event (20,000 scans)
SELECT count(*) AS leased FROM booking.claim_events('backlog', 100);
SELECT count(*) AS leased FROM booking.claim_events('backlog', 100);
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :heads_scans_before < 100 AS heads_read_once_per_batch
  FROM pg_stat_user_tables WHERE relid = 'booking.event_heads'::regclass;
SELECT count(*) AS unnumbered FROM booking.events WHERE seq IS NULL;
SELECT count(*) AS resources_with_gaps FROM (SELECT resource_id FROM booking.events
  WHERE resource_id >= 900000 GROUP BY resource_id
  HAVING min(seq) <> 1 OR max(seq) <> count(*) OR count(DISTINCT seq) <> count(*)) g;
-- a claim's look for unnumbered events starts at its relay's low-water
-- mark, not at the first of the 20,000 entries the numbering left in the
-- partial index of unnumbered events (until a vacuum): a few pages, where
-- the walk from the start read 78.  index_pages: the pages of an index
-- read so far, as the statistics have them after a flush
CREATE FUNCTION pg_temp.index_pages(i regclass) RETURNS bigint LANGUAGE sql
  AS 'SELECT idx_blks_hit + idx_blks_read FROM pg_catalog.pg_statio_all_indexes WHERE indexrelid = i';
SELECT pg_stat_force_next_flush();
SELECT pg_temp.index_pages('booking.events_unsequenced_idx') AS pages_before \gset
SELECT count(*) AS leased FROM booking.claim_events('backlog', 100);
SELECT pg_stat_force_next_flush();
SELECT pg_temp.index_pages('booking.events_unsequenced_idx') - :pages_before < 10 AS look_starts_at_the_mark;
-- a claim, then its acknowledgement: each reads its batch's range of the
-- deliveries' indexes (some hundred entries), not the 19,800 open ones
SELECT sum(idx_tup_read) AS read_before FROM pg_stat_user_indexes
  WHERE relid = 'booking.deliveries'::regclass \gset
SELECT max(lease_token) AS token, array_agg(event_id) AS batch
  FROM booking.claim_events('backlog', 100) \gset
SELECT pg_stat_force_next_flush();
SELECT sum(idx_tup_read) - :read_before < 1000 AS claim_reads_its_range
  FROM pg_stat_user_indexes WHERE relid = 'booking.deliveries'::regclass;
SELECT sum(idx_tup_read) AS read_before FROM pg_stat_user_indexes
  WHERE relid = 'booking.deliveries'::regclass \gset
SELECT booking.ack_events('backlog', :token, :'batch') AS acked;
SELECT pg_stat_force_next_flush();
SELECT sum(idx_tup_read) - :read_before < 1000 AS ack_reads_its_range
  FROM pg_stat_user_indexes WHERE relid = 'booking.deliveries'::regclass;
-- a lease is a HOT update: the deliveries' pages keep room (fillfactor 50)
-- for the leased version beside the one the numbering wrote, so that a
-- claim adds no entries to the deliveries' two indexes; on full pages most
-- leases were new versions elsewhere, each with an entry in both indexes
-- and a uniqueness check of the primary key
SELECT n_tup_hot_upd AS hot_before FROM pg_stat_user_tables
  WHERE relid = 'booking.deliveries'::regclass \gset
SELECT count(*) AS leased FROM booking.claim_events('backlog', 100);
SELECT pg_stat_force_next_flush();
SELECT n_tup_hot_upd - :hot_before AS leased_in_place FROM pg_stat_user_tables
  WHERE relid = 'booking.deliveries'::regclass;
-- a claim picks from its relay's acknowledged floor, not from the first
-- of the entries that acknowledged deliveries leave in the index of open
-- ones (until a vacuum): 10,000 are acknowledged (as relays would), one
-- claim finds the floor, and the next (of one event) reads a few pages of
-- that index, not the walk over the 10,000
UPDATE booking.deliveries SET acked_at = clock_timestamp(), lease_until = NULL
 WHERE consumer = 'backlog' AND acked_at IS NULL
   AND event_id < (SELECT min(event_id) + 10000 FROM booking.deliveries WHERE consumer = 'backlog');
SELECT count(*) AS leased FROM booking.claim_events('backlog', 100);
SELECT pg_stat_force_next_flush();
SELECT pg_temp.index_pages('booking.deliveries_open_idx') AS pages_before \gset
SELECT count(*) AS leased FROM booking.claim_events('backlog', 1);
SELECT pg_stat_force_next_flush();
SELECT pg_temp.index_pages('booking.deliveries_open_idx') - :pages_before < 20 AS pick_starts_at_the_floor;
SELECT booking.drop_consumer('backlog');
ALTER TABLE booking.events RESET (autovacuum_enabled);
ALTER TABLE booking.deliveries RESET (autovacuum_enabled);
ALTER TABLE booking.event_heads RESET (autovacuum_enabled);

--
-- 0.9.0: ids that start again below the relay's low-water mark and its
-- acknowledged floor (the outbox emptied and its sequence restarted, say by
-- a test suite's teardown, while the relay stays connected) are still
-- claimed: both are dropped when the highest id falls below them
--
SELECT booking.add_consumer('restart');
SELECT booking.create_resource('restart', 100) AS restart_id \gset
SELECT ok, code FROM booking.reserve_seat(:restart_id, 'before restart', 1);
SELECT booking.ack_events('restart', lease_token, ARRAY[event_id]) AS acked
  FROM booking.claim_events('restart');
SELECT count(*) AS claimed FROM booking.claim_events('restart');
SELECT ok, code FROM booking.reserve_seat(:restart_id, 'before restart', 1);
SELECT booking.ack_events('restart', lease_token, ARRAY[event_id]) AS acked
  FROM booking.claim_events('restart');
SELECT count(*) AS claimed FROM booking.claim_events('restart');
SELECT max(id) AS old_top FROM booking.events \gset
TRUNCATE booking.deliveries, booking.events;
ALTER SEQUENCE booking.events_id_seq RESTART;
-- as many new events as there were before, so that the new ids pass the
-- old mark before the next claim (the expiry worker of
-- test/reliability/relays.sh numbered none of them so), then a sale's
INSERT INTO booking.events (home, id, resource_id, kind, created_at)
SELECT 0, nextval('booking.events_id_seq'), :restart_id, 'reserved', clock_timestamp()
  FROM generate_series(1, :old_top + 10);
SELECT ok, code FROM booking.reserve_seat(:restart_id, 'after restart', 1);
\o /dev/null
SELECT count(*) FROM booking.claim_events('restart', 1);
SELECT count(*) FROM booking.claim_events('restart', 1);
SELECT count(*) FROM booking.claim_events('restart', 1);
SELECT count(*) FROM booking.claim_events('restart', 1);
\o
SELECT count(*) FILTER (WHERE seq IS NULL) AS unnumbered, count(*) > :old_top AS events
  FROM booking.events;
SELECT count(*) AS after_restart_delivered FROM booking.deliveries d JOIN booking.events e ON e.id = d.event_id
 WHERE d.consumer = 'restart' AND e.guest = 'after restart';
SELECT booking.drop_consumer('restart');

--
-- 0.9.0: the acknowledged floor belongs to one consumer, named in full
-- (names of up to 200 bytes that share their first 150): the first one's
-- floor passes an event the second has not claimed yet
--
SELECT repeat('x', 150) AS long_name \gset
SELECT booking.add_consumer(:'long_name' || 'a') AS a, booking.add_consumer(:'long_name' || 'b') AS b;
SELECT ok, code FROM booking.reserve_seat(:restart_id, 'long names', 1);
SELECT booking.ack_events(:'long_name' || 'a', lease_token, ARRAY[event_id]) AS acked
  FROM booking.claim_events(:'long_name' || 'a');
SELECT count(*) AS claimed FROM booking.claim_events(:'long_name' || 'a');
SELECT count(*) AS claimed FROM booking.claim_events(:'long_name' || 'a');
SELECT guest FROM booking.claim_events(:'long_name' || 'b');
SELECT booking.drop_consumer(:'long_name' || 'a') AS a, booking.drop_consumer(:'long_name' || 'b') AS b;

--
-- 0.9.0: an outbox that was empty when a relay's claims were first
-- planned.  The deliveries were analyzed empty, and the claims of relays
-- that found nothing kept the plan made then (a scan of every delivery
-- and a sort) while a backlog's deliveries came in: each later claim read
-- and sorted all of them, and ten relays drained 200,000 events at 0.3x a
-- plain queue's pace.  The outbox's statements are planned with
-- sequential and bitmap scans off: each reads a key range of an index,
-- whatever the statistics said when it was planned.
--
SELECT booking.add_consumer('planned');
TRUNCATE booking.deliveries, booking.events;
ALTER TABLE booking.deliveries SET (autovacuum_enabled = off);
ALTER TABLE booking.events SET (autovacuum_enabled = off);
ANALYZE booking.deliveries, booking.events;
-- more claims than the plan cache's five custom plans: it keeps a generic one
SELECT count(*) AS claims, sum(c.n) AS claimed_from_empty FROM generate_series(1, 8) g,
  LATERAL (SELECT count(*) AS n FROM booking.claim_events('planned', 99 + g / g)) c;
INSERT INTO booking.events (home, id, resource_id, kind, created_at)
SELECT 0, nextval('booking.events_id_seq'), 800000 + g % 100, 'reserved', clock_timestamp()
  FROM generate_series(1, 5000) g;
SELECT pg_stat_force_next_flush();
SELECT seq_scan AS scans_before FROM pg_stat_user_tables
 WHERE relid = 'booking.deliveries'::regclass \gset
SELECT count(*) AS leased FROM booking.claim_events('planned', 100);
SELECT count(*) AS leased FROM booking.claim_events('planned', 100);
SELECT pg_stat_force_next_flush();
SELECT seq_scan - :scans_before AS deliveries_scanned FROM pg_stat_user_tables
 WHERE relid = 'booking.deliveries'::regclass;
SELECT booking.drop_consumer('planned');
ALTER TABLE booking.deliveries RESET (autovacuum_enabled);
ALTER TABLE booking.events RESET (autovacuum_enabled);
