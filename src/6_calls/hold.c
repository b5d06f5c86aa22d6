/*
 * hold.c
 *	  The booking lifecycle: booking.confirm, booking.cancel,
 *	  booking.extend_hold and booking.extend_hold_until (booking.hold_expire
 *	  is expire.c).
 *
 *	  A hold is a pending booking with expires_at; it blocks until then.  Its
 *	  validity range [created, expires_at) takes part in the exclusion
 *	  constraint, so a lapsed stay hold stops blocking by itself; a lapsed
 *	  seat hold stays in the counter until reclaimed
 *	  (4_inventory/seat_sale.c) or expired (expire.c).
 *
 *	  Layer 6, the calls.  Locks: each call reads the booking's resource
 *	  id, locks that resource row, then reads and writes the booking row,
 *	  which nobody else can change without the same resource lock
 *	  (4_inventory/lifecycle.c).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/timeout.h"
#include "3_frame/call.h"
#include "3_frame/events.h"
#include "3_frame/idempotency.h"
#include "4_inventory/lifecycle.h"
#include "4_inventory/line.h"
#include "5_scaleout/route.h"

PG_FUNCTION_INFO_V1(booking_confirm);
PG_FUNCTION_INFO_V1(booking_cancel);
PG_FUNCTION_INFO_V1(booking_extend_hold);
PG_FUNCTION_INFO_V1(booking_extend_hold_until);

static BookingPlan confirm_plan = {
	"UPDATE booking.bookings SET status = 'confirmed'::booking.status, expires_at = NULL, "
	"validity = pg_catalog.tstzrange(created_at, NULL, '[)') "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, INT8OID}
};
static BookingPlan extend_plan = {
	"UPDATE booking.bookings SET expires_at = $2, "
	"validity = pg_catalog.tstzrange(created_at, $2, '[)') "
	"WHERE home OPERATOR(pg_catalog.=) $3 AND id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, TIMESTAMPTZOID, INT8OID}
};

static void
ConfirmBody(void *state, BookingResult *res)
{
	BookingLifecycle *req = (BookingLifecycle *) state;
	BookingLocked b;

	if (!BookingLockBooking(req, &b, res))
		return;
	switch (b.status)
	{
		case BOOKING_STATUS_CONFIRMED:
			BookingSetResult(res, BOOKING_DONE, req->booking,
							 "Booking %lld is confirmed.", (long long) req->booking);
			return;
		case BOOKING_STATUS_CANCELLED:
			BookingSetResult(res, BOOKING_INVALID_STATE, req->booking,
							 "Booking %lld is cancelled and cannot be confirmed.",
							 (long long) req->booking);
			return;
		case BOOKING_STATUS_EXPIRED:
			BookingSetHoldExpired(res, req, &b);
			return;
		case BOOKING_STATUS_WAITING:
			BookingSetResult(res, BOOKING_INVALID_STATE, req->booking,
							 "Booking %lld is waiting in line; it becomes a hold to confirm when seats free up.",
							 (long long) req->booking);
			return;
		case BOOKING_STATUS_PENDING:
			break;
	}
	if (b.expires_at <= req->now)
	{
		if (BookingEndBooking(req, &b, "expired", res))
			BookingSetHoldExpired(res, req, &b);
		return;
	}
	{
		Datum		values[2] = {Int64GetDatum(req->booking), Int64GetDatum(req->home)};

		(void) BookingExecute(&confirm_plan, values, NULL, false, 0);
	}
	BookingEmitEvent("confirmed", req->home, req->booking, "pending", "ok");
	BookingSetResult(res, BOOKING_DONE, req->booking,
					 "Booking %lld is confirmed.", (long long) req->booking);
}

static void
CancelBody(void *state, BookingResult *res)
{
	BookingLifecycle *req = (BookingLifecycle *) state;
	BookingLocked b;

	if (!BookingLockBooking(req, &b, res))
		return;
	if (b.status == BOOKING_STATUS_CANCELLED || b.status == BOOKING_STATUS_EXPIRED)
	{
		BookingSetResult(res, BOOKING_INVALID_STATE, req->booking,
						 "Booking %lld is already %s.", (long long) req->booking,
						 b.status == BOOKING_STATUS_CANCELLED ? "cancelled" : "expired");
		return;
	}
	if (b.status == BOOKING_STATUS_WAITING)
	{
		BookingSetStatus(req->booking, "cancelled");
		BookingEmitEvent("cancelled", req->home, req->booking, "waiting", "ok");
		BookingWaitlistLeft(&b.resource, req->now);
		BookingSetResult(res, BOOKING_DONE, req->booking,
						 "Booking %lld has left the waitlist of resource %lld.",
						 (long long) req->booking, (long long) b.resource.id);
		return;
	}
	if (!BookingEndBooking(req, &b, "cancelled", res))
		return;
	/* not "free": a newcomer may already hold the dates of a lapsed hold */
	BookingSetResult(res, BOOKING_DONE, req->booking,
					 "Booking %lld is cancelled and no longer holds its %s.", (long long) req->booking,
					 b.is_seat ? "seats" : "dates");
}

