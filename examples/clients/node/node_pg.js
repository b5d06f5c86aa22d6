'use strict';
/*
 * The node-postgres recipe of docs/clients.md, run against a real database.
 *
 * Connects through libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE; pg
 * reads the same variables) as a role with booking.grant_client's grants, and
 * books on the seat resource BOOKING_SEATS (capacity 10, empty) and the stay
 * resource BOOKING_STAY. Prints one "ok - " or "not ok - " line per check and
 * exits 1 if any failed. examples/clients/test.sh sets all of that up:
 *
 *   cd examples/clients/node && npm ci && node node_pg.js
 */

const assert = require('node:assert');
const pg = require('pg');

// -- the recipe ------------------------------------------------------------------

// SELECT * FROM booking.f(...): the columns of booking.result, each parsed by
// its own type (SELECT booking.f(...) would be one text blob, "(t,ok,5,201,...)")
const RESERVE_SEAT = `SELECT * FROM booking.reserve_seat($1::bigint, $2::text, $3::integer,
                                     hold => $4::interval, idempotency_key => $5::text,
                                     metadata => $6::jsonb)`;
const RESERVE_STAY = `SELECT * FROM booking.reserve_stay($1::bigint, $2::text, $3::tstzrange,
                                     metadata => $4::jsonb)`;

// bigint (OID 20) stays a string, pg's default: an id goes back to the
// database as that string, exact at any size. A global
// pg.types.setTypeParser(20, ...) would change every bigint of every query in
// the process (count(*) too): parseInt loses precision above 2^53, BigInt
// makes JSON.stringify throw. The id becomes a number only in the HTTP body,
// and only when it is safe.
function jsonId(value) {
  if (value === null) return null;
  const n = Number(value);
  return Number.isSafeInteger(n) ? n : value;
}

// One reservation in its own transaction, with SET LOCAL lock_timeout: the
// setting ends with the transaction (and works through a pooler in
// transaction mode). set_config(..., true) is SET LOCAL with a parameter.
async function reserveSeat(pool, { resource, guest, quantity = 1, hold = null, key = null,
  metadata = null, lockTimeout = '2s' }) {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query("SELECT set_config('lock_timeout', $1, true)", [lockTimeout]);
    // metadata: pass JSON text; pg would send a plain object as JSON too, but
    // an array as a PostgreSQL array literal
    const { rows } = await client.query(RESERVE_SEAT, [resource, guest, quantity, hold, key,
      metadata === null ? null : JSON.stringify(metadata)]);
    await client.query('COMMIT');
    return rows[0];
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}

async function getBooking(pool, id) {
  const { rows } = await pool.query('SELECT * FROM booking.get_booking($1::bigint)', [id]);
  return rows[0] || null;
}

// [status, body, headers] for a booking.result row: the status is always its
// http_status (ok: 201 new, 200 changed; waitlisted: 202; refusals 404, 409,
// 410, 422; busy: 503 with Retry-After)
function httpResponse(row) {
  const body = { code: row.code, message: row.message, booking_id: jsonId(row.booking_id), replayed: row.replayed };
  return [row.http_status, body, row.code === 'busy' ? { 'Retry-After': '1' } : {}];
}

// [status, body, headers] for an error: class 22 (data exception) is the
// request's fault, 400; anything else is 500. err.code is the SQLSTATE.
function errorResponse(err) {
  if (typeof err.code === 'string' && err.code.startsWith('22')) {
    return [400, { code: 'bad_request', message: err.message, detail: err.detail }, {}];
  }
  return [500, { code: 'internal_error', message: 'The server could not process the request.' }, {}];
}

async function call(pool, sql, params) {
  try {
    const { rows } = await pool.query(sql, params);
    return httpResponse(rows[0]);
  } catch (err) {
    return errorResponse(err);
  }
}

// -- the checks ------------------------------------------------------------------

let failures = 0;

