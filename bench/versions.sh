#!/usr/bin/env bash
# bench/versions.sh: the hot and stays scenarios of bench/run.sh on each
# PostgreSQL major, one after the other on this machine, and their ratios side
# by side (issue 29, scenario 5).  15 runs here; 17 and 18 run in the Debian
# chroots of the version stages (test/versions/chroot.sh makes them, or finds
# them cached), each building and installing the extension there and
# starting its own private cluster.  The ratios of one major are measured side
# by side in its own run; the majors' absolute figures are from runs minutes
# apart, so compare the ratios, not the tps.
#
# Environment:
#   BENCH_VERSIONS     the majors (default "15 17 18")
#   BENCH_SECONDS      seconds per pgbench run (default 5: about 4 minutes a major)
#   BENCH_HOT_CLIENTS  client counts of the hot scenario (default 32)
#   BENCH_STAY_CLIENTS clients of the stays scenario (default 32)
set -euo pipefail
cd "$(dirname "$0")/.."
. test/versions/chroot.sh

VERSIONS=${BENCH_VERSIONS:-15 17 18}
SECS=${BENCH_SECONDS:-5}
HOT=${BENCH_HOT_CLIENTS:-32}
STAYS=${BENCH_STAY_CLIENTS:-32}
out=$(mktemp -d /tmp/booking-bench-versions.XXXXXX)
CHROOT=
trap '[ -z "$CHROOT" ] || chroot_umount; rm -rf "$out"' EXIT

settings="BENCH_SECONDS=$SECS BENCH_HOT_CLIENTS='$HOT' BENCH_STAY_CLIENTS=$STAYS"
for m in $VERSIONS; do
	echo "== PostgreSQL $m"
	if [ "$m" = 15 ]; then
		env BENCH_SECONDS="$SECS" BENCH_HOT_CLIENTS="$HOT" BENCH_STAY_CLIENTS="$STAYS" \
			BENCH_PLOT="$out/throughput-15.png" bash bench/run.sh hot stays >"$out/$m.log" 2>&1 ||
			{ tail -n 30 "$out/$m.log"; exit 1; }
	else
		chroot_ready "$m"
		chroot_mount
		rm -rf "$CHROOT/build/bench"
		mkdir -p "$CHROOT/build/bench"
		git ls-files -z --cached --others --exclude-standard | tar -c --null -T - -f - | tar -x -C "$CHROOT/build/bench"
		in_chroot "cd /build/bench && $settings BOOKING_PG_BIN=/usr/lib/postgresql/$m/bin BENCH_PLOT=/tmp/throughput.png \
			bash bench/run.sh hot stays" >"$out/$m.log" 2>&1 ||
			{ tail -n 30 "$out/$m.log"; chroot_umount; CHROOT=; exit 1; }
		chroot_umount
		CHROOT=
	fi
	grep -A40 '^== targets' "$out/$m.log" | sed 's/^/  /'
done

# the value of a closing-table line of a major's run: its first decimal
value() {
	awk -v d="$2" 'index($0, d) == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+[.][0-9]+$/) { print $i; exit } }' \
		"$out/$1.log"
}
echo
echo "== ratios per major (BENCH_SECONDS=$SECS, hot at $HOT clients, stays at $STAYS)"
printf "%-52s" ""
for m in $VERSIONS; do printf " %8s" "PG $m"; done
echo
for d in "reserve_seat / plpgsql at $HOT clients" "reserve_seat / client-side flow at $HOT clients" \
	"reserve_seat / floor at $HOT clients" "striped reserve_seat / striped floor at $HOT clients" \
	"reserve_stay / raw insert at $STAYS clients" "reserve_stay / PL/pgSQL at $STAYS clients"; do
	printf "%-52s" "$d"
	for m in $VERSIONS; do printf " %8s" "$(value "$m" "$d")"; done
	echo
done
