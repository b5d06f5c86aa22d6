--
-- slots (0.9.0): capacity over time.  reserve_slot takes quantity units of
-- a resource's capacity over a range; at no instant do the slot bookings
-- that block hold more than the capacity; sold_out names the earliest
-- instant short of units.  slots_left lists the free units as runs of one
-- count.  cancel, confirm, extend_hold, hold_expire, move_stay,
-- set_capacity and guest limits know slot bookings; a stay on a slotted
-- resource takes every unit.
--
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
TRUNCATE booking.bookings, booking.resource_stripes, booking.resources, booking.idempotency_keys RESTART IDENTITY;
SELECT booking.add_consumer('slots_test');
SELECT COALESCE(max(id), 0) AS event0 FROM booking.events \gset

SELECT booking.create_resource('class', 5);             -- 1
SELECT booking.create_resource('restaurant', 40);       -- 2
SELECT booking.create_resource('car park', 3);          -- 3
SELECT booking.create_resource('hall', 4);              -- 4: stays and slots
SELECT booking.create_resource('court', 2);             -- 5: opening hours

-- two, then three overlapping: full from 10:30 to 11:00
SELECT * FROM booking.reserve_slot(1, 'ann', '[2030-01-07 10:00+00, 2030-01-07 11:00+00)', 2);
SELECT ok, code, booking_id, http_status FROM booking.reserve_slot(1, 'bob', '[2030-01-07 10:30+00, 2030-01-07 12:00+00)', 3);
-- one more anywhere in 10:30-11:00 is sold out, naming the earliest instant
SELECT * FROM booking.reserve_slot(1, 'cat', '[2030-01-07 10:45+00, 2030-01-07 11:30+00)');
SELECT ok, code, message FROM booking.reserve_slot(1, 'cat', '[2030-01-07 09:00+00, 2030-01-07 12:00+00)');
-- [) ranges: ann's ends at 11:00, so two fit from 11:00, three do not
SELECT ok, code FROM booking.reserve_slot(1, 'cat', '[2030-01-07 11:00+00, 2030-01-07 11:30+00)', 2);
SELECT ok, code, message FROM booking.reserve_slot(1, 'dan', '[2030-01-07 11:15+00, 2030-01-07 13:00+00)', 1);
-- more than the capacity: short from the first instant
SELECT ok, code, message FROM booking.reserve_slot(1, 'dan', '[2030-01-08 10:00+00, 2030-01-08 11:00+00)', 6);
SELECT id, guest, quantity, during, status, blocked FROM booking.bookings ORDER BY id;

-- slots_left: runs of one free count, covering within exactly, merged
SELECT * FROM booking.slots_left(1, '[2030-01-07 09:00+00, 2030-01-07 14:00+00)');
-- clipped to within
SELECT * FROM booking.slots_left(1, '[2030-01-07 10:40+00, 2030-01-07 11:10+00)');
-- an unknown resource has no rows; bad within as for free_slots
SELECT count(*) FROM booking.slots_left(99, '[2030-01-07, 2030-01-08)');
SELECT * FROM booking.slots_left(1, NULL);
SELECT * FROM booking.slots_left(1, 'empty');
SELECT * FROM booking.slots_left(1, '[2030-01-07,)');
SELECT * FROM booking.slots_left(NULL, '[2030-01-07, 2030-01-08)');

