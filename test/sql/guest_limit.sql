--
-- guest_limit: booking.set_guest_limit caps what one guest may hold of a
-- resource; every reserve call answers guest_limit 409 past it
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;

SELECT booking.create_resource('limited show', 20) AS show \gset
SELECT booking.create_resource('striped show', 20) AS hot \gset
SELECT booking.create_resource('room') AS room \gset
SELECT booking.create_resource('pool', 0) AS pool \gset
SELECT booking.create_resource('unit A', 1, :pool) AS unit_a \gset
SELECT booking.create_resource('unit B', 1, :pool) AS unit_b \gset
SELECT booking.create_resource('free show', 20) AS free \gset
SELECT :show AS show, :hot AS hot, :room AS room, :pool AS pool, :unit_a AS unit_a,
       :unit_b AS unit_b, :free AS free;

--
-- set_guest_limit: answers
--
SELECT version AS v0 FROM booking.resources WHERE id = :show \gset
SELECT * FROM booking.set_guest_limit(:show, 3);
SELECT guest_limit, version - :v0 AS bumped FROM booking.resources WHERE id = :show;
-- the same limit again: ok, and the version moves again
SELECT ok, code, booking_id, http_status, replayed FROM booking.set_guest_limit(:show, 3);
SELECT guest_limit, version - :v0 AS bumped FROM booking.resources WHERE id = :show;
-- unknown resource: not_found 404, nothing written
SELECT * FROM written;
SELECT ok, code, booking_id, http_status, replayed FROM booking.set_guest_limit(99, 3);
SELECT * FROM written;

--
-- set_guest_limit: bad input raises, nothing changes
--
SELECT * FROM booking.set_guest_limit(:show, 0);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_guest_limit(:show, -1);
SELECT :'SQLSTATE' AS sqlstate;
SELECT * FROM booking.set_guest_limit(NULL, 3);
SELECT :'SQLSTATE' AS sqlstate;
SELECT guest_limit, version - :v0 AS bumped FROM booking.resources WHERE id = :show;

--
-- reserve_seat at and over the limit (3 per guest)
--
SELECT ok, code, booking_id, http_status FROM booking.reserve_seat(:show, 'ann', 2);
SELECT ok, code, booking_id, http_status FROM booking.reserve_seat(:show, 'ann', 1);
-- ann holds 3: one more is refused, nothing written
SELECT * FROM written;
SELECT ok, code, booking_id, http_status FROM booking.reserve_seat(:show, 'ann', 1);
SELECT * FROM written;
-- a quantity that alone passes the limit
SELECT ok, code, booking_id, http_status FROM booking.reserve_seat(:show, 'bob', 4);
SELECT ok, code, booking_id, http_status FROM booking.reserve_seat(:show, 'bob', 3);
-- the guest is compared as exact text: 'Ann' and 'ann ' are other guests
SELECT ok, code, http_status FROM booking.reserve_seat(:show, 'Ann', 3);
SELECT ok, code, http_status FROM booking.reserve_seat(:show, 'ann ', 3);
SELECT guest, sum(quantity) FROM booking.bookings
WHERE resource_id = :show AND status IN ('pending', 'confirmed') GROUP BY guest ORDER BY guest;
SELECT booking.seats_left(:show);

-- cancelled bookings do not count
SELECT ok, code FROM booking.cancel(2);
SELECT ok, code, http_status FROM booking.reserve_seat(:show, 'ann', 1);
SELECT ok, code, http_status FROM booking.reserve_seat(:show, 'ann', 1);

-- an unexpired hold counts, a lapsed one does not
SELECT ok, code, http_status FROM booking.reserve_seat(:show, 'cy', 2, '1 hour');
SELECT ok, code, http_status FROM booking.reserve_seat(:show, 'cy', 2);
SELECT ok, code, booking_id, http_status FROM booking.reserve_seat(:show, 'dee', 3, '1 millisecond');
SELECT pg_sleep(0.01);
SELECT ok, code, http_status FROM booking.reserve_seat(:show, 'dee', 3);
SELECT guest, quantity, status FROM booking.bookings WHERE guest IN ('cy', 'dee') ORDER BY id;

-- when both sold_out and guest_limit apply, either may be answered: the
-- refusal writes nothing
SELECT code IN ('sold_out', 'guest_limit') AS refused, http_status
FROM booking.reserve_seat(:show, 'eve', 50);

