#!/usr/bin/env bash
# delegate.sh: booking.delegate_calls() (src/5_scaleout/delegate.c), the
# client calls of one resource, pool or booking sent by Citus straight to
# their node, and the call that runs on the node holding its shard without
# calling its twin (route.c's RunHere):
#   - before: a call made on the coordinator sends its twin (routed by booking);
#   - delegated: the coordinator sends the call itself to the node that
#     holds the resource; the sale, a stay, confirm, cancel and extend_hold
#     answer as before; in a transaction block the twin is sent (Citus
#     delegates nothing there); an application role's call is delegated
#     over a connection of that role;
#   - a flash sale through the coordinator, 32 clients, 2,400 attempts at
#     300 seats, delegated: exactly 300 sold, counter = bookings;
#   - a call a client makes on the worker that holds the shard runs there
#     without calling its twin through SPI;
#   - a node that is down: delegated, Citus's connection error; off cannot
#     be turned while a worker is down; off, the call answers busy.
set -u
cd "$(dirname "$0")"
. ./lib.bash
citus_script

DB=booking_citus_delegate
APP=booking_delegate_app
# the role: dropped with the database on every node, also when an earlier
# run was killed
trap 'citus_drop_roles "$DB" "$APP"; citus_cleanup' EXIT
citus_drop_roles "$DB" "$APP"

citus_db "$DB"
if rehearsal; then
	echo "# REHEARSAL: nothing to delegate"
	pass "rehearsal: nothing to check"
	citus_done
fi
r1=$(resource_on w1 'delegate w1' 1000) || { fail "a resource on w1"; citus_done; }
r2=$(resource_on w2 'delegate w2' 1000) || { fail "a resource on w2"; citus_done; }
echo "# resource $r1 on w1, $r2 on w2"

# coord SQL...: psql on the coordinator with Citus's log of what it sends
coord() {
	npsql coord -At -d "$CITUS_DB" -c "SET citus.log_remote_commands = on" "$@" 2>&1
}
sent() { echo "$1" | grep -c "issuing SELECT .* FROM booking\.$2("; }

out=$(coord -c "SELECT code FROM booking.reserve_seat($r1, 'routed')")
check_eq "before: the coordinator sends the twin" "$(sent "$out" shard_reserve_seat)" 1

check "delegate_calls() names the calls it delegates" \
	"SELECT booking.delegate_calls() LIKE '13 calls are delegated:%'" t
out=$(coord -c "SELECT code FROM booking.reserve_seat($r1, 'delegated')")
echo "$out" | grep -v '^SET' | cut -c1-160 | sed 's/^/#   /'
check_eq "delegated: the coordinator sends the call itself" "$(sent "$out" reserve_seat)" 1
check_eq "... to w1, which holds the resource" "$(echo "$out" | grep -c "on server postgres@127.0.0.1:$(citus_port w1)")" 1
check_eq "... and it answers ok" "$(echo "$out" | tail -1)" ok
out=$(coord -c "SELECT code FROM booking.reserve_stay($r2, 'stay', tstzrange('2031-01-01', '2031-01-03'), hold => '1 hour')")
check_eq "a held stay on w2 is delegated and answers ok" "$(sent "$out" reserve_stay) $(echo "$out" | tail -1)" "1 ok"
stay=$(q "SELECT id FROM booking.bookings WHERE guest = 'stay'")
out=$(coord -c "SELECT code FROM booking.extend_hold($stay, '2 hours')")
check_eq "extend_hold by the booking's id is delegated and answers ok" "$(sent "$out" extend_hold) $(echo "$out" | tail -1)" "1 ok"
out=$(coord -c "SELECT code FROM booking.confirm($stay)")
check_eq "confirm is delegated and answers ok" "$(sent "$out" confirm) $(echo "$out" | tail -1)" "1 ok"
out=$(coord -c "SELECT code FROM booking.cancel($stay)")
check_eq "cancel is delegated and answers ok" "$(sent "$out" cancel) $(echo "$out" | tail -1)" "1 ok"
check "the stay is cancelled, on w2's shard" "SELECT status FROM booking.bookings WHERE id = $stay" cancelled
out=$(coord -c "BEGIN" -c "SELECT code FROM booking.reserve_seat($r1, 'in a block')" -c "COMMIT")
check_eq "in a transaction block the twin is sent, and answers ok" \
	"$(sent "$out" shard_reserve_seat) $(echo "$out" | grep -c '^ok$')" "1 1"

