# The ActiveRecord recipe of docs/clients.md, run against a real database.
#
# Environment as for ruby_pg.rb: libpq's PG* variables (a role with
# booking.grant_client's grants), BOOKING_SEATS (a seat resource of capacity
# 10, empty) and BOOKING_STAY (a stay resource). Prints one "ok - " or
# "not ok - " line per check and exits 1 if any failed.
#
# Debian 12: ruby-activerecord (6.1) and ruby-pg.

require "json"
require "active_record"

# -- the recipe -----------------------------------------------------------------

ActiveRecord::Base.establish_connection(
  adapter: "postgresql", host: ENV["PGHOST"], port: ENV["PGPORT"],
  database: ENV["PGDATABASE"], username: ENV["PGUSER"]
)

# booking.bookings, read only: the extension owns the table and every write
# goes through its functions (no migration for it). grant_client gives SELECT.
class Booking < ActiveRecord::Base
  self.table_name = "booking.bookings"
  # the table's key is (home, id), for Citus; id alone is unique
  self.primary_key = "id"

  def readonly?
    true
  end
end

RESERVE_SEAT = <<~SQL
  SELECT * FROM booking.reserve_seat($1::bigint, $2::text, $3::integer, hold => $4::interval,
                                     idempotency_key => $5::text, metadata => $6::jsonb)
SQL

# connection.exec_query with $n and a list of values: an ActiveRecord::Result,
# whose rows are hashes; cast_values gives each column its Ruby type (jsonb
# as a Hash)
def booking_call(sql, binds)
  result = ActiveRecord::Base.connection.exec_query(sql, "booking", binds)
  result.columns.zip(result.cast_values.first).to_h
end

# One reservation in its own transaction, with SET LOCAL lock_timeout
def reserve_seat(resource, guest, quantity: 1, hold: nil, key: nil, metadata: nil, lock_timeout: "2s")
  ActiveRecord::Base.transaction do
    ActiveRecord::Base.connection.exec_query("SELECT set_config('lock_timeout', $1, true)", "SET LOCAL", [lock_timeout])
    booking_call(RESERVE_SEAT, [resource, guest, quantity, hold, key, metadata && JSON.generate(metadata)])
  end
end

# the status is always the result's http_status; busy adds Retry-After
def http_response(result)
  body = result.slice("code", "message", "booking_id", "replayed")
  [result["http_status"], body, result["code"] == "busy" ? { "Retry-After" => "1" } : {}]
end

# ActiveRecord wraps the driver's error: the PG::Error is its cause
def sqlstate(error)
  cause = error.cause
  cause.respond_to?(:result) && cause.result ? cause.result.error_field(PG::PG_DIAG_SQLSTATE) : nil
end

# class 22 (data exception) is 400; anything else is 500
def error_response(error)
  if sqlstate(error)&.start_with?("22")
    [400, { "code" => "bad_request", "message" => error.cause.result.error_field(PG::PG_DIAG_MESSAGE_PRIMARY) }, {}]
  else
    [500, { "code" => "internal_error", "message" => "The server could not process the request." }, {}]
  end
end

# -- the checks -----------------------------------------------------------------

$failures = 0

def check(name, got, want)
  if got == want
    puts "ok - activerecord: #{name}"
  else
    $failures += 1
    puts "not ok - activerecord: #{name}"
    puts "#   got:  #{got.inspect}"
    puts "#   want: #{want.inspect}"
  end
end

seats = Integer(ENV.fetch("BOOKING_SEATS"))
stay = Integer(ENV.fetch("BOOKING_STAY"))
order = { "order_id" => "ar-1001", "channel" => "web", "lines" => [1, 2] }

# 1. a hold of 2 seats with metadata
r = reserve_seat(seats, "alice@example.com", quantity: 2, hold: "15 minutes", metadata: order)
check("reserve_seat: HTTP 201, code ok", [http_response(r)[0], r["ok"], r["code"], r["replayed"]], [201, true, "ok", false])
id = r["booking_id"]
check("booking_id is an Integer", id.is_a?(Integer) && id.positive?, true)

