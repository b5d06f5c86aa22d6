# The ruby-pg recipe of docs/clients.md, run against a real database.
#
# Connects through libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE) as
# a role with booking.grant_client's grants, and books on the seat resource
# BOOKING_SEATS (capacity 10, empty) and the stay resource BOOKING_STAY.
# Prints one "ok - " or "not ok - " line per check and exits 1 if any failed.
# examples/clients/test.sh sets all of that up.
#
# Debian 12: ruby (3.1) and ruby-pg (pg 1.4).

require "json"
require "pg"

# -- the recipe -----------------------------------------------------------------

# SELECT * FROM booking.f(...): one column per field of booking.result. With
# the basic type map, each comes as its Ruby type (true, 201, a Hash for
# jsonb); without it every value is a String ("t", "201").
RESERVE_SEAT = <<~SQL
  SELECT * FROM booking.reserve_seat($1::bigint, $2::text, $3::integer, hold => $4::interval,
                                     idempotency_key => $5::text, metadata => $6::jsonb)
SQL
RESERVE_STAY = "SELECT * FROM booking.reserve_stay($1::bigint, $2::text, $3::tstzrange)"

def connect
  # PGHOST, PGPORT, PGUSER, PGDATABASE. Not PG.connect(""): ruby-pg 1.4 then
  # drops a PGHOST that is a socket directory
  conn = PG.connect
  conn.type_map_for_results = PG::BasicTypeMapForResults.new(conn)
  conn
end

# One reservation in its own transaction, with SET LOCAL lock_timeout (as
# set_config(..., true), which takes a parameter): it ends with the
# transaction, and works through a pooler in transaction mode.
def reserve_seat(conn, resource, guest, quantity: 1, hold: nil, key: nil, metadata: nil, lock_timeout: "2s")
  conn.transaction do
    conn.exec_params("SELECT set_config('lock_timeout', $1, true)", [lock_timeout])
    conn.exec_params(RESERVE_SEAT, [resource, guest, quantity, hold, key,
                                    metadata && JSON.generate(metadata)]).first
  end
end

# the basic type map has no decoder for the enum booking.status nor for
# tstzrange (it warns, and gives the text): ask for them as text
GET_BOOKING = <<~SQL
  SELECT id, resource_id, guest, quantity, during::text AS during, status::text AS status,
         expires_at, created_at, metadata, group_id
    FROM booking.get_booking($1::bigint)
SQL

def get_booking(conn, id)
  conn.exec_params(GET_BOOKING, [id]).first # nil: no such booking
end

# [status, body, headers] for a booking.result hash: the status is always its
# http_status (ok: 201 new, 200 changed; waitlisted: 202; refusals 404, 409,
# 410, 422; busy: 503 with Retry-After)
def http_response(result)
  body = result.slice("code", "message", "booking_id", "replayed")
  [result["http_status"], body, result["code"] == "busy" ? { "Retry-After" => "1" } : {}]
end

def sqlstate(error)
  error.respond_to?(:result) && error.result ? error.result.error_field(PG::PG_DIAG_SQLSTATE) : nil
end

# [status, body, headers] for a PG::Error: class 22 (data exception) is the
# request's fault, 400; anything else is 500
def error_response(error)
  state = sqlstate(error)
  if state&.start_with?("22")
    [400, { "code" => "bad_request", "message" => error.result.error_field(PG::PG_DIAG_MESSAGE_PRIMARY),
            "detail" => error.result.error_field(PG::PG_DIAG_MESSAGE_DETAIL) }, {}]
  else
    [500, { "code" => "internal_error", "message" => "The server could not process the request." }, {}]
  end
end

def call(conn, sql, params)
  http_response(conn.exec_params(sql, params).first)
rescue PG::Error => e
  error_response(e)
end

# -- the checks -----------------------------------------------------------------

$failures = 0

def check(name, got, want)
  if got == want
    puts "ok - ruby-pg: #{name}"
  else
    $failures += 1
    puts "not ok - ruby-pg: #{name}"
    puts "#   got:  #{got.inspect}"
    puts "#   want: #{want.inspect}"
  end
end

seats = Integer(ENV.fetch("BOOKING_SEATS"))
stay = Integer(ENV.fetch("BOOKING_STAY"))
order = { "order_id" => "rb-1001", "channel" => "web", "lines" => [1, 2] }
conn = connect

# 1. a hold of 2 seats with the caller's metadata
r = reserve_seat(conn, seats, "alice@example.com", quantity: 2, hold: "15 minutes", metadata: order)
status, = http_response(r)
check("reserve_seat answers ok", [r["ok"], r["code"], r["replayed"]], [true, "ok", false])
check("a new booking is HTTP 201", status, 201)
check("booking_id is an Integer", r["booking_id"].is_a?(Integer) && r["booking_id"].positive?, true)
check("SET LOCAL lock_timeout ended with the transaction", conn.exec("SHOW lock_timeout").getvalue(0, 0), "0")
id = r["booking_id"]

