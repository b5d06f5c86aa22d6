#!/usr/bin/env bash
# move_race.sh: a call waits for its resource row while the row's shard
# moves to the other worker.  X, through the coordinator, takes a seat in a
# transaction it keeps open, so the sale's row stays locked; Y's
# reserve_seat, through the coordinator, runs on the shard's node and waits
# for the row; the shard then moves (logical replication), and its switch
# over to the new node waits for X.  Once the move is waiting, X commits.
# Y must then sell on the shard's new node, with its booking seen by the
# coordinator, or answer retry having written nothing; never answer ok for a
# row written to the shard left behind; and X's seat must be there after the
# move.  Repeated with CITUS_MOVE_RACE_ROUNDS rounds (default 2, the shard
# moving back and forth).
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

ROUNDS=${CITUS_MOVE_RACE_ROUNDS:-2}
# synchronous_commit = on: with off, a sale that commits at the instant of the
# switch over can be lost (Citus takes the point its copy must catch up to
# from pg_current_wal_lsn(), the WAL written so far, which an asynchronous
# commit may not have reached yet; seen here: X's seat gone after the move)
BOOKING_CITUS_SYNC=on citus_db booking_citus_move_race
if rehearsal; then
	echo "# REHEARSAL: no shard to move"
	pass "rehearsal: nothing to check"
	citus_done
fi

q "CREATE TABLE move_flag (round int PRIMARY KEY)" >/dev/null
sale=$(q "SELECT booking.create_resource('moving sale', 100)")
shard=$(shard_of "$sale")

for round in $(seq 1 "$ROUNDS"); do
	from=$(worker_of "$sale")
	to=w1
	[ "$from" = w1 ] && to=w2
	echo "# round $round: resource $sale, shard $shard, from $from to $to"

	# the move; its switch over comes after the copy of the shard
	q "SELECT citus_move_shard_placement($shard, '127.0.0.1', $(citus_port "$from"), '127.0.0.1', $(citus_port "$to"),
		shard_transfer_mode => 'force_logical')" >"$CITUS_TMP/move.$round" 2>&1 &
	m=$!
	CITUS_BG_PIDS="$CITUS_BG_PIDS $m"
	# once its replication slot exists (making it waited for the running
	# transactions), X and Y can keep the row across the switch over
	for _ in $(seq 1 300); do
		[ "$(qn "$from" "SELECT count(*) FROM pg_replication_slots")" = 0 ] || break
		sleep 0.05
	done

	# X: one seat, then the transaction stays open until the flag is set
	npsql coord -At -d "$CITUS_DB" >"$CITUS_TMP/x.$round" 2>&1 <<SQL &
BEGIN;
SELECT code FROM booking.reserve_seat($sale, 'x $round');
DO \$\$ BEGIN
	WHILE NOT EXISTS (SELECT 1 FROM move_flag WHERE round = $round) LOOP
		PERFORM pg_catalog.pg_sleep(0.05);
	END LOOP;
