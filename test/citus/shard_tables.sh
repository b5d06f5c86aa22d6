#!/usr/bin/env bash
# shard_tables.sh: a twin that holds its shard on this node runs the sale's
# writes on the shard's own tables, not through Citus's planner and local
# executor (src/1_ground/shardplan.c), and tells Citus what its local
# execution would have:
#   - the seat sale's take and booking row, and its event, run on the
#     shard's tables: with citus.log_local_commands on, Citus logs no local
#     command of theirs (it logs every statement it runs locally);
#   - the sale is right: ok, one booking, the counter moved by one, one event;
#   - in one transaction on the worker, a query of Citus's over every shard
#     that follows the sale sees its booking (Citus keeps to local execution
#     for this node's shards once told, instead of a connection that cannot
#     see the uncommitted row);
#   - a transaction on the worker that writes there and through Citus on
#     the other worker commits with two phases (PREPARE TRANSACTION on the
#     other worker: citus.log_remote_commands);
#   - a transaction that reached this node's shards through a connection
#     first is refused at the sale's row lock with a clear error, not a
#     distributed deadlock, and nothing is written;
#   - in one coordinator session, sales before, between and after the
#     shard's move away and back (a new table on w1) answer ok;
#   - the counter and the bookings agree;
#   - with 200 shards (more than the 128 plans a backend keeps), one
#     session's sales on every home answer ok, each on its own counter.
# On PostgreSQL 16 and later Citus hides the functions booking needs to ask
# and tell it: the sale must then go through Citus's local executor, and the
# refusal is not checked (booking cannot tell that a connection was used).
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

citus_db booking_citus_shard_tables
if rehearsal; then
	echo "# REHEARSAL: no shard to run on"
	pass "rehearsal: nothing to check"
	citus_done
fi
q "SELECT booking.add_consumer('shard_tables')" >/dev/null
here=$(resource_on w1 'shard tables here' 100) || { fail "a resource on w1"; citus_done; }
there=$(resource_on w2 'shard tables there' 100) || { fail "a resource on w2"; citus_done; }
home_here=$(q "SELECT home FROM booking.resources WHERE id = $here")
home_there=$(q "SELECT home FROM booking.resources WHERE id = $there")
echo "# resource $here on w1 (home $home_here), $there on w2 (home $home_there)"

# twin CALLS...: psql on w1 with Citus's logs of what it runs, the output with its notices
w1() {
	npsql w1 -At -d "$CITUS_DB" -c "SET citus.log_local_commands = on" -c "SET citus.log_remote_commands = on" "$@" 2>&1
}
twin="booking.shard_reserve_seat($here, 'GUEST', 1, NULL, NULL, NULL, NULL, $home_here)"

# Citus built for PostgreSQL 16 or later hides the functions booking asks
# and tells (modules are built with hidden symbols there): the sale then
# goes through Citus's local executor, as before
hidden=$(qn w1 "SELECT current_setting('server_version_num')::int >= 160000")
out=$(w1 -c "SELECT code FROM ${twin/GUEST/direct}")
echo "$out" | sed 's/^/#   /'
check_eq "the sale on w1 answers ok" "$(echo "$out" | grep -v NOTICE | tail -1)" ok
local_commands=$(echo "$out" | grep -c 'executing the command locally: .*\(resources\|bookings\|events\)_')
if [ "$hidden" = t ]; then
	check_true "Citus hides its functions here: the sale goes through Citus's local executor" \
		"SELECT $local_commands > 0"
else
	check_eq "no statement of the sale goes through Citus's local executor" "$local_commands" 0
fi
check "one booking, seen by the coordinator" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $here AND guest = 'direct' AND status = 'confirmed'" 1
check "the counter moved by one" "SELECT taken FROM booking.resources WHERE id = $here" 1
check "one event of the sale" \
	"SELECT count(*) FROM booking.events e JOIN booking.bookings b ON b.home = e.home AND b.id = e.booking_id
	  WHERE b.guest = 'direct' AND e.kind = 'reserved'" 1

# the same transaction reads it back through Citus, over every shard
out=$(w1 -c "BEGIN" -c "SELECT code FROM ${twin/GUEST/read back}" \
	-c "SELECT 'seen', count(*) FROM booking.bookings WHERE guest = 'read back'" -c "COMMIT")
echo "$out" | grep -v NOTICE | sed 's/^/#   /'
check_eq "a query over every shard after the sale, in its transaction, sees its booking" \
	"$(echo "$out" | grep '^seen|')" "seen|1"

# a sale here and a write on w2 in one transaction: two-phase commit
out=$(w1 -c "BEGIN" -c "SELECT code FROM ${twin/GUEST/both}" \
	-c "UPDATE booking.resources SET name = name WHERE home = $home_there AND id = $there" -c "COMMIT")
