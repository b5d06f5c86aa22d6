#!/usr/bin/python3
"""A small HTTP booking service on top of the booking extension.

Python 3 standard library (http.server) and psycopg 3 (Debian: python3-psycopg).
Every booking call returns a booking.result; this service sends its http_status
as the HTTP status and {code, message, booking_id, replayed} as the JSON body.
The request's Idempotency-Key header is passed through as idempotency_key, so a
retried request gets the first answer back with replayed = true.

    POST /sessions/<id>/reserve   {"guest": "...", "quantity": 1, "hold_seconds": 900}
    POST /bookings/<id>/confirm
    POST /bookings/<id>/cancel
    POST /bookings/<id>/reduce    {"quantity": 1}   give back some of its seats
    GET  /sessions/<id>           {"session": id, "seats_left": n}
    GET  /metrics                 Prometheus text: booking.stats() and booking.health()

Settings come from the environment: HOST (default 127.0.0.1), PORT (default
8080; 0 picks a free port), POOL_SIZE (default 20) and DATABASE_URL (default
empty: libpq's PGHOST, PGPORT, PGDATABASE, PGUSER). The database role needs the
grants in docs/reference.md (Grants); it never writes the tables itself.
PREPARE_THRESHOLD (default: psycopg's 5) is how many runs of a statement make
psycopg prepare it; set it to "none" behind PgBouncer in transaction mode,
whose server connections change under a client (docs/poolers.md).

Run it with Debian's interpreter, which is the one that has psycopg:
    DATABASE_URL=dbname=shop /usr/bin/python3 server.py
"""

import contextlib
import datetime
import json
import os
import queue
import re
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import psycopg
from psycopg import errors

BIGINT_MAX = 2**63 - 1
MAX_BODY = 64 * 1024

# Every call asks for the same columns of booking.result.  Arguments are cast,
# so the right function is chosen whatever Python type arrives.
RESERVE = """SELECT code, booking_id, http_status, message, replayed
  FROM booking.reserve_seat(%s::bigint, %s::text, %s::integer,
                            hold => %s::interval, idempotency_key => %s::text)"""
CONFIRM = """SELECT code, booking_id, http_status, message, replayed
  FROM booking.confirm(%s::bigint, idempotency_key => %s::text)"""
CANCEL = """SELECT code, booking_id, http_status, message, replayed
  FROM booking.cancel(%s::bigint, idempotency_key => %s::text)"""
REDUCE = """SELECT code, booking_id, http_status, message, replayed
  FROM booking.reduce(%s::bigint, %s::integer, idempotency_key => %s::text)"""
SEATS_LEFT = "SELECT booking.seats_left(%s::bigint)"
STATS = """SELECT function, code, calls, total_ms, max_ms, lock_wait_ms
  FROM booking.stats() ORDER BY function, code"""
HEALTH = "SELECT metric, subject, value FROM booking.health() ORDER BY metric, subject"

# booking.stats() columns as Prometheus metrics: (name, type, help, column, scale)
STATS_METRICS = [
    ("booking_calls_total", "counter", "Calls of the booking API, by function and result code.", 2, 1),
    ("booking_call_seconds_total", "counter", "Wall time of those calls.", 3, 1e-3),
    ("booking_call_max_seconds", "gauge", "The longest of those calls since the last reset.", 4, 1e-3),
    ("booking_lock_wait_seconds_total", "counter", "Time those calls waited for locks.", 5, 1e-3),
]
# the label a booking.health() subject gets, by metric
HEALTH_LABELS = {"waitlist_length": "resource", "consumer_oldest_unacked_seconds": "consumer",
                 "consumer_unacked": "consumer"}


class Pool:
    """A bounded pool of autocommit connections.

    Each booking call is then its own short transaction: it commits as soon as
    it returns, so a resource lock is never held across an HTTP round trip.
    """

    def __init__(self, conninfo, size, prepare_threshold=5):
        self._conninfo = conninfo
        self._prepare_threshold = prepare_threshold
        self._idle = queue.LifoQueue()
        self._slots = threading.BoundedSemaphore(size)

    @contextlib.contextmanager
    def connection(self):
        with self._slots:
            try:
                conn = self._idle.get_nowait()
            except queue.Empty:
                conn = psycopg.connect(self._conninfo, autocommit=True,
                                       prepare_threshold=self._prepare_threshold)
            try:
                yield conn
            finally:
                if conn.closed or conn.broken:
                    conn.close()
                else:
                    self._idle.put(conn)

    def close(self):
        while True:
            try:
                self._idle.get_nowait().close()
            except queue.Empty:
                return


