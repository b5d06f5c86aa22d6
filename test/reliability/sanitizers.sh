#!/usr/bin/env bash
# sanitizers.sh: the extension under AddressSanitizer and UndefinedBehavior-
# Sanitizer.  It builds a copy of the source (never the checkout itself)
# with -fsanitize=address,undefined -fno-sanitize-recover=all and assertions,
# starts a cluster of its own with gcc's ASan runtime preloaded into the
# postgres processes (LD_PRELOAD in a wrapper that pg_ctl -p starts, with a
# stub swift_demangle explained below; detect_leaks=0, since the postmaster
# "leaks" by design; reports go to files under log_path) and
# dynamic_library_path = '<the sanitizer build>:$libdir', so that this
# cluster loads the instrumented booking.so while every other cluster keeps
# the installed one.  Then, against that cluster:
#  - the whole pg_regress and isolation suite (make installcheck in the
#    copy, so results and diffs never touch the checkout): all tests pass;
#  - the hostile calls of hostile.sql, at each isolation level: the session
#    survives them (their expected answers are hostile.sh's business);
#  - a short concurrent sale and stay race with pgbench: 0 failures;
#  - and no sanitizer report was written, no backend died;
#  - last, a control: a one-byte heap overflow in a probe function built the
#    same way is reported, so a silent run means something.
# Skip it with BOOKING_SANITIZERS=0 (test/run.sh passes it through).
set -u
cd "$(dirname "$0")" || exit 1
. ./lib.bash

ROOT=$(cd ../.. && pwd)
ASAN_PORT=${BOOKING_ASAN_PORT:-$((${PGPORT:-54329} + 3))}
PG_CONFIG=$REL_PGBIN/pg_config

libasan=$(gcc -print-file-name=libasan.so 2>/dev/null)
libasan=$(readlink -f "$libasan" 2>/dev/null)
if [ -z "$libasan" ] || [ ! -f "$libasan" ]; then
	fail "gcc's AddressSanitizer runtime (libasan.so) is installed"
	rel_done
fi

