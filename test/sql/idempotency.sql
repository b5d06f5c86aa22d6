--
-- idempotency: replay the stored result, never do the work twice
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('last seat', 1);     -- 1
SELECT booking.create_resource('seats', 10);        -- 2
SELECT booking.create_resource('room 3');           -- 3
SELECT booking.create_resource('room 4');           -- 4
SELECT booking.create_resource('pool', 0);          -- 5
SELECT booking.create_resource('unit', 1, 5);       -- 6
SELECT booking.create_resource('busy', 10);         -- 7
SELECT booking.create_resource('hold seats', 10);   -- 8

--
-- a NULL key means no idempotency: the same call twice books twice
--
SELECT * FROM booking.reserve_seat(2, 'ann', 1, idempotency_key => NULL);
SELECT * FROM booking.reserve_seat(2, 'ann', 1, idempotency_key => NULL);
SELECT * FROM written;

--
-- replay of ok: the identical result, replayed = true, nothing written
--
SELECT * FROM booking.reserve_seat(2, 'bob', 2, idempotency_key => 'seat-ok');
SELECT * FROM written;
SELECT * FROM booking.reserve_seat(2, 'bob', 2, idempotency_key => 'seat-ok');
-- lock_timeout is a waiting policy, not part of the request
SELECT * FROM booking.reserve_seat(2, 'bob', 2, idempotency_key => 'seat-ok', lock_timeout => '0');
SELECT * FROM booking.reserve_seat(2, 'bob', 2, NULL, 'seat-ok', '5 s');
SELECT * FROM written;
SELECT key, request IS NOT NULL AS has_request, ok, code, booking_id, http_status, message
FROM booking.idempotency_keys ORDER BY key;

-- a hold: the replay carries the same message (with the same expiry)
CREATE TEMP TABLE first_hold AS SELECT * FROM booking.reserve_seat(8, 'cy', 1, '1 hour', 'seat-hold');
SELECT ok, code, booking_id, http_status, replayed FROM first_hold;
SELECT ok, code, booking_id, http_status, message = (SELECT message FROM first_hold) AS same_message, replayed
FROM booking.reserve_seat(8, 'cy', 1, '1 hour', 'seat-hold');
-- the same length spelled otherwise is the same request
SELECT ok, code, booking_id, http_status, message = (SELECT message FROM first_hold) AS same_message, replayed
FROM booking.reserve_seat(8, 'cy', 1, '60 minutes', 'seat-hold');

SELECT * FROM booking.reserve_stay(3, 'dee', '[2030-01-04, 2030-01-07)', idempotency_key => 'stay-ok');
SELECT * FROM booking.reserve_stay(3, 'dee', '[2030-01-04, 2030-01-07)', idempotency_key => 'stay-ok');
-- [a,b] is stored as [a,b): the same request
SELECT * FROM booking.reserve_stay(3, 'dee', '[2030-01-04, 2030-01-07]', idempotency_key => 'stay-ok');

SELECT * FROM booking.reserve_stays('{4,3}', 'eve', '[2030-02-01, 2030-02-03)', idempotency_key => 'stays-ok');
-- the same set in another order is the same request
SELECT * FROM booking.reserve_stays('{3,4}', 'eve', '[2030-02-01, 2030-02-03)', idempotency_key => 'stays-ok');

-- the pool has one unit: a second booking would be sold_out, the replay is ok
SELECT * FROM booking.reserve_stay_any(5, 'fay', '[2030-01-04, 2030-01-07)', idempotency_key => 'any-ok');
SELECT * FROM booking.reserve_stay_any(5, 'fay', '[2030-01-04, 2030-01-07)', idempotency_key => 'any-ok');

SELECT ok, code, booking_id FROM booking.reserve_seat(8, 'gus', 1, '1 hour');
SELECT * FROM booking.confirm(9, 'confirm-ok');
SELECT * FROM booking.confirm(9, 'confirm-ok');

-- a second cancel would be invalid_state; the replay is ok 200
SELECT * FROM booking.cancel(3, 'cancel-ok');
SELECT * FROM booking.cancel(3, 'cancel-ok');
SELECT * FROM booking.cancel(3);
SELECT * FROM written;