--
-- bookings made before the limit count too
--
SELECT ok, code FROM booking.reserve_seat(:free, 'fay', 4);
SELECT ok, code FROM booking.reserve_seat(:free, 'fay', 1, '1 hour');
SELECT ok, code FROM booking.reserve_seat(:free, 'gus', 1);
SELECT ok, code, http_status FROM booking.set_guest_limit(:free, 5);
SELECT ok, code, http_status FROM booking.reserve_seat(:free, 'fay', 1);
SELECT ok, code, http_status FROM booking.reserve_seat(:free, 'gus', 4);
SELECT ok, code, http_status FROM booking.reserve_seat(:free, 'gus', 1);
-- a limit below what a guest already holds: allowed, the guest gets no more
SELECT ok, code, http_status FROM booking.set_guest_limit(:free, 2);
SELECT ok, code, http_status FROM booking.reserve_seat(:free, 'fay', 1);
SELECT ok, code, http_status FROM booking.reserve_seat(:free, 'hal', 2);
SELECT ok, code, http_status FROM booking.reserve_seat(:free, 'hal', 1);

--
-- removing the limit (NULL)
--
SELECT version AS v1 FROM booking.resources WHERE id = :free \gset
SELECT * FROM booking.set_guest_limit(:free, NULL);
SELECT guest_limit IS NULL AS no_limit, version - :v1 AS bumped FROM booking.resources WHERE id = :free;
SELECT ok, code, http_status FROM booking.reserve_seat(:free, 'fay', 3);
SELECT ok, code, http_status FROM booking.reserve_seat(:free, 'hal', 5);
SELECT * FROM seat_counters WHERE id = :free;

--
-- a striped resource (the limit serializes its sales on its row)
--
SELECT ok, code FROM booking.set_stripes(:hot, 4);
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'ida', 1);
SELECT version AS v2 FROM booking.resources WHERE id = :hot \gset
SELECT ok, code, booking_id, http_status FROM booking.set_guest_limit(:hot, 2);
SELECT guest_limit, version - :v2 AS bumped FROM booking.resources WHERE id = :hot;
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'ida', 1);
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'ida', 1);
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'jo', 3);
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'jo', 2, '1 hour');
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'jo', 1);
-- a lapsed hold on a stripe does not count
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'kim', 2, '1 millisecond');
SELECT pg_sleep(0.01);
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'kim', 2);
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'kim', 1);
-- a cancelled one neither
SELECT id AS ida_first FROM booking.bookings WHERE resource_id = :hot AND guest = 'ida' ORDER BY id LIMIT 1 \gset
SELECT ok, code FROM booking.cancel(:ida_first);
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'ida', 1);
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'ida', 1);
-- what each guest holds (lapsed holds left out)
SELECT guest, sum(quantity) FROM booking.bookings
WHERE resource_id = :hot AND (status = 'confirmed' OR (status = 'pending' AND expires_at > now()))
GROUP BY guest ORDER BY guest;
SELECT booking.seats_left(:hot),
       (SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = :hot) AS stripes_free;
-- removed again: the stripes sell freely
SELECT ok, code FROM booking.set_guest_limit(:hot, NULL);
SELECT ok, code, http_status FROM booking.reserve_seat(:hot, 'ida', 5);
SELECT booking.seats_left(:hot),
       (SELECT sum(free) FROM booking.resource_stripes WHERE resource_id = :hot) AS stripes_free;

