#!/usr/bin/env bash
# hostile.sh: nothing a client sends can crash the server or slip a write
# past the checks.  hostile.sql makes well over 60 bad calls to every function
# of the API (NULL in every position, empty, unbounded and infinite ranges,
# quantities 0, -1, 2^31-1, capacities at the int limits, negative and huge
# intervals, keys of 0 bytes and of 100 KB, unknown ids, a wrong pool, arrays
# with NULLs, duplicates and 10,000 elements, ...), once at each isolation
# level.  Each call must raise 22004/22023 with a message that begins with the
# argument's name, or return its documented code.  Afterwards the tables of
# schema booking are byte for byte what they were (and the sequences too, but
# for the ids SERIALIZABLE callers may burn), the postmaster was never
# restarted, and the server log has no "terminated by signal".  (A backend
# that dies makes the postmaster restart every backend, but it keeps its own
# pg_postmaster_start_time(): the log line is what shows such a crash, and so
# does a session that does not survive its calls.)
#
# Run it against another cluster (a sanitizer build, say) by pointing
# PGHOST/PGPORT at it and BOOKING_SERVER_LOG at its log.
set -u
cd "$(dirname "$0")" || exit 1
. ./lib.bash

SERVER_LOG=${BOOKING_SERVER_LOG:-${PGHOST:-/nonexistent}/server.log}
rel_db booking_rel_hostile

fixture=$(rel_psql -At -d "$REL_DB" -f hostile_fixture.sql 2>&1)
if [ "$fixture" = "fixture ready" ]; then
	pass "the fixture: 10 resources, a pool, bookings in every status, a stay at the end of time"
else
	fail "the fixture"
	echo "$fixture" | sed 's/^/#   /'
	rel_done
fi

tables_sql="SELECT string_agg(c.relname || ' ' || (xpath('/row/m/text()', query_to_xml(format(
	'SELECT md5(coalesce(string_agg(t::text, E''\n'' ORDER BY t::text), '''')) AS m FROM %s t', c.oid::regclass),
	false, true, '')))[1]::text, ', ' ORDER BY c.relname)
	FROM pg_class c WHERE c.relnamespace = 'booking'::regnamespace AND c.relkind = 'r'"
sequences_sql="SELECT string_agg(c.relname || ' ' || (xpath('/row/v/text()', query_to_xml(format(
	'SELECT last_value || '','' || is_called AS v FROM %s', c.oid::regclass), false, true, '')))[1]::text, ', ' ORDER BY c.relname)
	FROM pg_class c WHERE c.relnamespace = 'booking'::regnamespace AND c.relkind = 'S'"
tables_before=$(q "$tables_sql")
sequences_before=$(q "$sequences_sql")
start_before=$(q "SELECT pg_postmaster_start_time()")
if [ -r "$SERVER_LOG" ]; then
	log_from=$(stat -c %s "$SERVER_LOG")
else
	log_from=
fi

for level in "read committed" "repeatable read" "serializable"; do
	out="$REL_TMP/hostile.${level// /_}"
	PGOPTIONS="-c default_transaction_isolation=${level// /\\ }" \
		rel_psql -At -d "$REL_DB" -f hostile.sql >"$out" 2>&1
	rc=$?
	while IFS= read -r line; do
		case "$line" in
			"ok - "*) echo "$line"; REL_PASSED=$((REL_PASSED + 1)) ;;
			"not ok - "*) echo "$line"; REL_FAILED=$((REL_FAILED + 1)) ;;
			*) echo "# $line" ;;
		esac
	done <"$out"
	ncases=$(grep -cE '^(ok|not ok) - \[[a-z ]+\] [0-9]+ ' "$out")
	if [ "$rc" -eq 0 ] && [ "$ncases" -ge 60 ]; then
		pass "[$level] $ncases bad calls made, the session survived them all"
	else
		fail "[$level] at least 60 bad calls made and the session survived them all (psql rc $rc, $ncases calls)"
	fi
	if [ "$level" = "repeatable read" ]; then
		check "after the READ COMMITTED and REPEATABLE READ calls the sequences are unchanged" "$sequences_sql" "$sequences_before"
	fi
done

check "every table of schema booking is unchanged after all the bad calls" "$tables_sql" "$tables_before"
check "pg_postmaster_start_time() is unchanged: the server was not restarted" "SELECT pg_postmaster_start_time()" "$start_before"
if [ -n "$log_from" ]; then
	if tail -c +"$((log_from + 1))" "$SERVER_LOG" | grep -q "terminated by signal"; then
		fail "the server log has no \"terminated by signal\""
		tail -c +"$((log_from + 1))" "$SERVER_LOG" | grep -B2 -A2 "terminated by signal" | head -n 20 | sed 's/^/#   /'
	else
		pass "the server log ($SERVER_LOG) has no \"terminated by signal\""
	fi
else
	fail "the server log is readable at $SERVER_LOG (set BOOKING_SERVER_LOG)"
fi

rel_done