# 2. read it back: the result hash, jsonb as a Hash
b = get_booking(conn, id)
check("get_booking columns", b.keys, %w[id resource_id guest quantity during status expires_at created_at metadata group_id])
check("get_booking row", b.values_at("id", "resource_id", "guest", "quantity", "status", "during", "group_id"),
      [id, seats, "alice@example.com", 2, "pending", nil, nil])
check("metadata round trip", b["metadata"], order)
check("the hold lasts 15 minutes", b["expires_at"] - b["created_at"], 900.0)
check("get_booking of an unknown id is nil", get_booking(conn, 2**63 - 1), nil)

# 3. confirm: ok, 200
status, body, = call(conn, "SELECT * FROM booking.confirm($1::bigint)", [id])
check("confirm is HTTP 200", [status, body["code"]], [200, "ok"])
check("get_booking after confirm", get_booking(conn, id)["status"], "confirmed")

# 4. sold out: 409, a result, not an error
r = reserve_seat(conn, seats, "bob@example.com", quantity: 9)
check("9 of 8 free seats: sold_out 409", http_response(r)[0, 2],
      [409, { "code" => "sold_out", "message" => r["message"], "booking_id" => nil, "replayed" => false }])

# 5. busy: another transaction holds the resource; SET LOCAL lock_timeout =
# 100 ms caps the wait (the role's booking.lock_timeout is 2 s)
other = connect
begin
  other.exec("BEGIN")
  other.exec_params("SELECT * FROM booking.reserve_seat($1::bigint, 'holder', 1)", [seats])
  r = reserve_seat(conn, seats, "carol@example.com", lock_timeout: "100ms")
ensure
  other.exec("ROLLBACK")
  other.close
end
status, body, headers = http_response(r)
check("a locked resource: busy 503 with Retry-After", [status, body["code"], headers], [503, "busy", { "Retry-After" => "1" }])
check("the busy message names the session's lock_timeout", r["message"].include?("100 ms"), true)

# 6. a waitlist entry: 202
status, body, = call(conn, "SELECT * FROM booking.join_waitlist($1::bigint, $2, $3::integer, metadata => $4::jsonb)",
                     [seats, "dan@example.com", 9, JSON.generate({ "order_id" => "rb-1002" })])
check("join_waitlist: waitlisted 202", [status, body["code"]], [202, "waitlisted"])

# 7. SELECT booking.f(...) is one text column; without the type map, every value is a String
plain = PG.connect
blob = plain.exec_params("SELECT booking.reserve_seat($1::bigint, 'erin', 100) AS r", [seats]).first["r"]
check("SELECT booking.f(...) is a text blob", [blob.class, blob.start_with?("(f,sold_out,,409,")], [String, true])
raw = plain.exec_params("SELECT * FROM booking.get_booking($1::bigint)", [id]).first
plain.close
check("without the type map: strings", [raw["id"], raw["quantity"], raw["metadata"].class, JSON.parse(raw["metadata"])],
      [id.to_s, "2", String, order])

# 8. class 22 is 400, whatever raised it; other errors are 500
[
  ["NULL guest (22004)", RESERVE_SEAT, [seats, nil, 1, nil, nil, nil], "22004"],
  ["quantity 0 (22023)", RESERVE_SEAT, [seats, "g", 0, nil, nil, nil], "22023"],
  ["quantity 'abc' (22P02)", RESERVE_SEAT, [seats, "g", "abc", nil, nil, nil], "22P02"],
  ["metadata not an object (22023)", RESERVE_SEAT, [seats, "g", 1, nil, nil, "[1]"], "22023"],
  ["metadata that is not JSON (22P02)", RESERVE_SEAT, [seats, "g", 1, nil, nil, "{bad"], "22P02"],
  ["inverted range (22000)", RESERVE_STAY, [stay, "g", "[2030-01-02,2030-01-01)"], "22000"],
  ["2030-02-30 (22008)", RESERVE_STAY, [stay, "g", "[2030-02-30,2030-03-01)"], "22008"],
  ["a time that is not one (22007)", RESERVE_STAY, [stay, "g", "[soon,2030-03-01)"], "22007"],
].each do |name, sql, params, state|
  begin
    conn.exec_params(sql, params)
    check("#{name}: raises", "no error", state)
  rescue PG::Error => e
    check("#{name}: SQLSTATE and HTTP 400", [sqlstate(e), error_response(e)[0]], [state, 400])
  end
end
begin
  conn.exec_params("SELECT * FROM booking.set_capacity($1::bigint, 1, 1)", [seats])
  check("set_capacity as a client: raises", "no error", "42501")
rescue PG::Error => e
  check("set_capacity as a client: permission denied (42501), HTTP 500", [sqlstate(e), error_response(e)[0]], ["42501", 500])
end

conn.close
exit($failures.zero? ? 0 : 1)