function check(name, got, want) {
  try {
    assert.deepStrictEqual(got, want);
    console.log(`ok - node-postgres: ${name}`);
  } catch {
    failures += 1;
    console.log(`not ok - node-postgres: ${name}`);
    console.log(`#   got:  ${JSON.stringify(got, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
    console.log(`#   want: ${JSON.stringify(want, (k, v) => (typeof v === 'bigint' ? `${v}n` : v))}`);
  }
}

async function expectError(pool, name, sql, params, sqlstate) {
  try {
    await pool.query(sql, params);
    check(`${name}: raises`, 'no error', sqlstate);
  } catch (err) {
    check(`${name}: SQLSTATE and HTTP 400`, [err.code, errorResponse(err)[0]], [sqlstate, 400]);
  }
}

async function main() {
  const seats = process.env.BOOKING_SEATS;
  const stay = process.env.BOOKING_STAY;
  const order = { order_id: 'node-1001', channel: 'web', lines: [1, 2] };
  const pool = new pg.Pool({ max: 4 });

  try {
    // 1. a hold of 2 seats with the caller's metadata
    const r = await reserveSeat(pool, { resource: seats, guest: 'alice@example.com', quantity: 2,
      hold: '15 minutes', metadata: order });
    let [status, body] = httpResponse(r);
    check('reserve_seat answers ok', [r.ok, r.code, r.replayed], [true, 'ok', false]);
    check('a new booking is HTTP 201', status, 201);
    check('booking_id arrives as a string (bigint), the body has a number',
      [typeof r.booking_id, typeof body.booking_id, String(body.booking_id)], ['string', 'number', r.booking_id]);
    check('http_status arrives as a number (integer)', typeof r.http_status, 'number');

    // 2. read it back; jsonb comes back parsed
    const b = await getBooking(pool, r.booking_id);
    check('get_booking columns', Object.keys(b), ['id', 'resource_id', 'guest', 'quantity', 'during', 'status',
      'expires_at', 'created_at', 'metadata', 'group_id']);
    check('get_booking row', [b.id, b.resource_id, b.guest, b.quantity, b.status, b.during, b.group_id],
      [r.booking_id, seats, 'alice@example.com', 2, 'pending', null, null]);
    check('metadata round trip', b.metadata, order);
    check('the hold lasts 15 minutes', b.expires_at - b.created_at, 15 * 60 * 1000);
    check('get_booking of an unknown id is no row', await getBooking(pool, '9223372036854775807'), null);

    // 3. confirm: ok, 200
    [status, body] = await call(pool, 'SELECT * FROM booking.confirm($1::bigint)', [r.booking_id]);
    check('confirm is HTTP 200', [status, body.code], [200, 'ok']);
    check('get_booking after confirm', (await getBooking(pool, r.booking_id)).status, 'confirmed');

    // 4. sold out: 409, a result, not an error
    const r2 = await reserveSeat(pool, { resource: seats, guest: 'bob@example.com', quantity: 9 });
    check('9 of 8 free seats: sold_out 409', httpResponse(r2).slice(0, 2),
      [409, { code: 'sold_out', message: r2.message, booking_id: null, replayed: false }]);

    // 5. busy: another transaction holds the resource; SET LOCAL lock_timeout
    // = 100 ms caps the wait (the role's booking.lock_timeout is 2 s)
    const holder = await pool.connect();
    let r3;
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT * FROM booking.reserve_seat($1, 'holder', 1)", [seats]);
      r3 = await reserveSeat(pool, { resource: seats, guest: 'carol@example.com', lockTimeout: '100ms' });
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
    const [s3, b3, h3] = httpResponse(r3);
    check('a locked resource: busy 503 with Retry-After', [s3, b3.code, h3], [503, 'busy', { 'Retry-After': '1' }]);
    check('the busy message names the session\'s lock_timeout', r3.message.includes('100 ms'), true);

    // 6. a waitlist entry: 202
    [status, body] = await call(pool, `SELECT * FROM booking.join_waitlist($1::bigint, $2, $3::integer,
                                                       metadata => $4::jsonb)`,
    [seats, 'dan@example.com', 9, JSON.stringify({ order_id: 'node-1002' })]);
    check('join_waitlist: waitlisted 202', [status, body.code], [202, 'waitlisted']);

    // 7. the one-column form is a text blob: that is why the recipe uses SELECT *
    const { rows: blob } = await pool.query('SELECT booking.reserve_seat($1::bigint, $2, 100) AS r', [seats, 'erin']);
    check('SELECT booking.f(...) is a text blob', [typeof blob[0].r, blob[0].r.startsWith('(f,sold_out,,409,')],
      ['string', true]);

    // 8. bigint: a string keeps every digit; per client, BigInt is an option
    const { rows: big } = await pool.query('SELECT $1::bigint AS id', ['9007199254740993']);
    check('a bigint above 2^53 stays exact as a string', big[0].id, '9007199254740993');
    check('parseInt would have lost its last digit', String(parseInt(big[0].id, 10)), '9007199254740992');
    const bigintClient = new pg.Client({
      types: { getTypeParser: (oid, format) => (oid === 20 ? BigInt : pg.types.getTypeParser(oid, format)) },
    });
    await bigintClient.connect();
    try {
      const { rows } = await bigintClient.query('SELECT * FROM booking.get_booking($1::bigint)', [r.booking_id]);
      check('a client of its own with BigInt for OID 20', [typeof rows[0].id, rows[0].id], ['bigint', BigInt(r.booking_id)]);
    } finally {
      await bigintClient.end();
    }

    // 9. class 22 is 400, whatever raised it; other errors are 500
    await expectError(pool, 'NULL guest (22004)', RESERVE_SEAT, [seats, null, 1, null, null, null], '22004');
    await expectError(pool, 'quantity 0 (22023)', RESERVE_SEAT, [seats, 'g', 0, null, null, null], '22023');
    await expectError(pool, 'quantity "abc" (22P02)', RESERVE_SEAT, [seats, 'g', 'abc', null, null, null], '22P02');
    await expectError(pool, 'metadata not an object (22023)', RESERVE_SEAT, [seats, 'g', 1, null, null, '[1]'], '22023');
    await expectError(pool, 'metadata that is not JSON (22P02)', RESERVE_SEAT, [seats, 'g', 1, null, null, '{bad'], '22P02');
    await expectError(pool, 'inverted range (22000)', RESERVE_STAY, [stay, 'g', '[2030-01-02,2030-01-01)', null], '22000');
    await expectError(pool, '2030-02-30 (22008)', RESERVE_STAY, [stay, 'g', '[2030-02-30,2030-03-01)', null], '22008');
    await expectError(pool, 'a time that is not one (22007)', RESERVE_STAY, [stay, 'g', '[soon,2030-03-01)', null], '22007');
    try {
      await pool.query('SELECT * FROM booking.set_capacity($1::bigint, 1, 1)', [seats]);
      check('set_capacity as a client: raises', 'no error', '42501');
    } catch (err) {
      check('set_capacity as a client: permission denied (42501), HTTP 500', [err.code, errorResponse(err)[0]], ['42501', 500]);
    }
  } finally {
    await pool.end();
  }
  return failures ? 1 : 0;
}

main().then((rc) => { process.exitCode = rc; }, (err) => {
  console.log(`not ok - node-postgres: unexpected error: ${err.stack}`);
  process.exitCode = 1;
});