--
-- replay of each refusal, even after the refusal's cause went away
--
-- sold_out
SELECT ok, code, booking_id FROM booking.reserve_seat(1, 'hal');
SELECT * FROM booking.reserve_seat(1, 'ida', idempotency_key => 'sold');
SELECT ok, code FROM booking.cancel(10);
SELECT booking.seats_left(1);
SELECT * FROM written;
SELECT * FROM booking.reserve_seat(1, 'ida', idempotency_key => 'sold');
SELECT * FROM written;
SELECT booking.seats_left(1);
-- not_found
SELECT * FROM booking.reserve_seat(99, 'jo', idempotency_key => 'seat-404');
SELECT * FROM booking.reserve_seat(99, 'jo', idempotency_key => 'seat-404');
-- unavailable
SELECT * FROM booking.reserve_stay(3, 'kim', '[2030-01-05, 2030-01-06)', idempotency_key => 'stay-409');
SELECT ok, code FROM booking.cancel(5);
SELECT * FROM written;
SELECT * FROM booking.reserve_stay(3, 'kim', '[2030-01-05, 2030-01-06)', idempotency_key => 'stay-409');
SELECT * FROM written;
-- just_taken (the sneak trigger of setup plays the concurrent writer)
CREATE TRIGGER sneak BEFORE INSERT ON booking.bookings
    FOR EACH ROW EXECUTE FUNCTION sneak();
SET sneak.resource = 4;
SELECT * FROM booking.reserve_stay(4, 'loser', '[2030-03-01, 2030-03-02)', idempotency_key => 'stay-just');
DROP TRIGGER sneak ON booking.bookings;
SELECT ok, code FROM booking.cancel((SELECT id FROM booking.bookings WHERE guest = 'winner'));
SELECT * FROM written;
SELECT * FROM booking.reserve_stay(4, 'loser', '[2030-03-01, 2030-03-02)', idempotency_key => 'stay-just');
SELECT * FROM written;
-- reserve_stays: unavailable and not_found
SELECT * FROM booking.reserve_stays('{3,4}', 'lee', '[2030-02-02, 2030-02-04)', idempotency_key => 'stays-409');
SELECT * FROM booking.reserve_stays('{3,4}', 'lee', '[2030-02-02, 2030-02-04)', idempotency_key => 'stays-409');
SELECT * FROM booking.reserve_stays('{3,99}', 'lee', '[2030-02-02, 2030-02-04)', idempotency_key => 'stays-404');
SELECT * FROM booking.reserve_stays('{3,99}', 'lee', '[2030-02-02, 2030-02-04)', idempotency_key => 'stays-404');
-- reserve_stay_any: sold_out and not_found
SELECT * FROM booking.reserve_stay_any(5, 'max', '[2030-01-05, 2030-01-06)', idempotency_key => 'any-sold');
SELECT * FROM booking.reserve_stay_any(5, 'max', '[2030-01-05, 2030-01-06)', idempotency_key => 'any-sold');
SELECT * FROM booking.reserve_stay_any(99, 'max', '[2030-01-05, 2030-01-06)', idempotency_key => 'any-404');
SELECT * FROM booking.reserve_stay_any(99, 'max', '[2030-01-05, 2030-01-06)', idempotency_key => 'any-404');
-- confirm: invalid_state and not_found
SELECT * FROM booking.confirm(3, 'confirm-409');
SELECT * FROM booking.confirm(3, 'confirm-409');
SELECT * FROM booking.confirm(999, 'confirm-404');
SELECT * FROM booking.confirm(999, 'confirm-404');
-- cancel: invalid_state and not_found
SELECT * FROM booking.cancel(3, 'cancel-409');
SELECT * FROM booking.cancel(3, 'cancel-409');
SELECT * FROM booking.cancel(999, 'cancel-404');
SELECT * FROM booking.cancel(999, 'cancel-404');
SELECT * FROM written;

--
-- busy and retry are not stored: the same key then does the work
--
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_seat(7, ''peer'')).code');
SELECT * FROM booking.reserve_seat(7, 'ned', idempotency_key => 'busy', lock_timeout => '0');
SELECT count(*) AS stored FROM booking.idempotency_keys WHERE key = 'busy';
SELECT peer_exec('ROLLBACK');
SELECT * FROM booking.reserve_seat(7, 'ned', idempotency_key => 'busy', lock_timeout => '0');

