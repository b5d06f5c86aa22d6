# test/citus/lib.bash: sourced by the Citus suite (test/citus/run.sh and its
# scripts; not a test itself).
#
# The cluster: a coordinator and two workers on this machine, three data
# directories under one directory CITUS_DIR:
#
#     CITUS_DIR/ports                 "coord PORT", "w1 PORT", "w2 PORT"
#     CITUS_DIR/<node>/data           the node's data directory
#     CITUS_DIR/<node>/server.log     its log; the node's socket is CITUS_DIR/<node>
#
# Citus nodes talk to each other over TCP, so every node listens on
# 127.0.0.1 (and on its private socket, which psql and pgbench here use).
# Each node preloads citus and pg_stat_statements, allows prepared
# transactions (two-phase commit) and runs wal_level = logical (an online
# shard move with logical replication).
#
# A script runs in the cluster named by BOOKING_CITUS_DIR (test/citus/run.sh
# exports it); run alone, it starts a private cluster of its own on ports
# BOOKING_CITUS_PORT..+2 (default 54380) and stops it on exit.  Each script
# makes its own database on every node (citus_db), with Citus, the booking
# extension and booking.distribute(), and drops it on exit, also on failure.
#
# Every check prints one "ok - ..." / "not ok - ..." line; citus_done prints
# "N passed, N failed" and exits non-zero on any failure.

CITUS_PGBIN=${BOOKING_PG_BIN:-/usr/lib/postgresql/15/bin}
CITUS_NODES="coord w1 w2"
CITUS_PASSED=0
CITUS_FAILED=0
CITUS_DB=
CITUS_OWN_CLUSTER=
CITUS_BG_PIDS=""
CITUS_TMP=$(mktemp -d "${TMPDIR:-/tmp}/booking-citus-tmp.XXXXXX")
chmod 755 "$CITUS_TMP"

