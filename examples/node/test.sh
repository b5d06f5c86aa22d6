#!/usr/bin/env bash
# examples/node/test.sh: installs the locked dependencies (npm ci), starts the
# Node service against a fresh database and runs the HTTP contract check
# (examples/check_service.py): 50 concurrent requests at a one-seat session give
# exactly one 201 and 49 409s, a repeated Idempotency-Key replays the same body
# with replayed = true, and the other codes map to their statuses. Run by
# test/run.sh; alone, it starts its own cluster (see examples/lib.sh).
set -u
cd "$(dirname "$0")"
. ../lib.sh

if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	echo "== installing: nodejs npm"
	export DEBIAN_FRONTEND=noninteractive
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null; } ||
		{ echo "not ok - install nodejs and npm"; exit 1; }
fi
if npm ci --no-audit --no-fund --loglevel=error >npm-ci.log 2>&1; then
	echo "ok - npm ci (pg $(node -p "require('pg/package.json').version"), node $(node --version))"
	rm -f npm-ci.log
else
	echo "not ok - npm ci"
	sed 's/^/#   /' npm-ci.log | tail -n 20
	rm -f npm-ci.log
	exit 1
fi

example_begin booking_example_node
example_serve node server.js
example_check
