#!/usr/bin/env bash
# worker_down.sh (suite item 6): a worker dies during a sale.  32 pgbench
# clients buy seats of two sales (one resource on each worker), book stays
# on four rooms (two on each worker) and groups of two rooms over both
# workers (two-phase commits), through the coordinator.  After a few seconds
# worker w1 is stopped with pg_ctl stop -m immediate, and started again a
# few seconds later.  Checks:
#  - no raw error escapes but at the instant w1 dies: each call runs in a
#    transaction of its own; one at work on w1 when it dies fails (at its
#    COMMIT, or in the call when the connection drops under it, with
#    Citus's own error; shown and counted), and the coordinator logs no
#    error at any other time of the sale; every answer is a documented code;
#  - while w1 was down, every call for its resources answered busy (503)
#    (also one made by a client connected to w2),
#    and w2's sale kept selling; hold_expire() answered and warned of the
#    shards it skipped; after the restart w1's sale sells again;
#  - afterwards, with synchronous_commit on: every ok answer's booking is
#    there, every counter equals its bookings, nothing is over capacity, no
#    stays overlap, every group is all or nothing, and no node holds a
#    prepared transaction after recover_prepared_transactions().
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

BEFORE=${CITUS_FAULT_BEFORE:-5}	# seconds of selling before the stop (connecting 32 clients takes 2-3 s)
DOWN=${CITUS_FAULT_DOWN:-5}		# seconds w1 stays down
AFTER=${CITUS_FAULT_AFTER:-20}	# seconds of selling after the restart began (crash recovery takes some)
# ok answers must survive the crash: commits wait for the WAL flush here
BOOKING_CITUS_SYNC=on citus_db booking_citus_worker_down

seat1=$(resource_on w1 'sale on w1' 1000000) && seat2=$(resource_on w2 'sale on w2' 1000000) &&
	room1=$(resource_on w1 'room a on w1') && room2=$(resource_on w1 'room b on w1') &&
	room3=$(resource_on w2 'room c on w2') && room4=$(resource_on w2 'room d on w2') ||
	{ fail "a sale and two rooms on each worker"; citus_done; }
echo "# w1: sale $seat1, rooms $room1 $room2; w2: sale $seat2, rooms $room3 $room4"
w1_rooms="$room1, $room2"

# Every client at work on w1 when it dies is stopped by pgbench; when that
# is all of them (the hot seat's waiters alone can be), pgbench ends early,
# so the sale is started again until its time is up.  Each run appends its
# report; the file's first line counts the runs.
sale() {
	local end=$(($(date +%s) + BEFORE + DOWN + AFTER)) left runs=0
	while left=$((end - $(date +%s))) && [ "$left" -ge 1 ]; do
		runs=$((runs + 1))
		citus_pgbench -c "${CITUS_FAULT_CLIENTS:-32}" -j 2 -T "$left" \
			-D seat1="$seat1" -D seat2="$seat2" -D room1="$room1" -D room2="$room2" -D room3="$room3" -D room4="$room4" \
			-f fault_seat.pgb@6 -f fault_stay.pgb@2 -f fault_group.pgb@2 >>"$CITUS_TMP/pgbench.runs" 2>&1
	done
	echo "$runs" >"$CITUS_TMP/pgbench.count"
}
t_sale=$(q "SELECT clock_timestamp()")
: >"$CITUS_TMP/pgbench.runs"
sale &
bench=$!
CITUS_BG_PIDS="$CITUS_BG_PIDS $bench"
sleep "$BEFORE"
if rehearsal; then
	echo "# REHEARSAL: no worker to stop"
	sleep "$DOWN"
	t_stop=$(q "SELECT clock_timestamp() - interval '$DOWN s'")
	t_start=$(q "SELECT clock_timestamp()")
	t_started=$t_start
else
	t_stop=$(q "SELECT clock_timestamp()")
	if citus_node_stop w1 immediate; then pass "w1 stopped with pg_ctl stop -m immediate during the sale"
	else fail "w1 stopped with pg_ctl stop -m immediate during the sale"; fi
	sleep 1
	# the expiry goes on for the shards that can be reached
	if out=$(npsql coord -At -d "$CITUS_DB" -c "SELECT booking.hold_expire()" 2>&1) &&
		[[ $out == *WARNING:* ]]; then
		pass "while w1 is down, hold_expire() answers and warns of the shards it skipped"
	else
		fail "while w1 is down, hold_expire() answers and warns of the shards it skipped"
	fi
	echo "$out" | sed 's/^/#   /'
	# a client connected to the other worker is answered the same way
	out=$(qn w2 "SELECT code FROM booking.reserve_seat($seat1, 'from w2', 1)" 2>&1)
	if [ "$out" = busy ]; then pass "while w1 is down, reserve_seat made on w2 for w1's seat answers busy"
	else fail "while w1 is down, reserve_seat made on w2 for w1's seat answers busy (got: $out)"; fi
	# (0.9.0) a call that is a statement of its own takes the direct route,
	# which asks the node first: busy too, with no warning or error shown
	out=$(q "SELECT code FROM booking.reserve_seat($seat1, 'direct', 1)" 2>&1)
	if [ "$out" = busy ]; then pass "while w1 is down, reserve_seat alone on the coordinator (the direct route) answers busy, and only that"
	else fail "while w1 is down, reserve_seat alone on the coordinator (the direct route) answers busy, and only that (got: $out)"; fi
	sleep $((DOWN - 1))
	t_start=$(q "SELECT clock_timestamp()")
	if citus_node_start w1; then pass "w1 started again"; else fail "w1 started again"; fi
	t_started=$(q "SELECT clock_timestamp()")
	echo "# w1 took $(q "SELECT round(extract(epoch FROM timestamptz '$t_started' - timestamptz '$t_start'), 1)") s to start again"
