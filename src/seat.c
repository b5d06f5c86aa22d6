/*
 * seat.c
 *	  Counted inventory: booking.reserve_seat.
 *
 *	  A resource row carries its capacity and the seats taken by pending and
 *	  confirmed seat bookings.  reserve_seat locks that one row (lock.c),
 *	  decides on what it reads after the lock, bumps the counter and inserts
 *	  the booking, so its cost does not grow with the bookings already made.
 *	  A hold that lapsed stays counted until someone reclaims it under the
 *	  same row lock; reserve_seat does so only when the seats it needs are
 *	  not otherwise there, so a lapsed hold never blocks a sale.
 *
 *	  Locks: the resource row (FOR NO KEY UPDATE), then the lapsed booking
 *	  rows it expires, which no one else can hold without the resource lock.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"

PG_FUNCTION_INFO_V1(booking_reserve_seat);

static BookingPlan reclaim_plan = {
	"WITH lapsed AS (UPDATE booking.bookings SET status = 'expired'::booking.status "
	"WHERE resource_id OPERATOR(pg_catalog.=) $1 "
	"AND status OPERATOR(pg_catalog.=) 'pending'::booking.status "
	"AND expires_at OPERATOR(pg_catalog.<=) $2 AND during IS NULL RETURNING quantity) "
	"SELECT CAST(COALESCE(pg_catalog.sum(quantity), 0) AS pg_catalog.int4) FROM lapsed",
	2, {INT8OID, TIMESTAMPTZOID}
};
static BookingPlan write_taken_plan = {
	"UPDATE booking.resources SET taken = $2 WHERE id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, INT4OID}
};
static BookingPlan insert_plan = {
	"INSERT INTO booking.bookings "
	"(resource_id, guest, quantity, status, expires_at, created_at, validity) "
	"VALUES ($1, $2, $3, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6) RETURNING id",
	6, {INT8OID, TEXTOID, INT4OID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID}
};

typedef struct SeatRequest
{
	int64		resource;
	text	   *guest;
	int32		quantity;
	bool		has_hold;
	int64		hold_us;
	int			timeout_ms;
	TimestampTz now;
} SeatRequest;

/*
 * Expires the lapsed seat holds of a resource whose row lock the caller
 * holds; returns the seats they held.  The caller writes the counter.
 */
int32
BookingReclaimLapsedSeats(int64 resource, TimestampTz now)
{
	Datum		values[2] = {Int64GetDatum(resource), TimestampTzGetDatum(now)};

	(void) BookingExecute(&reclaim_plan, values, NULL, false, 0);
	return BookingGetInt32(0, 1, NULL);
}

/* Sets the counter of a resource whose row lock the caller holds. */
void
BookingWriteTaken(int64 resource, int32 taken)
{
	Datum		values[2] = {Int64GetDatum(resource), Int32GetDatum(taken)};

	(void) BookingExecute(&write_taken_plan, values, NULL, false, 0);
}

static void
ReserveSeatBody(void *state, BookingResult *res)
{
	SeatRequest *req = (SeatRequest *) state;
	BookingResource r;
	BookingLockOutcome outcome;
	int64		taken;
	Datum		values[6];
	char		nulls[6] = "      ";
	TimestampTz expires_at = 0;
	int64		booking_id;

	outcome = BookingLockResource(req->resource, req->timeout_ms, &r);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, req->resource);
		return;
	}

	taken = r.taken;
	if (taken + req->quantity > r.capacity)
	{
		int32		reclaimed = BookingReclaimLapsedSeats(req->resource, req->now);

		taken -= reclaimed;
		if (taken + req->quantity > r.capacity)
		{
			if (reclaimed > 0)
				BookingWriteTaken(req->resource, (int32) taken);
			BookingSetResult(res, BOOKING_SOLD_OUT, -1,
							 "Sold out: resource %lld has %lld of %d seats left and %d were requested.",
							 (long long) req->resource, (long long) (r.capacity - taken),
							 r.capacity, req->quantity);
			return;
		}
	}
	BookingWriteTaken(req->resource, (int32) (taken + req->quantity));

	if (req->has_hold)
		expires_at = req->now + req->hold_us;
	values[0] = Int64GetDatum(req->resource);
	values[1] = PointerGetDatum(req->guest);
	values[2] = Int32GetDatum(req->quantity);
	values[3] = TimestampTzGetDatum(expires_at);
	if (!req->has_hold)
		nulls[3] = 'n';
	values[4] = TimestampTzGetDatum(req->now);
	values[5] = BookingMakeRange(req->now, expires_at, !req->has_hold);
	(void) BookingExecute(&insert_plan, values, nulls, false, 1);
	booking_id = BookingGetInt64(0, 1, NULL);

	if (req->has_hold)
		BookingSetResult(res, BOOKING_CREATED, booking_id,
						 "Held %d seat(s) on resource %lld until %s; confirm before then.",
						 req->quantity, (long long) req->resource,
						 timestamptz_to_str(expires_at));
	else
		BookingSetResult(res, BOOKING_CREATED, booking_id,
						 "Reserved %d seat(s) on resource %lld.",
						 req->quantity, (long long) req->resource);
}

/*
 * reserve_seat(resource, guest, quantity, hold, idempotency_key, lock_timeout)
 */
Datum
booking_reserve_seat(PG_FUNCTION_ARGS)
{
	SeatRequest req;
	BookingCall call;
	BookingResult res;
	char	   *key;

	req.resource = BookingArgId(fcinfo, 0, "resource");
	req.guest = BookingArgGuest(fcinfo, 1);
	req.quantity = BookingArgQuantity(fcinfo, 2);
	req.has_hold = BookingArgHold(fcinfo, 3, &req.hold_us);
	key = BookingArgKey(fcinfo, 4);
	req.timeout_ms = BookingArgLockTimeout(fcinfo, 5);
	req.now = GetCurrentTimestamp();

	memset(&call, 0, sizeof(call));
	call.key = key;
	if (key != NULL)
	{
		const char *fields[4];

		fields[0] = psprintf(INT64_FORMAT, req.resource);
		fields[1] = text_to_cstring(req.guest);
		fields[2] = psprintf("%d", req.quantity);
		fields[3] = req.has_hold ? psprintf(INT64_FORMAT, req.hold_us) : NULL;
		call.request = BookingRequestString("reserve_seat", 4, fields);
	}
	call.timeout_ms = req.timeout_ms;
	call.resource = req.resource;
	call.now = req.now;
	call.body = ReserveSeatBody;
	call.state = &req;

	SPI_connect();
	BookingRunCall(&call, &res);
	SPI_finish();

	PG_RETURN_DATUM(BookingResultDatum(fcinfo, &res));
}
