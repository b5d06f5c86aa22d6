// The Go pgx recipe of docs/clients.md, run against a real database.
//
// Connects through libpq's environment (PGHOST, PGPORT, PGUSER, PGDATABASE;
// pgx reads the same variables) as a role with booking.grant_client's
// grants, and books on the seat resource BOOKING_SEATS (capacity 10, empty)
// and the stay resource BOOKING_STAY. Prints one "ok - " or "not ok - " line
// per check and exits 1 if any failed. examples/clients/test.sh sets all of
// that up.
//
// Debian 12 packages pgx v4 (golang-github-jackc-pgx-v4-dev, 4.15) and Go
// 1.19 (golang-go); there is no pgx v5 package. It builds offline in GOPATH
// mode against the packaged sources:
//
//	GO111MODULE=off GOPATH=/usr/share/gocode go build -o booking-pgx .
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgconn"
	"github.com/jackc/pgtype"
	"github.com/jackc/pgx/v4"
)

// -- the recipe ------------------------------------------------------------------

// Result is booking.result, scanned column by column. SELECT * FROM
// booking.f(...) gives the six columns, whose types pgx knows;
// SELECT booking.f(...) gives one column of the composite type
// booking.result, whose OID pgx does not know: it scans only into a string
// (the text "(t,ok,5,201,...)") and is refused for a struct or an
// interface{} ("unknown oid ... cannot be scanned into").
type Result struct {
	OK         bool
	Code       string
	BookingID  *int64 // NULL when nothing was booked (sold_out, busy, ...)
	HTTPStatus int
	Message    string
	Replayed   bool
}

func scanResult(row pgx.Row) (Result, error) {
	var r Result
	err := row.Scan(&r.OK, &r.Code, &r.BookingID, &r.HTTPStatus, &r.Message, &r.Replayed)
	return r, err
}

// Booking is one row of booking.get_booking.
type Booking struct {
	ID         int64
	ResourceID int64
	Guest      string
	Quantity   int32
	During     pgtype.Tstzrange // Status pgtype.Null for seats
	Status     string           // the enum booking.status: scan it into a string
	ExpiresAt  *time.Time       // NULL once confirmed
	CreatedAt  time.Time
	Metadata   map[string]any // jsonb; nil when none was given
	GroupID    *int64
}

// querier is a *pgx.Conn, a pgx.Tx or a *pgxpool.Pool.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func getBooking(ctx context.Context, q querier, id int64) (*Booking, error) {
	var b Booking
	err := q.QueryRow(ctx, "SELECT * FROM booking.get_booking($1)", id).Scan(&b.ID, &b.ResourceID, &b.Guest,
		&b.Quantity, &b.During, &b.Status, &b.ExpiresAt, &b.CreatedAt, &b.Metadata, &b.GroupID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	return &b, err
}

const reserveSeatSQL = `SELECT * FROM booking.reserve_seat($1, $2, $3, hold => $4, idempotency_key => $5,
                                                metadata => $6)`

// interval is a time.Duration as PostgreSQL's interval. pgx v4 also encodes
// a time.Duration argument right by itself (as microseconds); never send
// int64(d) or d.Nanoseconds(): database/sql with lib/pq does that, and
// PostgreSQL reads the number as seconds (15 minutes become 28,519 years).
func interval(d time.Duration) pgtype.Interval {
	return pgtype.Interval{Microseconds: d.Microseconds(), Status: pgtype.Present}
}

// reserveSeat makes one reservation in its own transaction, with SET LOCAL
// lock_timeout (set_config(..., true) is SET LOCAL with a parameter): the
// setting ends with the transaction, and works through a pooler in
// transaction mode.
func reserveSeat(ctx context.Context, conn *pgx.Conn, resource int64, guest string, quantity int,
	hold *time.Duration, metadata map[string]any, lockTimeout string) (Result, error) {
	var r Result
	err := conn.BeginFunc(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT set_config('lock_timeout', $1, true)", lockTimeout); err != nil {
			return err
		}
		h := pgtype.Interval{Status: pgtype.Null}
		if hold != nil {
			h = interval(*hold)
		}
		var meta any // nil: SQL NULL
		if metadata != nil {
			meta = metadata // pgx encodes a map as JSON for a jsonb parameter
		}
		var err error
		r, err = scanResult(tx.QueryRow(ctx, reserveSeatSQL, resource, guest, quantity, h, nil, meta))
		return err
	})
	return r, err
}

// Response is what the HTTP handler sends.
type Response struct {
	Status  int
	Body    map[string]any
	Headers map[string]string
}

