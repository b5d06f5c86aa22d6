# test/versions/chroot.sh: sourced by test/versions/stage.sh (not a test).
#
# A Debian chroot per PostgreSQL major that Debian 12 does not ship: 17 from
# Debian 13 (trixie), 18 from unstable (sid), made with debootstrap
# --variant=minbase from the same Debian mirror the host uses, holding that
# major's server, its development files, pgTAP, the Debian packaging tools
# and, for 17, what Citus builds with.  It is cached between runs on one
# machine (BOOKING_CHROOT_CACHE, default /var/cache/booking-chroot/<suite>)
# and rebuilt when missing or when the package list it was made with
# changed.  Inside it nothing starts a service (policy-rc.d), and no cluster
# of its own is created (create_main_cluster = false); the tests start
# theirs in the chroot's /tmp.  Nothing of it touches the host's PostgreSQL.
#
#   chroot_suite MAJOR          the Debian suite of a major
#   chroot_ready MAJOR          makes (or finds, or waits for) the chroot; sets CHROOT
#   chroot_mount / chroot_umount   /proc and /dev for the time of a stage
#   in_chroot CMD...            runs CMD in it, as root, in /build/booking

CHROOT_CACHE=${BOOKING_CHROOT_CACHE:-/var/cache/booking-chroot}
CHROOT_MIRROR=${BOOKING_DEBIAN_MIRROR:-http://deb.debian.org/debian}

chroot_suite() {
	case $1 in
	17) echo trixie ;;
	18) echo sid ;;
	*) return 1 ;;
	esac
}

# the packages of a major's chroot; a change of this list rebuilds the chroot
chroot_packages() {
	local m=$1
	echo "postgresql-$m postgresql-server-dev-$m postgresql-$m-pgtap libtap-parser-sourcehandler-pgtap-perl" \
		"make gcc build-essential debhelper postgresql-server-dev-all dpkg-dev lintian"
	# Citus 13.2 supports 17: what ../shared/vendor/citus/build.sh builds with
	[ "$m" = 17 ] && echo "libicu-dev libcurl4-openssl-dev liblz4-dev libzstd-dev libkrb5-dev libssl-dev patch"
	return 0
}

chroot_mount() {
	mountpoint -q "$CHROOT/proc" || mount -t proc proc "$CHROOT/proc"
	# /dev with its submounts: /dev/shm holds PostgreSQL's shared memory
	mountpoint -q "$CHROOT/dev" || mount --rbind /dev "$CHROOT/dev"
	cp /etc/resolv.conf "$CHROOT/etc/resolv.conf" 2>/dev/null || true
}

chroot_umount() {
	[ -n "${CHROOT:-}" ] || return 0
	mountpoint -q "$CHROOT/dev" && umount -R -l "$CHROOT/dev"
	mountpoint -q "$CHROOT/proc" && umount -l "$CHROOT/proc"
	return 0
}

in_chroot() {
	chroot "$CHROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive ${CHROOT_ENV:-} \
		bash -c "cd /build/booking 2>/dev/null || cd /; $*"
}

# one maker at a time per suite: test/run.sh makes the chroots in the
# background from its start, and a stage that needs one waits for it here
chroot_ready() {
	local m=$1 suite lock rc
	suite=$(chroot_suite "$m") || { echo "no Debian suite known for PostgreSQL $m" >&2; return 1; }
	mkdir -p "$CHROOT_CACHE"
	exec {lock}>"$CHROOT_CACHE/.$suite.lock"
	flock "$lock"
	chroot_make "$m" "$suite"
	rc=$?
	exec {lock}>&-
	return $rc
}

chroot_make() {
	local m=$1 suite=$2 want tmp
	CHROOT=$CHROOT_CACHE/$suite
	want=$(chroot_packages "$m" | tr '\n' ' ')
	if [ -f "$CHROOT/.booking-ready" ] && [ "$(cat "$CHROOT/.booking-ready")" = "$want" ]; then
		echo "# chroot $CHROOT ($suite) is ready (cached)"
		return 0
	fi
	echo "# making the chroot $CHROOT ($suite, PostgreSQL $m)"
	command -v debootstrap >/dev/null || {
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
	} || return 1
	tmp=$CHROOT.tmp
	CHROOT=$tmp chroot_umount
	rm -rf "$tmp"
	mkdir -p "$CHROOT_CACHE"
	debootstrap --variant=minbase "$suite" "$tmp" "$CHROOT_MIRROR" >"$CHROOT_CACHE/$suite.debootstrap.log" 2>&1 ||
		{ tail -n 20 "$CHROOT_CACHE/$suite.debootstrap.log"; return 1; }
	# sid's Release file on the mirror can be past its Valid-Until date
	echo 'Acquire::Check-Valid-Until "false";' >"$tmp/etc/apt/apt.conf.d/99booking"
	printf '#!/bin/sh\nexit 101\n' >"$tmp/usr/sbin/policy-rc.d"
	chmod 755 "$tmp/usr/sbin/policy-rc.d"
	local real=$CHROOT
	CHROOT=$tmp
	chroot_mount
	# postgresql-common's post-install needs /proc; no main cluster
	if ! in_chroot "apt-get update -qq && apt-get install -y -qq --no-install-recommends postgresql-common >/tmp/apt.log 2>&1 &&
			sed -i 's/^#\\?create_main_cluster.*/create_main_cluster = false/' /etc/postgresql-common/createcluster.conf &&
			apt-get install -y -qq --no-install-recommends $want >>/tmp/apt.log 2>&1"; then
		tail -n 20 "$tmp/tmp/apt.log"
		chroot_umount
		CHROOT=$real
		return 1
	fi
	chroot_umount
	echo "$want" >"$tmp/.booking-ready"
	rm -rf "$real"
	mv "$tmp" "$real"
	CHROOT=$real
	echo "# chroot $CHROOT ready: $(in_chroot "/usr/lib/postgresql/$m/bin/pg_config --version")"
}