/*
 * The common part of extend_hold and extend_hold_until: false with res set
 * unless the booking is a live hold, now locked in b.
 */
static bool
LockLiveHold(BookingLifecycle *req, BookingLocked *b, BookingResult *res)
{
	if (!BookingLockBooking(req, b, res))
		return false;
	if (b->status == BOOKING_STATUS_CONFIRMED || b->status == BOOKING_STATUS_CANCELLED ||
		b->status == BOOKING_STATUS_WAITING)
	{
		BookingSetResult(res, BOOKING_INVALID_STATE, req->booking,
						 "Booking %lld is %s, not a hold.", (long long) req->booking,
						 b->status == BOOKING_STATUS_WAITING ? "waiting in line" :
						 BookingStatusName(b->status));
		return false;
	}
	if (b->status == BOOKING_STATUS_EXPIRED)
	{
		BookingSetHoldExpired(res, req, b);
		return false;
	}
	if (b->expires_at <= req->now)
	{
		if (BookingEndBooking(req, b, "expired", res))
			BookingSetHoldExpired(res, req, b);
		return false;
	}
	return true;
}

/* Moves a live hold's expiry to until (checked against the clock after the lock). */
static void
SetHoldUntil(BookingLifecycle *req, TimestampTz until, BookingResult *res)
{
	Datum		values[3];

	if (until <= req->now)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("until must be later than the time of the call"),
				 errdetail("until is %s; the hold would end at once.", timestamptz_to_str(until)),
				 errhint("Use booking.cancel to end a hold.")));
	if (until - req->now > BOOKING_MAX_HOLD_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("until must be at most 3660 days after the time of the call"),
				 errdetail("The until given is %s.", timestamptz_to_str(until))));
	values[0] = Int64GetDatum(req->booking);
	values[1] = TimestampTzGetDatum(until);
	values[2] = Int64GetDatum(req->home);
	(void) BookingExecute(&extend_plan, values, NULL, false, 0);
	BookingEmitEvent("hold_extended", req->home, req->booking, "pending", "ok");
	BookingSetResult(res, BOOKING_DONE, req->booking,
					 "The hold on booking %lld now lasts until %s.",
					 (long long) req->booking, timestamptz_to_str(until));
}

static void
ExtendHoldBody(void *state, BookingResult *res)
{
	BookingLifecycle *req = (BookingLifecycle *) state;
	BookingLocked b;
	TimestampTz until;

	if (!LockLiveHold(req, &b, res))
		return;
	until = b.expires_at + req->by_us;
	if (until - req->now > BOOKING_MAX_HOLD_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("by would make the hold last more than 3660 days"),
				 errdetail("The by given is %s.",
						   BookingDescribeInterval(&(Interval) {.time = req->by_us}))));
	SetHoldUntil(req, until, res);
}

