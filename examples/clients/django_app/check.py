#!/usr/bin/python3
"""Runs the Django recipe of docs/clients.md against a real database, through
Django's test client (the URL resolver, the views, the model; no HTTP server).

Environment as for examples/clients/python_psycopg.py: libpq's PG* variables
(a role with booking.grant_client's grants), BOOKING_SEATS (a seat resource of
capacity 10, empty) and BOOKING_STAY (a stay resource). Prints one "ok - " or
"not ok - " line per check and exits 1 if any failed.

Debian 12: /usr/bin/python3 with python3-django (3.2) and python3-psycopg2.
"""

import datetime
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "settings")

import django  # noqa: E402

django.setup()

import psycopg2  # noqa: E402
from django.test import Client, override_settings  # noqa: E402

from shop.models import Booking  # noqa: E402

failures = 0


def check(name, got, want):
    global failures
    if got == want:
        print(f"ok - django: {name}")
    else:
        failures += 1
        print(f"not ok - django: {name}")
        print(f"#   got:  {got!r}")
        print(f"#   want: {want!r}")


def post(client, path, body):
    response = client.post(path, data=json.dumps(body), content_type="application/json")
    return response.status_code, json.loads(response.content), response


def main():
    seats = int(os.environ["BOOKING_SEATS"])
    stay = int(os.environ["BOOKING_STAY"])
    order = {"order_id": "dj-1001", "channel": "web", "lines": [1, 2]}
    client = Client()

    # 1. a hold of 2 seats with metadata: 201
    status, body, _ = post(client, f"/sessions/{seats}/reserve",
                           {"guest": "alice@example.com", "quantity": 2, "hold_seconds": 900,
                            "metadata": order})
    check("reserve: HTTP 201, code ok", (status, body["code"], body["replayed"]), (201, "ok", False))
    booking_id = body["booking_id"]
    check("booking_id is an int", isinstance(booking_id, int) and booking_id > 0, True)

    # 2. read it back: the view calls booking.get_booking through the model
    response = client.get(f"/bookings/{booking_id}")
    b = json.loads(response.content)
    check("GET /bookings/<id>: 200", response.status_code, 200)
    check("get_booking row", (b["id"], b["resource_id"], b["guest"], b["quantity"], b["status"],
                              b["during"], b["group_id"]),
          (booking_id, seats, "alice@example.com", 2, "pending", None, None))
    check("metadata round trip", b["metadata"], order)
    got = Booking.get_booking(booking_id)
    check("Booking.get_booking: the hold lasts 900 s", got.expires_at - got.created_at,
          datetime.timedelta(seconds=900))
    # the unmanaged model over the table itself (grant_client gives SELECT)
    row = Booking.objects.get(pk=booking_id)
    check("Booking.objects.get over booking.bookings",
          (row.resource_id, row.status, row.metadata), (seats, "pending", order))
    check("Booking.objects.filter(metadata__order_id=...)",
          list(Booking.objects.filter(resource_id=seats, metadata__order_id="dj-1001")
               .values_list("id", flat=True)),
          [booking_id])
    check("GET /bookings/<unknown>: 404", client.get("/bookings/9223372036854775807").status_code, 404)

    # 3. confirm: 200
    status, body, _ = post(client, f"/bookings/{booking_id}/confirm", {})
    check("confirm: HTTP 200, code ok", (status, body["code"]), (200, "ok"))
    check("status after confirm", Booking.objects.get(pk=booking_id).status, "confirmed")

    # 4. sold out: 409
    status, body, _ = post(client, f"/sessions/{seats}/reserve", {"guest": "bob@example.com", "quantity": 9})
    check("9 of 8 free seats: HTTP 409 sold_out", (status, body["code"]), (409, "sold_out"))

    # 5. busy: another transaction holds the resource; the view's SET LOCAL
    # lock_timeout (100 ms here) caps the wait
    holder = psycopg2.connect("")
    try:
        with holder.cursor() as cur:
            cur.execute("SELECT code FROM booking.reserve_seat(%s, 'holder', 1)", [seats])
        with override_settings(BOOKING_LOCK_TIMEOUT="100ms"):
            status, body, response = post(client, f"/sessions/{seats}/reserve", {"guest": "carol@example.com"})
    finally:
        holder.rollback()
        holder.close()
    check("a locked resource: HTTP 503 busy with Retry-After",
          (status, body["code"], response.get("Retry-After")), (503, "busy", "1"))
    check("the busy message names the lock_timeout of 100 ms", "100 ms" in body["message"], True)

    # 6. a waitlist entry: 202
    status, body, _ = post(client, f"/sessions/{seats}/waitlist",
                           {"guest": "dan@example.com", "quantity": 9, "metadata": {"order_id": "dj-1003"}})
    check("join_waitlist: HTTP 202 waitlisted", (status, body["code"]), (202, "waitlisted"))

    # 7. class 22 is 400, whatever raised it
    bad = [
        ("NULL guest (22004)", f"/sessions/{seats}/reserve", {"guest": None}, "22004"),
        ("quantity 0 (22023)", f"/sessions/{seats}/reserve", {"guest": "g", "quantity": 0}, "22023"),
        ("quantity 'abc' (22P02)", f"/sessions/{seats}/reserve", {"guest": "g", "quantity": "abc"}, "22P02"),
        ("metadata not an object (22023)", f"/sessions/{seats}/reserve", {"guest": "g", "metadata": [1]}, "22023"),
        ("inverted range (22000)", f"/rooms/{stay}/reserve",
         {"guest": "g", "during": "[2030-01-02,2030-01-01)"}, "22000"),
        ("2030-02-30 (22008)", f"/rooms/{stay}/reserve", {"guest": "g", "during": "[2030-02-30,2030-03-01)"}, "22008"),
        ("a time that is not one (22007)", f"/rooms/{stay}/reserve",
         {"guest": "g", "during": "[soon,2030-03-01)"}, "22007"),
    ]
    for name, path, request, state in bad:
        status, body, _ = post(client, path, request)
        check(f"{name}: HTTP 400", (status, body["code"], body.get("sqlstate")), (400, "bad_request", state))

    # a stay that fits: 201, during comes back as the range
    status, body, _ = post(client, f"/rooms/{stay}/reserve",
                           {"guest": "g", "during": "[2030-07-01,2030-07-05)", "metadata": {"order_id": "dj-1002"}})
    check("reserve_stay: HTTP 201", (status, body["code"]), (201, "ok"))
    b = json.loads(client.get(f"/bookings/{body['booking_id']}").content)
    check("the stay's during and metadata", (b["during"], b["metadata"]),
          (["2030-07-01T00:00:00+00:00", "2030-07-05T00:00:00+00:00"], {"order_id": "dj-1002"}))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