fi
wait "$bench"
CITUS_BG_PIDS=
runs=$(cat "$CITUS_TMP/pgbench.count" 2>/dev/null || echo 0)
mv "$CITUS_TMP/pgbench.runs" "$CITUS_TMP/pgbench.out"
t_sale_end=$(q "SELECT clock_timestamp()")
# A transaction at work on w1 when it dies cannot commit: its call answers
# busy and Citus then refuses the COMMIT, or, when the connection is lost
# while the call waits for w1's answer, the call fails with Citus's error
# (libpq's message, XX000).  pgbench stops such a client.  Every other call
# must answer: no error at all in the coordinator's log during the sale
# except in the 2 s after the stop.  The index of the COMMIT in each script
# (its \set lines count): fault_seat 4, fault_stay 6, fault_group 9.
label="sale, stays and groups with w1 down for ${DOWN} s"
echo "# $label: $(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$CITUS_TMP/pgbench.out" | awk '{ s += $1 } END { print s + 0 }') transactions in $runs pgbench run(s)"
[ "$runs" -gt 1 ] && echo "# pgbench was started again $((runs - 1)) time(s): every client of a run had stopped as w1 died"
check_eq "$label: every pgbench run ended with its report" \
	"$(grep -c '^number of transactions actually processed' "$CITUS_TMP/pgbench.out")" "$runs"
aborts=$(grep -E 'client [0-9]+ script [0-9]+ aborted in command [0-9]+' "$CITUS_TMP/pgbench.out")
commits='script 0 aborted in command 4 |script 1 aborted in command 6 |script 2 aborted in command 9 '
echo "# clients stopped as w1 died: $(echo "$aborts" | grep -cE "$commits") at COMMIT, $(echo "$aborts" | grep -vE "$commits" | grep -c aborted) in the call"
echo "$aborts" | grep aborted | sed -E 's/.*script ([0-9]) aborted in command ([0-9]+) query 0: /script \1 command \2: /' | sort | uniq -c | sed 's/^/#   /'
stamp() { q "SELECT to_char(($1) AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')"; }
from=$(stamp "timestamptz '$t_stop'")
upto=$(stamp "timestamptz '$t_stop' + interval '2 s'")
begin=$(stamp "timestamptz '$t_sale'")
end=$(stamp "timestamptz '$t_sale_end'")
errors=$(awk -v b="$begin" -v f="$from" -v u="$upto" -v e="$end" \
	'/ ERROR: / { t = $1 " " $2; if (t >= b && t <= e && (t < f || t > u)) print }' "$CITUS_DIR/coord/server.log")
check_eq "$label: no error on the coordinator during the sale but in the 2 s after w1 died" "$(echo -n "$errors" | grep -c ERROR)" 0
[ -n "$errors" ] && echo "$errors" | head -n 5 | sed 's/^/#   /'
failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$CITUS_TMP/pgbench.out" | awk '{ s += $1 } END { print s + 0 }')
check_eq "$label: 0 failed transactions" "${failed:-none reported}" 0
answers "seat" "kind = 'seat'"
answers "stay" "kind = 'stay'"
answers "group" "kind = 'group'"

# the window in which w1 was surely down: from a second after the stop (an
# answer logged just after the stop may come from a call that ended before
# it) to the restart
down="at BETWEEN timestamptz '$t_stop' + interval '1 s' AND timestamptz '$t_start'"
echo "# while w1 was down: seats of w1 $(q "SELECT coalesce(string_agg(code || '=' || n, ', '), 'none') FROM (SELECT code, count(*) n FROM citus_log WHERE kind = 'seat' AND resource_id = $seat1 AND $down GROUP BY code) s");" \
	"seats of w2 $(q "SELECT coalesce(string_agg(code || '=' || n, ', '), 'none') FROM (SELECT code, count(*) n FROM citus_log WHERE kind = 'seat' AND resource_id = $seat2 AND $down GROUP BY code) s")"
