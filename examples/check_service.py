#!/usr/bin/python3
"""The HTTP contract both example services must keep (Python and Node alike).

Usage: check_service.py URL DATABASE
URL is the running service (http://127.0.0.1:PORT); DATABASE is the database it
uses. psql, with the environment's PGHOST/PGPORT/PGUSER (a superuser), creates
the sessions and reads the tables to check what the HTTP answers claim.

Prints one "ok - ..." / "not ok - ..." line per check and exits 1 if any failed.
Standard library only.
"""

import json
import os
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid

BURST = 50          # concurrent requests at a one-seat session
BUSY_APP = "booking example busy holder"

url, database = sys.argv[1], sys.argv[2]
failed = 0


def check(description, got, expected):
    global failed
    if got == expected:
        print(f"ok - {description}")
    else:
        failed += 1
        print(f"not ok - {description}")
        print(f"#   expected: {expected!r}")
        print(f"#   got:      {got!r}")


def sql(query):
    out = subprocess.run(["psql", "-X", "-At", "-v", "ON_ERROR_STOP=1", "-d", database, "-c", query],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def request(method, path, body=None, key=None, raw=None):
    """Returns (status, parsed JSON body, headers)."""
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
    req = urllib.request.Request(url + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if key is not None:
        req.add_header("Idempotency-Key", key)
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read()), resp.headers
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read()), e.headers


def reserve(session, guest, quantity=1, key=None, **extra):
    return request("POST", f"/sessions/{session}/reserve", dict(guest=guest, quantity=quantity, **extra), key)


def new_session(name, capacity):
    return int(sql(f"SELECT booking.create_resource('{name}', {capacity})"))


# -- 1. the last seat: BURST requests at once, exactly one 201 -----------------

one_seat = new_session("one seat", 1)
keys = [str(uuid.uuid4()) for _ in range(BURST)]
answers = [None] * BURST
barrier = threading.Barrier(BURST)


def fire(i):
    barrier.wait()
    answers[i] = reserve(one_seat, f"guest-{i}", key=keys[i])


threads = [threading.Thread(target=fire, args=(i,)) for i in range(BURST)]
for t in threads:
    t.start()
for t in threads:
    t.join()

statuses = sorted(a[0] for a in answers)
check(f"{BURST} concurrent requests at a one-seat session: exactly one 201",
      statuses.count(201), 1)
check(f"{BURST} concurrent requests at a one-seat session: the other {BURST - 1} are 409",
      statuses.count(409), BURST - 1)
winner = next((i for i, a in enumerate(answers) if a[0] == 201), None)
losers = [i for i, a in enumerate(answers) if a[0] == 409]
win_body = answers[winner][1] if winner is not None else {}
check("the 201 body is ok, not replayed, with a booking id",
      (win_body.get("code"), win_body.get("replayed"), isinstance(win_body.get("booking_id"), int)),
      ("ok", False, True))
check("every 409 body is sold_out, not replayed, with no booking id",
      {(answers[i][1].get("code"), answers[i][1].get("replayed"), answers[i][1].get("booking_id")) for i in losers},
      {("sold_out", False, None)})
check("every body carries a message",
      all(isinstance(a[1].get("message"), str) and a[1].get("message") for a in answers), True)
check("the database holds exactly one booking for the session, the winner's",
      sql(f"SELECT count(*), max(id), max(guest) FROM booking.bookings WHERE resource_id = {one_seat}"),
      f"1|{win_body.get('booking_id')}|guest-{winner}")
check("GET /sessions/<id> says 0 seats left",
      request("GET", f"/sessions/{one_seat}")[:2], (200, {"session": one_seat, "seats_left": 0}))

# -- 2. Idempotency-Key: a repeated request replays the first answer ------------

if winner is not None:
    status, body, _ = reserve(one_seat, f"guest-{winner}", key=keys[winner])
    check("the winner's request repeated with its key: same status and body, replayed = true",
          (status, body), (201, dict(win_body, replayed=True)))
