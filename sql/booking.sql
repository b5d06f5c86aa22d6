/* booking.sql: the install script of the current version; the Makefile
 * copies it to booking--<default_version>.sql.  Released versions keep their
 * own frozen script, and each change ships an upgrade script too. */

\echo Use "CREATE EXTENSION booking CASCADE" to load this file. \quit

-- The schema must be trustworthy before anything is created in it: a
-- non-superuser who owns it (or may create in it) could drop it with every
-- booking, or plant objects (an overload of reserve_seat, say) that the
-- documented calls would then run, as a superuser when an admin tries them.
DO $check$
DECLARE
    owner_name name;
    owner_super boolean;
BEGIN
    SELECT r.rolname, r.rolsuper INTO owner_name, owner_super
      FROM pg_catalog.pg_namespace n JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) n.nspowner
     WHERE n.nspname OPERATOR(pg_catalog.=) 'booking';
    IF NOT owner_super THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = pg_catalog.format('schema "booking" is owned by role %I, which is not a superuser', owner_name),
            DETAIL = 'The owner of the schema could drop every booking or plant objects that the booking calls would run.',
            HINT = 'Drop the schema, or give it to a superuser (ALTER SCHEMA booking OWNER TO ...), then CREATE EXTENSION booking again.';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a
                LEFT JOIN pg_catalog.pg_roles r ON r.oid OPERATOR(pg_catalog.=) a.grantee
                WHERE n.nspname OPERATOR(pg_catalog.=) 'booking' AND a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'
                  AND NOT COALESCE(r.rolsuper, false)) THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'schema "booking" lets a role that is not a superuser create objects in it',
            HINT = 'REVOKE CREATE ON SCHEMA booking FROM that role (or PUBLIC), then CREATE EXTENSION booking again.';
    END IF;
    IF EXISTS (SELECT 1 FROM pg_catalog.pg_class WHERE relnamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_proc WHERE pronamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_type WHERE typnamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_operator WHERE oprnamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_collation WHERE collnamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_conversion WHERE connamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_opfamily WHERE opfnamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_ts_config WHERE cfgnamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_ts_dict WHERE dictnamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace)
       OR EXISTS (SELECT 1 FROM pg_catalog.pg_statistic_ext WHERE stxnamespace OPERATOR(pg_catalog.=) 'booking'::pg_catalog.regnamespace) THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'schema "booking" already contains objects',
            DETAIL = 'The extension creates its objects in an empty schema only, so that nothing in it was put there by someone else.',
            HINT = 'Drop the schema or move its objects elsewhere, then CREATE EXTENSION booking again.';
    END IF;
END
$check$;

-- Every object lives in schema booking (created by CREATE EXTENSION from the
-- control file).  The C code refers to these objects by qualified name, so
-- the extension is not relocatable.

-- waiting (0.6.0) comes last: an upgrade appends it, and index predicates
-- written by the upgrade name it as "after expired"
CREATE TYPE booking.status AS ENUM ('pending', 'confirmed', 'cancelled', 'expired', 'waiting');
COMMENT ON TYPE booking.status IS
'pending: a hold that blocks until expires_at; confirmed: blocks for good; cancelled and expired never block; waiting: in the line of a sold-out resource, takes nothing';

CREATE TYPE booking.result AS (
    ok          boolean,
    code        text,
    booking_id  bigint,
    http_status integer,
    message     text,
    replayed    boolean
);
COMMENT ON TYPE booking.result IS
'what every mutating call returns: a stable code, its HTTP status and a readable message';

CREATE SEQUENCE booking.resources_id_seq;
CREATE SEQUENCE booking.bookings_id_seq;

