#!/usr/bin/env bash
# distribute.sh: booking.distribute(), the set-up every other script relies
# on, and its refusals.
#  1. After CREATE EXTENSION booking CASCADE on the coordinator and SELECT
#     booking.distribute(): every table of schema booking is known to Citus
#     (distributed or reference) but secrets (0.8.0), which stays local, the distributed ones are co-located in 32
#     shards, placed on both workers and none on the coordinator; the
#     workers have the extension at the coordinator's version.  A second
#     distribute() succeeds and changes nothing.  Calls work at once, and
#     ids are unique cluster-wide without being assumed consecutive.
#  2. distribute() refuses, with an error that says why and nothing changed:
#     in a database without Citus; with Citus but no worker (then, once the
#     workers are added, distribute(8) gives 8 shards); on a single-node
#     install that already has data (it stays local and intact).
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

if rehearsal; then
	echo "# REHEARSAL: nothing to distribute"
	pass "rehearsal"
	citus_done
fi

# distributed_booking_tables: "name:method:colocation:shards" per table of
# schema booking that Citus knows, by name
distributed_booking_tables() {
	q "SELECT string_agg(c.relname || ':' || p.partmethod::text || ':' || p.colocationid || ':'
	                     || (SELECT count(*) FROM pg_dist_shard s WHERE s.logicalrelid = p.logicalrelid), ' ' ORDER BY c.relname)
	     FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
	    WHERE c.relnamespace = 'booking'::regnamespace"
}

########################################################################
# 1. the distributed install
########################################################################
citus_db booking_citus_distribute
tables=$(distributed_booking_tables)
echo "# tables (name:method:colocation:shards): $tables"
[ -n "$tables" ] || fail "read what Citus knows of the booking tables"
# booking.secrets (0.8.0), forget_guest's key, stays a table of the
# coordinator only: the coordinator makes the pseudonyms
check "every table of schema booking but secrets is distributed or a reference table; secrets is the coordinator's own" \
	"SELECT string_agg(relname, ' ' ORDER BY relname) FROM pg_class
	  WHERE relnamespace = 'booking'::regnamespace AND relkind IN ('r', 'p')
	    AND oid NOT IN (SELECT logicalrelid FROM pg_dist_partition)" "secrets"
check "resources, bookings, resource_stripes and idempotency_keys are known to Citus" \
	"SELECT count(*) FROM pg_dist_partition WHERE logicalrelid IN ('booking.resources'::regclass,
	   'booking.bookings'::regclass, 'booking.resource_stripes'::regclass, 'booking.idempotency_keys'::regclass)" 4
check "resources, bookings and resource_stripes are hash-distributed and co-located" \
	"SELECT count(DISTINCT colocationid) || ' ' || string_agg(DISTINCT partmethod::text, '') FROM pg_dist_partition
	  WHERE logicalrelid IN ('booking.resources'::regclass, 'booking.bookings'::regclass, 'booking.resource_stripes'::regclass)" "1 h"
check "every hash-distributed table of booking has 32 shards (the default)" \
	"SELECT string_agg(DISTINCT n::text, ' ') FROM (SELECT count(*) n FROM pg_dist_shard s JOIN pg_dist_partition p USING (logicalrelid)
	   JOIN pg_class c ON c.oid = p.logicalrelid WHERE c.relnamespace = 'booking'::regnamespace AND p.partmethod = 'h'
	   GROUP BY logicalrelid) s" 32
check "the shards of the distributed tables are on both workers and none on the coordinator" \
	"SELECT string_agg(DISTINCT n.nodeport::text, ' ' ORDER BY n.nodeport::text) FROM pg_dist_placement pl
	   JOIN pg_dist_shard s USING (shardid) JOIN pg_dist_partition p USING (logicalrelid)
	   JOIN pg_dist_node n ON n.groupid = pl.groupid JOIN pg_class c ON c.oid = p.logicalrelid
	  WHERE c.relnamespace = 'booking'::regnamespace AND p.partmethod = 'h'" "$(citus_port w1) $(citus_port w2)"
version=$(q "SELECT extversion FROM pg_extension WHERE extname = 'booking'")
echo "# booking $version; distributed functions: $(q "SELECT coalesce(string_agg(DISTINCT p.proname, ' '), 'none') FROM pg_dist_object o JOIN pg_proc p ON o.classid = 'pg_proc'::regclass AND o.objid = p.oid WHERE p.pronamespace = 'booking'::regnamespace")"
for node in w1 w2; do
	check_on "$node" "$node has booking $version" "SELECT extversion FROM pg_extension WHERE extname = 'booking'" "$version"
done
check "distribute() again succeeds" "SELECT 'done' FROM (SELECT booking.distribute()) s" done
check_eq "... and changes nothing Citus knows of the tables" "$(distributed_booking_tables)" "$tables"

