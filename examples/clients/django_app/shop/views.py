"""Views that call the booking API with connection.cursor() and map the
booking.result to the HTTP response: the status is the result's http_status
(ok: 201 for a new booking, 200 for a change; waitlisted: 202; refusals 404,
409, 410, 422; busy: 503 with Retry-After). A database error of class 22 (the
request's data: 22004, 22023, 22000, 22007, 22008, 22P02, ...) is 400; any
other is 500."""

import json
import logging

from django.conf import settings
from django.db import DatabaseError, connection, transaction
from django.http import JsonResponse
from django.views.decorators.http import require_GET, require_POST

from .models import Booking

log = logging.getLogger(__name__)

RESULT = "SELECT code, booking_id, http_status, message, replayed FROM "
RESERVE_SEAT = RESULT + """booking.reserve_seat(%s::bigint, %s::text, %s::integer, hold => %s::interval,
                                     idempotency_key => %s::text, metadata => %s::jsonb)"""
RESERVE_STAY = RESULT + """booking.reserve_stay(%s::bigint, %s::text, %s::tstzrange, hold => %s::interval,
                                     idempotency_key => %s::text, metadata => %s::jsonb)"""
JOIN_WAITLIST = RESULT + """booking.join_waitlist(%s::bigint, %s::text, %s::integer,
                                      idempotency_key => %s::text, metadata => %s::jsonb)"""
CONFIRM = RESULT + "booking.confirm(%s::bigint, idempotency_key => %s::text)"


class BadRequest(Exception):
    pass


def sqlstate(error):
    """The SQLSTATE of a Django DatabaseError: Django wraps the driver's
    exception, which is its __cause__ (psycopg2: pgcode; psycopg 3: sqlstate)."""
    cause = error.__cause__
    return getattr(cause, "pgcode", None) or getattr(cause, "sqlstate", None)


def call_booking(sql, params):
    """Runs one booking call in its own transaction, with SET LOCAL
    lock_timeout, and answers the JsonResponse for its booking.result."""
    try:
        with transaction.atomic():
            with connection.cursor() as cur:
                # SET LOCAL, as a function so that it takes a parameter
                cur.execute("SELECT set_config('lock_timeout', %s, true)", [settings.BOOKING_LOCK_TIMEOUT])
                cur.execute(sql, params)
                code, booking_id, http_status, message, replayed = cur.fetchone()
    except DatabaseError as e:
        state = sqlstate(e)
        if state and state.startswith("22"):
            diag = getattr(e.__cause__, "diag", None)
            return JsonResponse({"code": "bad_request", "sqlstate": state,
                                 "message": diag.message_primary if diag else str(e)}, status=400)
        log.error("database error: %s", e)
        return JsonResponse({"code": "internal_error",
                             "message": "The server could not process the request."}, status=500)
    response = JsonResponse({"code": code, "message": message, "booking_id": booking_id,
                             "replayed": replayed}, status=http_status)
    if code == "busy":
        response["Retry-After"] = "1"
    return response


def read_body(request):
    try:
        body = json.loads(request.body or b"{}")
    except ValueError:
        raise BadRequest("the body is not valid JSON.") from None
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object.")
    hold = body.get("hold_seconds")
    if hold is not None and (not isinstance(hold, int) or isinstance(hold, bool)):
        raise BadRequest("hold_seconds must be an integer.")
    metadata = body.get("metadata")
    # guest, quantity and the rest go to the database as they came: it
    # checks them (class 22, 400)
    return (body, None if hold is None else f"{hold} seconds",
            None if metadata is None else json.dumps(metadata))


def bad_request(e):
    return JsonResponse({"code": "bad_request", "message": str(e)}, status=400)


@require_POST
def reserve_seat(request, session_id):
    """POST /sessions/<id>/reserve {"guest", "quantity", "hold_seconds", "metadata"}"""
    try:
        body, hold, metadata = read_body(request)
    except BadRequest as e:
        return bad_request(e)
    return call_booking(RESERVE_SEAT, [session_id, body.get("guest"), body.get("quantity", 1), hold,
                                       request.headers.get("Idempotency-Key"), metadata])


@require_POST
def reserve_stay(request, room_id):
    """POST /rooms/<id>/reserve {"guest", "during": "[2030-07-01,2030-07-05)", "hold_seconds", "metadata"}"""
    try:
        body, hold, metadata = read_body(request)
    except BadRequest as e:
        return bad_request(e)
    return call_booking(RESERVE_STAY, [room_id, body.get("guest"), body.get("during"), hold,
                                       request.headers.get("Idempotency-Key"), metadata])


@require_POST
def join_waitlist(request, session_id):
    """POST /sessions/<id>/waitlist {"guest", "quantity", "metadata"}: 202 waitlisted"""
    try:
        body, _, metadata = read_body(request)
    except BadRequest as e:
        return bad_request(e)
    return call_booking(JOIN_WAITLIST, [session_id, body.get("guest"), body.get("quantity", 1),
                                        request.headers.get("Idempotency-Key"), metadata])


@require_POST
def confirm(request, booking_id):
    return call_booking(CONFIRM, [booking_id, request.headers.get("Idempotency-Key")])


@require_GET
def booking_detail(request, booking_id):
    """GET /bookings/<id>: booking.get_booking through the model."""
    b = Booking.get_booking(booking_id)
    if b is None:
        return JsonResponse({"code": "not_found", "message": f"No booking has id {booking_id}."}, status=404)
    return JsonResponse({
        "id": b.id, "resource_id": b.resource_id, "guest": b.guest, "quantity": b.quantity,
        "during": None if b.during is None else [b.during.lower.isoformat(), b.during.upper.isoformat()],
        "status": b.status, "expires_at": b.expires_at and b.expires_at.isoformat(),
        "created_at": b.created_at.isoformat(), "metadata": b.metadata, "group_id": b.group_id,
    })
