/*
 * limit.c
 *	  Per-guest limits: booking.set_guest_limit, and the check every call
 *	  that takes seats or books a stay makes under the resource row lock.
 *
 *	  A guest's holding is the sum of its pending (unexpired) and confirmed
 *	  bookings of the resource; a stay counts as one while it has not ended.
 *	  The check reads the latest committed rows after the resource row lock,
 *	  so two calls of one guest decide one after the other, at every
 *	  isolation level.  On a resource with a limit every sale therefore takes
 *	  the resource row, also on a striped resource: its stripes are marked
 *	  (resource_stripes.limited) and the striped fast path leaves them alone.
 *
 *	  Only bookings made while the resource had a limit carry
 *	  bookings.limited and sit in bookings_guest_idx, so a resource without
 *	  a limit pays nothing on its sales; set_guest_limit marks the bookings
 *	  that block when it sets a limit.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"

PG_FUNCTION_INFO_V1(booking_set_guest_limit);

static BookingPlan holding_plan = {
	"SELECT CAST(COALESCE(pg_catalog.sum(quantity), 0) AS pg_catalog.int8) FROM booking.bookings "
	"WHERE home OPERATOR(pg_catalog.=) $1 AND resource_id OPERATOR(pg_catalog.=) $2 "
	"AND guest OPERATOR(pg_catalog.=) $3 AND limited "
	"AND status IN ('pending'::booking.status, 'confirmed'::booking.status) "
	"AND (expires_at IS NULL OR expires_at OPERATOR(pg_catalog.>) $4) "
	"AND (during IS NULL OR pg_catalog.upper(during) OPERATOR(pg_catalog.>) $4)",
	4, {INT8OID, INT8OID, TEXTOID, TIMESTAMPTZOID}
};
/* the same for the guest of booking $3, without that booking (move_stay) */
static BookingPlan others_plan = {
	"SELECT CAST(COALESCE(pg_catalog.sum(o.quantity), 0) AS pg_catalog.int8) FROM booking.bookings o "
	"WHERE o.home OPERATOR(pg_catalog.=) $1 AND o.resource_id OPERATOR(pg_catalog.=) $2 "
	"AND o.guest OPERATOR(pg_catalog.=) (SELECT b.guest FROM booking.bookings b "
	"WHERE b.home OPERATOR(pg_catalog.=) $1 AND b.id OPERATOR(pg_catalog.=) $3) "
	"AND o.limited AND o.id OPERATOR(pg_catalog.<>) $3 "
	"AND o.status IN ('pending'::booking.status, 'confirmed'::booking.status) "
	"AND (o.expires_at IS NULL OR o.expires_at OPERATOR(pg_catalog.>) $4) "
	"AND (o.during IS NULL OR pg_catalog.upper(o.during) OPERATOR(pg_catalog.>) $4)",
	4, {INT8OID, INT8OID, INT8OID, TIMESTAMPTZOID}
};
static BookingPlan set_limit_plan = {
	"UPDATE booking.resources SET guest_limit = $3, version = version OPERATOR(pg_catalog.+) 1 "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1 RETURNING version",
	3, {INT8OID, INT8OID, INT4OID}
};
/* the blocking bookings made while the resource had no limit */
static BookingPlan mark_bookings_plan = {
	"UPDATE booking.bookings SET limited = true "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND resource_id OPERATOR(pg_catalog.=) $1 "
	"AND NOT limited AND status IN ('pending'::booking.status, 'confirmed'::booking.status)",
	2, {INT8OID, INT8OID}
};

/*
 * Whether guest may take quantity more of r, whose row the caller holds
 * (read under that lock); false with res set to guest_limit otherwise.
 */
bool
BookingGuestLimitAllows(const BookingResource *r, text *guest, int32 quantity,
						bool stays, TimestampTz now, BookingResult *res)
{
	Datum		values[4] = {Int64GetDatum(r->home), Int64GetDatum(r->id),
	PointerGetDatum(guest), TimestampTzGetDatum(now)};
	int64		holding;

	if (r->guest_limit <= 0)
		return true;
	(void) BookingExecuteLatest(&holding_plan, values, NULL, 1);
	holding = BookingGetInt64(0, 1, NULL);
	if (holding + quantity <= r->guest_limit)
		return true;
	if (stays)
		BookingSetResult(res, BOOKING_GUEST_LIMIT, -1,
						 "Guest limit: this guest already has %lld of the %d stays allowed per guest on resource %lld.",
						 (long long) holding, r->guest_limit, (long long) r->id);
	else
		BookingSetResult(res, BOOKING_GUEST_LIMIT, -1,
						 "Guest limit: this guest holds %lld of the %d seats allowed per guest on resource %lld; %d more %s requested.",
						 (long long) holding, r->guest_limit, (long long) r->id, quantity,
						 quantity == 1 ? "was" : "were");
	return false;
}