if losers:
    loser = losers[0]
    status, body, _ = reserve(one_seat, f"guest-{loser}", key=keys[loser])
    check("a loser's request repeated with its key: the stored sold_out, replayed = true",
          (status, body), (409, dict(answers[loser][1], replayed=True)))

five = new_session("five seats", 5)
key = str(uuid.uuid4())
first = reserve(five, "dana", 2, key=key)
second = reserve(five, "dana", 2, key=key)
check("a new key: 201, not replayed", (first[0], first[1].get("code"), first[1].get("replayed")), (201, "ok", False))
check("the same request again with the same key: same body with replayed = true",
      (second[0], second[1]), (201, dict(first[1], replayed=True)))
check("the replay did no work: one booking, 2 seats taken",
      sql(f"SELECT count(*), sum(quantity) FROM booking.bookings WHERE resource_id = {five}"), "1|2")
status, body, _ = reserve(five, "dana", 3, key=key)
check("the same key with another quantity: 422 idempotency_mismatch, not replayed",
      (status, body.get("code"), body.get("replayed"), body.get("booking_id")), (422, "idempotency_mismatch", False, None))
check("no request without a key is ever replayed",
      [reserve(five, "erin")[1].get("replayed") for _ in range(2)], [False, False])

# -- 3. cancel, then the seat is for sale again ----------------------------------

if winner is not None:
    bid = win_body.get("booking_id")
    status, body, _ = request("POST", f"/bookings/{bid}/cancel")
    check("cancel the winner's booking: 200 ok", (status, body.get("code"), body.get("booking_id")), (200, "ok", bid))
    status, body, _ = request("POST", f"/bookings/{bid}/cancel")
    check("cancel it again: 409 invalid_state", (status, body.get("code")), (409, "invalid_state"))
    check("one seat left after the cancel", request("GET", f"/sessions/{one_seat}")[1].get("seats_left"), 1)
    if losers:
        status, body, _ = reserve(one_seat, f"guest-{loser}", key=keys[loser])
        check("the loser's old key still replays its stored sold_out",
              (status, body.get("code"), body.get("replayed")), (409, "sold_out", True))
        status, body, _ = reserve(one_seat, f"guest-{loser}", key=str(uuid.uuid4()))
        check("the loser with a new key gets the freed seat: 201",
              (status, body.get("code"), body.get("replayed")), (201, "ok", False))

# -- 4. a hold, confirmed --------------------------------------------------------

key = str(uuid.uuid4())
status, body, _ = reserve(five, "fay", key=key, hold_seconds=600)
held = body.get("booking_id")
check("a hold: 201, the booking is pending",
      (status, body.get("code"), sql(f"SELECT status FROM booking.bookings WHERE id = {held or 0}")),
      (201, "ok", "pending"))
ckey = str(uuid.uuid4())
status, body, _ = request("POST", f"/bookings/{held}/confirm", key=ckey)
check("confirm it: 200 ok, the booking is confirmed",
      (status, body.get("code"), body.get("booking_id"), sql(f"SELECT status FROM booking.bookings WHERE id = {held or 0}")),
      (200, "ok", held, "confirmed"))
status, body, _ = request("POST", f"/bookings/{held}/confirm", key=ckey)
check("confirm repeated with its key: replayed", (status, body.get("code"), body.get("replayed")), (200, "ok", True))

# -- 4b. reduce: give back some seats of a booking -----------------------------------

four = new_session("reduce", 4)
status, body, _ = reserve(four, "ivy", 3)
rid = body.get("booking_id")
rkey = str(uuid.uuid4())
status, body, _ = request("POST", f"/bookings/{rid}/reduce", {"quantity": 2}, key=rkey)
check("reduce a booking of 3 seats by 2: 200 ok, it holds 1, 3 seats left",
      (status, body.get("code"), body.get("booking_id"),
       sql(f"SELECT quantity FROM booking.bookings WHERE id = {rid or 0}"),
       request("GET", f"/sessions/{four}")[1].get("seats_left")),
      (200, "ok", rid, "1", 3))
