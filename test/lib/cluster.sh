# test/lib/cluster.sh: sourced by the demo, the tests and the benchmark.
# Installs what is missing, builds and installs the extension, and runs a
# private throwaway PostgreSQL cluster (15, or BOOKING_PG_BIN's major) as the postgres user: its own data
# dir, socket dir and port. It never touches a cluster it did not create.
# The cluster's directory is made under TMPDIR (default /tmp), so that several
# checkouts testing side by side keep their clusters apart; TMPDIR must be a
# directory the postgres user can enter, and short (the socket path is
# limited to 107 bytes).

# BOOKING_PG_BIN may name the bin/ of a relocated copy of PostgreSQL 15, so that
# several checkouts can build, install and test side by side without sharing
# one installed booking.so
BOOKING_PG_BIN=${BOOKING_PG_BIN:-/usr/lib/postgresql/15/bin}
# the major of that installation, from its path (Debian's layout), else 15;
# the version stages run these scripts inside a chroot of that major
BOOKING_PG_MAJOR=${BOOKING_PG_MAJOR:-$(echo "$BOOKING_PG_BIN" | sed -n 's#.*/postgresql/\([0-9][0-9]*\)/bin/*$#\1#p')}
BOOKING_PG_MAJOR=${BOOKING_PG_MAJOR:-15}

booking_need_packages() {
	local m=$BOOKING_PG_MAJOR
	local pkgs="postgresql-$m postgresql-server-dev-$m postgresql-$m-pgtap libtap-parser-sourcehandler-pgtap-perl make gcc $*"
	local missing="" p
	for p in $pkgs; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
	done
	if [ -n "$missing" ]; then
		echo "== installing:$missing"
		export DEBIAN_FRONTEND=noninteractive
		apt-get update -qq
		apt-get install -y -qq --no-install-recommends $missing >/dev/null
	fi
	export PATH="$BOOKING_PG_BIN:$PATH"
}

booking_build_install() {
	echo "== building and installing the extension"
	make -s PG_CONFIG=$BOOKING_PG_BIN/pg_config BOOKING_CFLAGS="${BOOKING_CFLAGS:-}" >/dev/null
	make -s PG_CONFIG=$BOOKING_PG_BIN/pg_config install >/dev/null
}

# booking_cluster_start PORT [postgresql.conf lines...]
booking_cluster_start() {
	BOOKING_PORT=$1; shift
	BOOKING_DIR=$(mktemp -d "${TMPDIR:-/tmp}/booking-cluster.XXXXXX")
	chown postgres:postgres "$BOOKING_DIR"
	chmod 700 "$BOOKING_DIR"
	runuser -u postgres -- $BOOKING_PG_BIN/initdb -D "$BOOKING_DIR/data" -U postgres \
		--auth=trust --no-sync -E UTF8 --locale=C.UTF-8 >"$BOOKING_DIR/initdb.log" 2>&1 ||
		{ cat "$BOOKING_DIR/initdb.log"; return 1; }
	{
		echo "port = $BOOKING_PORT"
		echo "listen_addresses = ''"
		echo "unix_socket_directories = '$BOOKING_DIR'"
		echo "max_connections = 200"
		echo "shared_buffers = 256MB"
		echo "max_prepared_transactions = 10"
		echo "log_min_messages = warning"
		for line in "$@"; do echo "$line"; done
	} >>"$BOOKING_DIR/data/postgresql.conf"
	runuser -u postgres -- $BOOKING_PG_BIN/pg_ctl -D "$BOOKING_DIR/data" -l "$BOOKING_DIR/server.log" -w -t 60 start >/dev/null ||
		{ cat "$BOOKING_DIR/server.log"; return 1; }
	export PGHOST="$BOOKING_DIR" PGPORT="$BOOKING_PORT" PGUSER=postgres PGDATABASE=postgres
	trap booking_cluster_stop EXIT
}

booking_cluster_stop() {
	if [ -n "${BOOKING_DIR:-}" ] && [ -d "$BOOKING_DIR/data" ]; then
		runuser -u postgres -- $BOOKING_PG_BIN/pg_ctl -D "$BOOKING_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
		rm -rf "$BOOKING_DIR"
	fi
	BOOKING_DIR=
}