-- the same key in flight in another transaction: busy with lock_timeout 0,
-- then, once it committed, its result replayed
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_seat(7, ''ola'', idempotency_key => ''inflight'')).booking_id');
SELECT * FROM booking.reserve_seat(7, 'ola', idempotency_key => 'inflight', lock_timeout => '0');
SELECT count(*) AS stored FROM booking.idempotency_keys WHERE key = 'inflight';
SELECT peer_exec('COMMIT');
SELECT * FROM booking.reserve_seat(7, 'ola', idempotency_key => 'inflight', lock_timeout => '0');

BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT booking.seats_left(7);
SELECT peer('SELECT (booking.reserve_seat(7, ''peer'')).code');
SELECT * FROM booking.reserve_seat(7, 'pia', idempotency_key => 'retry');
SELECT count(*) AS stored FROM booking.idempotency_keys WHERE key = 'retry';
ROLLBACK;
SELECT dblink_disconnect('peer');
SELECT * FROM booking.reserve_seat(7, 'pia', idempotency_key => 'retry');

--
-- same key, different request: idempotency_mismatch 422, nothing written,
-- never the other request's result
--
SELECT * FROM booking.reserve_seat(2, 'quinn', 1, idempotency_key => 'mm-seat');
SELECT * FROM written;
-- another guest
SELECT * FROM booking.reserve_seat(2, 'rick', 1, idempotency_key => 'mm-seat');
-- another resource
SELECT * FROM booking.reserve_seat(8, 'quinn', 1, idempotency_key => 'mm-seat');
-- another quantity
SELECT * FROM booking.reserve_seat(2, 'quinn', 2, idempotency_key => 'mm-seat');
-- a hold
SELECT * FROM booking.reserve_seat(2, 'quinn', 1, '10 minutes', 'mm-seat');
-- another function
SELECT * FROM booking.reserve_stay(2, 'quinn', '[2030-04-01, 2030-04-03)', idempotency_key => 'mm-seat');
SELECT * FROM booking.reserve_stays('{2}', 'quinn', '[2030-04-01, 2030-04-03)', idempotency_key => 'mm-seat');
SELECT * FROM booking.reserve_stay_any(5, 'quinn', '[2030-04-01, 2030-04-03)', idempotency_key => 'mm-seat');
SELECT * FROM booking.cancel(18, 'mm-seat');
SELECT * FROM booking.confirm(18, 'mm-seat');
SELECT * FROM written;
SELECT id, guest, status FROM booking.bookings WHERE id = 18;
-- the first request still replays its own result
SELECT * FROM booking.reserve_seat(2, 'quinn', 1, idempotency_key => 'mm-seat');

SELECT * FROM booking.reserve_stay(3, 'sam', '[2030-04-01, 2030-04-03)', idempotency_key => 'mm-stay');
SELECT * FROM written;
-- another range
SELECT * FROM booking.reserve_stay(3, 'sam', '[2030-04-01, 2030-04-04)', idempotency_key => 'mm-stay');
SELECT * FROM booking.reserve_stay(3, 'sam', '[2030-03-31, 2030-04-03)', idempotency_key => 'mm-stay');
-- a hold
SELECT * FROM booking.reserve_stay(3, 'sam', '[2030-04-01, 2030-04-03)', '1 hour', 'mm-stay');
-- another resource, another guest
SELECT * FROM booking.reserve_stay(4, 'sam', '[2030-04-01, 2030-04-03)', idempotency_key => 'mm-stay');
SELECT * FROM booking.reserve_stay(3, 'tia', '[2030-04-01, 2030-04-03)', idempotency_key => 'mm-stay');
SELECT * FROM written;

-- another hold length, or none
SELECT ok, code, booking_id FROM booking.reserve_stay(4, 'tia', '[2030-05-01, 2030-05-02)', '1 hour', 'mm-hold');
SELECT * FROM booking.reserve_stay(4, 'tia', '[2030-05-01, 2030-05-02)', '2 hours', 'mm-hold');
SELECT * FROM booking.reserve_stay(4, 'tia', '[2030-05-01, 2030-05-02)', NULL, 'mm-hold');
SELECT * FROM written;