static void
ExtendHoldUntilBody(void *state, BookingResult *res)
{
	BookingLifecycle *req = (BookingLifecycle *) state;
	BookingLocked b;

	if (!LockLiveHold(req, &b, res))
		return;
	SetHoldUntil(req, req->until, res);
}

static Datum
RunLifecycleCall(FunctionCallInfo fcinfo, BookingLifecycle *req, const char *fn,
				 const char *key, BookingBodyFn body)
{
	BookingCall call;

	if (BookingForwarding())
		return BookingForward(fcinfo, psprintf("shard_%s", fn), req->home, req->booking);

	memset(&call, 0, sizeof(call));
	call.key = key;
	if (key != NULL)
	{
		const char *fields[1] = {psprintf(INT64_FORMAT, req->booking)};

		call.request = BookingRequestString(fn, 1, fields, NULL);
	}
	call.timeout_ms = req->timeout_ms;
	call.home = req->home;
	call.now = req->now;
	call.body = body;
	call.state = req;

	return BookingCallDatum(fcinfo, &call);
}

static void
ReadLifecycleArgs(FunctionCallInfo fcinfo, BookingLifecycle *req)
{
	memset(req, 0, sizeof(*req));
	req->booking = BookingArgId(fcinfo, 0, "booking");
	req->home = BookingHome(req->booking);
	req->timeout_ms = BookingLockTimeoutDefault();
	req->now = GetCurrentTimestamp();
}

/*
 * confirm(booking, idempotency_key)
 */
Datum
booking_confirm(PG_FUNCTION_ARGS)
{
	BookingLifecycle req;

	ReadLifecycleArgs(fcinfo, &req);
	return RunLifecycleCall(fcinfo, &req, "confirm", BookingArgKey(fcinfo, 1), ConfirmBody);
}

/*
 * cancel(booking, idempotency_key)
 */
Datum
booking_cancel(PG_FUNCTION_ARGS)
{
	BookingLifecycle req;

	ReadLifecycleArgs(fcinfo, &req);
	return RunLifecycleCall(fcinfo, &req, "cancel", BookingArgKey(fcinfo, 1), CancelBody);
}

/*
 * extend_hold(booking, by)
 */
Datum
booking_extend_hold(PG_FUNCTION_ARGS)
{
	BookingLifecycle req;

	ReadLifecycleArgs(fcinfo, &req);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("by must not be null")));
	req.by_us = BookingIntervalUsecs(PG_GETARG_INTERVAL_P(1), "by");
	if (req.by_us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("by must be a positive interval"),
				 errdetail("The by given is %s.", BookingDescribeInterval(PG_GETARG_INTERVAL_P(1)))));
	if (req.by_us > BOOKING_MAX_HOLD_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("by must be at most 3660 days"),
				 errdetail("The by given is %s.", BookingDescribeInterval(PG_GETARG_INTERVAL_P(1)))));
	return RunLifecycleCall(fcinfo, &req, "extend_hold", NULL, ExtendHoldBody);
}

BOOKING_SHARD_TWIN(confirm)
BOOKING_SHARD_TWIN(cancel)
BOOKING_SHARD_TWIN(extend_hold)

/*
 * extend_hold_until(booking, until): an absolute expiry, so that a retried
 * request sets the same expiry again (a retried extend_hold extends twice)
 */
Datum
booking_extend_hold_until(PG_FUNCTION_ARGS)
{
	BookingLifecycle req;

	ReadLifecycleArgs(fcinfo, &req);
	req.until = BookingArgUntil(fcinfo, 1);
	return RunLifecycleCall(fcinfo, &req, "extend_hold_until", NULL, ExtendHoldUntilBody);
}

BOOKING_SHARD_TWIN(extend_hold_until)