# 1. the instrumented build, in a copy of the source
build="$REL_TMP/build"
mkdir -p "$build"
cp -r "$ROOT/src" "$ROOT/sql" "$ROOT/Makefile" "$ROOT/booking.control" "$build/"
mkdir -p "$build/test"
cp -r "$ROOT/test/sql" "$ROOT/test/specs" "$build/test/"
cp -r "$ROOT/expected" "$build/"
find "$build/src" \( -name "*.o" -o -name "*.bc" \) -delete; rm -f "$build"/*.so
san_flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer -g -DUSE_ASSERT_CHECKING"
started=$SECONDS
if make -s -C "$build" PG_CONFIG="$PG_CONFIG" with_llvm=no BOOKING_CFLAGS="$san_flags" all >"$REL_TMP/build.log" 2>&1 &&
	[ -f "$build/booking.so" ]; then
	pass "built booking.so with -fsanitize=address,undefined in a copy of the source ($((SECONDS - started)) s)"
else
	fail "built booking.so with -fsanitize=address,undefined in a copy of the source"
	tail -n 20 "$REL_TMP/build.log" | sed 's/^/#   /'
	rel_done
fi
if nm -D "$build/booking.so" | grep -q '__asan_report' && nm -D "$build/booking.so" | grep -q '__ubsan_handle'; then
	pass "the build is instrumented (it calls __asan_report_* and __ubsan_handle_*)"
else
	fail "the build is instrumented (it calls __asan_report_* and __ubsan_handle_*)"
fi

# 2. a cluster of its own that loads it
san_logs=$(mktemp -d /tmp/booking-sanitizer-logs.XXXXXX)
[ "$(id -u)" = 0 ] && chown postgres:postgres "$san_logs"
REL_CLUSTERS="$REL_CLUSTERS $san_logs"
# The runtime goes into the postgres processes only (not pg_ctl or a shell).
# A stub swift_demangle is preloaded after it: the runtime is initialized by
# the first malloc, which in a stock postgres happens inside libgpg-error's
# constructor, inside bindtextdomain(), holding glibc's _nl_state_lock; the
# runtime's init then probes dlsym("swift_demangle"), and the dlerror() that
# follows a failed probe translates its message under the same lock, which
# corrupts it, and postgres hangs in its own bindtextdomain() before main.
# With the symbol present the probe succeeds and nothing is translated.
cat >"$REL_TMP/swift_stub.c" <<'EOF'
#include <stddef.h>
char *swift_demangle(const char *name, size_t len, char *out, size_t *outlen, unsigned flags);
char *swift_demangle(const char *name, size_t len, char *out, size_t *outlen, unsigned flags) { return NULL; }
EOF
gcc -shared -fPIC -o "$REL_TMP/swift_stub.so" "$REL_TMP/swift_stub.c" ||
	{ fail "build the swift_demangle stub"; rel_done; }
REL_POSTGRES="$REL_TMP/postgres-asan"
cat >"$REL_POSTGRES" <<EOF
#!/bin/sh
export LD_PRELOAD='$libasan $REL_TMP/swift_stub.so'
export ASAN_OPTIONS='detect_leaks=0:abort_on_error=1:log_path=$san_logs/asan'
export UBSAN_OPTIONS='print_stacktrace=1:log_path=$san_logs/ubsan'
exec '$REL_PGBIN/postgres' "\$@"
EOF
chmod 755 "$REL_POSTGRES"
# preloaded, as the test command's cluster is: the regress test stats
# counts in shared memory (and the worker and shmem code run under ASan)
if rel_cluster_start asan "$ASAN_PORT" "dynamic_library_path = '$build:\$libdir'" "max_connections = 60" \
	"shared_buffers = 128MB" "max_prepared_transactions = 10" "jit = off" \
	"shared_preload_libraries = 'booking'"; then
	pass "a cluster of its own on port $ASAN_PORT, with the ASan runtime preloaded"
else
	fail "a cluster of its own on port $ASAN_PORT, with the ASan runtime preloaded"
	ls "$san_logs" | sed 's/^/#   report: /'
	rel_done
fi
maps=$(q "LOAD 'booking'; SELECT pg_read_file('/proc/self/maps')" 2>&1)
if echo "$maps" | grep -q "$build/booking.so" && echo "$maps" | grep -q 'libasan'; then
	pass "a backend of that cluster maps the sanitizer build of booking.so and libasan"
else
	fail "a backend of that cluster maps the sanitizer build of booking.so and libasan"
	echo "$maps" | grep -E 'booking|asan|ERROR' | head -n 5 | sed 's/^/#   /'
fi

# 3. pg_regress and the isolation specs, from the copy: results and diffs
# land there, so this never collides with another run in the checkout
started=$SECONDS
(cd "$build" && PGHOST=$REL_HOST PGPORT=$REL_PORT PGUSER=postgres \
	make -s installcheck PG_CONFIG="$PG_CONFIG" with_llvm=no) >"$REL_TMP/installcheck.out" 2>&1
rc=$?
n_ok=$(grep -cE '^(ok|test) .*\.\.\. ok|^ok [0-9]+ ' "$REL_TMP/installcheck.out")
n_bad=$(grep -cE '\.\.\. FAILED|^not ok [0-9]+ ' "$REL_TMP/installcheck.out")
if [ $rc -eq 0 ] && [ "$n_bad" -eq 0 ] && [ "$n_ok" -gt 0 ]; then
	pass "make installcheck against it: all $n_ok pg_regress and isolation tests pass ($((SECONDS - started)) s)"
else
	fail "make installcheck against it: $n_ok tests pass, $n_bad fail (rc $rc)"
	grep -E 'FAILED|not ok|failed|Error' "$REL_TMP/installcheck.out" | head -n 20 | sed 's/^/#   /'
	[ -f "$build/test/regression.diffs" ] && head -n 60 "$build/test/regression.diffs" | sed 's/^/#   /'
fi

# 4. the hostile calls, at each isolation level
rel_db booking_rel_asan_hostile
fixture=$(rel_psql -At -d "$REL_DB" -f hostile_fixture.sql 2>&1)
[ "$fixture" = "fixture ready" ] || { fail "the hostile fixture"; echo "$fixture" | tail -n 5 | sed 's/^/#   /'; }
for level in "read committed" "repeatable read" "serializable"; do
	PGOPTIONS="-c default_transaction_isolation=${level// /\\ }" \
		rel_psql -At -d "$REL_DB" -f hostile.sql >"$REL_TMP/hostile.out" 2>&1
	rc=$?
	n=$(grep -cE '^(ok|not ok) - \[' "$REL_TMP/hostile.out")
	if [ $rc -eq 0 ] && [ "$n" -ge 60 ]; then
		pass "[$level] the session survives all $n hostile calls ($(grep -c '^not ok' "$REL_TMP/hostile.out") wrong answers, see hostile.sh)"
	else
		fail "[$level] the session survives all the hostile calls (psql rc $rc after $n calls)"
		grep -vE '^ok - ' "$REL_TMP/hostile.out" | tail -n 5 | sed 's/^/#   /'
		rel_wait_ready 60
	fi
done

# 5. concurrency: waits, guarded subtransactions, stripes
sale=$(q "SELECT booking.create_resource('asan sale', 500)")
room0=$(q "SELECT min(id) - 1 FROM (SELECT booking.create_resource('asan room ' || n) AS id FROM generate_series(1, 3) n) s")
group0=$(q "SELECT min(id) - 1 FROM (SELECT booking.create_resource('asan family room ' || n) AS id FROM generate_series(1, 4) n) s")
"$REL_PGBIN/pgbench" -n -h "$REL_HOST" -p "$REL_PORT" -U postgres -c 16 -j 2 -t 60 -D sale="$sale" \
	-f crash_seat.pgb@6 -f crash_cancel.pgb@1 -f crash_confirm.pgb@1 "$REL_DB" >"$REL_TMP/pgbench.seats" 2>&1 &
p1=$!
"$REL_PGBIN/pgbench" -n -h "$REL_HOST" -p "$REL_PORT" -U postgres -c 8 -j 2 -t 60 -D room0="$room0" -D group0="$group0" \
	-f crash_stay.pgb@3 -f crash_group.pgb@1 "$REL_DB" >"$REL_TMP/pgbench.stays" 2>&1
rc2=$?
wait $p1
rc1=$?
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && grep -q '^number of failed transactions: 0 ' "$REL_TMP/pgbench.seats" &&
	grep -q '^number of failed transactions: 0 ' "$REL_TMP/pgbench.stays"; then
	pass "a concurrent sale (16 clients, holds, confirms, cancels) and stay race (8 clients): 0 failures"
else
	fail "a concurrent sale and stay race: 0 failures (rc $rc1/$rc2)"
	grep -hE 'failed|aborted|ERROR' "$REL_TMP/pgbench.seats" "$REL_TMP/pgbench.stays" | head -n 10 | sed 's/^/#   /'
fi
check_invariants "under the sanitizers"

# 6. no report
reports=$(ls "$san_logs" 2>/dev/null)
if [ -z "$reports" ]; then
	pass "no AddressSanitizer or UndefinedBehaviorSanitizer report was written"
else
	fail "no AddressSanitizer or UndefinedBehaviorSanitizer report was written"
	for f in "$san_logs"/*; do
		echo "#   $f:"
		grep -E 'ERROR|runtime error|SUMMARY|#[0-9] ' "$f" | head -n 12 | sed 's/^/#     /'
	done
fi
if grep -q "terminated by signal" "$REL_CDIR/server.log"; then
	fail "no backend of the sanitizer cluster died"
	grep "terminated by signal" "$REL_CDIR/server.log" | head -n 5 | sed 's/^/#   /'
else
	pass "no backend of the sanitizer cluster died"
fi

# 7. the setup can see a bug: a one-byte heap overflow in a probe function
# built the same way is reported (this crashes the cluster, so it runs last)
cat >"$REL_TMP/probe.c" <<'EOF'
#include "postgres.h"
#include "fmgr.h"
PG_MODULE_MAGIC;
PG_FUNCTION_INFO_V1(asan_probe);
Datum asan_probe(PG_FUNCTION_ARGS);
Datum
asan_probe(PG_FUNCTION_ARGS)
{
	char	   *volatile p = malloc(8);

	p[8] = 1;					/* one byte past the end */
	free(p);
	PG_RETURN_INT32(0);
}
EOF
if gcc -shared -fPIC $san_flags -I"$("$PG_CONFIG" --includedir-server)" -o "$REL_TMP/probe.so" "$REL_TMP/probe.c" 2>"$REL_TMP/probe.log"; then
	q "CREATE FUNCTION asan_probe() RETURNS int AS '$REL_TMP/probe.so', 'asan_probe' LANGUAGE C" >/dev/null
	q "SELECT asan_probe()" >/dev/null 2>&1
	sleep 1
	if grep -qs "heap-buffer-overflow" "$san_logs"/asan.*; then
		pass "control: a one-byte heap overflow in a probe function is reported (heap-buffer-overflow)"
	else
		fail "control: a one-byte heap overflow in a probe function is reported (heap-buffer-overflow)"
	fi
else
	fail "control: build the heap-overflow probe"
	sed 's/^/#   /' "$REL_TMP/probe.log" | head -n 5
fi

rel_done