-- another set of resources
SELECT * FROM booking.reserve_stays('{3,4}', 'uma', '[2030-06-01, 2030-06-02)', idempotency_key => 'mm-stays');
SELECT * FROM booking.reserve_stays('{3}', 'uma', '[2030-06-01, 2030-06-02)', idempotency_key => 'mm-stays');
SELECT * FROM booking.reserve_stays('{4}', 'uma', '[2030-06-01, 2030-06-02)', idempotency_key => 'mm-stays');
-- another pool: a mismatch, not the not_found of the unknown pool
SELECT * FROM booking.reserve_stay_any(5, 'uma', '[2030-07-01, 2030-07-02)', idempotency_key => 'mm-any');
SELECT * FROM booking.reserve_stay_any(99, 'uma', '[2030-07-01, 2030-07-02)', idempotency_key => 'mm-any');
SELECT * FROM written;

-- another booking, for cancel and confirm
SELECT ok, code, booking_id FROM booking.reserve_seat(8, 'vic', 1, '1 hour');
SELECT ok, code, booking_id FROM booking.reserve_seat(8, 'wes', 1, '1 hour');
SELECT * FROM booking.cancel(24, 'mm-cancel');
SELECT * FROM booking.cancel(25, 'mm-cancel');
SELECT ok, code, booking_id FROM booking.reserve_seat(8, 'xia', 1, '1 hour');
SELECT * FROM booking.confirm(25, 'mm-confirm');
SELECT * FROM booking.confirm(26, 'mm-confirm');
SELECT id, guest, status FROM booking.bookings WHERE id IN (24, 25, 26) ORDER BY id;
SELECT * FROM written;

-- a programmer error stores nothing under the key
SELECT * FROM booking.reserve_seat(NULL, 'yan', idempotency_key => 'error');
SELECT count(*) AS stored FROM booking.idempotency_keys WHERE key = 'error';

--
-- the key is written in the caller's transaction: rolled back, it is gone
--
BEGIN;
SELECT * FROM booking.reserve_seat(2, 'zoe', idempotency_key => 'rolled');
SELECT * FROM booking.reserve_seat(2, 'zoe', idempotency_key => 'rolled');
ROLLBACK;
SELECT count(*) AS stored FROM booking.idempotency_keys WHERE key = 'rolled';
SELECT * FROM booking.reserve_seat(2, 'zoe', idempotency_key => 'rolled');
BEGIN;
SAVEPOINT before_call;
SELECT * FROM booking.reserve_seat(2, 'zack', idempotency_key => 'savepoint');
ROLLBACK TO SAVEPOINT before_call;
SELECT * FROM booking.reserve_seat(2, 'zack', idempotency_key => 'savepoint');
COMMIT;

--
-- retention: keys older than booking.idempotency_retention are purged by
-- hold_expire, at most batch of them per call; a purged key is new again
--
SELECT ok, code, booking_id FROM booking.reserve_seat(8, 'abe', 1, '1 ms');
SET booking.idempotency_retention = '1s';
SHOW booking.idempotency_retention;
SELECT pg_sleep(1.05);
-- meanwhile the hold lapsed: hold_expired 410, replayed as such
CREATE TEMP TABLE first_confirm AS SELECT * FROM booking.confirm(31, 'confirm-410');
SELECT ok, code, booking_id, http_status, replayed,
       message ~ '^The hold on booking 31 expired at .+; reserve again\.$' AS message_ok
FROM first_confirm;
SELECT ok, code, booking_id, http_status, message = (SELECT message FROM first_confirm) AS same_message, replayed
FROM booking.confirm(31, 'confirm-410');
SELECT status FROM booking.bookings WHERE id = 31;
SELECT count(*) AS keys FROM booking.idempotency_keys;
SELECT booking.hold_expire(1);
SELECT count(*) AS keys FROM booking.idempotency_keys;
SELECT booking.hold_expire();
SELECT key FROM booking.idempotency_keys ORDER BY key;
-- purged keys are new again: the work is done, nothing is a mismatch
SELECT * FROM booking.reserve_seat(2, 'bob', 2, idempotency_key => 'seat-ok');
SELECT * FROM booking.reserve_seat(2, 'rick', 1, idempotency_key => 'mm-seat');
RESET booking.idempotency_retention;
SHOW booking.idempotency_retention;
-- 0 is refused; the wording of PostgreSQL's range error differs by major
-- (17 prints the units), so the SQLSTATE is what is shown
DO $$
BEGIN
    SET booking.idempotency_retention = 0;
    RAISE 'retention 0 was accepted';
EXCEPTION WHEN invalid_parameter_value THEN
    RAISE NOTICE 'booking.idempotency_retention = 0: %', SQLSTATE;
