--
-- setup: install the extension, show that the objects of the contract exist,
-- and create the helpers the other files use (all in schema public).
--
-- The other files run in this database in the order of the Makefile's REGRESS
-- line; each starts with a TRUNCATE ... RESTART IDENTITY, so the ids it prints
-- depend only on itself.
--
CREATE EXTENSION booking CASCADE;
SET TimeZone = 'UTC';
SHOW TimeZone;

-- btree_gist's version is the server's (1.7 up to 17, 1.8 on 18)
SELECT e.extname, CASE WHEN e.extname = 'booking' THEN e.extversion END AS extversion,
       n.nspname AS schema, e.extrelocatable
FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname IN ('booking', 'btree_gist')
ORDER BY 1;

-- types
SELECT pg_catalog.enum_range(NULL::booking.status);
SELECT attname, pg_catalog.format_type(atttypid, atttypmod) AS type
FROM pg_attribute
WHERE attrelid = 'booking.result'::regclass AND attnum > 0 AND NOT attisdropped
ORDER BY attnum;

-- tables: the columns the contract names, with their types
SELECT attrelid::regclass AS "table", attname, pg_catalog.format_type(atttypid, atttypmod) AS type
FROM pg_attribute
WHERE attrelid IN ('booking.resources'::regclass, 'booking.bookings'::regclass)
  AND attname IN ('id', 'name', 'capacity', 'pool_id', 'version', 'meta',
                  'resource_id', 'guest', 'quantity', 'during', 'status',
                  'expires_at', 'created_at')
ORDER BY 1, attnum;

-- the guard of range inventory is an exclusion constraint
SELECT conname, contype, pg_catalog.pg_get_constraintdef(oid) LIKE 'EXCLUDE USING gist%' AS gist
FROM pg_constraint
WHERE conrelid = 'booking.bookings'::regclass AND contype = 'x';

-- the API: every function of the contract with its argument names and result
SELECT p.proname, pg_catalog.pg_get_function_arguments(p.oid) AS arguments,
       pg_catalog.pg_get_function_result(p.oid) AS result
FROM pg_proc p
WHERE p.pronamespace = 'booking'::regnamespace
ORDER BY p.proname;

-- writers are VOLATILE; functions that need privileges pin their search_path
SELECT p.proname, p.provolatile, p.prosecdef, p.proconfig
FROM pg_proc p
WHERE p.pronamespace = 'booking'::regnamespace
ORDER BY p.proname;

-- GUCs and their built-in defaults (the library is loaded by CREATE
-- EXTENSION); boot_val, so a server that sets them still passes
SELECT name, boot_val, unit FROM pg_catalog.pg_settings
WHERE name IN ('booking.lock_timeout', 'booking.idempotency_retention', 'booking.expire_interval',
               'booking.expire_batch')
ORDER BY name;

--
-- helpers for the other files
--

-- a second session, to hold a lock while this one calls (busy, retry), in
-- UTC like this session whatever the server's timezone
CREATE EXTENSION dblink;
CREATE FUNCTION public.peer_open() RETURNS text LANGUAGE sql AS $$
    SELECT public.dblink_connect('peer', pg_catalog.format('host=%s port=%s dbname=%s user=%s options=''-c TimeZone=UTC''',
        pg_catalog.split_part(pg_catalog.current_setting('unix_socket_directories'), ',', 1),
        pg_catalog.current_setting('port'), pg_catalog.current_database(), current_user))
$$;
-- runs one statement in the peer session and returns its first column as text
CREATE FUNCTION public.peer(sql text) RETURNS text LANGUAGE sql AS $$
    SELECT t FROM public.dblink('peer', sql) AS r(t text)
$$;
CREATE FUNCTION public.peer_exec(sql text) RETURNS text LANGUAGE sql AS $$
    SELECT public.dblink_exec('peer', sql)
$$;

-- what a failed call must leave untouched: run after every error
CREATE VIEW public.written AS
SELECT (SELECT pg_catalog.count(*) FROM booking.resources) AS resources,
       (SELECT pg_catalog.count(*) FROM booking.bookings) AS bookings,
       (SELECT CASE WHEN is_called THEN last_value ELSE 0 END
          FROM booking.bookings_id_seq) AS booking_ids_drawn,
       (SELECT pg_catalog.count(*) FROM booking.idempotency_keys) AS keys,
       (SELECT COALESCE(pg_catalog.sum(taken), 0) FROM booking.resources) AS taken;

-- the seat counter of each resource against the sum of its blocking seats
CREATE VIEW public.seat_counters AS
SELECT r.id, r.capacity, r.taken,
       COALESCE(pg_catalog.sum(b.quantity) FILTER (WHERE b.status IN ('pending', 'confirmed')), 0)::int
           AS blocking_quantity,
       r.taken = COALESCE(pg_catalog.sum(b.quantity) FILTER (WHERE b.status IN ('pending', 'confirmed')), 0)
           AS exact
FROM booking.resources r
LEFT JOIN booking.bookings b ON b.home = r.home AND b.resource_id = r.id AND b.during IS NULL
GROUP BY r.home, r.id
ORDER BY r.id;

-- Stand-in for a concurrent writer that commits between a call's pre-check
-- and its insert: when a stay for guest 'loser' is inserted on the resource
-- named by the setting sneak.resource, this BEFORE trigger first inserts a
-- confirmed overlapping stay for guest 'winner'.  The files that use it
-- create the trigger and drop it again.
CREATE FUNCTION public.sneak() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.guest = 'loser' AND pg_catalog.pg_trigger_depth() = 1
       AND NEW.resource_id = pg_catalog.current_setting('sneak.resource')::bigint THEN
        INSERT INTO booking.bookings (resource_id, guest, quantity, during, blocked, status, validity)
        VALUES (NEW.resource_id, 'winner', 1, NEW.during, NEW.blocked, 'confirmed',
                pg_catalog.tstzrange(pg_catalog.clock_timestamp(), NULL));
    END IF;
    RETURN NEW;
END
$$;

SELECT * FROM written;