/*
 * Whether a stay of r (row held by the caller) may move to a range that has
 * not ended: checked as if it were booked anew, so the guest's other stays
 * plus this one must be within the limit; false with res set otherwise.
 */
bool
BookingGuestLimitAllowsMove(const BookingResource *r, int64 booking, TimestampTz now,
							BookingResult *res)
{
	Datum		values[4] = {Int64GetDatum(r->home), Int64GetDatum(r->id),
	Int64GetDatum(booking), TimestampTzGetDatum(now)};
	int64		others;

	if (r->guest_limit <= 0)
		return true;
	(void) BookingExecuteLatest(&others_plan, values, NULL, 1);
	others = BookingGetInt64(0, 1, NULL);
	if (others + 1 <= r->guest_limit)
		return true;
	BookingSetResult(res, BOOKING_GUEST_LIMIT, -1,
					 "Guest limit: this guest already has %lld other %s of the %d allowed per guest on resource %lld; booking %lld keeps its range.",
					 (long long) others, others == 1 ? "stay" : "stays", r->guest_limit,
					 (long long) r->id, (long long) booking);
	return false;
}

typedef struct LimitRequest
{
	int64		resource;
	int32		limit;			/* 0: none */
} LimitRequest;

static void
SetGuestLimitBody(void *state, BookingResult *res)
{
	LimitRequest *req = (LimitRequest *) state;
	BookingResource r;
	BookingLockOutcome outcome;
	Datum		values[3];
	char		nulls[3];
	int64		version;

	memset(nulls, ' ', sizeof(nulls));
	/* the row, then every stripe: no sale of the old rule is still open */
	outcome = BookingLockResource(req->resource, booking_lock_timeout_ms, &r);
	if (outcome == BOOKING_LOCKED)
		(void) BookingCounterFree(&r, booking_lock_timeout_ms, &outcome);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, req->resource, booking_lock_timeout_ms);
		return;
	}

	values[0] = Int64GetDatum(r.id);
	values[1] = Int64GetDatum(r.home);
	if (req->limit > 0 && r.guest_limit <= 0)
		(void) BookingExecute(&mark_bookings_plan, values, NULL, false, 0);
	BookingStripesMark(&r, req->limit, r.waiting);
	values[2] = Int32GetDatum(req->limit);
	if (req->limit <= 0)
		nulls[2] = 'n';
	(void) BookingExecute(&set_limit_plan, values, nulls, false, 1);
	version = BookingGetInt64(0, 1, NULL);

	if (req->limit > 0)
		BookingSetResult(res, BOOKING_DONE, -1,
						 "Each guest may now hold at most %d of resource %lld (version %lld).",
						 req->limit, (long long) req->resource, (long long) version);
	else
		BookingSetResult(res, BOOKING_DONE, -1,
						 "Resource %lld no longer limits what one guest may hold (version %lld).",
						 (long long) req->resource, (long long) version);
}

/*
 * set_guest_limit(resource, max_per_guest): NULL removes the limit
 */
Datum
booking_set_guest_limit(PG_FUNCTION_ARGS)
{
	LimitRequest req;
	BookingCall call;

	req.resource = BookingArgId(fcinfo, 0, "resource");
	req.limit = 0;
	if (!PG_ARGISNULL(1))
	{
		req.limit = PG_GETARG_INT32(1);
		if (req.limit < 1)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("max_per_guest must be at least 1"),
					 errdetail("The max_per_guest given is %d.", req.limit),
					 errhint("Pass NULL to remove the limit.")));
	}
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_set_guest_limit", BookingHome(req.resource),
							  req.resource);

	memset(&call, 0, sizeof(call));
	call.timeout_ms = booking_lock_timeout_ms;
	call.resource = req.resource;
	call.home = BookingHome(req.resource);
	call.now = GetCurrentTimestamp();
	call.body = SetGuestLimitBody;
	call.state = &req;

	PG_RETURN_DATUM(BookingCallDatum(fcinfo, &call));
}

BOOKING_SHARD_TWIN(set_guest_limit)