END
$$;

SELECT * FROM seat_counters;

--
-- the key probe does not depend on the shape of booking.idempotency_keys: a
-- column added (and dropped again) breaks no keyed call, first or replayed
--
SELECT booking.create_resource('altered keys', 10);    -- 9
SELECT * FROM booking.reserve_seat(9, 'al', idempotency_key => 'before-alter');
ALTER TABLE booking.idempotency_keys ADD COLUMN x int;
SELECT * FROM booking.reserve_seat(9, 'bo', idempotency_key => 'alter-add');
SELECT * FROM booking.reserve_seat(9, 'bo', idempotency_key => 'alter-add');
SELECT * FROM booking.reserve_seat(9, 'al', idempotency_key => 'before-alter');
SELECT * FROM booking.reserve_seat(9, 'cy', idempotency_key => 'before-alter');
SELECT * FROM booking.confirm(1, 'alter-confirm');
SELECT * FROM booking.confirm(1, 'alter-confirm');
ALTER TABLE booking.idempotency_keys DROP COLUMN x;
SELECT * FROM booking.reserve_seat(9, 'di', idempotency_key => 'alter-drop');
SELECT * FROM booking.reserve_seat(9, 'di', idempotency_key => 'alter-drop');
SELECT * FROM booking.reserve_seat(9, 'bo', idempotency_key => 'alter-add');
SELECT * FROM booking.reserve_seat(9, 'al', idempotency_key => 'before-alter');
SELECT * FROM booking.reserve_seat(9, 'cy', idempotency_key => 'alter-add');
-- three bookings for three keys, each key stored once
SELECT guest, quantity, status FROM booking.bookings WHERE resource_id = 9 ORDER BY id;
SELECT key, booking_id FROM booking.idempotency_keys
WHERE key IN ('before-alter', 'alter-add', 'alter-confirm', 'alter-drop') ORDER BY key;
SELECT * FROM seat_counters WHERE id = 9;
--
-- (0.9.0) What someone adds to booking.idempotency_keys applies to the keys
-- stored without a statement as to any INSERT: an expression index and a
-- partial index get exactly the entries they should, a trigger fires.
--
-- the one CHECK the library's own rows meet by construction, by the name
-- idempotency.c knows it by (any other sends the keys through a statement)
SELECT conname FROM pg_constraint
WHERE conrelid = 'booking.idempotency_keys'::regclass AND contype = 'c';
CREATE TABLE key_audit (key text);
CREATE FUNCTION key_audit() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO public.key_audit VALUES (NEW.key);
    RETURN NEW;
END $$;
CREATE INDEX keys_lower_idx ON booking.idempotency_keys (lower(key));
CREATE INDEX keys_refused_idx ON booking.idempotency_keys (key) WHERE NOT ok;
SELECT booking.create_resource('audited', 1) AS audited \gset
SELECT code FROM booking.reserve_seat(:audited, 'ann', idempotency_key => 'Audit-1');
SELECT code FROM booking.reserve_seat(:audited, 'bob', idempotency_key => 'Audit-2');
SET enable_seqscan = off;
SET enable_bitmapscan = off;
EXPLAIN (COSTS OFF) SELECT key FROM booking.idempotency_keys WHERE NOT ok AND key >= 'Audit';
SELECT key FROM booking.idempotency_keys WHERE NOT ok AND key >= 'Audit' AND key < 'Auditz';
EXPLAIN (COSTS OFF) SELECT key FROM booking.idempotency_keys WHERE lower(key) = 'audit-1';
SELECT key FROM booking.idempotency_keys WHERE lower(key) = 'audit-1';
RESET enable_seqscan;
RESET enable_bitmapscan;
CREATE TRIGGER key_audit AFTER INSERT ON booking.idempotency_keys
    FOR EACH ROW EXECUTE FUNCTION key_audit();
SELECT code FROM booking.reserve_seat(:audited, 'cat', idempotency_key => 'Audit-3');
SELECT code FROM booking.reserve_seat(:audited, 'cat', idempotency_key => 'Audit-3');
SELECT * FROM key_audit;
DROP TRIGGER key_audit ON booking.idempotency_keys;
DROP INDEX booking.keys_lower_idx, booking.keys_refused_idx;
DROP TABLE key_audit;
DROP FUNCTION key_audit();
