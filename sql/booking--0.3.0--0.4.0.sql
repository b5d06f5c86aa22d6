/* booking--0.3.0--0.4.0.sql: a schema that can be distributed on Citus.  Every
 * table gets the column home (0 on one server), first in every key and
 * constraint; booking.distribute() distributes the tables by it. */

\echo Use "ALTER EXTENSION booking UPDATE TO '0.4.0'" to load this file. \quit

ALTER TABLE booking.resources ADD COLUMN home bigint NOT NULL DEFAULT 0;
ALTER TABLE booking.bookings ADD COLUMN home bigint NOT NULL DEFAULT 0;
ALTER TABLE booking.resource_stripes ADD COLUMN home bigint NOT NULL DEFAULT 0;
ALTER TABLE booking.idempotency_keys ADD COLUMN home bigint NOT NULL DEFAULT 0;

-- the keys that point at resources go first, then every key gains home
ALTER TABLE booking.resource_stripes DROP CONSTRAINT resource_stripes_resource_id_fkey;
ALTER TABLE booking.resources DROP CONSTRAINT resources_pool_id_fkey;

ALTER TABLE booking.resources DROP CONSTRAINT resources_pkey,
    ADD CONSTRAINT resources_pkey PRIMARY KEY (home, id);
ALTER TABLE booking.resources
    ADD CONSTRAINT resources_pool_fkey FOREIGN KEY (home, pool_id) REFERENCES booking.resources (home, id);
DROP INDEX booking.resources_pool_idx;
CREATE INDEX resources_pool_idx ON booking.resources (home, pool_id, id) WHERE pool_id IS NOT NULL;

ALTER TABLE booking.bookings DROP CONSTRAINT bookings_pkey,
    ADD CONSTRAINT bookings_pkey PRIMARY KEY (home, id);
ALTER TABLE booking.bookings DROP CONSTRAINT bookings_no_overlap,
    ADD CONSTRAINT bookings_no_overlap EXCLUDE USING gist (
        home WITH =, resource_id WITH =, during WITH &&, validity WITH &&)
        WHERE (during IS NOT NULL AND status IN ('pending', 'confirmed'));
DROP INDEX booking.bookings_pending_idx, booking.bookings_expiry_idx, booking.bookings_group_idx;
CREATE INDEX bookings_pending_idx ON booking.bookings (home, resource_id, expires_at) WHERE status = 'pending';
CREATE INDEX bookings_expiry_idx ON booking.bookings (home, expires_at) WHERE status = 'pending';
CREATE INDEX bookings_group_idx ON booking.bookings (home, group_id) WHERE group_id IS NOT NULL;

ALTER TABLE booking.resource_stripes DROP CONSTRAINT resource_stripes_pkey,
    ADD CONSTRAINT resource_stripes_pkey PRIMARY KEY (home, resource_id, stripe),
    ADD CONSTRAINT resource_stripes_resource_fkey FOREIGN KEY (home, resource_id)
        REFERENCES booking.resources (home, id);

ALTER TABLE booking.idempotency_keys DROP CONSTRAINT idempotency_keys_pkey,
    ADD CONSTRAINT idempotency_keys_pkey PRIMARY KEY (home, key);
