#!/usr/bin/env bash
# crash.sh: no crash loses or duplicates a booking.  On a cluster of its own
# (so the test cluster is not disturbed), with synchronous_commit on, so a
# commit's WAL is written before the client hears of it.  fsync is off: the
# faults here are process faults, after which the operating system still has
# everything written; surviving power loss is fsync's job, not the
# extension's.
#  1. A flash sale runs (pgbench, 64 clients: 1..4 seats, holds, confirms,
#     cancels on a 2,000-seat session, and on a striped one when the
#     installed version has stripes) beside a stay race (16 clients: stays
#     and two-room groups).  One backend that is running reserve_seat is
#     killed with SIGKILL.  The postmaster kills every backend and recovers.
#  2. The same load, stopped with `pg_ctl stop -m immediate`, then restarted.
# After each: every booking a client saw acknowledged is there, every seat
# counter equals the sum of its blocking bookings, no resource is over
# capacity, no two blocking stays overlap, every group has both rooms, the
# btree indexes check clean (amcheck with heapallindexed on every btree index
# of the extension's tables; the number checked is printed and must not be
# 0), and a new load runs with 0 failures and exact
# totals.  pgbench failures during the crash are expected and not counted.
set -u
cd "$(dirname "$0")" || exit 1
. ./lib.bash

CRASH_PORT=${BOOKING_CRASH_PORT:-$((${PGPORT:-54329} + 2))}
LOAD_SECONDS=${CRASH_LOAD_SECONDS:-10}

rel_cluster_start crash "$CRASH_PORT" "max_connections = 120" "shared_buffers = 128MB" \
	"restart_after_crash = on" "fsync = off" || { fail "start a cluster of its own on port $CRASH_PORT"; rel_done; }
pass "a cluster of its own on port $CRASH_PORT"
rel_db booking_rel_crash
q "CREATE EXTENSION amcheck" >/dev/null
striped=$(q "SELECT to_regproc('booking.set_stripes') IS NOT NULL")

# new_sale NAME: a 2,000-seat session (and a striped twin when available);
# prints "sale striped"
new_sale() {
	local sale st
	sale=$(q "SELECT booking.create_resource('$1', 2000)")
	st=$sale
	if [ "$striped" = t ]; then
		st=$(q "SELECT booking.create_resource('$1 striped', 2000)")
		q "SELECT code FROM booking.set_stripes($st, 8)" >/dev/null
	fi
	echo "$sale $st"
}

# pgbench_on OUT ARGS...: pgbench against the crash database, in the background
pgbench_on() {
	local out=$1
	shift
	"$REL_PGBIN/pgbench" -n -h "$REL_HOST" -p "$REL_PORT" -U postgres "$@" "$REL_DB" >"$out" 2>&1
}

# the acknowledged writer: one reserve_seat per connection, in a loop; each
# booking id the client receives is written down, to be found after the crash
acked_writer() {
	local res=$1 file=$2 stop=$3 id
	while [ ! -e "$stop" ]; do
		if id=$("$REL_PGBIN/psql" -X -At -h "$REL_HOST" -p "$REL_PORT" -U postgres -d "$REL_DB" \
			-c "SELECT booking_id FROM booking.reserve_seat($res, 'acked', 1)" 2>/dev/null) && [ -n "$id" ]; then
			echo "$id" >>"$file"
		else
			sleep 0.05
		fi
	done
}

