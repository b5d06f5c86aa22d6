'use strict';
/*
 * A small HTTP booking service on top of the booking extension.
 *
 * Node.js (http) and node-postgres (pg, from the npm registry). Every booking
 * call returns a booking.result; this service sends its http_status as the HTTP
 * status and {code, message, booking_id, replayed} as the JSON body. The
 * request's Idempotency-Key header is passed through as idempotency_key, so a
 * retried request gets the first answer back with replayed = true.
 *
 *   POST /sessions/<id>/reserve   {"guest": "...", "quantity": 1, "hold_seconds": 900}
 *   POST /bookings/<id>/confirm
 *   POST /bookings/<id>/cancel
 *   POST /bookings/<id>/reduce    {"quantity": 1}   give back some of its seats
 *   GET  /sessions/<id>           {"session": id, "seats_left": n}
 *
 * Settings come from the environment: HOST (default 127.0.0.1), PORT (default
 * 8080; 0 picks a free port), POOL_SIZE (default 20) and DATABASE_URL (default
 * empty: PGHOST, PGPORT, PGDATABASE, PGUSER). The database role needs the grants
 * in docs/reference.md (Grants); it never writes the tables itself.
 *
 *   npm ci && DATABASE_URL=postgresql://shop_app@localhost/shop node server.js
 */

const http = require('node:http');
const { Pool } = require('pg');

const BIGINT_MAX = 2n ** 63n - 1n;
const MAX_BODY = 64 * 1024;

// Every call asks for the same columns of booking.result. Arguments are cast,
// so the right function is chosen whatever type the driver sends.
const RESERVE = `SELECT code, booking_id, http_status, message, replayed
  FROM booking.reserve_seat($1::bigint, $2::text, $3::integer,
                            hold => $4::interval, idempotency_key => $5::text)`;
const CONFIRM = `SELECT code, booking_id, http_status, message, replayed
  FROM booking.confirm($1::bigint, idempotency_key => $2::text)`;
const CANCEL = `SELECT code, booking_id, http_status, message, replayed
  FROM booking.cancel($1::bigint, idempotency_key => $2::text)`;
const REDUCE = `SELECT code, booking_id, http_status, message, replayed
  FROM booking.reduce($1::bigint, $2::integer, idempotency_key => $3::text)`;
const SEATS_LEFT = 'SELECT booking.seats_left($1::bigint) AS seats_left';

// Autocommit: each booking call is its own short transaction, so a resource
// lock is never held across an HTTP round trip.
const pool = new Pool({
  connectionString: process.env.DATABASE_URL || undefined,
  max: Number(process.env.POOL_SIZE || 20),
});
pool.on('error', (err) => console.error('idle client error:', err.message));

class BadRequest extends Error {}

// pg returns bigint as a string; a sequence id is far below 2^53, and a body
// should carry a number
function jsonId(value) {
  if (value === null) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value;
}

// Maps a booking.result row to [HTTP status, JSON body, extra headers].
function resultResponse(row) {
  const body = {
    code: row.code,
    message: row.message,
    booking_id: jsonId(row.booking_id),
    replayed: row.replayed,
  };
  // busy means nothing was done and nothing was stored under the key: the
  // client retries shortly with the same Idempotency-Key
  const headers = row.code === 'busy' ? { 'Retry-After': '1' } : {};
  return [row.http_status, body, headers];
}

// passed through untouched: the extension checks the length (22023) and
// compares the whole request, so a reused key with another body answers
// idempotency_mismatch (422)
function idempotencyKey(req) {
  const key = req.headers['idempotency-key'];
  return key === undefined ? null : key;
}