echo "# w1's sale: $(q "SELECT string_agg(phase || ' ' || codes, '; ' ORDER BY phase) FROM (
	SELECT phase, string_agg(code || '=' || n, ', ' ORDER BY code) AS codes FROM (
	  SELECT CASE WHEN at < '$t_stop' THEN '1 before' WHEN at <= '$t_start' THEN '2 down' WHEN at <= '$t_started' THEN '3 restarting' ELSE '4 up again' END AS phase, code, count(*) n
	    FROM citus_log WHERE kind = 'seat' AND resource_id = $seat1 GROUP BY 1, 2) s GROUP BY phase) t")"
check "every answer is a documented code (seat: ok, busy; stay and group: ok, unavailable, just_taken, busy)" \
	"SELECT count(*) FROM citus_log WHERE (kind = 'seat' AND code NOT IN ('ok', 'busy'))
	    OR (kind IN ('stay', 'group') AND code NOT IN ('ok', 'unavailable', 'just_taken', 'busy'))" 0
if ! rehearsal; then
	check_true "while w1 was down, its sale answered busy, and only busy" \
		"SELECT count(*) > 0 AND bool_and(code = 'busy') FROM citus_log WHERE kind = 'seat' AND resource_id = $seat1 AND $down"
	check_true "while w1 was down, w2's sale sold" \
		"SELECT count(*) > 0 FROM citus_log WHERE kind = 'seat' AND resource_id = $seat2 AND code = 'ok' AND $down"
	check "while w1 was down, every stay on its rooms answered busy" \
		"SELECT count(*) FROM citus_log WHERE kind = 'stay' AND resource_id IN ($w1_rooms) AND code <> 'busy' AND $down" 0
	# a group whose room on w2 comes first and is taken may be refused
	# without asking w1; none can be booked
	check_true "while w1 was down, no group (each has a room on w1) was booked, and some answered busy" \
		"SELECT count(*) FILTER (WHERE code = 'ok') = 0 AND count(*) FILTER (WHERE code = 'busy') > 0
		   FROM citus_log WHERE kind = 'group' AND $down"
	check_true "while w1 was down, stays on w2's rooms were booked or refused by the calendar, never busy" \
		"SELECT count(*) FILTER (WHERE code = 'busy') = 0 FROM citus_log WHERE kind = 'stay' AND resource_id IN ($room3, $room4) AND $down"
fi
check_true "once w1 was up again, its sale sold again" \
	"SELECT count(*) > 0 FROM citus_log WHERE kind = 'seat' AND resource_id = $seat1 AND code = 'ok' AND at > timestamptz '$t_started'"

check_no_prepared "after the crash"
snapshot
check "every ok answer's booking is there, on its resource (seats and stays)" \
	"SELECT count(*) FROM citus_log l LEFT JOIN chk_bookings b ON b.id = l.booking_id AND b.resource_id = l.resource_id
	  WHERE l.kind IN ('seat', 'stay') AND l.code = 'ok' AND b.id IS NULL" 0
echo "# bookings without an ok answer (the call's outcome was lost with its connection): $(q "SELECT count(*) FROM chk_bookings b
	WHERE b.group_id IS NULL AND NOT EXISTS (SELECT 1 FROM citus_log l WHERE l.booking_id = b.id AND l.code = 'ok')")"
check "resources.taken equals the bookings of each sale" \
	"SELECT count(*) FROM chk_resources r WHERE r.id IN ($seat1, $seat2)
	   AND r.taken <> (SELECT count(*) FROM chk_bookings b WHERE b.resource_id = r.id)" 0
check "every ok group has its two rooms, with its guest and range" \
	"SELECT count(*) FROM citus_log l WHERE l.kind = 'group' AND l.code = 'ok'
	   AND (SELECT array_agg(b.resource_id ORDER BY b.resource_id) FROM chk_bookings b WHERE b.guest = l.guest AND b.during = l.during)
	       IS DISTINCT FROM (SELECT array_agg(x ORDER BY x) FROM unnest(l.rooms) x)" 0
check "every group in the tables is whole: both rooms of its attempt, or none (also the ones whose answer was lost)" \
	"SELECT count(*) FROM (SELECT b.guest, array_agg(b.resource_id ORDER BY b.resource_id) AS got
	                         FROM chk_bookings b WHERE b.guest LIKE 'group-%' GROUP BY b.guest) g
	   JOIN citus_log l ON l.guest = g.guest
	  WHERE g.got IS DISTINCT FROM (SELECT array_agg(x ORDER BY x) FROM unnest(l.rooms) x)" 0
check "no refused group left a row" \
	"SELECT count(*) FROM chk_bookings b JOIN citus_log l ON l.guest = b.guest AND l.code IN ('unavailable', 'just_taken')" 0
check_invariants "after the crash"

citus_done
