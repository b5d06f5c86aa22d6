#!/usr/bin/env bash
# examples/python/test.sh: starts the Python service against a fresh database
# and runs the HTTP contract check (examples/check_service.py): 50 concurrent
# requests at a one-seat session give exactly one 201 and 49 409s, a repeated
# Idempotency-Key replays the same body with replayed = true, and the other
# codes map to their statuses. Then it runs relay_test.sh: the outbox relay
# (relay.py) sends each confirmation exactly once although it is killed. Run
# by test/run.sh; alone, it starts its own cluster (see examples/lib.sh).
set -u
cd "$(dirname "$0")"
. ../lib.sh

# Debian's interpreter and Debian's psycopg 3 (python3-psycopg)
if ! /usr/bin/python3 -c 'import psycopg' 2>/dev/null; then
	echo "== installing: python3-psycopg"
	export DEBIAN_FRONTEND=noninteractive
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends python3-psycopg >/dev/null; } ||
		{ echo "not ok - install python3-psycopg"; exit 1; }
fi

example_begin booking_example_python
example_serve /usr/bin/python3 server.py
# this service serves GET /metrics too (the Node one does not yet)
EXAMPLE_METRICS=1 example_check
rc=$?
# its own database, on the same cluster (PGHOST is exported)
bash relay_test.sh || rc=1
exit $rc