-- home: the shard a row lives in.  Every table carries it (as its last
-- column, where 0.4.0 added it), first in every key and constraint, so that the tables can be distributed by it on Citus
-- (booking.distribute()): a call computes it from the id it was given and
-- touches one shard.  On one server it is 0 in every row; on Citus it is the
-- smallest non-negative number that hashes into the row's shard, and ids are
-- drawn so that a unit lands in its pool's shard and a booking in its
-- resource's (docs/scale-out.md).
CREATE TABLE booking.resources (
    id          bigint NOT NULL DEFAULT pg_catalog.nextval('booking.resources_id_seq'::pg_catalog.regclass),
    name        text NOT NULL,
    capacity    integer NOT NULL,
    pool_id     bigint NULL,
    version     bigint NOT NULL DEFAULT 1,
    meta        jsonb NOT NULL DEFAULT '{}',
    -- seats held by pending and confirmed seat bookings; a lapsed hold stays
    -- counted until something reclaims it under this row's lock
    taken       integer NOT NULL DEFAULT 0,
    -- 0 or 1: the resource row is the one counter; N > 1: N stripe rows share
    -- the free seats, so concurrent buyers commit in parallel (taken stays 0)
    stripes     integer NOT NULL DEFAULT 0,
    home        bigint NOT NULL DEFAULT 0,
    -- the most seats (or stays not yet ended) one guest may hold; NULL: no limit
    guest_limit integer NULL,
    -- a stay keeps the resource from others for this long before and after it
    buffer_before interval NOT NULL DEFAULT '0',
    buffer_after interval NOT NULL DEFAULT '0',
    -- entries in the waitlist (status waiting): while there are any, freed
    -- seats go to the line, and newcomers are refused
    waiting     integer NOT NULL DEFAULT 0,
    -- (0.9.0) its local time: reserve_nights and reserve_series compute
    -- their ranges in this IANA zone (set_time_zone checks the name), and
    -- the nights run from check_in on arrival to check_out on departure
    time_zone   text NOT NULL DEFAULT 'UTC',
    check_in    time NOT NULL DEFAULT '00:00',
    check_out   time NOT NULL DEFAULT '00:00',
    -- (0.9.0) per weekday the local windows a stay must lie in, as
    -- set_opening_hours checked them; NULL: always open
    opening_hours jsonb NULL,
    -- (0.9.0) reserve_slot has booked it: a stay on it takes every unit, so
    -- it must leave room among the slots (docs/slots.md)
    slotted     boolean NOT NULL DEFAULT false,
    -- (0.9.0) the longest range any of its slot bookings ever had: the
    -- sweep reads the slots that start from this far before a window on
    -- (bookings_slots_idx); it only grows, under the row's lock
    longest_slot interval NOT NULL DEFAULT '0',
    -- one constraint, not five: the executor re-reads every CHECK of a table
    -- for each statement, and this row is written by every sale.  The last
    -- term makes a write of taken on a striped resource (say, from a session
    -- still running an older library) fail loudly.
    CONSTRAINT resources_counter_check CHECK (capacity >= 0 AND taken >= 0
        AND taken <= capacity AND stripes >= 0 AND stripes <= 64
        AND (stripes <= 1 OR taken = 0)
        AND (guest_limit IS NULL OR guest_limit >= 1)
        AND buffer_before >= '0' AND buffer_after >= '0' AND waiting >= 0),
    CONSTRAINT resources_pkey PRIMARY KEY (home, id),
    -- a unit lives in its pool's shard
    CONSTRAINT resources_pool_fkey FOREIGN KEY (home, pool_id) REFERENCES booking.resources (home, id)
) WITH (fillfactor = 50);   -- room for HOT updates of a hot counter row
ALTER SEQUENCE booking.resources_id_seq OWNED BY booking.resources.id;
CREATE INDEX resources_pool_idx ON booking.resources (home, pool_id, id) WHERE pool_id IS NOT NULL;
-- the lines hold_expire looks after
CREATE INDEX resources_waiting_idx ON booking.resources (home, id) WHERE waiting > 0;

CREATE FUNCTION booking.refuse_resource_delete()
    RETURNS trigger
    AS 'MODULE_PATHNAME', 'booking_refuse_resource_delete'
    LANGUAGE C;
COMMENT ON FUNCTION booking.refuse_resource_delete() IS
'trigger: resource rows are never deleted or renumbered, nor truncated while bookings refer to them';
-- statement triggers: the hot UPDATE of a counter names no id and fires nothing
CREATE TRIGGER resources_no_delete BEFORE DELETE OR UPDATE OF id ON booking.resources
    FOR EACH STATEMENT EXECUTE FUNCTION booking.refuse_resource_delete();
CREATE TRIGGER resources_no_orphans AFTER TRUNCATE ON booking.resources
    FOR EACH STATEMENT EXECUTE FUNCTION booking.refuse_resource_delete();

CREATE TABLE booking.bookings (
    id          bigint NOT NULL DEFAULT pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass),
    -- no foreign key: its check would lock the resource row (FOR KEY SHARE)
    -- on every sale, the one write a striped sale must not make on the hot
    -- row.  The API writes only resources it has read, and resource rows
    -- are never deleted (the trigger below refuses it).
    resource_id bigint NOT NULL,
    guest       text NOT NULL,
    quantity    integer NOT NULL,
    during      tstzrange NULL,
    status      booking.status NOT NULL,
    expires_at  timestamptz NULL,
    created_at  timestamptz NOT NULL DEFAULT pg_catalog.clock_timestamp(),
    -- reserve_stays: the id of the group's first booking, on every member
    group_id    bigint NULL,
    -- when the row blocks: [created, expires_at) for a hold, [created, infinity)
    -- once confirmed; a lapsed hold stops overlapping newcomers by itself
    validity    tstzrange NOT NULL,
    home        bigint NOT NULL DEFAULT 0,
    -- made while its resource had a guest limit: only such rows are counted
    -- (bookings_guest_idx), so a resource without a limit pays nothing
    limited     boolean NOT NULL DEFAULT false,
    -- a stay's footprint: during widened by its resource's buffers; the
    -- exclusion constraint compares footprints.  NULL with during: a slot
    -- booking (reserve_slot), which holds quantity units over during
    blocked     tstzrange NULL,
    -- (0.8.0) the caller's own data (an order id, a cart): a JSON object of
    -- at most 8 kB, checked by the calls; copied into every event's payload
    metadata    jsonb NULL,
    -- one short constraint on the hot insert path (see resources); the API
    -- normalizes during to a non-empty [lower, upper) before it writes
    CONSTRAINT bookings_row_check CHECK (quantity > 0
        AND ((status = 'pending') = (expires_at IS NOT NULL) OR status IN ('cancelled', 'expired'))
        AND (during IS NOT NULL OR blocked IS NULL) AND (blocked IS NULL OR blocked @> during)),
    CONSTRAINT bookings_pkey PRIMARY KEY (home, id),
    CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
        home WITH =, resource_id WITH =, blocked WITH &&, validity WITH &&)
        WHERE (blocked IS NOT NULL AND status IN ('pending', 'confirmed'))
);
ALTER SEQUENCE booking.bookings_id_seq OWNED BY booking.bookings.id;
CREATE INDEX bookings_pending_idx ON booking.bookings (home, resource_id, expires_at) WHERE status = 'pending';
CREATE INDEX bookings_expiry_idx ON booking.bookings (home, expires_at) WHERE status = 'pending';
CREATE INDEX bookings_group_idx ON booking.bookings (home, group_id) WHERE group_id IS NOT NULL;
-- the slots reserve_slot sweeps under the resource's lock (4_inventory/capacity.c)
CREATE INDEX bookings_slots_idx ON booking.bookings (home, resource_id, lower(during))
    WHERE blocked IS NULL AND during IS NOT NULL AND status IN ('pending', 'confirmed');
