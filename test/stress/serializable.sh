#!/usr/bin/env bash
# serializable.sh: the contract holds at REPEATABLE READ and SERIALIZABLE
# too: a conflict inside a call comes back as the code "retry", never as a
# raw error, and a call run as its own statement (autocommit) is not aborted
# at its COMMIT either.  pgbench counts any serialization or deadlock error,
# inside the call or at commit, as a failed transaction: there must be none,
# and the totals must stay exact.
set -u
cd "$(dirname "$0")"
. ./lib.bash

SECONDS_PER_RUN=${SERIALIZABLE_SECONDS:-4}
stress_db booking_stress_serializable

no_overlap_query="SELECT count(*) FROM booking.bookings a JOIN booking.bookings b
	ON a.resource_id = b.resource_id AND a.id < b.id AND a.during && b.during
	WHERE a.status IN ('pending', 'confirmed') AND b.status IN ('pending', 'confirmed')"

for iso in repeatable_read serializable; do
	level=${iso/_/\\ }
	export PGOPTIONS="-c default_transaction_isolation=$level"

	# counted inventory
	sale=$(sql "SELECT booking.create_resource('sale $iso', 2000)")
	run_pgbench "$iso seats" -c 64 -j 2 -t 100 -D sale="$sale" -f serializable_seat.pgb
	check "$iso seats: taken equals the sum of blocking quantities and never exceeds 2000" \
		"SELECT r.taken = (SELECT coalesce(sum(quantity), 0) FROM booking.bookings b
		                    WHERE b.resource_id = r.id AND b.status IN ('pending', 'confirmed'))
		        AND r.taken <= 2000
		   FROM booking.resources r WHERE r.id = $sale" t

	# range inventory: single stays and groups
	room0=$(sql "SELECT min(id) - 1 FROM (SELECT booking.create_resource('room $iso ' || n) AS id FROM generate_series(1, 3) n) s")
	group0=$(sql "SELECT min(id) - 1 FROM (SELECT booking.create_resource('family room $iso ' || n) AS id FROM generate_series(1, 4) n) s")
	run_pgbench "$iso stays" -c 32 -j 2 -T "$SECONDS_PER_RUN" -D room0="$room0" -f serializable_stay.pgb
	run_pgbench "$iso groups" -c 16 -j 2 -T "$SECONDS_PER_RUN" -D group0="$group0" -f serializable_group.pgb
	check "$iso: zero overlapping blocking pairs" "$no_overlap_query" 0
	check "$iso groups: every group has its two members" \
		"SELECT count(*) FROM (SELECT group_id FROM booking.bookings WHERE resource_id > $group0 AND resource_id <= $group0 + 4
		   GROUP BY group_id HAVING count(*) <> 2 OR group_id IS NULL) s" 0
	unset PGOPTIONS
done

stress_done