// httpResponse maps a booking.result: the status is always its http_status
// (ok: 201 new, 200 changed; waitlisted: 202; refusals 404, 409, 410, 422;
// busy: 503 with Retry-After).
func httpResponse(r Result) Response {
	resp := Response{Status: r.HTTPStatus, Headers: map[string]string{},
		Body: map[string]any{"code": r.Code, "message": r.Message, "booking_id": r.BookingID, "replayed": r.Replayed}}
	if r.Code == "busy" {
		resp.Headers["Retry-After"] = "1"
	}
	return resp
}

// errorResponse maps an error: SQLSTATE class 22 (data exception) is the
// request's fault, 400; anything else is 500.
func errorResponse(err error) Response {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22") {
		return Response{Status: 400, Body: map[string]any{"code": "bad_request", "message": pgErr.Message,
			"detail": pgErr.Detail}}
	}
	return Response{Status: 500, Body: map[string]any{"code": "internal_error",
		"message": "The server could not process the request."}}
}

// -- the checks ------------------------------------------------------------------

var failures int

func check(name string, got, want any) {
	if reflect.DeepEqual(got, want) {
		fmt.Printf("ok - pgx: %s\n", name)
		return
	}
	failures++
	fmt.Printf("not ok - pgx: %s\n#   got:  %#v\n#   want: %#v\n", name, got, want)
}

func sqlstate(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	if err == nil {
		return "no error"
	}
	return "not a PgError: " + err.Error()
}