CREATE INDEX bookings_guest_idx ON booking.bookings (home, resource_id, guest)
    WHERE limited AND status IN ('pending', 'confirmed');
-- a resource's waitlist in join order; "> expired" is "waiting" (see the type)
CREATE INDEX bookings_waiting_idx ON booking.bookings (home, resource_id, created_at, id)
    WHERE status > 'expired';

CREATE TABLE booking.resource_stripes (
    resource_id bigint NOT NULL,
    stripe      integer NOT NULL,
    free        integer NOT NULL,
    home        bigint NOT NULL DEFAULT 0,
    -- its resource has a guest limit: the fast path leaves it to the slow one
    limited     boolean NOT NULL DEFAULT false,
    CONSTRAINT resource_stripes_pkey PRIMARY KEY (home, resource_id, stripe),
    CONSTRAINT resource_stripes_resource_fkey FOREIGN KEY (home, resource_id)
        REFERENCES booking.resources (home, id),
    CONSTRAINT resource_stripes_check CHECK (stripe >= 0 AND free >= 0)
) WITH (fillfactor = 50);   -- room for HOT updates of hot counter rows

-- on Citus a key lives in the shard of the call that stored it
CREATE TABLE booking.idempotency_keys (
    key         text COLLATE "C" NOT NULL CHECK (pg_catalog.octet_length(key) BETWEEN 1 AND 255),
    request     text NOT NULL,
    ok          boolean NOT NULL,
    code        text NOT NULL,
    booking_id  bigint NULL,
    http_status integer NOT NULL,
    message     text NOT NULL,
    created_at  timestamptz NOT NULL,
    home        bigint NOT NULL DEFAULT 0,
    CONSTRAINT idempotency_keys_pkey PRIMARY KEY (home, key)
);
-- keys arrive in time order: a BRIN index makes the purge cheap and costs
-- the hot path almost nothing
CREATE INDEX idempotency_keys_created_idx ON booking.idempotency_keys USING brin (created_at);

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
        'hold_extended', 'moved', 'reduced', 'capacity_changed', 'waitlist_joined', 'waitlist_offered',
        'guest_forgotten'))
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
) WITH (fillfactor = 50);   -- (0.9.0) a claim's lease is a HOT update beside the numbering's row
CREATE INDEX deliveries_open_idx ON booking.deliveries (home, consumer, event_id)
    WHERE acked_at IS NULL;

-- (0.8.0) the key of forget_guest's pseudonyms: made on first use (a fresh
-- install has none, so that a restored dump keeps the old one), read by
-- nobody but the extension's owner; on Citus it stays on the coordinator
CREATE TABLE booking.secrets (
    name        text PRIMARY KEY,
    value       bytea NOT NULL
);

