#!/usr/bin/python3
"""The psycopg 3 recipe of docs/clients.md, run against a real database.

Connects through libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE) as a
role with booking.grant_client's grants, and books on the seat resource
BOOKING_SEATS (capacity 10, empty) and the stay resource BOOKING_STAY. Prints
one "ok - " or "not ok - " line per check and exits 1 if any failed.
examples/clients/test.sh sets all of that up.

Debian 12: /usr/bin/python3 with python3-psycopg (psycopg 3.1).
"""

import dataclasses
import datetime
import os
import sys

import psycopg
from psycopg.rows import class_row
from psycopg.types.composite import CompositeInfo, register_composite
from psycopg.types.json import Jsonb


# -- the recipe -----------------------------------------------------------------

@dataclasses.dataclass
class Result:
    """booking.result, one attribute per column: SELECT * FROM booking.f(...)"""
    ok: bool
    code: str
    booking_id: int | None
    http_status: int
    message: str
    replayed: bool


RESERVE = """SELECT * FROM booking.reserve_seat(%(resource)s::bigint, %(guest)s::text, %(quantity)s::integer,
                                      hold => %(hold)s::interval, idempotency_key => %(key)s::text,
                                      metadata => %(metadata)s::jsonb)"""


def reserve_seat(conn, resource, guest, quantity=1, hold=None, key=None, metadata=None,
                 lock_timeout="2s"):
    """One reservation in its own transaction, with SET LOCAL lock_timeout:
    the setting ends with the transaction, so a pooled connection gets it back
    clean (and it works through a pooler in transaction mode)."""
    with conn.transaction():
        # SET takes no bind parameters: set_config(..., true) is SET LOCAL
        conn.execute("SELECT set_config('lock_timeout', %s, true)", (lock_timeout,))
        with conn.cursor(row_factory=class_row(Result)) as cur:
            cur.execute(RESERVE, {"resource": resource, "guest": guest, "quantity": quantity,
                                  "hold": hold, "key": key,
                                  "metadata": None if metadata is None else Jsonb(metadata)})
            return cur.fetchone()


def get_booking(conn, booking_id):
    """booking.get_booking: one row as a dict, or None for an unknown id."""
    with conn.cursor(row_factory=psycopg.rows.dict_row) as cur:
        cur.execute("SELECT * FROM booking.get_booking(%s::bigint)", (booking_id,))
        return cur.fetchone()


def http_response(result):
    """(status, body, headers) for a booking.result: the status is always its http_status
    (ok: 201 for a new booking, 200 for a change; waitlisted: 202; refusals: 404, 409, 410,
    422; busy: 503 with Retry-After)."""
    body = {"code": result.code, "message": result.message,
            "booking_id": result.booking_id, "replayed": result.replayed}
    headers = {"Retry-After": "1"} if result.code == "busy" else {}
    return result.http_status, body, headers


def error_response(error):
    """(status, body, headers) for a psycopg.Error: class 22 (data exception) is the
    client's request, 400; anything else is a server error, 500."""
    if error.sqlstate and error.sqlstate.startswith("22"):
        return 400, {"code": "bad_request", "message": error.diag.message_primary,
                     "detail": error.diag.message_detail}, {}
    return 500, {"code": "internal_error", "message": "The server could not process the request."}, {}


def call(conn, sql, params=()):
    """Runs one booking call and answers (status, body, headers), errors included."""
    try:
        with conn.transaction():
            with conn.cursor(row_factory=class_row(Result)) as cur:
                cur.execute(sql, params)
                return http_response(cur.fetchone())
    except psycopg.Error as e:
        return error_response(e)


# -- the checks -----------------------------------------------------------------

failures = 0


def check(name, got, want):
    global failures
    if got == want:
        print(f"ok - psycopg: {name}")
    else:
        failures += 1
        print(f"not ok - psycopg: {name}")
        print(f"#   got:  {got!r}")
        print(f"#   want: {want!r}")


