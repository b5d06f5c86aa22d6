# memory: prints calls number from .. to-1 as SQL, four kinds in turn (run by
# bench/run.sh: awk -v from=N -v to=M -f bench/scenarios/memory_calls.awk)
BEGIN {
	for (i = from; i < to; i++) {
		k = i % 4
		n = int(i / 4)
		if (k == 0)
			printf "SELECT (booking.reserve_seat(%d, 'mem')).code;\n", 1001 + n % 1000
		else if (k == 1)
			printf "SELECT (booking.reserve_seat(%d, 'mem', idempotency_key => 'mem-%d')).code;\n", 1001 + n % 1000, i
		else if (k == 2)
			printf "SELECT (booking.reserve_stay(%d, 'mem', tstzrange(timestamptz '2036-01-01' + %d * interval '1 day', timestamptz '2036-01-01' + %d * interval '1 day'))).code;\n", 1 + n % 1000, int(n / 1000) % 13, int(n / 1000) % 13 + 1
		else
			printf "SELECT count(*) FROM booking.free_slots(%d, '[2029-01-01,2029-02-01)', '1 day');\n", 1 + n % 1000
	}
}