# kill_victim: SIGKILLs a pgbench backend that is running reserve_seat right
# now, and prints its pid (not the acknowledged writer's: its short-lived
# connections may be gone before the signal arrives)
kill_victim() {
	local i pid
	for ((i = 0; i < 50; i++)); do
		pid=$(q "SELECT pid FROM pg_stat_activity
		          WHERE datname = '$REL_DB' AND backend_type = 'client backend' AND state = 'active'
		            AND application_name = 'pgbench' AND query LIKE '%reserve_seat%'
		          ORDER BY random() LIMIT 1" 2>/dev/null)
		if [ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; then
			echo "$pid"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

postmaster_pid() { head -n 1 "$REL_CDIR/data/postmaster.pid" 2>/dev/null; }

# check_indexes LABEL: amcheck's bt_index_check with heapallindexed on every
# btree index of the extension's tables and of their TOAST tables: the
# index's structure, and an index entry for every heap tuple.  It raises an
# error on the first corrupt index; it must also have checked some (a
# query that checks none passes whatever the indexes hold).
check_indexes() {
	local got n
	got=$(q "SELECT count(*), count(bt_index_check(i.indexrelid, true))
		   FROM pg_index i
		   JOIN pg_class ic ON ic.oid = i.indexrelid
		   JOIN pg_am am ON am.oid = ic.relam
		  WHERE am.amname = 'btree'
		    AND i.indrelid IN (SELECT c.oid FROM pg_class c
		                        WHERE c.relnamespace = 'booking'::regnamespace AND c.relkind = 'r'
		                       UNION ALL
		                       SELECT c.reltoastrelid FROM pg_class c
		                        WHERE c.relnamespace = 'booking'::regnamespace AND c.relkind = 'r'
		                          AND c.reltoastrelid <> 0)" 2>&1)
	n=${got%%|*}
	if [[ $got =~ ^[0-9]+\|[0-9]+$ ]] && [ "$n" -gt 0 ] && [ "$got" = "$n|$n" ]; then
		pass "$1: amcheck checked $n btree indexes of the extension's tables (bt_index_check, heapallindexed): all clean"
	else
		fail "$1: amcheck checks the btree indexes of the extension's tables (bt_index_check, heapallindexed) and finds them clean"
		echo "#   indexes found|checked: $got" | head -n 5
	fi
}

# run_phase NAME: the load, the fault, the recovery and the checks
run_phase() {
	local phase=$1 sale st room0 group0 acked ackfile stop pm_before victim rc1 rc2 n_acked log_from
	local w_pid p1 p2 before
	read -r sale st <<<"$(new_sale "sale $phase")"
	room0=$(q "SELECT min(id) - 1 FROM (SELECT booking.create_resource('room $phase ' || n) AS id FROM generate_series(1, 3) n) s")
	group0=$(q "SELECT min(id) - 1 FROM (SELECT booking.create_resource('family room $phase ' || n) AS id FROM generate_series(1, 4) n) s")
	acked=$(q "SELECT booking.create_resource('acked $phase', 1000000)")
	ackfile="$REL_TMP/acked.$phase"
	stop="$REL_TMP/stop.$phase"
	: >"$ackfile"
	log_from=$(stat -c %s "$REL_CDIR/server.log")
	pm_before=$(postmaster_pid)

	echo "# $phase: sale $sale (striped twin $st), rooms $((room0 + 1))..$((room0 + 3)), group rooms $((group0 + 1))..$((group0 + 4)), $LOAD_SECONDS s of load"
	pgbench_on "$REL_TMP/pgbench.$phase.seats" -c 64 -j 2 -T "$LOAD_SECONDS" -D sale="$sale" \
		-f crash_seat.pgb@6 -f crash_cancel.pgb@1 -f crash_confirm.pgb@1 &
	p1=$!
	pgbench_on "$REL_TMP/pgbench.$phase.striped" -c 8 -j 1 -T "$LOAD_SECONDS" -D sale="$st" \
		-f crash_seat.pgb@6 -f crash_cancel.pgb@1 &
	p2=$!
	pgbench_on "$REL_TMP/pgbench.$phase.stays" -c 16 -j 2 -T "$LOAD_SECONDS" -D room0="$room0" -D group0="$group0" \
		-f crash_stay.pgb@3 -f crash_group.pgb@1 &
	local p3=$!
	acked_writer "$acked" "$ackfile" "$stop" &
	w_pid=$!
	REL_BG_PIDS="$p1 $p2 $p3 $w_pid"
	sleep 3
	before=$(q "SELECT count(*) FROM booking.bookings WHERE resource_id IN ($sale, $st)")

	local start_before
	start_before=$(q "SELECT pg_postmaster_start_time()")
	if [ "$phase" = sigkill ]; then
		if victim=$(kill_victim); then
			pass "$phase: SIGKILL sent to backend $victim while it ran reserve_seat ($before sale bookings so far)"
		else
			fail "$phase: found a backend running reserve_seat to kill"
		fi
	else
		if as_postgres "$REL_PGBIN/pg_ctl" -D "$REL_CDIR/data" -m immediate -w stop >/dev/null 2>&1; then
			pass "$phase: pg_ctl stop -m immediate under load ($before sale bookings so far)"
		else
			fail "$phase: pg_ctl stop -m immediate under load"
		fi
		sleep 1
		rel_cluster_up || fail "$phase: restart after the immediate stop"
	fi

	if rel_wait_ready 60; then
		pass "$phase: the server accepts connections again"
	else
		fail "$phase: the server accepts connections again within 60 s"
		tail -n 20 "$REL_CDIR/server.log" | sed 's/^/#   /'
		return 1
	fi
	wait "$p1"; rc1=$?
	wait "$p2"
	wait "$p3"; rc2=$?
	touch "$stop"
	wait "$w_pid"
	REL_BG_PIDS=
	echo "# $phase: pgbench exit codes during the fault: seats $rc1, stays $rc2 (failures expected)"
	echo "# $phase: pg_postmaster_start_time() was $start_before, is $(q "SELECT pg_postmaster_start_time()")"

	if [ "$phase" = sigkill ]; then
		if tail -c +"$((log_from + 1))" "$REL_CDIR/server.log" | grep -q "server process (PID $victim) was terminated by signal 9" &&
			tail -c +"$((log_from + 1))" "$REL_CDIR/server.log" | grep -q "all server processes terminated; reinitializing"; then
			pass "$phase: the postmaster saw backend $victim die and reinitialized"
		else
			fail "$phase: the postmaster saw backend $victim die and reinitialized"
		fi
		if [ "$(postmaster_pid)" = "$pm_before" ]; then
			pass "$phase: the postmaster itself survived (pid $pm_before)"
		else
			fail "$phase: the postmaster itself survived (pid $pm_before, now $(postmaster_pid))"
		fi
	else
		if tail -c +"$((log_from + 1))" "$REL_CDIR/server.log" | grep -q "database system was interrupted\|not properly shut down; automatic recovery in progress"; then
			pass "$phase: the restart ran crash recovery"
		else
			fail "$phase: the restart ran crash recovery"
		fi
	fi

	n_acked=$(wc -l <"$ackfile")
	if [ "$n_acked" -gt 0 ]; then
		check "$phase: all $n_acked bookings acknowledged to a client are there, confirmed, once" \
			"SELECT count(DISTINCT id) FROM booking.bookings
			  WHERE resource_id = $acked AND status = 'confirmed'
			    AND id = ANY ('{$(paste -sd, "$ackfile")}'::bigint[])" "$n_acked"
	else
		fail "$phase: the acknowledged writer got at least one booking through"
	fi
	check "$phase: the acknowledged writer's resource holds no booking twice" \
		"SELECT count(*) - count(DISTINCT id) FROM booking.bookings WHERE resource_id = $acked" 0
	echo "# $phase: sale $(q "SELECT string_agg(status || '=' || n, ' ' ORDER BY status) FROM (SELECT status, sum(quantity) n FROM booking.bookings WHERE resource_id = $sale GROUP BY status) s") seats"

	check_invariants "$phase"
	check "$phase: every group has both of its rooms" \
		"SELECT count(*) FROM (SELECT group_id FROM booking.bookings WHERE group_id IS NOT NULL
		   GROUP BY group_id HAVING count(*) <> 2) s" 0
	check_indexes "$phase"

	# the load resumes: a fresh sale sells out exactly, stays race cleanly
	local fresh fresh_st r0 g0 out
	read -r fresh fresh_st <<<"$(new_sale "resume $phase")"
	r0=$(q "SELECT min(id) - 1 FROM (SELECT booking.create_resource('resume room $phase ' || n) AS id FROM generate_series(1, 3) n) s")
	g0=$(q "SELECT min(id) - 1 FROM (SELECT booking.create_resource('resume family room $phase ' || n) AS id FROM generate_series(1, 4) n) s")
	out="$REL_TMP/pgbench.$phase.resume"
	pgbench_on "$out" -c 64 -j 2 -t 40 -D sale="$fresh" -f crash_seat.pgb &
	p1=$!
	pgbench_on "$out.striped" -c 8 -j 1 -t 100 -D sale="$fresh_st" -f crash_seat.pgb &
	p2=$!
	pgbench_on "$out.stays" -c 16 -j 2 -t 20 -D room0="$r0" -D group0="$g0" -f crash_stay.pgb@3 -f crash_group.pgb@1
	rc2=$?
	wait "$p1"; rc1=$?
	wait "$p2"; local rc3=$?
	if [ "$rc1" -eq 0 ] && [ "$rc2" -eq 0 ] && [ "$rc3" -eq 0 ] &&
		grep -q '^number of failed transactions: 0 ' "$out" && grep -q '^number of failed transactions: 0 ' "$out.stays" &&
		grep -q '^number of failed transactions: 0 ' "$out.striped"; then
		pass "$phase: the load resumes: 2,560 + 800 seat attempts and 320 stay attempts, 0 failed transactions"
	else
		fail "$phase: the load resumes with 0 failed transactions (rc $rc1/$rc3/$rc2)"
		grep -hE 'failed|aborted|ERROR' "$out" "$out.striped" "$out.stays" | head -n 10 | sed 's/^/#   /'
	fi
	check "$phase: after the restart a fresh 2,000-seat sale sells exactly 2,000 seats" \
		"SELECT sum(quantity) FROM booking.bookings WHERE resource_id = $fresh AND status IN ('pending', 'confirmed')" 2000
	check "$phase: ... and its counter says 2,000 taken, 0 left" "SELECT booking.seats_left($fresh)" 0
	check_invariants "$phase, after the new load"
}

run_phase sigkill
run_phase immediate
echo "# postmaster start time now $(q "SELECT pg_postmaster_start_time()")"
rel_done