# an application role (grant_client): Citus sends its delegated call to
# the worker over a connection of that role, not of the extension's owner
# (the twin's route connects as the owner)
q "CREATE ROLE $APP LOGIN" >/dev/null || fail "CREATE ROLE $APP on the coordinator"
q "SELECT booking.grant_client('$APP')" >/dev/null
app() { npsql coord -At -d "$CITUS_DB" -U "$APP" -c "SET citus.log_remote_commands = on" "$@" 2>&1; }
out=$(app -c "SELECT code FROM booking.reserve_seat($r2, 'app', hold => '1 hour')")
check_eq "a client role's call is delegated, over a connection of that role, and answers ok" \
	"$(sent "$out" reserve_seat) $(echo "$out" | grep -c "on server $APP@") $(echo "$out" | tail -1)" "1 1 ok"
held=$(q "SELECT id FROM booking.bookings WHERE guest = 'app'")
out=$(app -c "SELECT code FROM booking.confirm($held)")
check_eq "... and so is its confirm" "$(sent "$out" confirm) $(echo "$out" | tail -1)" "1 ok"

# a flash sale through the coordinator, every call delegated
sale=$(resource_on w2 'delegated sale' 300) || { fail "a sale on w2"; citus_done; }
run_pgbench "delegated sale" -c 32 -j 2 -t 75 -D sale="$sale" -f sale_one.pgb
answers "delegated sale" "resource_id = $sale"
check "300 of 2,400 attempts sold, the rest sold_out or busy" \
	"SELECT count(*) FILTER (WHERE code = 'ok') || ' ' || count(*) FILTER (WHERE code NOT IN ('ok', 'sold_out', 'busy'))
	   || ' ' || count(*) FROM citus_log WHERE resource_id = $sale" "300 0 2400"
check "the counter and the bookings: 300" \
	"SELECT taken || ' ' || (SELECT count(*) FROM booking.bookings WHERE resource_id = $sale AND status = 'confirmed')
	   FROM booking.resources WHERE id = $sale" "300 300"

# a client on w1 selling on w1's resource: the call runs there, not its
# twin through SPI (the transaction's own function counts)
out=$(npsql w1 -At -d "$CITUS_DB" -c "SET track_functions = 'all'" -c "BEGIN" \
	-c "SELECT code FROM booking.reserve_seat($r1, 'on w1')" \
	-c "SELECT 'twin calls', count(*) FROM pg_stat_xact_user_functions WHERE funcname = 'shard_reserve_seat'" \
	-c "SELECT 'calls', count(*) FROM pg_stat_xact_user_functions WHERE funcname = 'reserve_seat'" -c "COMMIT" 2>&1)
echo "$out" | sed 's/^/#   /'
check_eq "a call on the worker that holds the shard answers ok" "$(echo "$out" | grep -c '^ok$')" 1
check_eq "... (the count sees the call itself)" "$(echo "$out" | grep '^calls|')" "calls|1"
check_eq "... without calling its twin" "$(echo "$out" | grep '^twin calls|')" "twin calls|0"

# w2 down
citus_node_stop w2
out=$(coord -c "\\set VERBOSITY verbose" -c "SELECT code FROM booking.reserve_seat($r2, 'w2 down')")
echo "$out" | grep ERROR | cut -c1-160 | sed 's/^/#   /'
check_eq "delegated, a call for the node that is down fails with Citus's connection error (08)" \
	"$(echo "$out" | grep -c '^ERROR:  08')" 1
out=$(coord -c "SELECT booking.delegate_calls(false)")
check_eq "delegate_calls(false) refuses while a worker is down" \
	"$(echo "$out" | grep -c 'could not reach every worker')" 1
check "... and the calls stay delegated" \
	"SELECT count(*) FROM pg_dist_object WHERE objid = 'booking.reserve_seat(bigint, text, integer, interval, text, interval, jsonb)'::regprocedure" 1
citus_node_start w2
check "delegate_calls(false) with every worker up" \
	"SELECT booking.delegate_calls(false) LIKE '13 calls are routed by booking again:%'" t
check_on w2 "... and w2 forgot them too" \
	"SELECT count(*) FROM pg_dist_object WHERE objid = 'booking.reserve_seat(bigint, text, integer, interval, text, interval, jsonb)'::regprocedure" 0
citus_node_stop w2
check "off, a call for the node that is down answers busy" \
	"SELECT code FROM booking.reserve_seat($r2, 'w2 down again')" busy
citus_node_start w2
out=$(coord -c "SELECT code FROM booking.reserve_seat($r2, 'routed again')")
check_eq "off, the coordinator sends the twin again, and it answers ok" \
	"$(sent "$out" shard_reserve_seat) $(echo "$out" | tail -1)" "1 ok"
out=$(npsql w1 -At -d "$CITUS_DB" -c "SELECT booking.delegate_calls()" 2>&1)
check_eq "on a worker, delegate_calls() refuses" "$(echo "$out" | grep -c 'runs on the coordinator')" 1
citus_done
