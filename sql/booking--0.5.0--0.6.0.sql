/* booking--0.5.0--0.6.0.sql: events out.  The outbox (booking.events, read
 * through consumers, claim_events and ack_events), the waitlist of a sold-out
 * resource (join_waitlist, status waiting, resources.waiting) and
 * booking.health(). */

\echo Use "ALTER EXTENSION booking UPDATE TO '0.6.0'" to load this file. \quit

-- The new status is appended, so it sorts after expired; this transaction
-- cannot use it yet, which is why bookings_waiting_idx names it "> expired".
ALTER TYPE booking.status ADD VALUE 'waiting';
COMMENT ON TYPE booking.status IS
'pending: a hold that blocks until expires_at; confirmed: blocks for good; cancelled and expired never block; waiting: in the line of a sold-out resource, takes nothing';

ALTER TABLE booking.resources ADD COLUMN waiting integer NOT NULL DEFAULT 0;
ALTER TABLE booking.resources DROP CONSTRAINT resources_counter_check,
    ADD CONSTRAINT resources_counter_check CHECK (capacity >= 0 AND taken >= 0
        AND taken <= capacity AND stripes >= 0 AND stripes <= 64
        AND (stripes <= 1 OR taken = 0)
        AND (guest_limit IS NULL OR guest_limit >= 1)
        AND buffer_before >= '0' AND buffer_after >= '0' AND waiting >= 0);
CREATE INDEX resources_waiting_idx ON booking.resources (home, id) WHERE waiting > 0;
CREATE INDEX bookings_waiting_idx ON booking.bookings (home, resource_id, created_at, id)
    WHERE status > 'expired';

-- The outbox (docs/events.md).  Every state change writes one row here in
-- its own transaction; claim_events numbers the committed rows per resource
-- (seq) and hands them to each consumer through deliveries.
CREATE SEQUENCE booking.events_id_seq;
CREATE SEQUENCE booking.lease_token_seq;
CREATE TABLE booking.events (
    home        bigint NOT NULL DEFAULT 0,
    id          bigint NOT NULL,
    resource_id bigint NOT NULL,
    booking_id  bigint NULL,
    guest       text NULL,
    kind        text NOT NULL,
    payload     jsonb NOT NULL DEFAULT '{}',
    -- gap-free per resource, in the order the rows became visible; NULL
    -- until claim_events numbers the row (after its commit)
    seq         bigint NULL,
    created_at  timestamptz NOT NULL,
    CONSTRAINT events_pkey PRIMARY KEY (home, id),
    CONSTRAINT events_kind_check CHECK (kind IN ('reserved', 'confirmed', 'cancelled', 'expired',
        'hold_extended', 'moved', 'reduced', 'capacity_changed', 'waitlist_joined', 'waitlist_offered'))
);
ALTER SEQUENCE booking.events_id_seq OWNED BY booking.events.id;
-- partial: a sale's insert touches neither this index's numbered part nor the next one
CREATE INDEX events_unsequenced_idx ON booking.events (home, id) WHERE seq IS NULL;
CREATE UNIQUE INDEX events_resource_seq_idx ON booking.events (home, resource_id, seq)
    WHERE seq IS NOT NULL;
CREATE INDEX events_created_idx ON booking.events USING brin (created_at);

-- the last seq given per resource; the row of resource_id 0 is the home's
-- sequencer lock
CREATE TABLE booking.event_heads (
    home        bigint NOT NULL DEFAULT 0,
    resource_id bigint NOT NULL,
    last_seq    bigint NOT NULL,
    CONSTRAINT event_heads_pkey PRIMARY KEY (home, resource_id)
);

-- small and read everywhere: a reference table on Citus
CREATE TABLE booking.consumers (
    name          text NOT NULL CHECK (pg_catalog.octet_length(name) BETWEEN 1 AND 200),
    registered_at timestamptz NOT NULL,
    CONSTRAINT consumers_pkey PRIMARY KEY (name)
);

-- one row per consumer and numbered event, until purged
CREATE TABLE booking.deliveries (
    home        bigint NOT NULL DEFAULT 0,
    consumer    text NOT NULL,
    event_id    bigint NOT NULL,
    -- the claim that holds it: a stale token cannot ack (fencing)
    lease_token bigint NULL,
    lease_until timestamptz NULL,
    attempts    integer NOT NULL DEFAULT 0,
    acked_at    timestamptz NULL,
    CONSTRAINT deliveries_pkey PRIMARY KEY (home, consumer, event_id)
);
CREATE INDEX deliveries_open_idx ON booking.deliveries (home, consumer, event_id)
    WHERE acked_at IS NULL;