ids=$(for i in $(seq 1 20); do q "SELECT booking.create_resource('resource $i', 10)"; done | paste -sd, -)
echo "# 20 resources: $ids"
check "20 resources, 20 distinct ids, each read back by id" \
	"SELECT count(*) || ' ' || count(DISTINCT id) FROM booking.resources WHERE id IN ($ids)" "20 20"
check_true "the 20 resources are spread over both workers" \
	"SELECT count(DISTINCT pl.nodeport) = 2 FROM booking.resources r
	   JOIN pg_dist_shard_placement pl ON pl.shardid = get_shard_id_for_distribution_column('booking.resources', r.home)
	  WHERE r.id IN ($ids)"
got=$(for id in ${ids//,/ }; do q "SELECT code FROM booking.reserve_seat($id, 'first', 1)"; done | sort | uniq -c | sed 's/^ *//')
check_eq "a seat of each answers ok" "$got" "20 ok"
check "20 bookings with distinct ids" "SELECT count(*) || ' ' || count(DISTINCT id) FROM booking.bookings" "20 20"
check "an unknown resource answers not_found" \
	"SELECT code FROM booking.reserve_seat((SELECT max(id) + 1000003 FROM booking.resources), 'nobody', 1)" not_found

########################################################################
# 2. refusals
########################################################################
# a database without Citus
nocitus=booking_citus_no_citus
CITUS_EXTRA_DBS="$CITUS_EXTRA_DBS $nocitus"
npsql coord -d postgres -c "CREATE DATABASE $nocitus" >/dev/null &&
	npsql coord -d "$nocitus" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE" >/dev/null ||
	fail "a database with booking and no Citus"
out=$(npsql coord -d "$nocitus" -c "SELECT booking.distribute()" 2>&1)
echo "$out" | sed 's/^/#   /'
if [[ $out == *ERROR:* ]] && echo "$out" | grep -qi 'citus'; then
	pass "without Citus, distribute() raises an error that names Citus"
else
	fail "without Citus, distribute() raises an error that names Citus"
fi
check_eq "... and the extension still works there" \
	"$(npsql coord -At -d "$nocitus" -c "SELECT code FROM booking.reserve_seat(booking.create_resource('local', 1), 'x')")" ok

# Citus without a worker
noworker=booking_citus_no_worker
CITUS_NO_BOOKING=1 citus_db "$noworker"
for node in w1 w2; do
	q "SELECT citus_remove_node('127.0.0.1', $(citus_port "$node"))" >/dev/null
done
check "a database with Citus and no worker" "SELECT count(*) FROM pg_dist_node WHERE noderole = 'primary' AND groupid <> 0" 0
npsql coord -d "$noworker" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE" >/dev/null ||
	fail "CREATE EXTENSION booking CASCADE with no worker"
out=$(npsql coord -d "$noworker" -c "SELECT booking.distribute()" 2>&1)
echo "$out" | sed 's/^/#   /'
if [[ $out == *ERROR:* ]] && echo "$out" | grep -qi 'worker'; then
	pass "with no worker, distribute() raises an error that names the workers"
else
	fail "with no worker, distribute() raises an error that names the workers"
fi
check "... and distributes nothing" \
	"SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::regclass::text LIKE 'booking.%'" 0
q "SELECT citus_add_node('127.0.0.1', $(citus_port w1))" >/dev/null &&
	q "SELECT citus_add_node('127.0.0.1', $(citus_port w2))" >/dev/null || fail "add the workers back"
check "once the workers are added, distribute(8) succeeds" "SELECT 'done' FROM (SELECT booking.distribute(8)) s" done
check "... with 8 shards per distributed table" \
	"SELECT string_agg(DISTINCT n::text, ' ') FROM (SELECT count(*) n FROM pg_dist_shard s JOIN pg_dist_partition p USING (logicalrelid)
	   JOIN pg_class c ON c.oid = p.logicalrelid WHERE c.relnamespace = 'booking'::regnamespace AND p.partmethod = 'h'
	   GROUP BY logicalrelid) s" 8
r=$(q "SELECT booking.create_resource('after distribute(8)', 3)")
check "... and a call works" "SELECT code FROM booking.reserve_seat($r, 'x', 3)" ok

# a single-node install that already has data
nonempty=booking_citus_non_empty
CITUS_NO_DISTRIBUTE=1 citus_db "$nonempty"
r=$(q "SELECT booking.create_resource('existing', 5)")
q "SELECT code FROM booking.reserve_seat($r, 'existing guest', 2)" >/dev/null
out=$(npsql coord -d "$nonempty" -c "SELECT booking.distribute()" 2>&1)
echo "$out" | sed 's/^/#   /'
if [[ $out == *ERROR:* ]]; then
	pass "on an install that has data, distribute() raises an error"
else
	fail "on an install that has data, distribute() raises an error"
fi
check "... and distributes nothing" \
	"SELECT count(*) FROM pg_dist_partition WHERE logicalrelid::regclass::text LIKE 'booking.%'" 0
check "... and the data is intact and usable" \
	"SELECT booking.seats_left($r) || ' ' || (SELECT count(*) FROM booking.bookings)" "3 1"

citus_done
