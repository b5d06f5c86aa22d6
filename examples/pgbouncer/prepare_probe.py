#!/usr/bin/python3
"""prepare_probe.py RESOURCE: psycopg's prepare_threshold through pgbouncer.

40 threads, each with its own connection (libpq's environment: pgbouncer's
socket, the web role), call booking.reserve_seat 20 times each, once with
psycopg's default prepare_threshold (5: the 6th run of a query on a connection
goes through a named prepared statement) and once with prepare_threshold=None
(never prepared).  Prints what each run got; exits 1 if the run with None had
any error.  The default's errors are only reported: how many there are depends
on which server connection pgbouncer hands out.
"""

import collections
import sys
import threading

import psycopg

THREADS, CALLS = 40, 20
CALL = "SELECT code FROM booking.reserve_seat(%s::bigint, %s::text, 1, lock_timeout => '2s')"
resource = int(sys.argv[1])


def run(threshold):
    codes, errors, lock = collections.Counter(), collections.Counter(), threading.Lock()

    def client(i):
        with psycopg.connect(autocommit=True, prepare_threshold=threshold) as conn:
            for _ in range(CALLS):
                try:
                    (code,) = conn.execute(CALL, (resource, f"probe-{i}")).fetchone()
                    with lock:
                        codes[code] += 1
                except psycopg.Error as e:
                    # the statement's name varies; the kind of error does not
                    with lock:
                        errors[f"{e.sqlstate} {type(e).__name__}"] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return codes, errors


failed = 0
for label, threshold in (("default (5)", 5), ("None", None)):
    codes, errors = run(threshold)
    print(f"# prepare_threshold={label}: {THREADS * CALLS} calls, answers {dict(codes)}, "
          f"{sum(errors.values())} errors {dict(errors)}")
    if threshold is None:
        if errors or codes != {"ok": THREADS * CALLS}:
            failed = 1
            print("not ok - psycopg with prepare_threshold=None through pgbouncer: every call answered, no error")
        else:
            print("ok - psycopg with prepare_threshold=None through pgbouncer: every call answered, no error")
sys.exit(failed)