-- bad arguments: class 22, naming the argument, nothing written
SELECT * FROM booking.reserve_slot(1, 'eve', '[2030-01-07 10:00+00, 2030-01-07 11:00+00)', 0);
SELECT * FROM booking.reserve_slot(1, 'eve', '[2030-01-07 10:00+00, 2030-01-07 11:00+00)', NULL);
SELECT * FROM booking.reserve_slot(1, 'eve', '[2030-01-07 10:00+00, 2030-01-07 11:00+00)', -2);
SELECT * FROM booking.reserve_slot(1, 'eve', NULL);
SELECT * FROM booking.reserve_slot(1, 'eve', 'empty');
SELECT * FROM booking.reserve_slot(1, 'eve', '[2030-01-07 10:00+00,)');
SELECT * FROM booking.reserve_slot(1, NULL, '[2030-01-07 10:00+00, 2030-01-07 11:00+00)');
SELECT * FROM booking.reserve_slot(1, '', '[2030-01-07 10:00+00, 2030-01-07 11:00+00)');
SELECT * FROM booking.reserve_slot(NULL, 'eve', '[2030-01-07 10:00+00, 2030-01-07 11:00+00)');
SELECT * FROM booking.reserve_slot(1, 'eve', '[2030-01-07 10:00+00, 2030-01-07 11:00+00)', 1, '-1 hour');
SELECT * FROM booking.reserve_slot(1, 'eve', '[2030-01-07 10:00+00, 2030-01-07 11:00+00)', 1, lock_timeout => '-1 s');
SELECT * FROM booking.reserve_slot(1, 'eve', '[2030-01-07 10:00+00, 2030-01-07 11:00+00)', 1, metadata => '[1]');
SELECT count(*) AS bookings FROM booking.bookings;
-- an unknown resource
SELECT * FROM booking.reserve_slot(99, 'eve', '[2030-01-07 10:00+00, 2030-01-07 11:00+00)');
-- a closed-open range is normalized to [)
SELECT ok, code FROM booking.reserve_slot(2, 'eve', '(2030-01-07 18:00+00, 2030-01-07 20:00+00]', 4);
SELECT during FROM booking.bookings WHERE guest = 'eve';

-- cancel frees the units at once
SELECT ok, code, message FROM booking.cancel(1);
SELECT ok, code FROM booking.reserve_slot(1, 'fay', '[2030-01-07 10:15+00, 2030-01-07 10:45+00)', 2);
SELECT * FROM booking.slots_left(1, '[2030-01-07 10:00+00, 2030-01-07 11:00+00)');

-- holds: block until they lapse, confirm, extend
SELECT ok, code, booking_id AS gus, message ~ '^Held 3 units of resource 3 from .+ until .+; confirm before then\.$' AS held
FROM booking.reserve_slot(3, 'gus', '[2030-01-07 08:00+00, 2030-01-07 18:00+00)', 3, '1 hour') \gset
SELECT :'ok', :'code', :'held';
SELECT ok, code, message FROM booking.reserve_slot(3, 'hal', '[2030-01-07 17:00+00, 2030-01-07 19:00+00)');
SELECT ok, code FROM booking.extend_hold(:gus, '30 minutes');
SELECT ok, code FROM booking.confirm(:gus);
SELECT status, expires_at IS NULL AS no_expiry FROM booking.bookings WHERE id = :gus;
SELECT ok, code FROM booking.cancel(:gus);
SELECT ok, code, booking_id AS hal FROM booking.reserve_slot(3, 'hal', '[2030-01-07 12:00+00, 2030-01-07 19:00+00)', 2, '1 hour') \gset
SELECT :'ok', :'code';
-- the hold lapses: it lasted from two hours ago to one hour ago
UPDATE booking.bookings
   SET created_at = created_at - interval '2 hours',
       expires_at = created_at - interval '1 hour',
       validity = tstzrange(created_at - interval '2 hours', created_at - interval '1 hour', '[)')
 WHERE id = :hal;
-- a lapsed hold blocks nothing (lazy expiry), before hold_expire runs
SELECT * FROM booking.slots_left(3, '[2030-01-07 11:00+00, 2030-01-07 20:00+00)');
SELECT ok, code FROM booking.reserve_slot(3, 'ida', '[2030-01-07 12:00+00, 2030-01-07 19:00+00)', 3);
SELECT ok, code FROM booking.confirm(:hal);
SELECT status FROM booking.bookings WHERE id = :hal;

-- idempotency keys replay the stored answer; another request under the key is refused
SELECT ok, code, booking_id, replayed FROM booking.reserve_slot(2, 'jon', '[2030-01-07 19:00+00, 2030-01-07 21:00+00)', 6, idempotency_key => 'slot-1');
SELECT ok, code, booking_id, replayed FROM booking.reserve_slot(2, 'jon', '[2030-01-07 19:00+00, 2030-01-07 21:00+00)', 6, idempotency_key => 'slot-1');
SELECT ok, code FROM booking.reserve_slot(2, 'jon', '[2030-01-07 19:00+00, 2030-01-07 21:00+00)', 7, idempotency_key => 'slot-1');
SELECT count(*) FROM booking.bookings WHERE guest = 'jon';