--
-- reserve_stay: a stay counts 1 while it has not ended
--
SELECT ok, code FROM booking.reserve_stay(:room, 'lee', '[2001-01-01, 2001-01-03)');
SELECT ok, code FROM booking.reserve_stay(:room, 'lee', '[2001-02-01, 2001-02-03)');
SELECT ok, code, http_status FROM booking.set_guest_limit(:room, 2);
-- past stays do not count
SELECT ok, code, http_status FROM booking.reserve_stay(:room, 'lee', '[2030-01-01, 2030-01-03)');
SELECT ok, code, http_status FROM booking.reserve_stay(:room, 'lee', '[2030-02-01, 2030-02-03)', '1 hour');
-- two stays not yet ended: a third is refused
SELECT * FROM written;
SELECT ok, code, booking_id, http_status FROM booking.reserve_stay(:room, 'lee', '[2030-03-01, 2030-03-03)');
SELECT * FROM written;
-- a stay under way (begun, not ended) counts too
SELECT ok, code FROM booking.reserve_stay(:room, 'max', tstzrange(now() - interval '1 day', now() + interval '1 day'));
SELECT ok, code FROM booking.reserve_stay(:room, 'max', '[2030-04-01, 2030-04-03)');
SELECT ok, code, http_status FROM booking.reserve_stay(:room, 'max', '[2030-05-01, 2030-05-03)');
-- a lapsed stay hold does not count
SELECT ok, code FROM booking.reserve_stay(:room, 'ned', '[2030-06-01, 2030-06-03)', '1 millisecond');
SELECT ok, code FROM booking.reserve_stay(:room, 'ned', '[2030-07-01, 2030-07-03)');
SELECT pg_sleep(0.01);
SELECT ok, code, http_status FROM booking.reserve_stay(:room, 'ned', '[2030-08-01, 2030-08-03)');
-- cancelling one makes room for another
SELECT id AS lee_2030 FROM booking.bookings WHERE guest = 'lee' AND during = '[2030-01-01, 2030-01-03)' \gset
SELECT ok, code FROM booking.cancel(:lee_2030);
SELECT ok, code, http_status FROM booking.reserve_stay(:room, 'lee', '[2030-03-01, 2030-03-03)');
-- (max's first stay is printed as under way: its range depends on now())
SELECT guest, CASE WHEN lower(during) < now() AND upper(during) > now() THEN 'under way'
                   ELSE during::text END AS during, status
FROM booking.bookings WHERE resource_id = :room ORDER BY id;

--
-- reserve_stays and reserve_stay_any with limited units
--
SELECT ok, code FROM booking.set_guest_limit(:unit_a, 1);
SELECT ok, code FROM booking.reserve_stay(:unit_a, 'ola', '[2030-01-01, 2030-01-02)');
-- ola already holds a stay on unit A: a group over A and B is refused whole
SELECT ok, code, booking_id, http_status FROM booking.reserve_stays(ARRAY[:unit_b, :unit_a]::bigint[], 'ola', '[2030-02-01, 2030-02-02)');
SELECT count(*) AS ola_on_b FROM booking.bookings WHERE guest = 'ola' AND resource_id = :unit_b;
-- another guest gets the group
SELECT ok, code, http_status FROM booking.reserve_stays(ARRAY[:unit_b, :unit_a]::bigint[], 'pat', '[2030-02-01, 2030-02-02)');
SELECT ok, code, http_status FROM booking.reserve_stays(ARRAY[:unit_a]::bigint[], 'pat', '[2030-03-01, 2030-03-02)');
-- both units limited, ola full on both: reserve_stay_any answers guest_limit
SELECT ok, code FROM booking.set_guest_limit(:unit_b, 1);
SELECT ok, code FROM booking.reserve_stay(:unit_b, 'ola', '[2030-01-01, 2030-01-02)');
SELECT ok, code, booking_id, http_status FROM booking.reserve_stay_any(:pool, 'ola', '[2030-04-01, 2030-04-02)');
SELECT count(*) AS ola_stays FROM booking.bookings WHERE guest = 'ola';
-- a guest with room under the limit gets a unit
SELECT ok, code, http_status FROM booking.reserve_stay_any(:pool, 'quinn', '[2030-04-01, 2030-04-02)');
SELECT ok, code, http_status FROM booking.reserve_stay_any(:pool, 'quinn', '[2030-04-01, 2030-04-02)');
SELECT ok, code, http_status FROM booking.reserve_stay_any(:pool, 'quinn', '[2030-05-01, 2030-05-02)');
-- a guest at the limit on unit A only is given unit B
SELECT ok, code FROM booking.reserve_stay(:unit_a, 'rita', '[2030-06-01, 2030-06-02)');
SELECT ok, code, http_status FROM booking.reserve_stay_any(:pool, 'rita', '[2030-07-01, 2030-07-02)');
SELECT resource_id = :unit_a AS on_a, guest, during, status FROM booking.bookings
WHERE resource_id IN (:unit_a, :unit_b) ORDER BY id;

--
-- reserve_seats hitting the limit on one member writes nothing
--
SELECT booking.create_resource('seats A', 10) AS sa \gset
SELECT booking.create_resource('seats B', 10) AS sb \gset
SELECT ok, code FROM booking.set_guest_limit(:sb, 2);
SELECT ok, code FROM booking.reserve_seat(:sb, 'ray', 1);
SELECT bookings, keys, taken FROM written;
SELECT ok, code, booking_id, http_status FROM booking.reserve_seats(ARRAY[:sa, :sb]::bigint[], 'ray', '{1,2}');
SELECT bookings, keys, taken FROM written;
SELECT booking.seats_left(:sa) AS left_a, booking.seats_left(:sb) AS left_b;
SELECT ok, code, http_status FROM booking.reserve_seats(ARRAY[:sa, :sb]::bigint[], 'ray', '{5,1}');
SELECT resource_id = :sa AS on_a, guest, quantity, status, group_id IS NOT NULL AS grouped
FROM booking.bookings WHERE guest = 'ray' ORDER BY id;

-- every counter exact (the striped resource counts in its stripes)
SELECT id, exact FROM seat_counters WHERE id <> :hot;
SELECT r.capacity - (SELECT sum(free) FROM booking.resource_stripes s WHERE s.resource_id = r.id) AS taken,
       (SELECT sum(quantity) FROM booking.bookings b
         WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed')) AS blocking
FROM booking.resources r WHERE r.id = :hot;