def prom_label(value):
    """A label value in the text format: backslash, quote and newline escaped."""
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def prom_value(value):
    if value is None or value != value:
        return "NaN"
    if value in (float("inf"), float("-inf")):
        return "+Inf" if value > 0 else "-Inf"
    return repr(value) if isinstance(value, float) else str(value)


def prometheus_text(stats, health, notes):
    """booking.stats() and booking.health() rows in Prometheus's text format 0.0.4."""
    lines = [f"# booking.stats(): {note}" for note in notes]
    for name, kind, help_text, column, scale in STATS_METRICS:
        lines += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]
        for row in stats:
            value = row[column] if scale == 1 else row[column] * scale
            lines.append(f'{name}{{function="{prom_label(row[0])}",code="{prom_label(row[1])}"}} '
                         f"{prom_value(value)}")
    if health is None:
        lines.append("# booking.health() does not exist in this database: no health metrics")
        health = []
    seen = set()
    for metric, subject, value in health:
        name = "booking_" + re.sub(r"[^a-zA-Z0-9_]", "_", metric)
        if name not in seen:
            seen.add(name)
            lines += [f"# HELP {name} booking.health() metric {metric}.", f"# TYPE {name} gauge"]
        labels = ""
        if subject is not None:
            labels = f'{{{HEALTH_LABELS.get(metric, "subject")}="{prom_label(subject)}"}}'
        lines.append(f"{name}{labels} {prom_value(value)}")
    return "\n".join(lines) + "\n"


class BadRequest(Exception):
    """The request cannot be sent to the database as it is (400)."""


def result_response(row):
    """Maps a booking.result row to (HTTP status, JSON body, extra headers)."""
    code, booking_id, http_status, message, replayed = row
    body = {"code": code, "message": message, "booking_id": booking_id, "replayed": replayed}
    # busy means nothing was done and nothing was stored under the key: the
    # client retries shortly with the same Idempotency-Key
    headers = {"Retry-After": "1"} if code == "busy" else {}
    return http_status, body, headers