func fatal(what string, err error) {
	fmt.Printf("not ok - pgx: %s: %v\n", what, err)
	os.Exit(1)
}

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	seats, _ := strconv.ParseInt(os.Getenv("BOOKING_SEATS"), 10, 64)
	stay, _ := strconv.ParseInt(os.Getenv("BOOKING_STAY"), 10, 64)
	order := map[string]any{"order_id": "go-1001", "channel": "web", "lines": []any{1.0, 2.0}}

	conn, err := pgx.Connect(ctx, "") // PGHOST, PGPORT, PGUSER, PGDATABASE
	if err != nil {
		fatal("connect", err)
	}
	defer conn.Close(ctx)

	// 1. a hold of 2 seats with the caller's metadata
	hold := 15 * time.Minute
	r, err := reserveSeat(ctx, conn, seats, "alice@example.com", 2, &hold, order, "2s")
	if err != nil {
		fatal("reserve_seat", err)
	}
	check("reserve_seat answers ok", []any{r.OK, r.Code, r.Replayed}, []any{true, "ok", false})
	check("a new booking is HTTP 201", httpResponse(r).Status, 201)
	check("booking_id is set", r.BookingID != nil && *r.BookingID > 0, true)
	var lt string
	if err := conn.QueryRow(ctx, "SHOW lock_timeout").Scan(&lt); err != nil {
		fatal("SHOW lock_timeout", err)
	}
	check("SET LOCAL lock_timeout ended with the transaction", lt, "0")
	id := *r.BookingID

	// 2. read it back
	b, err := getBooking(ctx, conn, id)
	if err != nil || b == nil {
		fatal("get_booking", err)
	}
	check("get_booking row", []any{b.ID, b.ResourceID, b.Guest, b.Quantity, b.Status, b.During.Status, b.GroupID},
		[]any{id, seats, "alice@example.com", int32(2), "pending", pgtype.Null, (*int64)(nil)})
	check("metadata round trip", b.Metadata, order)
	check("the hold lasts 15 minutes (time.Duration as an interval)", b.ExpiresAt != nil && b.ExpiresAt.Sub(b.CreatedAt) == hold, true)
	var seconds float64
	err = conn.QueryRow(ctx, "SELECT extract(epoch FROM $1::interval)::float8", hold).Scan(&seconds)
	check("pgx v4 sends a time.Duration argument as an interval too", []any{err, seconds}, []any{nil, 900.0})
	none, err := getBooking(ctx, conn, 1<<62)
	check("get_booking of an unknown id is no row", []any{none == nil, err}, []any{true, nil})

	// 3. confirm: ok, 200
	r, err = scanResult(conn.QueryRow(ctx, "SELECT * FROM booking.confirm($1)", id))
	check("confirm is HTTP 200", []any{err, httpResponse(r).Status, r.Code}, []any{nil, 200, "ok"})

	// 4. sold out: 409, a result, not an error
	r, err = reserveSeat(ctx, conn, seats, "bob@example.com", 9, nil, nil, "2s")
	check("9 of 8 free seats: sold_out 409", []any{err, httpResponse(r).Status, r.Code, r.BookingID},
		[]any{nil, 409, "sold_out", (*int64)(nil)})

	// 5. busy: another transaction holds the resource; SET LOCAL lock_timeout
	// = 100 ms caps the wait (the role's booking.lock_timeout is 2 s)
	other, err := pgx.Connect(ctx, "")
	if err != nil {
		fatal("second connection", err)
	}
	tx, err := other.Begin(ctx)
	if err != nil {
		fatal("begin", err)
	}
	if _, err := tx.Exec(ctx, "SELECT * FROM booking.reserve_seat($1, 'holder', 1)", seats); err != nil {
		fatal("holder", err)
	}
	r, err = reserveSeat(ctx, conn, seats, "carol@example.com", 1, nil, nil, "100ms")
	_ = tx.Rollback(ctx)
	other.Close(ctx)
	resp := httpResponse(r)
	check("a locked resource: busy 503 with Retry-After", []any{err, resp.Status, r.Code, resp.Headers},
		[]any{nil, 503, "busy", map[string]string{"Retry-After": "1"}})
	check("the busy message names the session's lock_timeout", strings.Contains(r.Message, "100 ms"), true)

	// 6. a waitlist entry: 202
	r, err = scanResult(conn.QueryRow(ctx, "SELECT * FROM booking.join_waitlist($1, $2, $3, metadata => $4)",
		seats, "dan@example.com", 9, map[string]any{"order_id": "go-1002"}))
	check("join_waitlist: waitlisted 202", []any{err, httpResponse(r).Status, r.Code}, []any{nil, 202, "waitlisted"})

	// 7. SELECT booking.f(...): the composite's OID is unknown to pgx
	var blob string
	err = conn.QueryRow(ctx, "SELECT booking.reserve_seat($1, 'erin', 100)", seats).Scan(&blob)
	check("SELECT booking.f(...) into a string: a text blob", []any{err, strings.HasPrefix(blob, "(f,sold_out,,409,")},
		[]any{nil, true})
	var whole Result
	err = conn.QueryRow(ctx, "SELECT booking.reserve_seat($1, 'erin', 100)", seats).Scan(&whole)
	check("SELECT booking.f(...) into a struct: refused", err != nil && strings.Contains(err.Error(), "unknown oid"), true)

	// 8. class 22 is 400, whatever raised it; other errors are 500
	bad := []struct {
		name, sql string
		args      []any
		state     string
	}{
		{"NULL guest (22004)", reserveSeatSQL, []any{seats, nil, 1, nil, nil, nil}, "22004"},
		{"quantity 0 (22023)", reserveSeatSQL, []any{seats, "g", 0, nil, nil, nil}, "22023"},
		{"metadata not an object (22023)", reserveSeatSQL, []any{seats, "g", 1, nil, nil, []any{1}}, "22023"},
		{"metadata that is not JSON (22P02)", "SELECT * FROM booking.reserve_seat($1, 'g', metadata => $2::text::jsonb)",
			[]any{seats, "{bad"}, "22P02"},
		// what lib/pq sends for a time.Duration of 15 minutes: its nanoseconds,
		// which PostgreSQL reads as seconds
		{"hold as nanoseconds (22023)", "SELECT * FROM booking.reserve_seat($1, 'g', hold => $2::text::interval)",
			[]any{seats, strconv.FormatInt(int64(hold), 10)}, "22023"},
		{"inverted range (22000)", "SELECT * FROM booking.reserve_stay($1, 'g', $2)",
			[]any{stay, "[2030-01-02,2030-01-01)"}, "22000"},
		{"2030-02-30 (22008)", "SELECT * FROM booking.reserve_stay($1, 'g', $2)",
			[]any{stay, "[2030-02-30,2030-03-01)"}, "22008"},
		{"a time that is not one (22007)", "SELECT * FROM booking.reserve_stay($1, 'g', $2)",
			[]any{stay, "[soon,2030-03-01)"}, "22007"},
	}
	for _, c := range bad {
		_, err := scanResult(conn.QueryRow(ctx, c.sql, c.args...))
		check(c.name+": SQLSTATE and HTTP 400", []any{sqlstate(err), errorResponse(err).Status}, []any{c.state, 400})
		if c.name == "hold as nanoseconds (22023)" {
			detail, _ := errorResponse(err).Body["detail"].(string)
			check("the DETAIL shows the nanoseconds read as seconds", strings.Contains(detail, "(900000000000 seconds)"), true)
		}
	}
	_, err = scanResult(conn.QueryRow(ctx, "SELECT * FROM booking.set_capacity($1, 1, 1)", seats))
	check("set_capacity as a client: permission denied (42501), HTTP 500",
		[]any{sqlstate(err), errorResponse(err).Status}, []any{"42501", 500})

	// the response body marshals (booking_id a number, or null)
	out, err := json.Marshal(httpResponse(Result{OK: true, Code: "ok", BookingID: &id, HTTPStatus: 201}).Body)
	check("the body as JSON", []any{err, strings.Contains(string(out), fmt.Sprintf(`"booking_id":%d`, id))}, []any{nil, true})

	if failures > 0 {
		os.Exit(1)
	}
}