status, body, _ = request("POST", f"/bookings/{rid}/reduce", {"quantity": 2}, key=rkey)
check("the same reduce repeated with its key: replayed, nothing more given back",
      (status, body.get("replayed"), request("GET", f"/sessions/{four}")[1].get("seats_left")), (200, True, 3))
status, body, _ = request("POST", f"/bookings/{rid}/reduce", {"quantity": 2})
check("reduce by more than it holds: 409 invalid_state", (status, body.get("code")), (409, "invalid_state"))
status, body, _ = request("POST", f"/bookings/{rid}/reduce", {"quantity": 0})
check("reduce by 0: 400 with the extension's message and what arrived (SQLSTATE 22023)",
      (status, body), (400, {"code": "bad_request", "message": "quantity must be greater than zero",
                             "detail": "The quantity given is 0."}))
status, body, _ = request("POST", f"/bookings/{rid}/reduce", {"quantity": "one"})
check("a quantity that is not a number: 400 bad_request", (status, body.get("code")), (400, "bad_request"))
status, body, _ = request("POST", f"/bookings/{rid}/reduce", {"quantity": 1})
check("reduce by the last seat: 200 ok, the booking is cancelled, 4 seats left",
      (status, body.get("code"), sql(f"SELECT status FROM booking.bookings WHERE id = {rid or 0}"),
       request("GET", f"/sessions/{four}")[1].get("seats_left")),
      (200, "ok", "cancelled", 4))

# -- 5. client errors --------------------------------------------------------------

check("GET an unknown session: 404 not_found",
      (lambda r: (r[0], r[1].get("code")))(request("GET", "/sessions/999999")), (404, "not_found"))
status, body, _ = reserve(999999, "gus")
check("reserve on an unknown session: 404 not_found from the extension",
      (status, body.get("code"), body.get("replayed")), (404, "not_found", False))
status, body, _ = reserve(five, "gus", 0)
check("quantity 0: 400 with the extension's message (SQLSTATE 22023)",
      (status, body), (400, {"code": "bad_request", "message": "quantity must be greater than zero",
                             "detail": "The quantity given is 0."}))
status, body, _ = reserve(five, "")
check("an empty guest: 400 guest must not be empty",
      (status, body), (400, {"code": "bad_request", "message": "guest must not be empty",
                             "detail": "The guest given is an empty string."}))
status, body, _ = reserve(five, "gus", key="k" * 256)
check("an Idempotency-Key over 255 bytes: 400",
      (status, body), (400, {"code": "bad_request", "message": "idempotency_key must be at most 255 bytes long",
                             "detail": "The idempotency_key given is 256 bytes long."}))
status, body, _ = request("POST", f"/sessions/{five}/reserve", raw=b"{not json")
check("a body that is not JSON: 400 bad_request", (status, body.get("code")), (400, "bad_request"))
status, body, _ = reserve(five, "gus", "two")
check("a quantity that is not a number: 400 bad_request", (status, body.get("code")), (400, "bad_request"))
# every SQLSTATE of class 22 is 400, not only the extension's 22004 and 22023:
# PostgreSQL raises 22003 while it reads the argument as an integer
status, body, _ = reserve(five, "gus", 2**31)
check("a quantity over 2^31 - 1: 400 bad_request (SQLSTATE 22003, integer out of range)",
      (status, body.get("code")), (400, "bad_request"))
check("after all of that: seats of the five-seat session",
      sql(f"SELECT taken FROM booking.resources WHERE id = {five}"), "5")

# -- 6. busy: 503 with Retry-After when the session stays locked -------------------
# (the service's role has booking.lock_timeout = 2s: examples/lib.sh; a burst of
# 50 at one seat ends in well under a second here, so the burst never sees busy)