-- pg_dump keeps user data of extension tables only when told to
SELECT pg_catalog.pg_extension_config_dump('booking.resources', '');
SELECT pg_catalog.pg_extension_config_dump('booking.bookings', '');
SELECT pg_catalog.pg_extension_config_dump('booking.idempotency_keys', '');
SELECT pg_catalog.pg_extension_config_dump('booking.resource_stripes', '');
SELECT pg_catalog.pg_extension_config_dump('booking.resources_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('booking.bookings_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('booking.events', '');
SELECT pg_catalog.pg_extension_config_dump('booking.event_heads', '');
SELECT pg_catalog.pg_extension_config_dump('booking.consumers', '');
SELECT pg_catalog.pg_extension_config_dump('booking.deliveries', '');
SELECT pg_catalog.pg_extension_config_dump('booking.events_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('booking.lease_token_seq', '');
SELECT pg_catalog.pg_extension_config_dump('booking.secrets', '');

COMMENT ON TABLE booking.resources IS 'things that can be booked: a session of N seats, a room, a pool of rooms';
COMMENT ON TABLE booking.bookings IS 'one row per reservation; write it only through the booking functions';
COMMENT ON TABLE booking.resource_stripes IS
'free seats of a striped resource, split over rows that buyers lock independently';
COMMENT ON TABLE booking.idempotency_keys IS 'stored results of calls made with an idempotency key';
COMMENT ON TABLE booking.events IS 'the outbox: one row per state change, written in the same transaction';
COMMENT ON TABLE booking.event_heads IS 'per resource, the last sequence number of the events the purge removed (the numbering gives the next number above it and above the resource''s numbered events); the row with resource_id 0 is the home''s sequencer lock';
COMMENT ON TABLE booking.consumers IS 'the consumers of the outbox; each gets every event numbered after it registered';
COMMENT ON TABLE booking.secrets IS 'the key of forget_guest''s pseudonyms; never grant it';
COMMENT ON TABLE booking.deliveries IS 'per consumer and event: its lease and whether it was acknowledged';

-- Writes go through the API only: it is SECURITY DEFINER with a pinned
-- search_path, and applications get SELECT on the tables and EXECUTE on it.
REVOKE ALL ON booking.resources, booking.bookings, booking.idempotency_keys,
    booking.resource_stripes, booking.events, booking.event_heads, booking.consumers,
    booking.deliveries, booking.secrets FROM PUBLIC;

------------------------------------------------------------------------------
-- resources
------------------------------------------------------------------------------

CREATE FUNCTION booking.create_resource(name text, capacity integer DEFAULT 1,
        pool bigint DEFAULT NULL, meta jsonb DEFAULT '{}')
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'booking_create_resource'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.create_resource(text, integer, bigint, jsonb) IS
'creates a bookable resource (a session of capacity seats, a room, or a pool) and returns its id';

CREATE FUNCTION booking.set_capacity(resource bigint, capacity integer, expected_version bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_capacity'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_capacity(bigint, integer, bigint) IS
'optimistic capacity change: refused with version_conflict when expected_version is stale';

CREATE FUNCTION booking.seats_left(resource bigint)
    RETURNS integer
    AS 'MODULE_PATHNAME', 'booking_seats_left'
    LANGUAGE C STABLE PARALLEL SAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.seats_left(bigint) IS
'seats still free on a resource (lapsed holds count as free); NULL for an unknown resource';

-- (0.8.0) a booking as a screen shows it, for a role without SELECT on the
-- tables: one row, or none for an unknown id
CREATE FUNCTION booking.get_booking(booking bigint)
    RETURNS TABLE (id bigint, resource_id bigint, guest text, quantity integer, during tstzrange,
                   status booking.status, expires_at timestamptz, created_at timestamptz,
                   metadata jsonb, group_id bigint)
    AS 'MODULE_PATHNAME', 'booking_get_booking'
    LANGUAGE C STABLE PARALLEL SAFE ROWS 1
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.get_booking(bigint) IS
'one booking: id, resource_id, guest, quantity, during, status, expires_at, created_at, metadata, group_id; no row for an unknown id';

CREATE FUNCTION booking.set_stripes(resource bigint, stripes integer)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_stripes'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_stripes(bigint, integer) IS
'splits a resource''s free seats over stripes rows (hot inventory); 0 or 1 goes back to one row';

CREATE FUNCTION booking.set_guest_limit(resource bigint, max_per_guest integer)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_guest_limit'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_guest_limit(bigint, integer) IS
'caps what one guest may hold of a resource (seats, or stays not yet ended); NULL removes the cap';

CREATE FUNCTION booking.set_buffer(resource bigint, before interval, after interval)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_buffer'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_buffer(bigint, interval, interval) IS
'from now on a stay keeps the resource from others for before ahead of it and after behind it';

CREATE FUNCTION booking.set_time_zone(resource bigint, time_zone text)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_time_zone'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_time_zone(bigint, text) IS
'sets the IANA time zone in which reserve_nights and reserve_series read the resource''s local time';

CREATE FUNCTION booking.set_check_times(resource bigint, check_in time DEFAULT '00:00',
        check_out time DEFAULT '00:00')
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_check_times'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_check_times(bigint, time, time) IS
'sets the local check-in and check-out times of the nights reserve_nights books';

CREATE FUNCTION booking.set_opening_hours(resource bigint, hours jsonb)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_set_opening_hours'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.set_opening_hours(bigint, jsonb) IS
'sets the local windows per weekday that stays must lie in (NULL: always open); outside them calls answer closed';

------------------------------------------------------------------------------
-- counted inventory
------------------------------------------------------------------------------

CREATE FUNCTION booking.reserve_seat(resource bigint, guest text, quantity integer DEFAULT 1,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_seat'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_seat(bigint, text, integer, interval, text, interval, jsonb) IS
'takes quantity seats of a resource under its row lock; sold_out when they are not there';

CREATE FUNCTION booking.reserve_seats(resources bigint[], guest text, quantities integer[] DEFAULT NULL,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_seats'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_seats(bigint[], text, integer[], interval, text, interval, jsonb) IS
'takes seats of several resources, all or nothing, locking them in ascending id order; members share group_id';

------------------------------------------------------------------------------
-- range inventory
------------------------------------------------------------------------------

CREATE FUNCTION booking.reserve_stay(resource bigint, guest text, during tstzrange,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_stay'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb) IS
'books a resource exclusively over a half-open time range; the exclusion constraint is the guard';

CREATE FUNCTION booking.reserve_stays(resources bigint[], guest text, during tstzrange,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_stays'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_stays(bigint[], text, tstzrange, interval, text, interval, jsonb) IS
'books several resources over the same range, all or nothing; members share group_id';

CREATE FUNCTION booking.reserve_stay_any(pool bigint, guest text, during tstzrange,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_stay_any'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb) IS
'books any free unit of a pool (resources whose pool_id is pool) over a range';

CREATE FUNCTION booking.reserve_nights(resource bigint, guest text, arrival date, departure date,
        hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_nights'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_nights(bigint, text, date, date, interval, text, interval, jsonb) IS
'books the nights from arrival at check-in to departure at check-out, in the resource''s local time; a stay';

CREATE FUNCTION booking.reserve_series(resource bigint, guest text, first tstzrange, every interval,
        count integer, hold interval DEFAULT NULL, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_series'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_series(bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb) IS
'books count stays of first moved by k * every in the resource''s local time, all or nothing; they share group_id';

CREATE FUNCTION booking.cancel_group(group_id bigint, from_time timestamptz DEFAULT NULL,
        idempotency_key text DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_cancel_group'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.cancel_group(bigint, timestamptz, text) IS
'cancels every blocking booking of a group (a series, a reserve_stays group, a reserve_seats pass) that starts at or after from_time, at once';

CREATE FUNCTION booking.reserve_slot(resource bigint, guest text, during tstzrange,
        quantity integer DEFAULT 1, hold interval DEFAULT NULL,
        idempotency_key text DEFAULT NULL, lock_timeout interval DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reserve_slot'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reserve_slot(bigint, text, tstzrange, integer, interval, text, interval, jsonb) IS
'takes quantity units of the resource''s capacity over during; at no instant do its slot bookings exceed capacity';

CREATE FUNCTION booking.slots_left(resource bigint, within tstzrange)
    RETURNS TABLE (during tstzrange, free integer)
    AS 'MODULE_PATHNAME', 'booking_slots_left'
    LANGUAGE C STABLE PARALLEL SAFE ROWS 10
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.slots_left(bigint, tstzrange) IS
'the free units of a resource over within, as consecutive ranges of one free count, open time only';

CREATE FUNCTION booking.free_slots(resource bigint, within tstzrange, min_length interval)
    RETURNS SETOF tstzrange
    AS 'MODULE_PATHNAME', 'booking_free_slots'
    LANGUAGE C STABLE PARALLEL SAFE ROWS 10
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.free_slots(bigint, tstzrange, interval) IS
'maximal free gaps of a resource inside within, at least min_length long, in time order';

------------------------------------------------------------------------------
-- holds and lifecycle
------------------------------------------------------------------------------

CREATE FUNCTION booking.confirm(booking bigint, idempotency_key text DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_confirm'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.confirm(bigint, text) IS
'turns an unexpired hold into a confirmed booking; hold_expired when it lapsed';

CREATE FUNCTION booking.cancel(booking bigint, idempotency_key text DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_cancel'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.cancel(bigint, text) IS
'cancels a pending or confirmed booking and frees its seats or dates at once';

CREATE FUNCTION booking.extend_hold(booking bigint, by interval)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_extend_hold'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.extend_hold(bigint, interval) IS
'pushes the expiry of an unexpired hold by an interval';

CREATE FUNCTION booking.extend_hold_until(booking bigint, until timestamptz)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_extend_hold_until'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.extend_hold_until(bigint, timestamptz) IS
'sets the expiry of an unexpired hold to until; a retry sets the same expiry again';

------------------------------------------------------------------------------
-- changing a booking
------------------------------------------------------------------------------

CREATE FUNCTION booking.reduce(booking bigint, quantity integer, idempotency_key text DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_reduce'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.reduce(bigint, integer, text) IS
'gives back quantity seats of a seat booking at once; all of them cancels it';

CREATE FUNCTION booking.move_stay(booking bigint, during tstzrange, idempotency_key text DEFAULT NULL,
        lock_timeout interval DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_move_stay'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.move_stay(bigint, tstzrange, text, interval) IS
'gives a stay a new range, or leaves it untouched when the new range is not free';

CREATE FUNCTION booking.hold_expire(batch integer DEFAULT 1000)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'booking_hold_expire'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.hold_expire(integer) IS
'moves up to batch lapsed holds to expired, frees their seats, purges old idempotency keys; returns how many holds';

------------------------------------------------------------------------------
-- the waitlist of a sold-out resource (docs/waitlist.md)
------------------------------------------------------------------------------

CREATE FUNCTION booking.join_waitlist(resource bigint, guest text, quantity integer DEFAULT 1,
        idempotency_key text DEFAULT NULL,
        metadata jsonb DEFAULT NULL)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_join_waitlist'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.join_waitlist(bigint, text, integer, text, jsonb) IS
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
    -- (0.9.0) while a transaction keeps an old snapshot, no counter row's
    -- old versions can be removed and every sale walks past them
    -- (docs/performance.md, "A held snapshot")
    RETURN QUERY SELECT 'snapshot_oldest_seconds'::text, NULL::text,
            COALESCE(pg_catalog.max(pg_catalog.date_part('epoch', pg_catalog.now() OPERATOR(pg_catalog.-) a.xact_start)), 0)
        FROM pg_catalog.pg_stat_activity a
        WHERE a.datname OPERATOR(pg_catalog.=) pg_catalog.current_database()
          AND a.backend_type OPERATOR(pg_catalog.=) 'client backend'
          AND a.backend_xmin IS NOT NULL
          AND a.pid OPERATOR(pg_catalog.<>) pg_catalog.pg_backend_pid();
END
$health$;
COMMENT ON FUNCTION booking.health() IS
'figures to watch: lapsed holds not yet swept, waitlist lengths, each consumer''s unacknowledged events and their age, events not yet numbered, idempotency keys, the oldest snapshot held in this database';

------------------------------------------------------------------------------
-- statistics (src/stats.c): counters in shared memory, when booking is in
-- shared_preload_libraries
------------------------------------------------------------------------------

-- (0.8.0) a guest forgotten (a GDPR request): its name replaced by a stable
-- pseudonym everywhere the extension keeps it (docs/reference.md)
CREATE FUNCTION booking.forget_guest(guest text)
    RETURNS bigint
    AS 'MODULE_PATHNAME', 'booking_forget_guest'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.forget_guest(text) IS
'replaces a guest''s name in bookings, waitlist entries, stored idempotency requests and events with a stable pseudonym; one guest_forgotten event per resource; returns the rows changed';

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
'sets every counter of booking.stats() to zero, in the whole cluster; granted by grant_admin, not to clients';

-- Neither runs as its owner: they touch no table.  grant_admin gives both.
REVOKE ALL ON FUNCTION booking.stats() FROM PUBLIC;
REVOKE ALL ON FUNCTION booking.stats_reset() FROM PUBLIC;

------------------------------------------------------------------------------
-- scale-out on Citus (docs/scale-out.md)
------------------------------------------------------------------------------

-- as its owner, who owns the tables it distributes: an admin role given
-- grant_admin may run it
CREATE FUNCTION booking.distribute(shard_count integer DEFAULT 32)
    RETURNS text
    AS 'MODULE_PATHNAME', 'booking_distribute'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SECURITY DEFINER SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.distribute(integer) IS
'on a Citus coordinator: distributes the booking tables by home over shard_count shards and routes every call to the node that holds its shard';

-- (0.9.0) the client calls of one resource, pool or booking sent by Citus
-- straight to their node (docs/scale-out.md, "Delegated calls").  Run by a
-- superuser, not granted by grant_admin: off edits Citus's catalog.
CREATE FUNCTION booking.delegate_calls(enabled boolean DEFAULT true)
    RETURNS text
    AS 'MODULE_PATHNAME', 'booking_delegate_calls'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
REVOKE ALL ON FUNCTION booking.delegate_calls(boolean) FROM PUBLIC;
COMMENT ON FUNCTION booking.delegate_calls(boolean) IS
'on a Citus coordinator: Citus sends a call of one resource, pool or booking made as a statement of its own to its node in one round trip (a node that cannot be reached then fails it with Citus''s error instead of busy); false undoes it';

-- The twins: booking.shard_<name> runs booking.<name> on the node that holds
-- home's shard.  distribute() registers them with Citus (distributed by
-- home, force_delegation); booking.<name> calls them.  They are not
-- SECURITY DEFINER: each refuses (42501) a caller that is neither a
-- superuser nor the extension's owner, the roles the public functions run
-- as, so no grant on schema booking lets a client role call one.

CREATE FUNCTION booking.shard_reserve_seat(resource bigint, guest text, quantity integer, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_seat'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_seat(bigint, text, integer, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_seat on the node that holds the shard of home (Citus); call booking.reserve_seat';

CREATE FUNCTION booking.shard_reserve_stay(resource bigint, guest text, during tstzrange, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_stay'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_stay on the node that holds the shard of home (Citus); call booking.reserve_stay';

CREATE FUNCTION booking.shard_reserve_stays(resources bigint[], guest text, during tstzrange, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_stays'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_stays(bigint[], text, tstzrange, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_stays on the node that holds the shard of home (Citus); call booking.reserve_stays';

CREATE FUNCTION booking.shard_reserve_stay_any(pool bigint, guest text, during tstzrange, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_stay_any'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_stay_any on the node that holds the shard of home (Citus); call booking.reserve_stay_any';

CREATE FUNCTION booking.shard_confirm(booking bigint, idempotency_key text, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_confirm'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_confirm(bigint, text, bigint) IS
'internal: booking.confirm on the node that holds the shard of home (Citus); call booking.confirm';

CREATE FUNCTION booking.shard_cancel(booking bigint, idempotency_key text, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_cancel'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_cancel(bigint, text, bigint) IS
'internal: booking.cancel on the node that holds the shard of home (Citus); call booking.cancel';

CREATE FUNCTION booking.shard_extend_hold(booking bigint, by interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_extend_hold'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_extend_hold(bigint, interval, bigint) IS
'internal: booking.extend_hold on the node that holds the shard of home (Citus); call booking.extend_hold';

CREATE FUNCTION booking.shard_extend_hold_until(booking bigint, until timestamptz, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_extend_hold_until'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_extend_hold_until(bigint, timestamptz, bigint) IS
'internal: booking.extend_hold_until on the node that holds the shard of home (Citus); call booking.extend_hold_until';

CREATE FUNCTION booking.shard_stay_member(resource bigint, guest text, during tstzrange,
        expires_at timestamptz, group_id bigint, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_stay_member'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_stay_member(bigint, text, tstzrange, timestamptz, bigint, interval, jsonb, bigint) IS
'internal: one member of a booking.reserve_stays group whose members live on several nodes (Citus); every member gets the expiry of the coordinator''s hold';

CREATE FUNCTION booking.shard_set_capacity(resource bigint, capacity integer, expected_version bigint, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_capacity'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_capacity(bigint, integer, bigint, bigint) IS
'internal: booking.set_capacity on the node that holds the shard of home (Citus); call booking.set_capacity';

CREATE FUNCTION booking.shard_set_stripes(resource bigint, stripes integer, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_stripes'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_stripes(bigint, integer, bigint) IS
'internal: booking.set_stripes on the node that holds the shard of home (Citus); call booking.set_stripes';

CREATE FUNCTION booking.shard_set_guest_limit(resource bigint, max_per_guest integer, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_guest_limit'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_guest_limit(bigint, integer, bigint) IS
'internal: booking.set_guest_limit on the node that holds the shard of home (Citus); call booking.set_guest_limit';

CREATE FUNCTION booking.shard_set_buffer(resource bigint, before interval, after interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_buffer'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_buffer(bigint, interval, interval, bigint) IS
'internal: booking.set_buffer on the node that holds the shard of home (Citus); call booking.set_buffer';

CREATE FUNCTION booking.shard_reserve_seats(resources bigint[], guest text, quantities integer[], hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_seats'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_seats(bigint[], text, integer[], interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_seats on the node that holds the shard of home (Citus); call booking.reserve_seats';

CREATE FUNCTION booking.shard_reduce(booking bigint, quantity integer, idempotency_key text, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reduce'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reduce(bigint, integer, text, bigint) IS
'internal: booking.reduce on the node that holds the shard of home (Citus); call booking.reduce';

CREATE FUNCTION booking.shard_move_stay(booking bigint, during tstzrange, idempotency_key text, lock_timeout interval, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_move_stay'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_move_stay(bigint, tstzrange, text, interval, bigint) IS
'internal: booking.move_stay on the node that holds the shard of home (Citus); call booking.move_stay';

CREATE FUNCTION booking.shard_seat_member(resource bigint, guest text, quantity integer,
        expires_at timestamptz, group_id bigint, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_seat_member'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_seat_member(bigint, text, integer, timestamptz, bigint, interval, jsonb, bigint) IS
'internal: one member of a booking.reserve_seats group whose members live on several nodes (Citus); every member gets the expiry of the coordinator''s hold';

CREATE FUNCTION booking.shard_join_waitlist(resource bigint, guest text, quantity integer, idempotency_key text, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_join_waitlist'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_join_waitlist(bigint, text, integer, text, jsonb, bigint) IS
'internal: booking.join_waitlist on the node that holds the resource (Citus)';

CREATE FUNCTION booking.shard_set_time_zone(resource bigint, time_zone text, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_time_zone'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_time_zone(bigint, text, bigint) IS
'internal: booking.set_time_zone on the node that holds the resource (Citus)';

CREATE FUNCTION booking.shard_set_check_times(resource bigint, check_in time, check_out time, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_check_times'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_check_times(bigint, time, time, bigint) IS
'internal: booking.set_check_times on the node that holds the resource (Citus)';

CREATE FUNCTION booking.shard_set_opening_hours(resource bigint, hours jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_set_opening_hours'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_set_opening_hours(bigint, jsonb, bigint) IS
'internal: booking.set_opening_hours on the node that holds the resource (Citus)';

CREATE FUNCTION booking.shard_reserve_nights(resource bigint, guest text, arrival date, departure date, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_nights'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_nights(bigint, text, date, date, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_nights on the node that holds the resource (Citus)';

CREATE FUNCTION booking.shard_reserve_series(resource bigint, guest text, first tstzrange, every interval, count integer, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_series'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_series(bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_series on the node that holds the resource (Citus)';

CREATE FUNCTION booking.shard_reserve_slot(resource bigint, guest text, during tstzrange, quantity integer, hold interval, idempotency_key text, lock_timeout interval, metadata jsonb, home bigint)
    RETURNS booking.result
    AS 'MODULE_PATHNAME', 'booking_shard_reserve_slot'
    LANGUAGE C VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp;
COMMENT ON FUNCTION booking.shard_reserve_slot(bigint, text, tstzrange, integer, interval, text, interval, jsonb, bigint) IS
'internal: booking.reserve_slot on the node that holds the resource (Citus)';

------------------------------------------------------------------------------
-- roles (0.7.0): what each kind of role may call, granted in one call
------------------------------------------------------------------------------

-- Each grant_* function grants one role exactly what its kind needs, and
-- nothing of the internals (the shard_* twins) or of the other kinds.  Run
-- by the extension's owner or a superuser; run it again after ALTER
-- EXTENSION booking UPDATE, so that the role also gets the new calls of its
-- kind.  Not SECURITY DEFINER: granting needs the owner's own rights.

CREATE FUNCTION booking.grant_client(role regrole)
    RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $grant$
DECLARE
    citus boolean;
    propagation text;
    fn text;
    ok boolean;
    failures text;
    calls text[] := ARRAY[
        'booking.reserve_seat(bigint, text, integer, interval, text, interval, jsonb)',
        'booking.reserve_seats(bigint[], text, integer[], interval, text, interval, jsonb)',
        'booking.reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb)',
        'booking.reserve_stays(bigint[], text, tstzrange, interval, text, interval, jsonb)',
        'booking.reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb)',
        'booking.reserve_nights(bigint, text, date, date, interval, text, interval, jsonb)',
        'booking.reserve_series(bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb)',
        'booking.reserve_slot(bigint, text, tstzrange, integer, interval, text, interval, jsonb)',
        'booking.confirm(bigint, text)',
        'booking.cancel(bigint, text)',
        'booking.cancel_group(bigint, timestamptz, text)',
        'booking.extend_hold(bigint, interval)',
        'booking.extend_hold_until(bigint, timestamptz)',
        'booking.reduce(bigint, integer, text)',
        'booking.move_stay(bigint, tstzrange, text, interval)',
        'booking.join_waitlist(bigint, text, integer, text, jsonb)',
        'booking.get_booking(bigint)',
        'booking.seats_left(bigint)',
        'booking.free_slots(bigint, tstzrange, interval)',
        'booking.slots_left(bigint, tstzrange)'];
BEGIN
    IF role IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed', MESSAGE = 'role must not be null';
    END IF;
    IF NOT (SELECT r.rolsuper OR r.oid OPERATOR(pg_catalog.=) e.extowner
              FROM pg_catalog.pg_roles r, pg_catalog.pg_extension e
             WHERE r.rolname OPERATOR(pg_catalog.=) current_user
               AND e.extname OPERATOR(pg_catalog.=) 'booking') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'permission denied for function grant_client',
            DETAIL = 'Only a superuser or the owner of extension booking may grant the roles'' calls.';
    END IF;
    EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA booking TO %s', role);
    -- (0.9.0) On Citus the workers get the calls' grants below.  Citus would
    -- also send the grants of the calls it knows as distributed functions
    -- (after delegate_calls) to the workers inside this transaction, and
    -- the workers' own grant below would wait for them to the end.
    citus := EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname OPERATOR(pg_catalog.=) 'citus');
    IF citus THEN
        propagation := pg_catalog.current_setting('citus.enable_ddl_propagation');
        PERFORM pg_catalog.set_config('citus.enable_ddl_propagation', 'off', true);
    END IF;
    FOREACH fn IN ARRAY calls LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', fn, role);
    END LOOP;
    IF citus THEN
        PERFORM pg_catalog.set_config('citus.enable_ddl_propagation', propagation, true);
    END IF;
    EXECUTE pg_catalog.format('GRANT SELECT ON booking.resources, booking.bookings TO %s', role);
    -- On a Citus coordinator, the same calls on every worker, so that the
    -- role may make them on any node (docs/scale-out.md).  Citus copies the
    -- schema's grant but not those on an extension's functions, and refuses
    -- them on a worker unless its DDL propagation is off there.
    IF citus THEN
        EXECUTE pg_catalog.format(
            'SELECT pg_catalog.bool_and(success), pg_catalog.string_agg(nodename || '':'' || nodeport || '' '' || result, ''; '')'
            ' FROM pg_catalog.run_command_on_workers(%L)',
            pg_catalog.format('SET LOCAL citus.enable_ddl_propagation = off; GRANT EXECUTE ON FUNCTION %s TO %s',
                              pg_catalog.array_to_string(calls, ', '), role))
            INTO ok, failures;
        IF NOT coalesce(ok, true) THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = pg_catalog.format('could not grant %s the calls on every worker', role),
                DETAIL = failures;
        END IF;
    END IF;
    RETURN pg_catalog.format('%s may now make reservations: %s calls, and SELECT on booking.resources and booking.bookings',
                             role, pg_catalog.array_length(calls, 1));
END
$grant$;
COMMENT ON FUNCTION booking.grant_client(regrole) IS
'grants an application role the reservation calls (reserve, reserve_nights, reserve_series, reserve_slot, confirm, cancel, cancel_group, extend, reduce, move, join_waitlist, get_booking, seats_left, free_slots, slots_left) and SELECT on resources and bookings; for a superuser or the extension''s owner';

CREATE FUNCTION booking.grant_relay(role regrole)
    RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $grant$
DECLARE
    fn text;
    calls text[] := ARRAY[
        'booking.claim_events(text, integer, interval)',
        'booking.ack_events(text, bigint, bigint[])'];
BEGIN
    IF role IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed', MESSAGE = 'role must not be null';
    END IF;
    IF NOT (SELECT r.rolsuper OR r.oid OPERATOR(pg_catalog.=) e.extowner
              FROM pg_catalog.pg_roles r, pg_catalog.pg_extension e
             WHERE r.rolname OPERATOR(pg_catalog.=) current_user
               AND e.extname OPERATOR(pg_catalog.=) 'booking') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'permission denied for function grant_relay',
            DETAIL = 'Only a superuser or the owner of extension booking may grant the roles'' calls.';
    END IF;
    EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA booking TO %s', role);
    FOREACH fn IN ARRAY calls LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', fn, role);
    END LOOP;
    RETURN pg_catalog.format('%s may now relay events: claim_events and ack_events', role);
END
$grant$;
COMMENT ON FUNCTION booking.grant_relay(regrole) IS
'grants a relay role claim_events and ack_events; for a superuser or the extension''s owner';

CREATE FUNCTION booking.grant_admin(role regrole)
    RETURNS text
    LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
    SET search_path = pg_catalog, pg_temp
    AS $grant$
DECLARE
    fn text;
    calls text[] := ARRAY[
        'booking.create_resource(text, integer, bigint, jsonb)',
        'booking.set_capacity(bigint, integer, bigint)',
        'booking.set_stripes(bigint, integer)',
        'booking.set_guest_limit(bigint, integer)',
        'booking.set_buffer(bigint, interval, interval)',
        'booking.set_time_zone(bigint, text)',
        'booking.set_check_times(bigint, time, time)',
        'booking.set_opening_hours(bigint, jsonb)',
        'booking.add_consumer(text)',
        'booking.drop_consumer(text)',
        'booking.hold_expire(integer)',
        'booking.forget_guest(text)',
        'booking.health()',
        'booking.stats()',
        'booking.stats_reset()',
        'booking.distribute(integer)'];
BEGIN
    IF role IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'null_value_not_allowed', MESSAGE = 'role must not be null';
    END IF;
    IF NOT (SELECT r.rolsuper OR r.oid OPERATOR(pg_catalog.=) e.extowner
              FROM pg_catalog.pg_roles r, pg_catalog.pg_extension e
             WHERE r.rolname OPERATOR(pg_catalog.=) current_user
               AND e.extname OPERATOR(pg_catalog.=) 'booking') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'permission denied for function grant_admin',
            DETAIL = 'Only a superuser or the owner of extension booking may grant the roles'' calls.';
    END IF;
    EXECUTE pg_catalog.format('GRANT USAGE ON SCHEMA booking TO %s', role);
    FOREACH fn IN ARRAY calls LOOP
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION %s TO %s', fn, role);
    END LOOP;
    EXECUTE pg_catalog.format('GRANT SELECT ON booking.resources, booking.bookings TO %s', role);
    RETURN pg_catalog.format('%s may now run booking: %s calls (resources, settings, consumers, hold_expire, forget_guest, statistics, distribute), and SELECT on booking.resources and booking.bookings',
                             role, pg_catalog.array_length(calls, 1));
END
$grant$;
COMMENT ON FUNCTION booking.grant_admin(regrole) IS
'grants an operations role resources, settings, consumers, hold_expire, forget_guest, health, stats, stats_reset and distribute, and SELECT on resources and bookings; for a superuser or the extension''s owner';

-- Nothing is executable by PUBLIC: grant_client, grant_relay and grant_admin
-- give each role its calls (docs/reference.md, Grants).
REVOKE ALL ON ALL FUNCTIONS IN SCHEMA booking FROM PUBLIC;
