--
-- resources: booking.create_resource and booking.seats_left
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

--
-- create_resource
--

-- defaults: capacity 1, no pool, meta {}
SELECT booking.create_resource('concert');
-- explicit NULL means the default, for capacity, pool and meta alike
SELECT booking.create_resource('talk', NULL, NULL, NULL);
SELECT booking.create_resource('hall', 2000, meta => '{"floor": 1}');
SELECT booking.create_resource('sold-out-show', 0);
-- a pool and two of its units
SELECT booking.create_resource('double rooms', 0);
SELECT booking.create_resource('room 101', 1, pool => 5);
SELECT booking.create_resource('room 102', 1, 5, '{"view": "sea"}');
SELECT id, name, capacity, pool_id, version, meta FROM booking.resources ORDER BY id;
SELECT * FROM written;

-- bad input: raises, names the argument, writes nothing (no id drawn either)
SELECT booking.create_resource(NULL);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT booking.create_resource('');
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT booking.create_resource(repeat('n', 1025));
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT booking.create_resource('bad', -1);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
-- an unknown pool
SELECT booking.create_resource('orphan', 1, 99);
SELECT :'SQLSTATE' AS sqlstate, * FROM written;
SELECT last_value, is_called FROM booking.resources_id_seq;

-- the longest name is fine
SELECT booking.create_resource(repeat('n', 1024));
SELECT id, length(name) FROM booking.resources WHERE id = 8;

--
-- seats_left
--
SELECT id, booking.seats_left(id) FROM booking.resources ORDER BY id;
-- NULL for an unknown resource
SELECT booking.seats_left(99) IS NULL AS unknown_is_null;
-- a NULL resource is a programmer error
SELECT booking.seats_left(NULL);
SELECT :'SQLSTATE' AS sqlstate;