-- move_stay moves the whole quantity, or nothing
SELECT * FROM booking.slots_left(2, '[2030-01-07 18:00+00, 2030-01-07 22:00+00)');
SELECT ok, code FROM booking.reserve_slot(2, 'kim', '[2030-01-07 21:00+00, 2030-01-07 23:00+00)', 35);
SELECT id AS jon FROM booking.bookings WHERE guest = 'jon' \gset
SELECT ok, code, message FROM booking.move_stay(:jon, '[2030-01-07 20:00+00, 2030-01-07 22:00+00)');
SELECT during, quantity FROM booking.bookings WHERE id = :jon;
SELECT ok, code, message FROM booking.move_stay(:jon, '[2030-01-07 16:00+00, 2030-01-07 18:00+00)');
SELECT during, quantity FROM booking.bookings WHERE id = :jon;
-- its own old range does not stand in its way: ida holds all three units
SELECT id AS ida FROM booking.bookings WHERE guest = 'ida' \gset
SELECT ok, code FROM booking.move_stay(:ida, '[2030-01-07 12:30+00, 2030-01-07 19:30+00)');
SELECT during, quantity FROM booking.bookings WHERE id = :ida;

-- set_capacity: refused below the peak use of any future instant
SELECT version FROM booking.resources WHERE id = 2 \gset
SELECT ok, code, message FROM booking.set_capacity(2, 34, :version);
SELECT ok, code, message FROM booking.set_capacity(2, 35, :version);
SELECT ok, code FROM booking.reserve_slot(2, 'lea', '[2030-01-07 22:00+00, 2030-01-07 23:00+00)', 1);

-- a guest limit counts a slot booking's quantity
SELECT ok, code FROM booking.set_guest_limit(1, 3);
SELECT ok, code FROM booking.reserve_slot(1, 'max', '[2030-01-09 10:00+00, 2030-01-09 11:00+00)', 2);
SELECT ok, code, message FROM booking.reserve_slot(1, 'max', '[2030-01-09 12:00+00, 2030-01-09 13:00+00)', 2);
SELECT ok, code FROM booking.reserve_slot(1, 'max', '[2030-01-09 12:00+00, 2030-01-09 13:00+00)', 1);
-- ... and a move as the booking made anew: max's other unit and these two pass a limit of 2
SELECT ok, code FROM booking.set_guest_limit(1, 2);
SELECT id AS max2 FROM booking.bookings WHERE guest = 'max' AND quantity = 2 \gset
SELECT ok, code, message FROM booking.move_stay(:max2, '[2030-01-09 14:00+00, 2030-01-09 15:00+00)');
SELECT ok, code FROM booking.set_guest_limit(1, 3);

-- stays and slots on one resource: a stay takes every unit
SELECT ok, code FROM booking.reserve_stay(4, 'ned', '[2030-01-07 09:00+00, 2030-01-07 12:00+00)');
SELECT ok, code, message FROM booking.reserve_slot(4, 'oli', '[2030-01-07 11:00+00, 2030-01-07 13:00+00)');
SELECT ok, code FROM booking.reserve_slot(4, 'oli', '[2030-01-07 12:00+00, 2030-01-07 13:00+00)', 4);
SELECT slotted FROM booking.resources WHERE id = 4;
SELECT ok, code, message FROM booking.reserve_stay(4, 'pam', '[2030-01-07 12:30+00, 2030-01-07 14:00+00)');
SELECT ok, code FROM booking.reserve_stay(4, 'pam', '[2030-01-07 13:00+00, 2030-01-07 14:00+00)');
SELECT id AS pam FROM booking.bookings WHERE guest = 'pam' \gset
SELECT * FROM booking.slots_left(4, '[2030-01-07 08:00+00, 2030-01-07 15:00+00)');
-- a stay's move, a series and a group: each must leave the slots alone
SELECT ok, code, message FROM booking.move_stay(:pam, '[2030-01-07 11:30+00, 2030-01-07 12:30+00)');
SELECT ok, code, message FROM booking.reserve_series(4, 'quy', '[2030-01-06 12:00+00, 2030-01-06 12:30+00)', '1 day', 3);
SELECT ok, code FROM booking.reserve_stays(ARRAY[4, 1], 'quy', '[2030-01-07 12:15+00, 2030-01-07 12:45+00)');
SELECT ok, code FROM booking.reserve_stays(ARRAY[4, 1], 'quy', '[2030-01-07 14:00+00, 2030-01-07 15:00+00)');
-- set_capacity never counts a stay: it takes whatever there is
SELECT version FROM booking.resources WHERE id = 4 \gset
SELECT ok, code, message FROM booking.set_capacity(4, 3, :version);
SELECT ok, code FROM booking.cancel((SELECT id FROM booking.bookings WHERE guest = 'oli'));
SELECT ok, code, message FROM booking.set_capacity(4, 1, :version);