# 2. read it back: booking.get_booking, and the model over the table
b = booking_call("SELECT * FROM booking.get_booking($1::bigint)", [id])
check("get_booking row", b.values_at("id", "resource_id", "guest", "quantity", "status", "during", "group_id"),
      [id, seats, "alice@example.com", 2, "pending", nil, nil])
check("metadata round trip", b["metadata"], order)
check("the hold lasts 15 minutes", b["expires_at"] - b["created_at"], 900.0)
row = Booking.find(id)
check("Booking.find over booking.bookings", [row.resource_id, row.status, row.metadata], [seats, "pending", order])
check("Booking.where(\"metadata->>'order_id' = ?\")",
      Booking.where(resource_id: seats).where("metadata->>'order_id' = ?", "ar-1001").pluck(:id), [id])

# 3. confirm: 200
r = booking_call("SELECT * FROM booking.confirm($1::bigint)", [id])
check("confirm: HTTP 200", [http_response(r)[0], r["code"]], [200, "ok"])

# 4. sold out: 409
r = reserve_seat(seats, "bob@example.com", quantity: 9)
check("9 of 8 free seats: HTTP 409 sold_out", [http_response(r)[0], r["code"]], [409, "sold_out"])

# 5. busy: a plain ruby-pg connection holds the resource; SET LOCAL
# lock_timeout = 100 ms caps the wait
holder = PG.connect
begin
  holder.exec("BEGIN")
  holder.exec_params("SELECT * FROM booking.reserve_seat($1::bigint, 'holder', 1)", [seats])
  r = reserve_seat(seats, "carol@example.com", lock_timeout: "100ms")
ensure
  holder.exec("ROLLBACK")
  holder.close
end
status, body, headers = http_response(r)
check("a locked resource: HTTP 503 busy with Retry-After", [status, body["code"], headers], [503, "busy", { "Retry-After" => "1" }])

# 6. a waitlist entry: 202
r = booking_call("SELECT * FROM booking.join_waitlist($1::bigint, $2, $3::integer, metadata => $4::jsonb)",
                 [seats, "dan@example.com", 9, JSON.generate({ "order_id" => "ar-1002" })])
check("join_waitlist: HTTP 202 waitlisted", [http_response(r)[0], r["code"]], [202, "waitlisted"])

# 7. class 22 is 400; other errors are 500
[
  ["NULL guest (22004)", RESERVE_SEAT, [seats, nil, 1, nil, nil, nil], "22004"],
  ["quantity 'abc' (22P02)", RESERVE_SEAT, [seats, "g", "abc", nil, nil, nil], "22P02"],
  ["inverted range (22000)", "SELECT * FROM booking.reserve_stay($1::bigint, 'g', $2::tstzrange)",
   [stay, "[2030-01-02,2030-01-01)"], "22000"],
  ["2030-02-30 (22008)", "SELECT * FROM booking.reserve_stay($1::bigint, 'g', $2::tstzrange)",
   [stay, "[2030-02-30,2030-03-01)"], "22008"],
].each do |name, sql, binds, state|
  begin
    booking_call(sql, binds)
    check("#{name}: raises", "no error", state)
  rescue ActiveRecord::StatementInvalid => e
    check("#{name}: SQLSTATE and HTTP 400", [sqlstate(e), error_response(e)[0]], [state, 400])
  end
end
begin
  booking_call("SELECT * FROM booking.set_capacity($1::bigint, 1, 1)", [seats])
  check("set_capacity as a client: raises", "no error", "42501")
rescue ActiveRecord::StatementInvalid => e
  check("set_capacity as a client: permission denied (42501), HTTP 500", [sqlstate(e), error_response(e)[0]], ["42501", 500])
end

exit($failures.zero? ? 0 : 1)