class Handler(BaseHTTPRequestHandler):
    server_version = "booking-example-python/0.2"
    protocol_version = "HTTP/1.1"

    ROUTES = [
        ("POST", re.compile(r"^/sessions/(\d+)/reserve$"), "reserve"),
        ("POST", re.compile(r"^/bookings/(\d+)/confirm$"), "confirm"),
        ("POST", re.compile(r"^/bookings/(\d+)/cancel$"), "cancel"),
        ("POST", re.compile(r"^/bookings/(\d+)/reduce$"), "reduce"),
        ("GET", re.compile(r"^/sessions/(\d+)$"), "seats_left"),
    ]

    def do_GET(self):
        self.dispatch("GET")

    def do_POST(self):
        self.dispatch("POST")

    def dispatch(self, method):
        path = self.path.split("?", 1)[0]
        if method == "GET" and path == "/metrics":
            self.drain()
            self.metrics()
            return
        for route_method, pattern, name in self.ROUTES:
            match = pattern.match(path)
            if match and route_method == method:
                break
        else:
            self.drain()
            self.send_json(404, {"code": "no_route", "message": f"No route for {method} {path}."})
            return
        try:
            ident = int(match.group(1))
            body = self.read_json() if method == "POST" else {}
            if ident > BIGINT_MAX:
                # no such id can exist: the answer the database would give
                status, payload, headers = 404, {"code": "not_found",
                                                 "message": f"No object has id {ident}."}, {}
            else:
                status, payload, headers = getattr(self, name)(ident, body)
        except BadRequest as e:
            status, payload, headers = 400, {"code": "bad_request", "message": str(e)}, {}
        except psycopg.Error as e:
            if e.sqlstate and e.sqlstate.startswith("22"):
                # SQLSTATE class 22, data exception: the request's data. The
                # extension raises 22004 and 22023 and names the argument;
                # PostgreSQL raises the others while it reads an argument
                # (22003 a number too large for its type, 22P02, 22007,
                # 22008, 22000); nothing was written
                status, payload, headers = 400, {"code": "bad_request",
                                                 "message": e.diag.message_primary}, {}
                if e.diag.message_detail:
                    # what arrived, e.g. "The hold given is 900000000000 seconds."
                    payload["detail"] = e.diag.message_detail
            else:
                # anything else is not a business outcome: a server error
                self.log_error("database error: %s", e)
                status, payload, headers = 500, {"code": "internal_error",
                                                 "message": "The server could not process the request."}, {}
        self.send_json(status, payload, headers)

    # -- handlers -----------------------------------------------------------

    def reserve(self, session_id, body):
        guest = body.get("guest")
        quantity = body.get("quantity", 1)
        hold = body.get("hold_seconds")
        if not isinstance(guest, str):
            raise BadRequest("guest must be a string.")
        if not isinstance(quantity, int) or isinstance(quantity, bool):
            raise BadRequest("quantity must be an integer.")
        if hold is not None:
            if not isinstance(hold, int) or isinstance(hold, bool) or hold <= 0:
                raise BadRequest("hold_seconds must be a positive integer.")
            hold = datetime.timedelta(seconds=hold)
        with pool.connection() as conn:
            row = conn.execute(RESERVE, (session_id, guest, quantity, hold, self.idempotency_key())).fetchone()
        return result_response(row)

    def confirm(self, booking_id, body):
        with pool.connection() as conn:
            row = conn.execute(CONFIRM, (booking_id, self.idempotency_key())).fetchone()
        return result_response(row)

    def cancel(self, booking_id, body):
        with pool.connection() as conn:
            row = conn.execute(CANCEL, (booking_id, self.idempotency_key())).fetchone()
        return result_response(row)

    def reduce(self, booking_id, body):
        quantity = body.get("quantity")
        if not isinstance(quantity, int) or isinstance(quantity, bool):
            raise BadRequest("quantity must be an integer.")
        with pool.connection() as conn:
            row = conn.execute(REDUCE, (booking_id, quantity, self.idempotency_key())).fetchone()
        return result_response(row)

    def seats_left(self, session_id, body):
        with pool.connection() as conn:
            (left,) = conn.execute(SEATS_LEFT, (session_id,)).fetchone()
        if left is None:
            return 404, {"code": "not_found", "message": f"Session {session_id} does not exist."}, {}
        return 200, {"session": session_id, "seats_left": left}, {}

    def metrics(self):
        # stats() says in a NOTICE when the server does not preload booking:
        # that sentence goes into the output as a comment
        notes = []

        def on_notice(diag):
            notes.append(diag.message_primary)

        try:
            with pool.connection() as conn:
                conn.add_notice_handler(on_notice)
                try:
                    stats = conn.execute(STATS).fetchall()
                    try:
                        health = conn.execute(HEALTH).fetchall()
                    except errors.UndefinedFunction:
                        health = None   # an extension older than health()
                finally:
                    conn.remove_notice_handler(on_notice)
        except psycopg.Error as e:
            self.log_error("database error: %s", e)
            self.send_text(500, "# the database could not be read\n")
            return
        self.send_text(200, prometheus_text(stats, health, notes))

    # -- plumbing -----------------------------------------------------------

    def idempotency_key(self):
        # passed through untouched: the extension checks the length (22023)
        # and compares the whole request, so a reused key with another body
        # answers idempotency_mismatch (422)
        return self.headers.get("Idempotency-Key")

    def read_json(self):
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise BadRequest("a JSON body with Content-Length is required.")
        length = int(length)
        if length > MAX_BODY:
            self.close_connection = True
            raise BadRequest("the body is too large.")
        raw = self.rfile.read(length)
        if not raw:
            return {}
        try:
            body = json.loads(raw)
        except ValueError:
            raise BadRequest("the body is not valid JSON.") from None
        if not isinstance(body, dict):
            raise BadRequest("the body must be a JSON object.")
        return body

    def drain(self):
        length = self.headers.get("Content-Length")
        if length and length.isdigit() and int(length) <= MAX_BODY:
            self.rfile.read(int(length))
        elif length:
            self.close_connection = True

    def send_json(self, status, payload, headers=None):
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_text(self, status, text):
        data = text.encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, fmt, *args):
        if os.environ.get("ACCESS_LOG"):
            super().log_message(fmt, *args)


class Server(ThreadingHTTPServer):
    daemon_threads = True
    # a burst of clients must not overflow the listen backlog (default 5)
    request_queue_size = 256


pool = None


def main():
    global pool
    threshold = os.environ.get("PREPARE_THRESHOLD", "")
    threshold = 5 if threshold == "" else None if threshold.lower() == "none" else int(threshold)
    pool = Pool(os.environ.get("DATABASE_URL", ""), int(os.environ.get("POOL_SIZE", "20")), threshold)
    server = Server((os.environ.get("HOST", "127.0.0.1"), int(os.environ.get("PORT", "8080"))), Handler)
    host, port = server.server_address[:2]

    def stop(signum, frame):
        threading.Thread(target=server.shutdown).start()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    print(f"listening on http://{host}:{port}", flush=True)
    server.serve_forever()
    server.server_close()
    pool.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
