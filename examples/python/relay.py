#!/usr/bin/python3
"""An outbox relay: sends a confirmation for every confirmed booking, exactly once.

Python 3 standard library and psycopg 3 (Debian: python3-psycopg), like server.py.
It drains one consumer of booking's outbox (booking.claim_events / ack_events)
and "sends" a confirmation for each `confirmed` event, and for each `reserved`
event whose payload has status_after = confirmed (a sale without a hold), by
appending one JSON line to SENT_FILE. That file stands in for the receiver (a
mail service, a queue): every other event is acknowledged without a send.

Exactly once, by at-least-once delivery plus dedupe:

- The database delivers at least once. claim_events leases a batch for
  LEASE_SECONDS; an event that is not acknowledged in time is claimed again.
- The relay acknowledges after sending, never before. A crash anywhere before
  the ack (even right after a send) leaves the event unacknowledged, so it is
  delivered again once the lease lapses.
- The receiver dedupes by the event id, which is the dedupe key: a line is
  appended only if its event id is not in SENT_FILE yet (an in-memory set,
  loaded from the file at start; each line is fsynced before the next step).
  The redelivery of an event that was already sent is then absorbed, and only
  acknowledged.

The dedupe belongs to the receiver, so this file must have one writer: run one
relay per consumer and SENT_FILE. Several relays of one consumer get disjoint
batches, but then the receiver itself must dedupe (e.g. a unique key on the
event id).

LISTEN booking_events is only a wake-up hint (one NOTIFY per committing
transaction, never on Citus, lost while disconnected), so the relay also polls
every POLL_SECONDS.

Settings come from the environment: DATABASE_URL (default empty: libpq's
PGHOST, PGPORT, PGDATABASE, PGUSER), CONSUMER (default mailer), SENT_FILE
(default sent.jsonl), LEASE_SECONDS (default 30), BATCH (default 100),
POLL_SECONDS (default 2). The role needs USAGE on schema booking and EXECUTE
on booking.add_consumer, claim_events and ack_events; the relay registers its
consumer at start when it is missing. SIGTERM or SIGINT stops it after the
current batch. Test hook: CRASH_AFTER_SEND=N kills the process right after
its N-th send, before that batch is acknowledged.

    CONSUMER=mailer SENT_FILE=/var/lib/mailer/sent.jsonl \\
        DATABASE_URL="dbname=shop user=shop_relay" /usr/bin/python3 relay.py
"""

import datetime
import json
import os
import select
import signal
import sys
import time

import psycopg

CLAIM = """SELECT event_id, lease_token, resource_id, seq, booking_id, guest, kind, payload, created_at
  FROM booking.claim_events(%s::text, %s::integer, %s::interval)"""
ACK = "SELECT booking.ack_events(%s::text, %s::bigint, %s::bigint[])"


class Outbox:
    """The receiving side: an append-only file of sent lines, deduped by event id."""

    def __init__(self, path):
        self.fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        data = b""
        while chunk := os.read(self.fd, 1 << 20):
            data += chunk
        # a line cut short by a crash was never sent in full: drop it
        if data and not data.endswith(b"\n"):
            data = data[:data.rfind(b"\n") + 1]
            os.ftruncate(self.fd, len(data))
            os.fsync(self.fd)
        self.sent = {json.loads(line)["event_id"] for line in data.splitlines()}

    def send(self, event_id, message):
        """Appends the message unless event_id was sent already; True if it was appended."""
        if event_id in self.sent:
            return False
        line = json.dumps({"event_id": event_id, **message}, default=str) + "\n"
        os.write(self.fd, line.encode())
        os.fsync(self.fd)
        self.sent.add(event_id)
        return True


def confirmation(kind, payload):
    """True for the events that confirm a booking."""
    return kind == "confirmed" or (kind == "reserved" and payload.get("status_after") == "confirmed")


class Relay:
    def __init__(self):
        self.conninfo = os.environ.get("DATABASE_URL", "")
        self.consumer = os.environ.get("CONSUMER", "mailer")
        self.lease = datetime.timedelta(seconds=float(os.environ.get("LEASE_SECONDS", "30")))
        self.batch = int(os.environ.get("BATCH", "100"))
        self.poll = float(os.environ.get("POLL_SECONDS", "2"))
        self.crash_after = int(os.environ.get("CRASH_AFTER_SEND") or 0)
        self.outbox = Outbox(os.environ.get("SENT_FILE", "sent.jsonl"))
        self.sends = 0
        self.stopping = False
        self.woken = False
        # a signal writes a byte here, which ends the idle wait at once
        self.wakeup, w = os.pipe()
        os.set_blocking(self.wakeup, False)
        os.set_blocking(w, False)
        signal.set_wakeup_fd(w)

    def log(self, msg):
        print(f"relay[{os.getpid()}] {msg}", file=sys.stderr, flush=True)

    def run(self):
        while not self.stopping:
            try:
                with psycopg.connect(self.conninfo, autocommit=True) as conn:
                    self.serve(conn)
            except psycopg.OperationalError as e:
                # the database went away: connect again; leased events come
                # back by themselves when their lease lapses
                self.log(f"connection lost ({e}); reconnecting")
                time.sleep(1)
        return 0

    def serve(self, conn):
        if conn.execute("SELECT booking.add_consumer(%s)", (self.consumer,)).fetchone()[0]:
            self.log(f"registered consumer {self.consumer}")
        # a notification read while a query runs calls this handler; one that
        # arrives while idle makes the socket readable
        conn.add_notify_handler(lambda n: setattr(self, "woken", True))
        conn.execute("LISTEN booking_events")
        while not self.stopping:
            self.woken = False
            if self.drain(conn) == self.batch or self.woken:
                continue  # more is waiting
            # idle: sleep until a NOTIFY, a signal or the poll timeout; the
            # next claim reads the notification off the socket
            if self.wakeup in select.select([conn.fileno(), self.wakeup], [], [], self.poll)[0]:
                os.read(self.wakeup, 512)

    def drain(self, conn):
        """Claims one batch, sends its confirmations, acknowledges it; returns its size."""
        rows = conn.execute(CLAIM, (self.consumer, self.batch, self.lease)).fetchall()
        if not rows:
            return 0
        token = rows[0][1]
        for event_id, _, resource_id, seq, booking_id, guest, kind, payload, created_at in rows:
            if not confirmation(kind, payload):
                continue
            sent = self.outbox.send(event_id, {
                "booking_id": booking_id, "guest": guest, "resource_id": resource_id,
                "seq": seq, "kind": kind, "created_at": created_at,
                "text": f"Booking {booking_id} is confirmed.",
            })
            self.sends += sent
            if sent and self.sends == self.crash_after:
                self.log(f"CRASH_AFTER_SEND={self.crash_after}: dying before the ack")
                os._exit(1)
        acked = conn.execute(ACK, (self.consumer, token, [r[0] for r in rows])).fetchone()[0]
        if acked < len(rows):
            # the lease lapsed and another relay claimed them: they are sent
            # again there, and the receiver dedupes
            self.log(f"acknowledged {acked} of {len(rows)}: lease lapsed")
        return len(rows)

    def stop(self, signum, frame):
        self.stopping = True


def main():
    relay = Relay()
    signal.signal(signal.SIGTERM, relay.stop)
    signal.signal(signal.SIGINT, relay.stop)
    relay.log(f"draining consumer {relay.consumer}")
    return relay.run()


if __name__ == "__main__":
    sys.exit(main())