SELECT pg_catalog.pg_extension_config_dump('booking.events', '');
SELECT pg_catalog.pg_extension_config_dump('booking.event_heads', '');
SELECT pg_catalog.pg_extension_config_dump('booking.consumers', '');
SELECT pg_catalog.pg_extension_config_dump('booking.deliveries', '');
SELECT pg_catalog.pg_extension_config_dump('booking.events_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('booking.lease_token_seq', '');

COMMENT ON TABLE booking.events IS 'the outbox: one row per state change, written in the same transaction';
COMMENT ON TABLE booking.event_heads IS 'the last sequence number given to each resource''s events';
COMMENT ON TABLE booking.consumers IS 'the consumers of the outbox; each gets every event numbered after it registered';
COMMENT ON TABLE booking.deliveries IS 'per consumer and event: its lease and whether it was acknowledged';

REVOKE ALL ON booking.events, booking.event_heads, booking.consumers, booking.deliveries FROM PUBLIC;

------------------------------------------------------------------------------
-- the waitlist of a sold-out resource (docs/waitlist.md)
------------------------------------------------------------------------------

CREATE FUNCTION booking.join_waitlist(resource bigint, guest text, quantity integer DEFAULT 1,
        idempotency_key text DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_join_waitlist'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.join_waitlist(bigint, text, integer, text) IS
'puts the guest in line for quantity seats of a sold-out resource (code waitlisted, 202); freed seats are offered to the line in join order as holds';

------------------------------------------------------------------------------
-- events out: the outbox (docs/events.md)
------------------------------------------------------------------------------

CREATE FUNCTION booking.add_consumer(name text)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'booking_add_consumer'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.add_consumer(text) IS
'registers a consumer of the outbox; it gets every event numbered from now on (true: added, false: it existed)';

CREATE FUNCTION booking.drop_consumer(name text)
    RETURNS boolean
    AS 'MODULE_PATHNAME', 'booking_drop_consumer'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.drop_consumer(text) IS
'removes a consumer and its deliveries (true: it existed)';

CREATE FUNCTION booking.claim_events(consumer text, batch integer DEFAULT 100,
        lease interval DEFAULT '30 seconds')
    RETURNS TABLE (event_id bigint, lease_token bigint, resource_id bigint, seq bigint,
        booking_id bigint, guest text, kind text, payload jsonb, created_at timestamptz,
        attempts integer)
    AS 'MODULE_PATHNAME', 'booking_claim_events'
    LANGUAGE C VOLATILE PARALLEL UNSAFE ROWS 100
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.claim_events(text, integer, interval) IS
'leases up to batch unacknowledged events of a consumer under one new lease token; concurrent relays get disjoint batches and never wait';

CREATE FUNCTION booking.ack_events(consumer text, lease_token bigint, events bigint[])
    RETURNS integer
    AS 'MODULE_PATHNAME', 'booking_ack_events'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.ack_events(text, bigint, bigint[]) IS
'acknowledges the listed events still leased under lease_token; a token whose events were claimed again acknowledges nothing';

------------------------------------------------------------------------------
-- operations
------------------------------------------------------------------------------

-- one statement per figure: each names one table, so Citus runs each as a
-- plain distributed query
CREATE FUNCTION booking.health()
    RETURNS TABLE (metric text, subject text, value double precision)
    LANGUAGE plpgsql STABLE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp
    AS $health$
DECLARE
    who text;
BEGIN
    RETURN QUERY SELECT 'lapsed_hold_oldest_seconds'::text, NULL::text,
            COALESCE(pg_catalog.date_part('epoch', pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.min(b.expires_at)), 0)
        FROM booking.bookings b
        WHERE b.status OPERATOR(pg_catalog.=) 'pending' AND b.expires_at OPERATOR(pg_catalog.<=) pg_catalog.now();
    RETURN QUERY SELECT 'lapsed_holds'::text, NULL::text, CAST(pg_catalog.count(*) AS double precision)
        FROM booking.bookings b
        WHERE b.status OPERATOR(pg_catalog.=) 'pending' AND b.expires_at OPERATOR(pg_catalog.<=) pg_catalog.now();
    RETURN QUERY SELECT 'waitlist_length'::text, CAST(r.id AS text), CAST(r.waiting AS double precision)
        FROM booking.resources r WHERE r.waiting OPERATOR(pg_catalog.>) 0 ORDER BY r.id;
    -- every registered consumer gets its rows, 0 when it is up to date
    FOR who IN SELECT c.name FROM booking.consumers c ORDER BY c.name LOOP
        RETURN QUERY SELECT 'consumer_unacked'::text, who, CAST(pg_catalog.count(*) AS double precision)
            FROM booking.deliveries d WHERE d.consumer OPERATOR(pg_catalog.=) who AND d.acked_at IS NULL;
        RETURN QUERY SELECT 'consumer_oldest_unacked_seconds'::text, who,
                COALESCE(pg_catalog.date_part('epoch', pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.min(e.created_at)), 0)
            FROM booking.deliveries d JOIN booking.events e
              ON e.home OPERATOR(pg_catalog.=) d.home AND e.id OPERATOR(pg_catalog.=) d.event_id
            WHERE d.consumer OPERATOR(pg_catalog.=) who AND d.acked_at IS NULL;
    END LOOP;
    RETURN QUERY SELECT 'events_unsequenced'::text, NULL::text, CAST(pg_catalog.count(*) AS double precision)
        FROM booking.events e WHERE e.seq IS NULL;
    RETURN QUERY SELECT 'idempotency_keys'::text, NULL::text, CAST(pg_catalog.count(*) AS double precision)
        FROM booking.idempotency_keys k;
    RETURN QUERY SELECT 'idempotency_key_oldest_seconds'::text, NULL::text,
            COALESCE(pg_catalog.date_part('epoch', pg_catalog.now() OPERATOR(pg_catalog.-) pg_catalog.min(k.created_at)), 0)
        FROM booking.idempotency_keys k;
END
$health$;
COMMENT ON FUNCTION booking.health() IS
'figures to watch: lapsed holds not yet swept, waitlist lengths, each consumer''s unacknowledged events and their age, events not yet numbered, idempotency keys';


------------------------------------------------------------------------------
-- statistics (src/stats.c): counters in shared memory, when booking is in
-- shared_preload_libraries
------------------------------------------------------------------------------

CREATE FUNCTION booking.stats()
    RETURNS TABLE(function text, code text, calls bigint, total_ms double precision,
                  max_ms double precision, lock_wait_ms double precision)
    AS 'MODULE_PATHNAME', 'booking_stats'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION booking.stats() IS
'per API function and result code since the last reset: calls, their wall time, the longest, and the time they waited for locks; needs booking in shared_preload_libraries';

CREATE FUNCTION booking.stats_reset()
    RETURNS void
    AS 'MODULE_PATHNAME', 'booking_stats_reset'
    LANGUAGE C VOLATILE PARALLEL UNSAFE;
COMMENT ON FUNCTION booking.stats_reset() IS
'sets every counter of booking.stats() to zero, in the whole cluster; not granted to applications';

-- Neither runs as its owner: they touch no table.  stats() is granted like
-- the rest of the API (GRANT EXECUTE ... TO a monitoring or web role);
-- stats_reset() is for superusers only (it checks), whatever is granted.
REVOKE ALL ON FUNCTION booking.stats() FROM PUBLIC;
REVOKE ALL ON FUNCTION booking.stats_reset() FROM PUBLIC;

CREATE FUNCTION booking.shard_join_waitlist(resource bigint, guest text, quantity integer, idempotency_key text, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_join_waitlist'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_join_waitlist(bigint, text, integer, text, bigint) IS
'internal: booking.join_waitlist on the node that holds the resource (Citus)';

-- nothing new is executable by PUBLIC (docs/reference.md, Grants)
REVOKE ALL ON FUNCTION booking.join_waitlist(bigint, text, integer, text),
    booking.add_consumer(text), booking.drop_consumer(text),
    booking.claim_events(text, integer, interval), booking.ack_events(text, bigint, bigint[]),
    booking.health(), booking.shard_join_waitlist(bigint, text, integer, text, bigint) FROM PUBLIC;
