/*
 * guest_limit.c
 *	  booking.set_guest_limit: what one guest may hold of a resource (the
 *	  check every sale makes is 4_inventory/limit.c).
 *
 *	  Layer 6, the calls.  Locks: the resource row, then every stripe (so
 *	  that no sale of the old rule is still open), then the bookings it
 *	  marks.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "4_inventory/counter.h"
#include "4_inventory/stripes.h"
#include "5_scaleout/route.h"

PG_FUNCTION_INFO_V1(booking_set_guest_limit);

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
	int64		free;
	Datum		values[3];
	char		nulls[3];
	int64		version;

	memset(nulls, ' ', sizeof(nulls));
	/* the row, then every stripe: no sale of the old rule is still open */
	if (!BookingLockResourceFor(req->resource, BookingLockTimeoutDefault(), &r, res) ||
		!BookingCounterFreeFor(&r, BookingLockTimeoutDefault(), &free, res))
		return;

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

	PG_RETURN_DATUM(BookingCallOnResource(fcinfo, req.resource, SetGuestLimitBody, &req));
}

BOOKING_SHARD_TWIN(set_guest_limit)