const handlers = {
  async reserve(req, sessionId, body) {
    const guest = body.guest;
    const quantity = body.quantity === undefined ? 1 : body.quantity;
    let hold = body.hold_seconds === undefined ? null : body.hold_seconds;
    if (typeof guest !== 'string') throw new BadRequest('guest must be a string.');
    if (!Number.isInteger(quantity)) throw new BadRequest('quantity must be an integer.');
    if (hold !== null) {
      if (!Number.isInteger(hold) || hold <= 0) throw new BadRequest('hold_seconds must be a positive integer.');
      hold = `${hold} seconds`;
    }
    const { rows } = await pool.query(RESERVE, [sessionId, guest, quantity, hold, idempotencyKey(req)]);
    return resultResponse(rows[0]);
  },

  async confirm(req, bookingId) {
    const { rows } = await pool.query(CONFIRM, [bookingId, idempotencyKey(req)]);
    return resultResponse(rows[0]);
  },

  async cancel(req, bookingId) {
    const { rows } = await pool.query(CANCEL, [bookingId, idempotencyKey(req)]);
    return resultResponse(rows[0]);
  },

  async reduce(req, bookingId, body) {
    const quantity = body.quantity;
    if (!Number.isInteger(quantity)) throw new BadRequest('quantity must be an integer.');
    const { rows } = await pool.query(REDUCE, [bookingId, quantity, idempotencyKey(req)]);
    return resultResponse(rows[0]);
  },

  async seatsLeft(req, sessionId) {
    const { rows } = await pool.query(SEATS_LEFT, [sessionId]);
    if (rows[0].seats_left === null) {
      return [404, { code: 'not_found', message: `Session ${sessionId} does not exist.` }, {}];
    }
    return [200, { session: jsonId(sessionId), seats_left: rows[0].seats_left }, {}];
  },
};

const routes = [
  ['POST', /^\/sessions\/(\d+)\/reserve$/, handlers.reserve],
  ['POST', /^\/bookings\/(\d+)\/confirm$/, handlers.confirm],
  ['POST', /^\/bookings\/(\d+)\/cancel$/, handlers.cancel],
  ['POST', /^\/bookings\/(\d+)\/reduce$/, handlers.reduce],
  ['GET', /^\/sessions\/(\d+)$/, handlers.seatsLeft],
];

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (chunk) => {
      size += chunk.length;
      if (size > MAX_BODY) {
        reject(new BadRequest('the body is too large.'));
        req.destroy();
      } else {
        chunks.push(chunk);
      }
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function readJson(req) {
  const raw = await readBody(req);
  if (raw.length === 0) return {};
  let body;
  try {
    body = JSON.parse(raw.toString('utf8'));
  } catch {
    throw new BadRequest('the body is not valid JSON.');
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    throw new BadRequest('the body must be a JSON object.');
  }
  return body;
}

function sendJson(res, status, payload, headers = {}) {
  const data = Buffer.from(JSON.stringify(payload));
  res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': data.length, ...headers });
  res.end(data);
}

async function dispatch(req, res) {
  const path = req.url.split('?', 1)[0];
  let handler = null;
  let id = null;
  for (const [method, pattern, fn] of routes) {
    const match = pattern.exec(path);
    if (match && method === req.method) {
      handler = fn;
      id = match[1];
      break;
    }
  }
  if (handler === null) {
    req.resume();
    sendJson(res, 404, { code: 'no_route', message: `No route for ${req.method} ${path}.` });
    return;
  }
  let status;
  let payload;
  let headers = {};
  try {
    const body = req.method === 'POST' ? await readJson(req) : (req.resume(), {});
    if (BigInt(id) > BIGINT_MAX) {
      // no such id can exist: the answer the database would give
      [status, payload] = [404, { code: 'not_found', message: `No object has id ${id}.` }];
    } else {
      [status, payload, headers] = await handler(req, id, body);
    }
  } catch (err) {
    if (err instanceof BadRequest) {
      [status, payload] = [400, { code: 'bad_request', message: err.message }];
    } else if (typeof err.code === 'string' && err.code.startsWith('22')) {
      // SQLSTATE class 22, data exception: the request's data. The extension
      // raises 22004 and 22023 and names the argument; PostgreSQL raises the
      // others while it reads an argument (22003 a number too large for its
      // type, 22P02, 22007, 22008, 22000); nothing was written
      [status, payload] = [400, { code: 'bad_request', message: err.message }];
      // what arrived, e.g. "The hold given is 900000000000 seconds."
      if (err.detail) payload.detail = err.detail;
    } else {
      // anything else is not a business outcome: a server error
      console.error('error:', err.message);
      [status, payload] = [500, { code: 'internal_error', message: 'The server could not process the request.' }];
    }
  }
  sendJson(res, status, payload, headers);
}

const server = http.createServer((req, res) => {
  dispatch(req, res).catch((err) => {
    console.error('unhandled:', err);
    if (!res.headersSent) sendJson(res, 500, { code: 'internal_error', message: 'The server could not process the request.' });
  });
});

const host = process.env.HOST || '127.0.0.1';
server.listen(Number(process.env.PORT || 8080), host, () => {
  console.log(`listening on http://${host}:${server.address().port}`);
});

function stop() {
  server.close(() => pool.end());
  server.closeIdleConnections();
}
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
