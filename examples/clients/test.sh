#!/usr/bin/env bash
# examples/clients/test.sh: runs the driver recipes of docs/clients.md against
# a fresh database, each as a role with only booking.grant_client's grants and
# its own seat resource (capacity 10) and stay resource. Every recipe
# reserves with metadata {"order_id": ...}, reads the booking back with
# booking.get_booking, maps each booking.result to its HTTP status (201, 200,
# 202, 409, 503) and every class-22 SQLSTATE (22004, 22023, 22000, 22007,
# 22008, 22P02) to 400, and uses SET LOCAL lock_timeout. Each prints
# "ok - " / "not ok - " lines and exits non-zero on a failure; this script
# exits non-zero when any recipe failed (or could not run).
#
# Recipes (BOOKING_CLIENTS, space-separated; "all" for every one):
#   psycopg      python_psycopg.py        /usr/bin/python3, python3-psycopg
#   django       django_app/check.py      python3-django (3.2), python3-psycopg2
#   node         node/node_pg.js          nodejs, npm; pg from node/package-lock.json (npm ci)
#   ruby         ruby_pg.rb               ruby-pg
#   activerecord ruby_activerecord.rb     ruby-activerecord
#   go           go_pgx/main.go           golang-go, golang-github-jackc-pgx-v4-dev
# The default is every recipe but go: Debian's Go and pgx packages do not
# install reliably under a minute on a 2-core machine (55 to 174 s measured;
# docs/clients.md, Tests), so the examples stage of test/run.sh leaves them
# out. Run it with
#   BOOKING_CLIENTS=go bash examples/clients/test.sh
# Missing packages are installed with apt-get. Go builds offline, in GOPATH
# mode against Debian's packaged sources (GO111MODULE=off,
# GOPATH=/usr/share/gocode), with its build cache in GOCACHE (default
# /var/cache/booking-go-build).
#
# Run by test/run.sh; alone, it starts its own cluster (see examples/lib.sh):
#   BOOKING_PG_BIN=/usr/lib/postgresql/15/bin BOOKING_EXAMPLE_PORT=54345 bash examples/clients/test.sh
set -u
cd "$(dirname "$0")" || exit 2
HERE=$(pwd)
. ../lib.sh

ALL_CLIENTS="psycopg django node ruby activerecord go"
CLIENTS=${BOOKING_CLIENTS:-psycopg django node ruby activerecord}
[ "$CLIENTS" = all ] && CLIENTS=$ALL_CLIENTS
for c in $CLIENTS; do
	case " $ALL_CLIENTS " in
	*" $c "*) ;;
	*) echo "not ok - unknown recipe \"$c\" in BOOKING_CLIENTS (recipes: $ALL_CLIENTS)"; exit 2 ;;
	esac
done
wants() { case " $CLIENTS " in *" $1 "*) return 0 ;; esac; return 1; }

# -- packages ------------------------------------------------------------------

