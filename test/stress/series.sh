#!/usr/bin/env bash
# series.sh: series of 52 weekly occurrences racing each other (0.9.0).
# 64 clients book series on three rooms whose clocks change on different
# days (Europe/Paris, America/New_York, Australia/Sydney), SERIES_ATTEMPTS
# each (60 by default, 3,840 in all; at most about 127 series fit), a count
# rather than a time, so that a slow machine makes as many attempts.  Every
# series is all or nothing: each group holds exactly 52 blocking bookings;
# no two blocking bookings of a room overlap; every occurrence starts at its
# first's local time of day and weekday; one group per ok answer.
set -u
cd "$(dirname "$0")"
. ./lib.bash

ATTEMPTS=${SERIES_ATTEMPTS:-60}
stress_db booking_stress_series

sql "CREATE TABLE stress_log (code text NOT NULL, booking_id bigint, first tstzrange, room bigint)
     ; CREATE TABLE stress_rooms (n int NOT NULL, id bigint NOT NULL)
     ; INSERT INTO stress_rooms SELECT n, booking.create_resource('lesson room ' || n) FROM generate_series(1, 3) n
     ; SELECT booking.set_time_zone(id, (ARRAY['Europe/Paris', 'America/New_York', 'Australia/Sydney'])[n]) FROM stress_rooms" >/dev/null || exit 1

run_pgbench "series" -c 64 -j 2 -t "$ATTEMPTS" -f series_race.pgb
echo "# series answers: $(sql "SELECT string_agg(code || '=' || n, ', ' ORDER BY code) FROM (SELECT code, count(*) n FROM stress_log GROUP BY code) s")"

check_true "some series were booked, and far more were refused" \
	"SELECT count(*) FILTER (WHERE code = 'ok') > 0 AND count(*) FILTER (WHERE code <> 'ok') > 10 * count(*) FILTER (WHERE code = 'ok') FROM stress_log"
check "every answer is ok, unavailable, just_taken or busy" \
	"SELECT count(*) FROM stress_log WHERE code NOT IN ('ok', 'unavailable', 'just_taken', 'busy')" 0
check "every group holds exactly 52 blocking occurrences (never a partial series)" \
	"SELECT count(*) FROM (SELECT group_id FROM booking.bookings GROUP BY group_id
	  HAVING count(*) <> 52 OR count(*) FILTER (WHERE status IN ('pending', 'confirmed')) <> 52) g" 0
check "one group per ok answer, and no booking outside them" \
	"SELECT (SELECT count(DISTINCT group_id) FROM booking.bookings) = (SELECT count(*) FROM stress_log WHERE code = 'ok')
	    AND (SELECT count(*) FROM booking.bookings) = 52 * (SELECT count(*) FROM stress_log WHERE code = 'ok')
	    AND (SELECT count(*) FROM stress_log l JOIN booking.bookings b ON b.id = l.booking_id AND b.group_id = l.booking_id
	          AND b.during = l.first WHERE l.code = 'ok') = (SELECT count(*) FROM stress_log WHERE code = 'ok')" t
check "zero overlapping blocking pairs" \
	"SELECT count(*) FROM booking.bookings a JOIN booking.bookings b
	   ON a.resource_id = b.resource_id AND a.id < b.id AND a.during && b.during
	 WHERE a.status IN ('pending', 'confirmed') AND b.status IN ('pending', 'confirmed')" 0
check "every occurrence starts at its first's local time and weekday, one week after the one before" \
	"SELECT count(*) FROM booking.bookings b JOIN booking.bookings f ON f.id = b.group_id
	   JOIN booking.resources r ON r.id = b.resource_id,
	   LATERAL (SELECT lower(b.during) AT TIME ZONE r.time_zone AS b_local, lower(f.during) AT TIME ZONE r.time_zone AS f_local) l
	 WHERE l.b_local::time <> l.f_local::time OR extract(isodow FROM l.b_local) <> extract(isodow FROM l.f_local)
	    OR upper(b.during) - lower(b.during) NOT IN (interval '1 hour')
	    OR (l.b_local::date - l.f_local::date) % 7 <> 0" 0
check_true "some series crossed a change of the clocks (UTC offsets differ within a group)" \
	"SELECT count(*) > 0 FROM (SELECT b.group_id FROM booking.bookings b GROUP BY b.group_id
	   HAVING count(DISTINCT (lower(b.during) AT TIME ZONE 'UTC')::time) > 1) g"

stress_done