as_postgres() {
	if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

# citus_installed: Citus's control file is in this PostgreSQL's share dir
citus_installed() {
	[ -f "$("$CITUS_PGBIN/pg_config" --sharedir)/extension/citus.control" ]
}

# -- the cluster ---------------------------------------------------------------

# citus_port NODE: the node's port
citus_port() {
	awk -v n="$1" '$1 == n { print $2 }' "$CITUS_DIR/ports"
}

# citus_cluster_create BASEPORT: initdb and start the three nodes on
# BASEPORT, BASEPORT+1, BASEPORT+2; sets and exports CITUS_DIR
citus_cluster_create() {
	local base=$1 i=0 node port pids=() p rc=0
	CITUS_DIR=$(mktemp -d "${TMPDIR:-/tmp}/booking-citus.XXXXXX")
	export CITUS_DIR
	chmod 755 "$CITUS_DIR"
	: >"$CITUS_DIR/ports"
	for node in $CITUS_NODES; do
		port=$((base + i))
		i=$((i + 1))
		echo "$node $port" >>"$CITUS_DIR/ports"
		mkdir "$CITUS_DIR/$node"
		[ "$(id -u)" = 0 ] && chown postgres:postgres "$CITUS_DIR/$node"
		chmod 700 "$CITUS_DIR/$node"
		# the three initdb run side by side
		as_postgres "$CITUS_PGBIN/initdb" -D "$CITUS_DIR/$node/data" -U postgres --auth=trust \
			--no-sync -E UTF8 --locale=C.UTF-8 >"$CITUS_DIR/$node/initdb.log" 2>&1 &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p" || rc=1; done
	if [ "$rc" -ne 0 ]; then
		cat "$CITUS_DIR"/*/initdb.log
		return 1
	fi
	for node in $CITUS_NODES; do
		{
			echo "port = $(citus_port "$node")"
			echo "listen_addresses = '127.0.0.1'"
			echo "unix_socket_directories = '$CITUS_DIR/$node'"
			echo "shared_preload_libraries = 'citus,pg_stat_statements'"
			echo "max_connections = 300"
			echo "shared_buffers = 128MB"
			echo "max_prepared_transactions = 200"
			echo "max_worker_processes = 32"
			echo "wal_level = logical"
			echo "log_min_messages = warning"
			echo "log_timezone = 'UTC'"	# worker_down.sh reads the times in the log
			# the suite checks its own totals; a checkpoint in the middle
			# of a 2,000-seat sale only slows it down
			echo "checkpoint_timeout = 30min"
			echo "max_wal_size = 2GB"
		} >>"$CITUS_DIR/$node/data/postgresql.conf"
	done
	for node in $CITUS_NODES; do
		citus_node_start "$node" || return 1
	done
}

# citus_cluster_use DIR: the cluster in DIR (made by citus_cluster_create)
citus_cluster_use() {
	CITUS_DIR=$1
	export CITUS_DIR
	[ -f "$CITUS_DIR/ports" ] || { echo "not ok - $CITUS_DIR/ports: no Citus test cluster there"; return 1; }
}

# citus_cluster_destroy: stops the three nodes and removes CITUS_DIR
citus_cluster_destroy() {
	local node
	[ -n "${CITUS_DIR:-}" ] && [ -f "$CITUS_DIR/ports" ] || return 0
	for node in $CITUS_NODES; do
		[ -d "$CITUS_DIR/$node/data" ] &&
			as_postgres "$CITUS_PGBIN/pg_ctl" -D "$CITUS_DIR/$node/data" -m fast -w -t 60 stop >/dev/null 2>&1
		# a node that would not stop in a minute
		[ -f "$CITUS_DIR/$node/data/postmaster.pid" ] &&
			as_postgres "$CITUS_PGBIN/pg_ctl" -D "$CITUS_DIR/$node/data" -m immediate -w stop >/dev/null 2>&1
	done
	rm -rf "$CITUS_DIR"
	CITUS_DIR=
}

# citus_node_start NODE: (re)starts a node and waits until it answers
citus_node_start() {
	as_postgres "$CITUS_PGBIN/pg_ctl" -D "$CITUS_DIR/$1/data" -l "$CITUS_DIR/$1/server.log" -w -t 120 start >/dev/null ||
		{ tail -n 30 "$CITUS_DIR/$1/server.log"; return 1; }
}

# citus_node_stop NODE [MODE]: stops a node (default -m fast)
citus_node_stop() {
	as_postgres "$CITUS_PGBIN/pg_ctl" -D "$CITUS_DIR/$1/data" -m "${2:-fast}" -w -t 60 stop >/dev/null
}

# -- sessions ------------------------------------------------------------------

# npsql NODE ARGS...: psql on a node's socket, stop on the first error
npsql() {
	local node=$1
	shift
	"$CITUS_PGBIN/psql" -X -q -v ON_ERROR_STOP=1 -h "$CITUS_DIR/$node" -p "$(citus_port "$node")" -U postgres "$@"
}

# q QUERY: runs QUERY on the coordinator in the script's database; prints
# the result unaligned, tuples only
q() {
	npsql coord -At -d "$CITUS_DB" -c "$1"
}

# qn NODE QUERY: the same on any node
qn() {
	npsql "$1" -At -d "$CITUS_DB" -c "$2"
}

# gexec QUERY: runs each statement that QUERY returns, one by one (psql's
# \gexec), on the coordinator; prints their results.  Booking calls must be
# statements of their own: inside a query over a distributed table a call
# would be pushed down to the shards.
gexec() {
	printf '%s \\gexec\n' "$1" | npsql coord -At -d "$CITUS_DB"
}

# citus_pgbench ARGS...: pgbench against the coordinator, the script's database
citus_pgbench() {
	"$CITUS_PGBIN/pgbench" -n -h "$CITUS_DIR/coord" -p "$(citus_port coord)" -U postgres "$@" "$CITUS_DB"
}

# the worker that holds a shard, for a resource: "w1" or "w2" (by port)
# node_of_port PORT
node_of_port() {
	awk -v p="$1" '$2 == p { print $1 }' "$CITUS_DIR/ports"
}

# -- checks --------------------------------------------------------------------

pass() { echo "ok - $1"; CITUS_PASSED=$((CITUS_PASSED + 1)); }
fail() { echo "not ok - $1"; CITUS_FAILED=$((CITUS_FAILED + 1)); }

# check DESCRIPTION QUERY EXPECTED: the query's output (coordinator) must
# equal EXPECTED
check() {
	local got
	got=$(q "$2" 2>&1)
	if [ "$got" = "$3" ]; then
		pass "$1"
	else
		fail "$1"
		echo "#   expected: $3"
		echo "#   got:      $got" | head -n 20
	fi
}

# check_on NODE DESCRIPTION QUERY EXPECTED: the same on one node
check_on() {
	local got
	got=$(qn "$1" "$3" 2>&1)
	if [ "$got" = "$4" ]; then
		pass "$2"
	else
		fail "$2"
		echo "#   expected: $4"
		echo "#   got:      $got" | head -n 20
	fi
}

check_true() {
	check "$1" "$2" t
}

# check_eq DESCRIPTION GOT EXPECTED: two values computed by the script
check_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1"
		echo "#   expected: $3"
		echo "#   got:      $2" | head -n 20
	fi
}

# check_pgbench LABEL OUTFILE RC: pgbench exited 0, no client aborted, no
# transaction failed
check_pgbench() {
	local label=$1 out=$2 rc=$3 failed processed
	processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$out")
	failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$out")
	echo "# $label: ${processed:-?} transactions, $(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$out" | head -n 1) tps"
	if [ "$rc" -eq 0 ] && ! grep -q 'aborted' "$out"; then
		pass "$label: pgbench exited 0, no client aborted"
	else
		fail "$label: pgbench exited 0, no client aborted (rc=$rc)"
		grep -E 'aborted|ERROR|error|FATAL' "$out" | sort | uniq -c | sort -rn | head -n 10 | sed 's/^/#   /'
	fi
	if [ "${failed:-}" = 0 ]; then
		pass "$label: 0 failed transactions"
	else
		fail "$label: 0 failed transactions (got ${failed:-none reported})"
	fi
}

# run_pgbench LABEL ARGS...: pgbench against the coordinator, checked
run_pgbench() {
	local label=$1 out rc
	shift
	out=$CITUS_TMP/pgbench.$(echo "$label" | tr -c 'a-zA-Z0-9\n' '_').out
	citus_pgbench "$@" >"$out" 2>&1
	rc=$?
	check_pgbench "$label" "$out" "$rc"
}

# answers LABEL CONDITION: one comment line with the count of each code in
# the rows of citus_log that meet CONDITION
answers() {
	echo "# $1 answers: $(q "SELECT coalesce(string_agg(code || '=' || n, ', ' ORDER BY code), 'none')
		FROM (SELECT code, count(*) n FROM citus_log WHERE $2 GROUP BY code) s")"
}

# -- the database --------------------------------------------------------------

# citus_db NAME [SHARD_COUNT]: a fresh database NAME on every node with
# Citus; on the coordinator the workers added, booking installed and
# distributed (booking.distribute(SHARD_COUNT), or the default when none is
# given); a local table citus_log on the coordinator for the answers of the
# pgbench scripts.  Dropped on exit.  CITUS_NO_BOOKING=1: Citus and the
# workers only; CITUS_NO_DISTRIBUTE=1: booking installed, not distributed.
# BOOKING_CITUS_SYNC=off (the default) sets synchronous_commit = off in it
# on every node.
citus_db() {
	local node dist
	# a script may make several: each is dropped on exit
	[ -n "$CITUS_DB" ] && CITUS_EXTRA_DBS="$CITUS_EXTRA_DBS $CITUS_DB"
	CITUS_DB=$1
	if [ "${BOOKING_CITUS_REHEARSAL:-}" = 1 ]; then
		citus_rehearsal_db
		return
	fi
	for node in $CITUS_NODES; do
		npsql "$node" -d postgres -c "DROP DATABASE IF EXISTS $CITUS_DB WITH (FORCE)" >/dev/null 2>&1
		npsql "$node" -d postgres -c "CREATE DATABASE $CITUS_DB" >/dev/null ||
			{ fail "create database $CITUS_DB on $node"; citus_done; }
		npsql "$node" -d postgres -c "ALTER DATABASE $CITUS_DB SET synchronous_commit = ${BOOKING_CITUS_SYNC:-off}" >/dev/null
		npsql "$node" -d "$CITUS_DB" -c "SET client_min_messages = warning" -c "CREATE EXTENSION citus" >/dev/null ||
			{ fail "CREATE EXTENSION citus on $node"; citus_done; }
	done
	q "SELECT citus_set_coordinator_host('127.0.0.1', $(citus_port coord))" >/dev/null &&
		q "SELECT citus_add_node('127.0.0.1', $(citus_port w1))" >/dev/null &&
		q "SELECT citus_add_node('127.0.0.1', $(citus_port w2))" >/dev/null ||
		{ fail "add the two workers to the coordinator of $CITUS_DB"; citus_done; }
	[ "${CITUS_NO_BOOKING:-}" = 1 ] && return 0
	dist="SELECT booking.distribute(${2:-})"
	[ "${CITUS_NO_DISTRIBUTE:-}" = 1 ] && dist="SELECT 'not distributed'"
	npsql coord -d "$CITUS_DB" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE" \
		-c "$dist" >"$CITUS_TMP/distribute.out" 2>&1 ||
		{ fail "CREATE EXTENSION booking CASCADE; $dist"; sed 's/^/#   /' "$CITUS_TMP/distribute.out"; citus_done; }
	q "CREATE TABLE citus_log (kind text NOT NULL DEFAULT '', code text NOT NULL,
		booking_id bigint, quantity int, resource_id bigint, during tstzrange, rooms bigint[], guest text,
		at timestamptz NOT NULL DEFAULT clock_timestamp())" >/dev/null ||
		{ fail "a local table citus_log on the coordinator"; citus_done; }
}

# BOOKING_CITUS_REHEARSAL=1 (for working on the scripts only): the database
# is made on the coordinator alone, without Citus: the scripts run their
# pgbench workloads and checks against a single-node install, and skip what
# needs Citus (rehearsal says whether to).  A rehearsal is never a pass of
# the suite: run.sh refuses it.
citus_rehearsal_db() {
	echo "# REHEARSAL: a single-node database, no Citus"
	npsql coord -d postgres -c "DROP DATABASE IF EXISTS $CITUS_DB WITH (FORCE)" >/dev/null 2>&1
	npsql coord -d postgres -c "CREATE DATABASE $CITUS_DB" >/dev/null &&
		npsql coord -d postgres -c "ALTER DATABASE $CITUS_DB SET synchronous_commit = ${BOOKING_CITUS_SYNC:-off}" >/dev/null &&
		npsql coord -d "$CITUS_DB" -c "SET client_min_messages = warning" -c "CREATE EXTENSION booking CASCADE" >/dev/null &&
		q "CREATE TABLE citus_log (kind text NOT NULL DEFAULT '', code text NOT NULL,
			booking_id bigint, quantity int, resource_id bigint, during tstzrange, rooms bigint[], guest text,
			at timestamptz NOT NULL DEFAULT clock_timestamp())" >/dev/null ||
		{ fail "a rehearsal database"; citus_done; }
}

rehearsal() {
	[ "${BOOKING_CITUS_REHEARSAL:-}" = 1 ]
}

# citus_db_drop: drops the script's databases (CITUS_DB and any named in
# CITUS_EXTRA_DBS) on every node that is up
CITUS_EXTRA_DBS=""
citus_db_drop() {
	local node db
	[ -n "${CITUS_DIR:-}" ] && [ -f "$CITUS_DIR/ports" ] || return 0
	for node in $CITUS_NODES; do
		[ -S "$CITUS_DIR/$node/.s.PGSQL.$(citus_port "$node")" ] || continue
		for db in $CITUS_DB $CITUS_EXTRA_DBS; do
			npsql "$node" -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
		done
	done
}

# citus_drop_roles "DB..." "ROLE...": on every node that is up, drops the
# databases and then the roles (a role is the cluster's, not a database's,
# and its grants go with the databases).  A script that makes roles calls it
# first (a run that was killed left them) and in its EXIT trap.
citus_drop_roles() {
	local node db
	[ -n "${CITUS_DIR:-}" ] && [ -f "$CITUS_DIR/ports" ] || return 0
	for node in $CITUS_NODES; do
		[ -S "$CITUS_DIR/$node/.s.PGSQL.$(citus_port "$node")" ] || continue
		for db in $1; do
			npsql "$node" -d postgres -c "DROP DATABASE IF EXISTS $db WITH (FORCE)" >/dev/null 2>&1
		done
		npsql "$node" -d postgres -c "DROP ROLE IF EXISTS ${2// /, }" >/dev/null 2>&1
	done
}

# snapshot: copies the booking tables into local tables of the coordinator
# (chk_resources, chk_bookings, chk_stripes) for checks that join them:
# a join of the distributed tables on a column other than their
# distribution column would need a repartition join.  Reading a distributed
# table whole is an ordinary multi-shard query through the coordinator.
snapshot() {
	q "SET client_min_messages = warning;
	   DROP TABLE IF EXISTS chk_resources, chk_bookings, chk_stripes;
	   CREATE TABLE chk_resources AS SELECT * FROM booking.resources;
	   CREATE TABLE chk_bookings AS SELECT * FROM booking.bookings;
	   CREATE TABLE chk_stripes AS SELECT * FROM booking.resource_stripes;
	   CREATE INDEX ON chk_bookings (resource_id);
	   ANALYZE chk_resources, chk_bookings, chk_stripes" >/dev/null
}

# the invariants of the extension's data over the snapshot, cluster-wide:
# a seat counter (resources.taken, or capacity minus its stripes' free seats
# for a striped resource) per resource against its blocking seat bookings
counters_sql="SELECT r.id, r.capacity,
	CASE WHEN r.stripes > 1 THEN r.capacity - coalesce(st.free, 0) ELSE r.taken END AS taken,
	coalesce(b.seats, 0) AS seats
	FROM chk_resources r
	LEFT JOIN (SELECT resource_id, sum(quantity) AS seats FROM chk_bookings
	            WHERE during IS NULL AND status IN ('pending', 'confirmed') GROUP BY resource_id) b
	  ON b.resource_id = r.id
	LEFT JOIN (SELECT resource_id, sum(free) AS free FROM chk_stripes GROUP BY resource_id) st
	  ON st.resource_id = r.id"

# no two blocking stays of one resource overlap (the exclusion constraint's
# own test: same resource, overlapping dates and overlapping validity)
overlap_sql="SELECT count(*) FROM chk_bookings a JOIN chk_bookings b
	ON a.resource_id = b.resource_id AND a.during && b.during AND a.validity && b.validity AND a.id < b.id
	WHERE a.during IS NOT NULL AND a.status IN ('pending', 'confirmed')
	  AND b.during IS NOT NULL AND b.status IN ('pending', 'confirmed')"

# check_invariants LABEL: snapshot, then the three invariants
check_invariants() {
	snapshot
	check "$1: every seat counter equals the sum of its blocking seat bookings" \
		"SELECT count(*) FROM ($counters_sql) c WHERE c.taken <> c.seats" 0
	check "$1: no resource has more seats out than its capacity" \
		"SELECT count(*) FROM ($counters_sql) c WHERE c.taken > c.capacity OR c.seats > c.capacity" 0
	check "$1: no two blocking stays of one resource overlap" "$overlap_sql" 0
}

# check_no_prepared LABEL: after Citus's own recovery of two-phase commits
# (recover_prepared_transactions on the coordinator), no node holds a
# prepared transaction of the script's database
check_no_prepared() {
	local node n total=0 detail=""
	if rehearsal; then
		check "$1: no prepared transaction left behind" \
			"SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()" 0
		return
	fi
	q "SELECT recover_prepared_transactions()" >/dev/null
	for node in $CITUS_NODES; do
		n=$(qn "$node" "SELECT count(*) FROM pg_prepared_xacts WHERE database = current_database()" 2>&1)
		detail="$detail $node=$n"
		[ "$n" = 0 ] || total=$((total + 1))
	done
	if [ "$total" = 0 ]; then
		pass "$1: no prepared transaction left behind on any node (after recover_prepared_transactions)"
	else
		fail "$1: no prepared transaction left behind on any node (after recover_prepared_transactions):$detail"
	fi
}

# worker_of RESOURCE: the worker ("w1" or "w2") whose shard holds the
# resource's row (the shard of its distribution value, booking.resources.home)
worker_of() {
	local port
	# a rehearsal has no workers: pretend the ids alternate between two
	if rehearsal; then echo "w$(($1 % 2 + 1))"; return; fi
	port=$(q "SELECT p.nodeport FROM pg_dist_shard_placement p
		WHERE p.shardid = get_shard_id_for_distribution_column('booking.resources',
		        (SELECT home FROM booking.resources WHERE id = $1))")
	node_of_port "$port"
}

# resource_on NODE NAME [CAPACITY [POOL]]: creates resources named NAME until
# one lands on the worker NODE (ids hash to shards); prints its id.  The
# ones that landed elsewhere stay, unused.
resource_on() {
	local i id
	for i in $(seq 1 40); do
		id=$(q "SELECT booking.create_resource('$2', ${3:-1}${4:+, $4})") || return 1
		[ "$(worker_of "$id")" = "$1" ] && { echo "$id"; return 0; }
	done
	echo "resource_on: 40 resources and none on $1" >&2
	return 1
}

# shard_of RESOURCE: the shard id of booking.resources that holds the resource
shard_of() {
	q "SELECT get_shard_id_for_distribution_column('booking.resources',
		(SELECT home FROM booking.resources WHERE id = $1))"
}

# -- the script's life ---------------------------------------------------------

citus_cleanup() {
	local p
	for p in $CITUS_BG_PIDS; do kill "$p" 2>/dev/null; done
	for p in $CITUS_BG_PIDS; do wait "$p" 2>/dev/null; done
	# a node a script stopped on purpose comes back, so that its database
	# can be dropped there too (a named cluster outlives the script)
	if [ -n "${CITUS_DIR:-}" ] && [ -f "$CITUS_DIR/ports" ]; then
		for p in $CITUS_NODES; do
			[ -f "$CITUS_DIR/$p/data/postmaster.pid" ] || citus_node_start "$p" >/dev/null 2>&1
		done
	fi
	citus_db_drop
	[ -n "$CITUS_OWN_CLUSTER" ] && citus_cluster_destroy
	rm -rf "$CITUS_TMP"
}

# citus_script: what each script calls first: the cluster named by
# BOOKING_CITUS_DIR, or a private one started for this script
citus_script() {
	trap 'exit 130' INT TERM
	trap citus_cleanup EXIT
	if ! citus_installed; then
		echo "not ok - Citus is not installed ($("$CITUS_PGBIN/pg_config" --sharedir)/extension/citus.control is missing)"
		echo "0 passed, 1 failed"
		exit 1
	fi
	if [ -n "${BOOKING_CITUS_DIR:-}" ]; then
		citus_cluster_use "$BOOKING_CITUS_DIR" || exit 1
	else
		CITUS_OWN_CLUSTER=1
		citus_cluster_create "${BOOKING_CITUS_PORT:-54380}" || { echo "not ok - start a Citus cluster"; exit 1; }
	fi
}

# citus_done: the closing line and the exit status of the script
citus_done() {
	echo "$CITUS_PASSED passed, $CITUS_FAILED failed"
	[ "$CITUS_FAILED" -eq 0 ] && [ "$CITUS_PASSED" -gt 0 ]
	exit
}
