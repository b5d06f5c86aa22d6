/*
 * lifecycle.c
 *	  A booking read under its resource's row lock, for the calls that
 *	  change it (6_calls/hold.c, 6_calls/amend.c), and its end: a new
 *	  status, its event, and its seats given back to the counter and offered
 *	  to the line.
 *
 *	  Layer 4, inventory.  Locks: the booking's resource row, then (ending a
 *	  seat booking of a striped resource) one stripe, then the booking row,
 *	  which nobody else can change without the same resource lock.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "2_locks/lock.h"
#include "3_frame/events.h"
#include "4_inventory/counter.h"
#include "4_inventory/lifecycle.h"
#include "4_inventory/line.h"

/* a booking's home: $2 here, the last parameter below */
static BookingPlan owner_plan = {
	"SELECT resource_id FROM booking.bookings WHERE home OPERATOR(pg_catalog.=) $2 "
	"AND id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, INT8OID}
};
static BookingPlan read_plan = {
	"SELECT CAST(status AS pg_catalog.text), expires_at, quantity, during IS NULL, created_at, "
	"pg_catalog.upper(during), blocked IS NULL AND during IS NOT NULL "
	"FROM booking.bookings WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, INT8OID}
};
static BookingPlan set_status_plan = {
	"UPDATE booking.bookings SET status = CAST($2 AS booking.status) "
	"WHERE home OPERATOR(pg_catalog.=) $3 AND id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, TEXTOID, INT8OID}
};

/*
 * Locks the booking's resource, then reads the booking; false with res set
 * when the booking is unknown or the lock could not be had.
 */
bool
BookingLockBooking(BookingLifecycle *req, BookingLocked *b, BookingResult *res)
{
	Datum		values[2] = {Int64GetDatum(req->booking), Int64GetDatum(req->home)};
	char	   *status;
	bool		isnull;
	int64		resource;

	if (BookingExecuteLatest(&owner_plan, values, NULL, 1) == 0)
	{
		BookingSetResult(res, BOOKING_NOT_FOUND, -1,
						 "Booking %lld does not exist.", (long long) req->booking);
		return false;
	}
	resource = BookingGetInt64(0, 1, NULL);
	if (!BookingLockResourceFor(resource, req->timeout_ms, &b->resource, res))
		return false;

	/*
	 * Whether a hold has lapsed is decided on the clock after the lock: a
	 * newcomer may have taken the dates of a hold that lapsed while we waited.
	 */
	req->now = GetCurrentTimestamp();

	if (BookingExecute(&read_plan, values, NULL, false, 1) == 0)
	{
		/* a snapshot older than the booking: only a new transaction can see it */
		BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, resource, req->timeout_ms);
		return false;
	}
	status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (strcmp(status, "pending") == 0)
		b->status = BOOKING_STATUS_PENDING;
	else if (strcmp(status, "confirmed") == 0)
		b->status = BOOKING_STATUS_CONFIRMED;
	else if (strcmp(status, "cancelled") == 0)
		b->status = BOOKING_STATUS_CANCELLED;
	else if (strcmp(status, "waiting") == 0)
		b->status = BOOKING_STATUS_WAITING;
	else
		b->status = BOOKING_STATUS_EXPIRED;
	b->expires_at = DatumGetTimestampTz(BookingGetDatum(0, 2, &isnull));
	b->quantity = BookingGetInt32(0, 3, NULL);
	b->is_seat = BookingGetBool(0, 4);
	b->is_slot = BookingGetBool(0, 7);
	b->created_at = DatumGetTimestampTz(BookingGetDatum(0, 5, &isnull));
	b->ends_at = b->is_seat ? 0 : DatumGetTimestampTz(BookingGetDatum(0, 6, &isnull));
	return true;
}

/* Sets the status of booking, whose resource row the caller holds. */
void
BookingSetStatus(int64 booking, const char *status)
{
	Datum		values[3] = {Int64GetDatum(booking), CStringGetTextDatum(status),
	Int64GetDatum(BookingHome(booking))};

	(void) BookingExecute(&set_status_plan, values, NULL, false, 0);
}

/*
 * Ends a blocking booking and gives its seats back to the counter (for a
 * striped resource, to a stripe locked before anything is written).  False
 * with res set when that stripe could not be had.
 */
bool
BookingEndBooking(BookingLifecycle *req, BookingLocked *b, const char *status, BookingResult *res)
{
	BookingGiveBack gb;

	if (b->is_seat)
	{
		BookingLockOutcome outcome = BookingCounterOpenGiveBack(&b->resource, req->timeout_ms, &gb);

		if (outcome != BOOKING_LOCKED)
		{
			BookingSetLockOutcome(res, outcome, b->resource.id, req->timeout_ms);
			return false;
		}
	}
	BookingSetStatus(req->booking, status);
	BookingEmitEvent(status, req->home, req->booking, BookingStatusName(b->status),
					 strcmp(status, "expired") == 0 ? "hold_expired" : "ok");
	if (b->is_seat)
	{
		BookingCounterGiveBack(&gb, b->quantity);
		/* the freed seats go to the line first, in this transaction */
		if (b->resource.waiting > 0)
			BookingWaitlistServe(b->resource.id, req->timeout_ms, req->now);
	}
	return true;
}

void
BookingSetHoldExpired(BookingResult *res, BookingLifecycle *req, BookingLocked *b)
{
	BookingSetResult(res, BOOKING_HOLD_EXPIRED, req->booking,
					 "The hold on booking %lld expired at %s; reserve again.",
					 (long long) req->booking, timestamptz_to_str(b->expires_at));
}
