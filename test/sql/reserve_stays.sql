--
-- reserve_stays: several resources over the same range, all or nothing
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('room ' || i) FROM generate_series(1, 5) i;

--
-- success: booking_id is the booking of the lowest resource id; every member
-- carries the group id (that same booking id)
--
SELECT * FROM booking.reserve_stays('{3,1}', 'ann', '[2030-01-04, 2030-01-07)');
-- order independence: {4,2} and {2,4} both answer with the booking of room 2
SELECT * FROM booking.reserve_stays('{4,2}', 'bob', '[2030-01-04, 2030-01-07)');
SELECT * FROM booking.reserve_stays('{2,4}', 'cy', '[2030-01-10, 2030-01-12)');
SELECT id, resource_id, guest, during, status, expires_at, group_id
FROM booking.bookings ORDER BY id;
-- the members of a group
SELECT resource_id FROM booking.bookings WHERE group_id = 3 ORDER BY resource_id;
-- a group of one
SELECT * FROM booking.reserve_stays('{5}', 'dee', '[2030-01-04, 2030-01-07)');
SELECT id, resource_id, group_id FROM booking.bookings WHERE guest = 'dee';

--
-- all or nothing: a conflict on one member leaves no row of any status
--
SELECT * FROM written;
-- room 2 is taken on [10,12), room 1 is free: unavailable, naming room 2
SELECT * FROM booking.reserve_stays('{1,2}', 'eve', '[2030-01-10, 2030-01-12)');
-- both taken: the lowest conflicting room is named
SELECT * FROM booking.reserve_stays('{4,3}', 'eve', '[2030-01-05, 2030-01-06)');
SELECT * FROM written;
SELECT count(*) AS eves FROM booking.bookings WHERE guest = 'eve';
-- an unexpired hold blocks a group too
SELECT ok, code, booking_id FROM booking.reserve_stay(3, 'fay', '[2030-01-20, 2030-01-22)', '1 hour');
SELECT ok, code, http_status FROM booking.reserve_stays('{1,3}', 'gus', '[2030-01-21, 2030-01-23)');
SELECT count(*) AS guses FROM booking.bookings WHERE guest = 'gus';

-- a group hold: every member pending, with one expiry
SELECT ok, code, booking_id, http_status, replayed,
       message ~ '^Held 2 resources as group 9 from 2030-02-01 00:00:00\+00 to 2030-02-03 00:00:00\+00 until .+; confirm before then\.$' AS message_ok
FROM booking.reserve_stays('{2,1}', 'hal', '[2030-02-01, 2030-02-03)', '1 hour');
SELECT resource_id, status, group_id, expires_at - created_at AS hold
FROM booking.bookings WHERE guest = 'hal' ORDER BY resource_id;
SELECT count(DISTINCT expires_at) AS expiries FROM booking.bookings WHERE guest = 'hal';

--
-- losing at the constraint after the members were checked (the sneak
-- trigger of setup plays the concurrent writer on room 4): just_taken, and
-- the member already inserted on room 2 is gone again.  The group's inserts
-- run in one subtransaction that is rolled back, so the trigger's own row,
-- written inside it, goes too; a real concurrent writer's row would stay.
--
CREATE TRIGGER sneak BEFORE INSERT ON booking.bookings
    FOR EACH ROW EXECUTE FUNCTION sneak();
SET sneak.resource = 4;
SELECT * FROM booking.reserve_stays('{4,2}', 'loser', '[2030-03-01, 2030-03-04)');
DROP TRIGGER sneak ON booking.bookings;
SELECT id, resource_id, guest, during, status, group_id
FROM booking.bookings WHERE during && '[2030-03-01, 2030-03-04)' ORDER BY id;

-- any other error surfaces as itself; nothing is left behind
\set VERBOSITY terse
ALTER TABLE booking.bookings ADD CONSTRAINT no_trudy CHECK (guest <> 'trudy');
SELECT * FROM booking.reserve_stays('{1,2}', 'trudy', '[2030-04-01, 2030-04-05)');
SELECT :'SQLSTATE' AS sqlstate;
ALTER TABLE booking.bookings DROP CONSTRAINT no_trudy;
\set VERBOSITY default
SELECT count(*) AS trudys FROM booking.bookings WHERE guest = 'trudy';

--
-- unknown resources: not_found 404 naming the lowest unknown id
--
SELECT * FROM booking.reserve_stays('{1,99}', 'ida', '[2030-05-01, 2030-05-02)');
SELECT * FROM booking.reserve_stays('{99,98,1}', 'ida', '[2030-05-01, 2030-05-02)');
SELECT * FROM written;

--
-- a member's row is held by another transaction: busy 503 naming it
--
SELECT peer_open();
SELECT peer_exec('BEGIN');
SELECT peer('SELECT (booking.reserve_stay(5, ''peer'', ''[2030-06-01, 2030-06-02)'')).code');
SELECT * FROM booking.reserve_stays('{5,1}', 'jo', '[2030-05-01, 2030-05-02)', lock_timeout => '0');
SELECT * FROM booking.reserve_stays('{5,1}', 'jo', '[2030-05-01, 2030-05-02)', lock_timeout => '50 ms');
-- below 1 ms rounds up to 1 ms (a wait, not NOWAIT); above 2^31-1 ms once
-- rounded is refused before anything is read or written
SELECT * FROM booking.reserve_stays('{5,1}', 'jo', '[2030-05-01, 2030-05-02)', lock_timeout => '0.5 ms');
SELECT * FROM booking.reserve_stays('{5,1}', 'jo', '[2030-05-01, 2030-05-02)', lock_timeout => '2147483647.5 ms');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT count(*) AS jos FROM booking.bookings WHERE guest = 'jo';
SELECT peer_exec('ROLLBACK');
SELECT dblink_disconnect('peer');
SELECT * FROM booking.reserve_stays('{5,1}', 'jo', '[2030-05-01, 2030-05-02)', lock_timeout => '0');

--
-- bad input: raises 22004/22023 naming the argument, writes nothing
--
SELECT * FROM written;
SELECT * FROM booking.reserve_stays(NULL, 'kim', '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{}', 'kim', '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,NULL}', 'kim', '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{NULL}', 'kim', '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,1}', 'kim', '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{3,1,3}', 'kim', '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{{1,2},{3,4}}', 'kim', '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays(ARRAY(SELECT generate_series(1, 101)::bigint), 'kim', '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', NULL, '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', '', '[2030-07-01, 2030-07-02)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', 'empty');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-01,)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-01, infinity)');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-01, 2030-07-02)', '0');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-01, 2030-07-02)', '-1 hour');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-01, 2030-07-02)', lock_timeout => '-1 s');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-01, 2030-07-02)', lock_timeout => '2147483647.5 ms');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-01, 2030-07-02)', idempotency_key => '');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-01, 2030-07-02)', idempotency_key => repeat('k', 256));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
-- explicit NULLs mean the defaults
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-01, 2030-07-02)', NULL, NULL, NULL);
SELECT resource_id, status, group_id FROM booking.bookings WHERE guest = 'kim' ORDER BY resource_id;
-- the largest wait, and a wait below 1 ms, are fine
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-10, 2030-07-11)', lock_timeout => '2147483647 ms');
SELECT * FROM booking.reserve_stays('{1,2}', 'kim', '[2030-07-11, 2030-07-12)', lock_timeout => '0.5 ms');