check_eq "a sale here and a write on w2 commit with two phases" \
	"$(echo "$out" | grep -c 'PREPARE TRANSACTION')" 1
check "its booking is there" "SELECT count(*) FROM booking.bookings WHERE resource_id = $here AND guest = 'both'" 1

# this node's shards reached through a connection first (local execution
# off for one statement, then on again): Citus's statements then go through
# that connection, so nothing of the sale may lock the row in this backend
# (it did: a distributed deadlock with itself after seconds).  The sale's
# lock refuses at once, with a clear error, and nothing is written.
if [ "$hidden" = t ]; then
	echo "# skipped: booking cannot ask Citus here whether a connection reached this node's shards"
else
out=$(w1 -c "BEGIN" -c "SET LOCAL citus.enable_local_execution = off" \
	-c "SELECT count(*) FROM booking.resources WHERE home = $home_here AND id = $here" \
	-c "SET LOCAL citus.enable_local_execution = on" \
	-c "SELECT code FROM ${twin/GUEST/connected}" \
	-c "COMMIT")
echo "$out" | grep -v 'NOTICE\|DETAIL' | sed 's/^/#   /'
check_eq "after a connection to this node, a sale that must lock the row is refused at once" \
	"$(echo "$out" | grep -c 'ERROR:  booking cannot lock a row of this node.s shards in a transaction that reached them through a connection')" 1
check_eq "... not by a distributed deadlock" "$(echo "$out" | grep -c deadlock)" 0
check "... and nothing is written" "SELECT count(*) FROM booking.bookings WHERE resource_id = $here AND guest = 'connected'" 0
fi

# one coordinator session (its connection to w1 kept, so the same backend
# there): a sale, the shard moved to w2 and back (a new table on w1), a sale
# after each; the kept plan of the old table must not be used
shard=$(shard_of "$here")
w1port=$(citus_port w1)
w2port=$(citus_port w2)
out=$(npsql coord -At -d "$CITUS_DB" 2>&1 <<SQL
SELECT code, pg_backend_pid() FROM booking.reserve_seat($here, 'moved 1');
SELECT citus_move_shard_placement($shard, '127.0.0.1', $w1port, '127.0.0.1', $w2port, shard_transfer_mode => 'block_writes');
SELECT code FROM booking.reserve_seat($here, 'moved 2');
SELECT citus_move_shard_placement($shard, '127.0.0.1', $w2port, '127.0.0.1', $w1port, shard_transfer_mode => 'block_writes');
SELECT code FROM booking.reserve_seat($here, 'moved 3');
SQL
)
echo "$out" | sed 's/^/#   /'
check_eq "sales before, between and after a move away and back answer ok" \
	"$(echo "$out" | grep -c '^ok')" 3
check_eq "the shard is back on w1" "$(worker_of "$here")" w1
check "the three bookings are there" \
	"SELECT count(*) FROM booking.bookings WHERE resource_id = $here AND guest LIKE 'moved %'" 3

check "the counter and the bookings agree" \
	"SELECT taken = (SELECT count(*) FROM booking.bookings WHERE resource_id = $here AND status = 'confirmed')
	   FROM booking.resources WHERE id = $here" t

# more shards on a node than the plans a backend keeps (128): 200 shards,
# and one coordinator session that sells once on every home (its connection
# to each worker kept, so one backend there sees its 100 shards, with a
# consumer two statements each).  The kept plans are dropped as they fill
# and made again; every sale answers ok, on its own counter, with its event.
citus_db booking_citus_shard_plans 200
q "SELECT booking.add_consumer('shard_plans')" >/dev/null
q "SELECT count(booking.create_resource('plans ' || i, 10)) FROM generate_series(1, 1000) i" >/dev/null
ids=$(q "SELECT min(id) FROM booking.resources GROUP BY home ORDER BY 1")
homes=$(echo "$ids" | wc -l)
echo "# a resource on each of $homes homes"
check_eq "a resource on every one of the 200 homes" "$homes" 200
out=$(for id in $ids; do echo "SELECT code FROM booking.reserve_seat($id, 'plans', 1);"; done |
	npsql coord -At -d "$CITUS_DB" 2>&1)
check_eq "one session's sales on 200 homes answer ok" "$(echo "$out" | grep -c '^ok$')" 200
echo "$out" | grep -v '^ok$' | head -5 | sed 's/^/#   /'
check "each sold counter moved by one, no other" \
	"SELECT count(*) FILTER (WHERE taken = 1) || ' ' || count(*) FILTER (WHERE taken > 1)
	   FROM booking.resources" "200 0"
check "one booking and one event per sale, on the sale's own resource" \
	"SELECT count(DISTINCT b.resource_id) || ' ' || count(e.id) FROM booking.bookings b
	   JOIN booking.events e ON e.home = b.home AND e.booking_id = b.id AND e.resource_id = b.resource_id
	  WHERE b.guest = 'plans'" "200 200"
citus_done