END \$\$;
COMMIT;
SQL
	x=$!
	CITUS_BG_PIDS="$CITUS_BG_PIDS $x"
	for _ in $(seq 1 200); do
		[ "$(q "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%move_flag WHERE round%' AND pid <> pg_backend_pid()")" = 0 ] || break
		sleep 0.05
	done

	# Y: waits for the row (X holds it) on the shard's node
	npsql coord -At -d "$CITUS_DB" -F ' ' -c "SELECT code, coalesce(booking_id, 0) FROM booking.reserve_seat($sale, 'y $round', 1, NULL, NULL, '60 seconds')" \
		>"$CITUS_TMP/y.$round" 2>&1 &
	y=$!
	CITUS_BG_PIDS="$CITUS_BG_PIDS $y"
	sleep 0.5

	# the switch over waits for X's lock on the shard's metadata
	waited=0
	for _ in $(seq 1 300); do
		n=0
		for node in coord w1 w2; do
			n=$((n + $(qn "$node" "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 8 AND mode = 'ExclusiveLock' AND NOT granted")))
		done
		if [ "$n" != 0 ]; then
			waited=1
			break
		fi
		sleep 0.1
	done
	check_eq "round $round: the move's switch over waits for the open sale" "$waited" 1
	q "INSERT INTO move_flag VALUES ($round)" >/dev/null
	wait "$x"; xrc=$?
	wait "$m"; mrc=$?
	wait "$y"; yrc=$?
	CITUS_BG_PIDS=
	check_eq "round $round: X's seat and commit" "$xrc $(head -1 "$CITUS_TMP/x.$round")" "0 ok"
	check_eq "round $round: the move succeeded" "$mrc" 0
	[ "$mrc" = 0 ] || sed 's/^/#   /' "$CITUS_TMP/move.$round"
	check_eq "round $round: the shard is now on $to" "$(worker_of "$sale")" "$to"
	read -r ycode yid <"$CITUS_TMP/y.$round"
	echo "# round $round: Y answered $(cat "$CITUS_TMP/y.$round")"
	check_eq "round $round: Y answered ok or retry, no error" \
		"$yrc $( [ "$ycode" = ok ] || [ "$ycode" = retry ] && echo answered)" "0 answered"
	if [ "$ycode" = ok ]; then
		check "round $round: Y's booking is on the resource, seen by the coordinator" \
			"SELECT count(*) FROM booking.bookings WHERE id = $yid AND resource_id = $sale AND guest = 'y $round'" 1
	else
		check "round $round: Y wrote nothing" \
			"SELECT count(*) FROM booking.bookings WHERE resource_id = $sale AND guest = 'y $round'" 0
	fi
	check_invariants "round $round"
	check "round $round: X's seat, sold on the node the shard left, is on the resource" \
		"SELECT count(*) FROM booking.bookings WHERE resource_id = $sale AND guest = 'x $round' AND status = 'confirmed'" 1
done

# (0.9.0) A twin that runs on the node a shard left, its old table still
# there until Citus's cleanup (the coordinator routed the call before the
# switch over and it arrived after; here the twin is called on that node in
# a statement Citus does not delegate, so it runs there): it answers retry
# and writes nothing, into the old table or anywhere
from=$(worker_of "$sale")
to=w1
[ "$from" = w1 ] && to=w2
q "SELECT citus_move_shard_placement($shard, '127.0.0.1', $(citus_port "$from"), '127.0.0.1', $(citus_port "$to"),
	shard_transfer_mode => 'force_logical')" >/dev/null
home=$(q "SELECT home FROM booking.resources WHERE id = $sale")
bshard=$(q "SELECT get_shard_id_for_distribution_column('booking.bookings', $home)")
# the old tables are read first (a lock on them to the end), in the
# transaction that calls the twin and then counts what it wrote there:
# Citus's deferred cleanup drops them at a moment of its own, once between
# the call and a later count (Citus refuses LOCK TABLE on a shard)
out=$(qn "$from" "BEGIN;
	SELECT 'old tables there' WHERE (SELECT count(*) FROM booking.resources_$shard) >= 0
	  AND (SELECT count(*) FROM booking.bookings_$bshard) >= 0;
	SELECT r.code FROM generate_series(1, 1), booking.shard_reserve_seat($sale, 'left behind', 1, NULL, NULL, NULL, NULL, $home) r;
	SELECT count(*) FROM booking.bookings_$bshard WHERE guest = 'left behind';
	COMMIT" 2>&1)
echo "# the twin on $from, which the shard left: $(echo "$out" | tr '\n' ' ')"
if [ "$(echo "$out" | head -1)" = "old tables there" ]; then
	check_eq "a twin on the node the shard left, its old table still there, answers retry" \
		"$(echo "$out" | sed -n 2p)" retry
	check_eq "nothing written into the old table of the shard on $from" "$(echo "$out" | sed -n 3p)" 0
else
	fail "a twin on the node the shard left, its old table still there, answers retry (the old table was gone: $out)"
fi
check "the twin on the node the shard left wrote nothing" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $sale AND guest = 'left behind'" 0

check_invariants "at the end"
citus_done