-- opening hours: a slot lies in one open window; slots_left lists open time only
SELECT ok, code FROM booking.set_time_zone(5, 'Europe/Paris');
SELECT ok, code FROM booking.set_opening_hours(5, '{"mon": [["09:00", "12:00"], ["14:00", "18:00"]]}');
SELECT ok, code, message FROM booking.reserve_slot(5, 'rui', '[2030-03-04 10:00+00, 2030-03-04 12:00+00)');
SELECT ok, code FROM booking.reserve_slot(5, 'rui', '[2030-03-04 09:00+00, 2030-03-04 10:00+00)', 2);
SELECT * FROM booking.slots_left(5, '[2030-03-04 00:00+00, 2030-03-05 00:00+00)');
-- the spring-forward Sunday in Paris: 00:00-06:00 local is five hours
SELECT ok, code FROM booking.set_opening_hours(5, '{"sun": [["00:00", "06:00"]]}');
SELECT * FROM booking.slots_left(5, '[2030-03-30 00:00+00, 2030-04-01 00:00+00)');
SELECT * FROM booking.slots_left(5, '[2030-10-26 00:00+00, 2030-10-28 00:00+00)');

-- one reserved event per slot booking, one cancelled per cancel
SELECT kind, count(*) FROM booking.events e JOIN booking.bookings b ON b.id = e.booking_id
WHERE e.id > :event0 AND b.blocked IS NULL AND b.during IS NOT NULL GROUP BY kind ORDER BY kind;
SELECT booking.drop_consumer('slots_test');

-- a long booking stands in the way of a window it starts far before: the
-- sweep reads the slots starting from the resource's longest slot before
-- the window on (bookings_slots_idx), so that length must follow every
-- slot booking made or moved longer
SELECT booking.create_resource('van', 1) AS van \gset
SELECT ok, code FROM booking.reserve_slot(:van, 'sam', '[2030-02-01 09:00+00, 2030-02-01 10:00+00)');
SELECT longest_slot FROM booking.resources WHERE id = :van;
SELECT ok, code FROM booking.reserve_slot(:van, 'tom', '[2030-02-10 00:00+00, 2030-02-20 00:00+00)');
SELECT longest_slot FROM booking.resources WHERE id = :van;
SELECT ok, code, message FROM booking.reserve_slot(:van, 'uma', '[2030-02-19 10:00+00, 2030-02-19 11:00+00)');
SELECT * FROM booking.slots_left(:van, '[2030-02-19 10:00+00, 2030-02-19 11:00+00)');
-- a shorter one leaves it; a move to a longer range lengthens it
SELECT ok, code FROM booking.reserve_slot(:van, 'uma', '[2030-02-21 10:00+00, 2030-02-21 11:00+00)');
SELECT longest_slot FROM booking.resources WHERE id = :van;
SELECT ok, code FROM booking.move_stay((SELECT id FROM booking.bookings WHERE guest = 'sam'), '[2030-03-01 00:00+00, 2030-04-01 00:00+00)');
SELECT longest_slot FROM booking.resources WHERE id = :van;
SELECT ok, code, message FROM booking.reserve_slot(:van, 'vic', '[2030-03-30 10:00+00, 2030-03-30 11:00+00)');
SELECT * FROM booking.slots_left(:van, '[2030-03-30 10:00+00, 2030-03-30 11:00+00)');
-- set_capacity counts it too, and a stay on the van is refused where it lies
SELECT version FROM booking.resources WHERE id = :van \gset
SELECT ok, code, message FROM booking.set_capacity(:van, 0, :version);
SELECT ok, code, message FROM booking.reserve_stay(:van, 'wes', '[2030-03-31 10:00+00, 2030-03-31 11:00+00)');
-- a window far back in time reads from the first instant a timestamp holds
SELECT * FROM booking.slots_left(:van, '[4713-01-01 00:00+00 BC, 4713-01-02 00:00+00 BC)');