locked = new_session("locked", 3)
env = dict(os.environ, PGAPPNAME=BUSY_APP, PGDATABASE=database)
holder = subprocess.Popen(["psql", "-X", "-q", "-c", "BEGIN",
                           "-c", f"SELECT 1 FROM booking.resources WHERE id = {locked} FOR UPDATE",
                           "-c", "SELECT pg_sleep(30)"],
                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
try:
    for _ in range(100):
        if sql(f"SELECT count(*) FROM pg_stat_activity WHERE application_name = '{BUSY_APP}' "
               "AND query LIKE '%pg_sleep%' AND state = 'active'") == "1":
            break
        time.sleep(0.05)
    started = time.monotonic()
    status, body, headers = reserve(locked, "hal", key=str(uuid.uuid4()))
    waited = time.monotonic() - started
    check("a session locked by another transaction: 503 busy with Retry-After: 1",
          (status, body.get("code"), headers.get("Retry-After")), (503, "busy", "1"))
    check("busy came after the role's booking.lock_timeout (2 s), not at once and not later",
          (waited >= 1.9, waited < 6), (True, True))
finally:
    sql(f"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '{BUSY_APP}'")
    holder.wait(timeout=30)
check("busy wrote nothing", sql(f"SELECT count(*) FROM booking.bookings WHERE resource_id = {locked}"), "0")

# -- 7. GET /metrics: booking.stats() in Prometheus's text format ---------------
# (only the services that serve it: EXAMPLE_METRICS=1; the counters need
# booking in shared_preload_libraries, else the page says why it has none)
if os.environ.get("EXAMPLE_METRICS") == "1":
    status, body, _ = request("POST", f"/sessions/{new_session('metrics', 5)}/reserve", {"guest": "metrics"})
    check("a reservation before GET /metrics: 201", status, 201)
    with urllib.request.urlopen(url + "/metrics", timeout=30) as resp:
        metrics_status, content_type, text = resp.status, resp.headers.get("Content-Type", ""), resp.read().decode()
    check("GET /metrics: 200 in the Prometheus text format 0.0.4",
          (metrics_status, content_type.startswith("text/plain; version=0.0.4")), (200, True))
    samples = {line.rsplit(" ", 1)[0]: line.rsplit(" ", 1)[1]
               for line in text.splitlines() if line and not line.startswith("#")}
    line = 'booking_calls_total{function="reserve_seat",code="ok"}'
    if sql("SELECT current_setting('shared_preload_libraries') ~ '(^|[ ,])booking([ ,]|$)'") == "t":
        check(f"/metrics has {line} >= 1 after a reservation",
              float(samples.get(line, "0")) >= 1, True)
        check("/metrics has the time and lock-wait totals of reserve_seat ok",
              all(f'{name}{{function="reserve_seat",code="ok"}}' in samples
                  for name in ("booking_call_seconds_total", "booking_call_max_seconds",
                               "booking_lock_wait_seconds_total")), True)
    else:
        check("/metrics without booking preloaded: no counts, and a comment that says why",
              (line in samples, "shared_preload_libraries" in text), (False, True))
    if sql("SELECT pg_catalog.to_regprocedure('booking.health()') IS NOT NULL") == "t":
        check("/metrics has booking.health()'s figures (booking_idempotency_keys, booking_lapsed_holds)",
              ("booking_idempotency_keys" in samples, "booking_lapsed_holds" in samples), (True, True))
    check("/metrics: every sample line is a name, optional labels and a number",
          all(re.fullmatch(r'[a-zA-Z_:][a-zA-Z0-9_:]*(\{.*\})? ', k + " ") and
              re.fullmatch(r"[-+]?(\d+(\.\d*)?([eE][-+]?\d+)?|NaN|Inf)", v)
              for k, v in samples.items()), True)

print(f"# {failed} check(s) failed" if failed else "# all checks passed")
sys.exit(1 if failed else 0)
