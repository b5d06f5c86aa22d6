# test/lib/pgbouncer.sh: sourced by test/stress/pgbouncer.sh and
# examples/pgbouncer/test.sh (not a test itself).  Installs Debian's pgbouncer
# when it is missing and runs a private one in transaction mode in front of the
# cluster named by PGHOST/PGPORT: its own directory under TMPDIR (config,
# userlist, log, pid file, unix socket), no TCP listener, run as the postgres
# user.  It never touches another pgbouncer, with one exception: right after
# it installed the package, it stops and disables the pgbouncer.service that
# the install started.  docs/poolers.md says what the tests show.
#
# pgbouncer_need: installs the package with apt-get when /usr/sbin/pgbouncer is
#   missing; sets PGBOUNCER_VERSION ("1.18.0" on Debian 12)
# pgbouncer_start PORT USERS DATABASE-LINE...: starts it on unix socket port
#   PORT; USERS is a space-separated list of the roles that may log in (auth_type
#   trust, so each must be in the userlist; the first is also its admin);
#   each DATABASE-LINE is a line of the [databases] section, e.g.
#   "shop = host=/tmp/x port=5432 dbname=shop".  Sets PGBOUNCER_DIR (its socket
#   directory, the host to connect to) and PGBOUNCER_PORT.  Pool settings can be
#   overridden with PGBOUNCER_POOL_SIZE (default 20).
# pgbouncer_psql ARGS...: psql through it (-h PGBOUNCER_DIR -p PGBOUNCER_PORT)
# pgbouncer_stop: stops it (its pid only) and removes its directory; safe to
#   call twice

PGBOUNCER_BIN=/usr/sbin/pgbouncer
PGBOUNCER_DIR=
PGBOUNCER_PORT=
PGBOUNCER_VERSION=

pgbouncer_need() {
	if [ ! -x "$PGBOUNCER_BIN" ]; then
		echo "== installing: pgbouncer"
		export DEBIAN_FRONTEND=noninteractive
		{ apt-get update -qq && apt-get install -y -qq --no-install-recommends pgbouncer >/dev/null; } ||
			{ echo "not ok - install pgbouncer"; return 1; }
		# the package enables and starts a system-wide pgbouncer.service
		# (127.0.0.1:6432); this test runs its own, so the one it just
		# caused to run is stopped and disabled again
		if command -v systemctl >/dev/null && [ -d /run/systemd/system ] &&
			systemctl is-enabled --quiet pgbouncer.service 2>/dev/null; then
			systemctl disable --now --quiet pgbouncer.service 2>/dev/null &&
				echo "# stopped and disabled the pgbouncer.service the package started (this test runs its own)"
		fi
	fi
	PGBOUNCER_VERSION=$("$PGBOUNCER_BIN" --version 2>/dev/null | sed -n 's/^PgBouncer \([0-9.]*\).*/\1/p' | head -n 1)
	[ -n "$PGBOUNCER_VERSION" ] || { echo "not ok - $PGBOUNCER_BIN --version"; return 1; }
}

pgbouncer_start() {
	local port=$1 users=$2 u i
	shift 2
	PGBOUNCER_PORT=$port
	PGBOUNCER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/booking-pgbouncer.XXXXXX") || return 1
	{
		echo "[databases]"
		for line in "$@"; do echo "$line"; done
		echo
		echo "[pgbouncer]"
		echo "listen_port = $PGBOUNCER_PORT"
		# no listen_addr: unix socket only, in a directory of its own
		echo "unix_socket_dir = $PGBOUNCER_DIR"
		echo "pool_mode = transaction"
		echo "default_pool_size = ${PGBOUNCER_POOL_SIZE:-20}"
		echo "max_client_conn = 500"
		echo "auth_type = trust"
		echo "auth_file = $PGBOUNCER_DIR/userlist.txt"
		echo "admin_users = ${users%% *}"
		echo "stats_users = ${users%% *}"
		echo "logfile = $PGBOUNCER_DIR/pgbouncer.log"
		echo "pidfile = $PGBOUNCER_DIR/pgbouncer.pid"
		echo "log_connections = 0"
		echo "log_disconnections = 0"
	} >"$PGBOUNCER_DIR/pgbouncer.ini"
	# auth_type trust still wants each user in the auth_file
	for u in $users; do echo "\"$u\" \"\""; done >"$PGBOUNCER_DIR/userlist.txt"
	chown -R postgres:postgres "$PGBOUNCER_DIR"
	chmod 700 "$PGBOUNCER_DIR"
	# -d: it daemonizes and writes its pid file, the only process
	# pgbouncer_stop signals
	runuser -u postgres -- "$PGBOUNCER_BIN" -d -q "$PGBOUNCER_DIR/pgbouncer.ini" >"$PGBOUNCER_DIR/start.out" 2>&1 ||
		{ cat "$PGBOUNCER_DIR/start.out" "$PGBOUNCER_DIR/pgbouncer.log" 2>/dev/null | sed 's/^/#   /'; return 1; }
	for i in $(seq 1 100); do
		[ -S "$PGBOUNCER_DIR/.s.PGSQL.$PGBOUNCER_PORT" ] && [ -s "$PGBOUNCER_DIR/pgbouncer.pid" ] && return 0
		sleep 0.05
	done
	echo "# pgbouncer did not open $PGBOUNCER_DIR/.s.PGSQL.$PGBOUNCER_PORT"
	sed 's/^/#   /' "$PGBOUNCER_DIR/pgbouncer.log" 2>/dev/null | tail -n 20
	return 1
}

pgbouncer_psql() {
	"${BOOKING_PG_BIN:-/usr/lib/postgresql/15/bin}/psql" -X -q -v ON_ERROR_STOP=1 -h "$PGBOUNCER_DIR" -p "$PGBOUNCER_PORT" "$@"
}

pgbouncer_stop() {
	local pid i
	[ -n "$PGBOUNCER_DIR" ] || return 0
	pid=$(cat "$PGBOUNCER_DIR/pgbouncer.pid" 2>/dev/null)
	# only the pid its own pid file names, and only while that is a pgbouncer
	if [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = pgbouncer ]; then
		# SIGTERM: immediate shutdown, clients and server connections closed
		kill -TERM "$pid" 2>/dev/null
		for i in $(seq 1 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.05
		done
		kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
	fi
	rm -rf "$PGBOUNCER_DIR"
	PGBOUNCER_DIR=
}