need=()
missing() { ! dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
wants psycopg && { missing python3-psycopg && need+=(python3-psycopg); }
wants django && for p in python3-django python3-psycopg2; do missing "$p" && need+=("$p"); done
wants node && { command -v node >/dev/null && command -v npm >/dev/null || need+=(nodejs npm); }
wants ruby && { missing ruby-pg && need+=(ruby-pg); }
wants activerecord && for p in ruby-pg ruby-activerecord; do missing "$p" && need+=("$p"); done
wants go && for p in golang-go golang-github-jackc-pgx-v4-dev; do missing "$p" && need+=("$p"); done
if [ ${#need[@]} -gt 0 ]; then
	# unique, in order
	mapfile -t need < <(printf '%s\n' "${need[@]}" | awk '!seen[$0]++')
	echo "== installing: ${need[*]}"
	export DEBIAN_FRONTEND=noninteractive
	t0=$SECONDS
	{ apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null; } ||
		{ echo "not ok - apt-get install ${need[*]}"; exit 1; }
	echo "# installed in $((SECONDS - t0)) s"
fi

example_begin booking_example_clients

# -- builds --------------------------------------------------------------------

if wants node; then
	if (cd node && npm ci --no-audit --no-fund --loglevel=error) >"$EXAMPLE_TMP/npm-ci.log" 2>&1; then
		echo "ok - npm ci in examples/clients/node (pg $(cd node && node -p "require('pg/package.json').version"), node $(node --version))"
	else
		echo "not ok - npm ci in examples/clients/node"
		sed 's/^/#   /' "$EXAMPLE_TMP/npm-ci.log" | tail -n 20
		exit 1
	fi
fi

if wants go; then
	export GOCACHE=${GOCACHE:-/var/cache/booking-go-build}
	mkdir -p "$GOCACHE"
	t0=$SECONDS
	# GOPATH mode: the imports are found in Debian's /usr/share/gocode/src;
	# GOFLAGS and GOPROXY off, so nothing is fetched
	if (cd go_pgx && GO111MODULE=off GOPATH=/usr/share/gocode GOFLAGS='' GOPROXY=off \
		go build -o "$EXAMPLE_TMP/booking-pgx" .) >"$EXAMPLE_TMP/go-build.log" 2>&1; then
		echo "ok - go build go_pgx ($(go version | awk '{print $3}'), pgx $(dpkg-query -W -f='${Version}' golang-github-jackc-pgx-v4-dev), $((SECONDS - t0)) s)"
	else
		echo "not ok - go build go_pgx"
		sed 's/^/#   /' "$EXAMPLE_TMP/go-build.log" | tail -n 20
		exit 1
	fi
fi

# -- the recipes ---------------------------------------------------------------

# run_recipe NAME COMMAND...: a fresh seat resource (capacity 10) and stay
# resource, then COMMAND as the web role, at most 120 s
failed=()
run_recipe() {
	local name=$1 ids seats stay rc t0=$SECONDS
	shift
	ids=$(example_psql -d "$EXAMPLE_DB" -At -F' ' \
		-c "SELECT booking.create_resource('$name seats', 10), booking.create_resource('$name room')") ||
		{ echo "not ok - $name: create its resources"; failed+=("$name"); return; }
	read -r seats stay <<<"$ids"
	echo "# $name"
	PGUSER=${EXAMPLE_DB}_app PGDATABASE=$EXAMPLE_DB BOOKING_SEATS=$seats BOOKING_STAY=$stay \
		PYTHONDONTWRITEBYTECODE=1 timeout --kill-after=5 120 "$@" </dev/null 2>"$EXAMPLE_TMP/$name.err"
	rc=$?
	if [ -s "$EXAMPLE_TMP/$name.err" ]; then
		echo "# $name's stderr:"
		sed 's/^/#   /' "$EXAMPLE_TMP/$name.err" | head -n 30
	fi
	if [ $rc -eq 0 ]; then
		echo "ok - recipe $name ($((SECONDS - t0)) s)"
	else
		echo "not ok - recipe $name (exit $rc)"
		failed+=("$name")
	fi
}

wants psycopg && run_recipe psycopg /usr/bin/python3 "$HERE/python_psycopg.py"
wants django && run_recipe django /usr/bin/python3 "$HERE/django_app/check.py"
wants node && run_recipe node node "$HERE/node/node_pg.js"
wants ruby && run_recipe ruby ruby "$HERE/ruby_pg.rb"
wants activerecord && run_recipe activerecord ruby "$HERE/ruby_activerecord.rb"
wants go && run_recipe go "$EXAMPLE_TMP/booking-pgx"

if [ ${#failed[@]} -gt 0 ]; then
	echo "# examples/clients: failed: ${failed[*]} (of: $CLIENTS)"
	exit 1
fi
echo "# examples/clients: every recipe passed ($CLIENTS)"