def main():
    seats = int(os.environ["BOOKING_SEATS"])
    stay = int(os.environ["BOOKING_STAY"])
    order = {"order_id": "py-1001", "channel": "web", "lines": [1, 2]}

    # autocommit: every call below is its own transaction (conn.transaction())
    with psycopg.connect("", autocommit=True) as conn:
        # 1. a hold of 2 seats with the caller's metadata
        r = reserve_seat(conn, seats, "alice@example.com", 2, hold=datetime.timedelta(minutes=15),
                         metadata=order)
        status, body, _ = http_response(r)
        check("reserve_seat answers ok", (r.ok, r.code, r.replayed), (True, "ok", False))
        check("a new booking is HTTP 201", status, 201)
        check("booking_id is an int", isinstance(r.booking_id, int) and r.booking_id > 0, True)
        check("SET LOCAL lock_timeout ended with the transaction",
              conn.execute("SHOW lock_timeout").fetchone()[0], "0")

        # 2. read it back: metadata comes back as the dict that went in
        b = get_booking(conn, r.booking_id)
        check("get_booking columns", list(b), ["id", "resource_id", "guest", "quantity", "during",
                                               "status", "expires_at", "created_at", "metadata",
                                               "group_id"])
        check("get_booking row", (b["id"], b["resource_id"], b["guest"], b["quantity"], b["status"],
                                  b["during"], b["group_id"]),
              (r.booking_id, seats, "alice@example.com", 2, "pending", None, None))
        check("metadata round trip", b["metadata"], order)
        check("the hold lasts 15 minutes", b["expires_at"] - b["created_at"],
              datetime.timedelta(minutes=15))
        check("get_booking of an unknown id is no row", get_booking(conn, 2**63 - 1), None)

        # 3. confirm: ok, 200
        status, body, _ = call(conn, "SELECT * FROM booking.confirm(%s::bigint)", (r.booking_id,))
        check("confirm is HTTP 200", (status, body["code"]), (200, "ok"))
        check("get_booking after confirm", get_booking(conn, r.booking_id)["status"], "confirmed")

        # 4. sold out: 409, a result, not an error
        r2 = reserve_seat(conn, seats, "bob@example.com", 9)
        check("9 of 8 free seats: sold_out 409", http_response(r2)[:2],
              (409, {"code": "sold_out", "message": r2.message, "booking_id": None, "replayed": False}))

        # 5. busy: another transaction holds the resource; SET LOCAL lock_timeout
        # = 100 ms caps the wait (booking.lock_timeout of the role is 2 s)
        with psycopg.connect("", autocommit=True) as other:
            with other.transaction(force_rollback=True):
                other.execute("SELECT * FROM booking.reserve_seat(%s, 'holder', 1)", (seats,))
                r3 = reserve_seat(conn, seats, "carol@example.com", 1, lock_timeout="100ms")
        status, body, headers = http_response(r3)
        check("a locked resource: busy 503 with Retry-After", (status, body["code"], headers),
              (503, "busy", {"Retry-After": "1"}))
        check("the busy message names the session's lock_timeout", "100 ms" in r3.message, True)

        # 6. a waitlist entry: 202
        status, body, _ = call(conn, "SELECT * FROM booking.join_waitlist(%s::bigint, %s, %s::integer,"
                                     " metadata => %s::jsonb)", (seats, "dan@example.com", 9,
                                                                 Jsonb({"order_id": "py-1002"})))
        check("join_waitlist: waitlisted 202", (status, body["code"]), (202, "waitlisted"))

        # 7. the composite: registered, SELECT booking.f(...) gives one object;
        # not registered, it is the text blob
        info = CompositeInfo.fetch(conn, "booking.result")
        register_composite(info, conn)
        (res,) = conn.execute("SELECT booking.reserve_seat(%s::bigint, %s, 100)", (seats, "erin")).fetchone()
        check("registered composite: attributes", (type(res).__name__, res.code, res.http_status),
              ("result", "sold_out", 409))
        with psycopg.connect("", autocommit=True) as plain:
            (blob,) = plain.execute("SELECT booking.reserve_seat(%s::bigint, %s, 100)", (seats, "erin")).fetchone()
        check("unregistered composite: a text blob", (type(blob).__name__, blob.startswith("(f,sold_out,,409,")),
              ("str", True))

        # 8. class 22 is 400, whatever raised it; other errors are 500
        bad = [
            ("NULL guest (22004)", RESERVE, {"resource": seats, "guest": None, "quantity": 1}, "22004"),
            ("quantity 0 (22023)", RESERVE, {"resource": seats, "guest": "g", "quantity": 0}, "22023"),
            ("metadata not an object (22023)", RESERVE,
             {"resource": seats, "guest": "g", "quantity": 1, "metadata": Jsonb([1])}, "22023"),
            ("metadata that is not JSON (22P02)",
             "SELECT * FROM booking.reserve_seat(%(resource)s::bigint, 'g', metadata => %(m)s::jsonb)",
             {"resource": seats, "m": "{bad"}, "22P02"),
            ("inverted range (22000)", "SELECT * FROM booking.reserve_stay(%s::bigint, 'g', %s::tstzrange)",
             (stay, "[2030-01-02,2030-01-01)"), "22000"),
            ("2030-02-30 (22008)", "SELECT * FROM booking.reserve_stay(%s::bigint, 'g', %s::tstzrange)",
             (stay, "[2030-02-30,2030-03-01)"), "22008"),
            ("a time that is not one (22007)", "SELECT * FROM booking.reserve_stay(%s::bigint, 'g', %s::tstzrange)",
             (stay, "[soon,2030-03-01)"), "22007"),
        ]
        for name, sql, params, sqlstate in bad:
            params = {"hold": None, "key": None, "metadata": None, **params} if isinstance(params, dict) else params
            try:
                conn.execute(sql, params)
                check(f"{name}: raises", "no error", sqlstate)
            except psycopg.Error as e:
                check(f"{name}: SQLSTATE", e.sqlstate, sqlstate)
                check(f"{name}: HTTP 400", error_response(e)[0], 400)
        # not class 22: a call the client role is not granted (42501) is a 500
        try:
            conn.execute("SELECT * FROM booking.set_capacity(%s::bigint, 1, 1)", (seats,))
            check("set_capacity as a client: raises", "no error", "42501")
        except psycopg.Error as e:
            check("set_capacity as a client: permission denied (42501), HTTP 500",
                  (e.sqlstate, error_response(e)[0]), ("42501", 500))

    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
