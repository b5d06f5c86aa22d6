/*
 * buffer.c
 *	  booking.set_buffer: the time a stay keeps free before and after it on
 *	  a resource.  The buffers widen each stay's footprint (bookings.blocked,
 *	  4_inventory/slots.c), which the exclusion constraint compares; a new
 *	  buffer re-pads the footprints of the stays that have not ended, and is
 *	  refused when two of them would then overlap.
 *
 *	  Layer 6, the calls.  Locks: the resource row, then the booking rows
 *	  of its stays that have not ended.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/rangetypes.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/guard.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "4_inventory/slots.h"
#include "5_scaleout/route.h"

PG_FUNCTION_INFO_V1(booking_set_buffer);

/* the longest buffer: a year, as far as the next free slot is looked for */
#define BOOKING_MAX_BUFFER_USECS ((int64) 366 * USECS_PER_DAY)

static BookingPlan set_buffer_plan = {
	"UPDATE booking.resources SET buffer_before = $3, buffer_after = $4, "
	"version = version OPERATOR(pg_catalog.+) 1 "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1 RETURNING version",
	4, {INT8OID, INT8OID, INTERVALOID, INTERVALOID}
};

/* the blocking stays that have not ended, with their footprints' lower bounds */
static BookingPlan unended_plan = {
	"SELECT id, pg_catalog.lower(during), pg_catalog.upper(during), pg_catalog.lower(blocked) "
	"FROM booking.bookings WHERE home OPERATOR(pg_catalog.=) $2 AND resource_id OPERATOR(pg_catalog.=) $1 "
	"AND blocked IS NOT NULL AND status IN ('pending'::booking.status, 'confirmed'::booking.status) "
	"AND pg_catalog.upper(during) OPERATOR(pg_catalog.>) $3",
	3, {INT8OID, INT8OID, TIMESTAMPTZOID}
};
static BookingPlan set_footprint_plan = {
	"UPDATE booking.bookings SET blocked = $3 "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, INT8OID, TSTZRANGEOID}
};

typedef struct BufferRequest
{
	int64		resource;
	int64		before;
	int64		after;
	TimestampTz now;
	Datum		values[4];		/* set_buffer_plan's: id, home, before, after */
} BufferRequest;

typedef struct Unended
{
	int64		id;
	TimestampTz lower;			/* of during */
	TimestampTz upper;
	TimestampTz blocked_lower;
} Unended;

static void
SetFootprint(int64 id, int64 home, TimestampTz lower, TimestampTz upper)
{
	Datum		values[3] = {Int64GetDatum(id), Int64GetDatum(home),
	BookingMakeRange(lower, upper, false)};

	(void) BookingExecute(&set_footprint_plan, values, NULL, false, 0);
}

/*
 * The stays that have not ended get the new buffers: one that has not begun
 * on both sides, one under way only after it (the time before it is past).
 * The constraint checks each row as it is written, so first every footprint
 * shrinks to what both the old and the new one cover, then each grows to the
 * new one: a conflict on the way is then a conflict of the end state, never
 * of the order the rows were written in.  One constant per row, computed
 * here: Citus refuses the date arithmetic of a STABLE operator on columns.
 */
static void
RunRepad(void *arg)
{
	BufferRequest *req = (BufferRequest *) arg;
	BookingResource r;
	Datum		values[3];
	Unended    *stays;
	int			n;

	r.buffer_before = req->before;
	r.buffer_after = req->after;
	values[0] = req->values[0];
	values[1] = req->values[1];
	values[2] = TimestampTzGetDatum(req->now);
	n = BookingExecute(&unended_plan, values, NULL, false, 0);
	stays = palloc(sizeof(Unended) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		bool		isnull;

		stays[i].id = BookingGetInt64(i, 1, NULL);
		stays[i].lower = DatumGetTimestampTz(BookingGetDatum(i, 2, &isnull));
		stays[i].upper = DatumGetTimestampTz(BookingGetDatum(i, 3, &isnull));
		stays[i].blocked_lower = DatumGetTimestampTz(BookingGetDatum(i, 4, &isnull));
	}
	/* first what both footprints cover: during (under way: from its old start) */
	for (int i = 0; i < n; i++)
		SetFootprint(stays[i].id, DatumGetInt64(req->values[1]),
					 stays[i].lower > req->now ? stays[i].lower : stays[i].blocked_lower,
					 stays[i].upper);
	/* then the new footprint; a stay under way keeps the start it had */
	for (int i = 0; i < n; i++)
	{
		Unended    *u = &stays[i];
		RangeType  *fp = DatumGetRangeTypeP(BookingStayFootprint(u->lower, u->upper, &r));
		RangeBound	lo;
		RangeBound	hi;
		bool		empty;

		range_deserialize(lookup_type_cache(TSTZRANGEOID, TYPECACHE_RANGE_INFO), fp,
						  &lo, &hi, &empty);
		SetFootprint(u->id, DatumGetInt64(req->values[1]),
					 u->lower > req->now ? DatumGetTimestampTz(lo.val) : u->blocked_lower,
					 DatumGetTimestampTz(hi.val));
	}
}

static void
SetBufferBody(void *state, BookingResult *res)
{
	BufferRequest *req = (BufferRequest *) state;
	BookingResource r;
	int64		version;

	if (!BookingLockResourceFor(req->resource, BookingLockTimeoutDefault(), &r, res))
		return;
	req->now = GetCurrentTimestamp();
	req->values[0] = Int64GetDatum(r.id);
	req->values[1] = Int64GetDatum(r.home);

	/* the constraint decides whether the stays still fit */
	switch (BookingRunGuarded(RunRepad, req))
	{
		case BOOKING_GUARD_DONE:
			break;
		case BOOKING_GUARD_OVERLAP:
			BookingSetResult(res, BOOKING_UNAVAILABLE, -1,
							 "Resource %lld keeps its buffers: with the new ones, two of its stays that have not ended would be too close together. Move one of them first.",
							 (long long) req->resource);
			return;
		case BOOKING_GUARD_BUSY:
		case BOOKING_GUARD_UNREACHABLE:
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, req->resource, BookingLockTimeoutDefault());
			return;
		case BOOKING_GUARD_RETRY:
		case BOOKING_GUARD_MOVED:
			BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, req->resource, BookingLockTimeoutDefault());
			return;
	}
	(void) BookingExecute(&set_buffer_plan, req->values, NULL, false, 1);
	version = BookingGetInt64(0, 1, NULL);
	BookingSetResult(res, BOOKING_DONE, -1,
					 "Stays on resource %lld now keep %s free before them and %s after them (version %lld).",
					 (long long) req->resource,
					 DatumGetCString(DirectFunctionCall1(interval_out, req->values[2])),
					 DatumGetCString(DirectFunctionCall1(interval_out, req->values[3])),
					 (long long) version);
}

/* A buffer argument, as microseconds in an interval of hours (no days, no months). */
static Datum
BufferArg(FunctionCallInfo fcinfo, int argno, const char *name, int64 *usecs)
{
	Interval   *span;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name),
				 errhint("Pass '0' for no buffer.")));
	span = PG_GETARG_INTERVAL_P(argno);
	if (span->month != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not count months", name),
				 errdetail("The %s given is %s; a month has no fixed length: give the buffer in days or hours.",
						   name, BookingDescribeInterval(span))));
	*usecs = BookingIntervalUsecs(span, name);
	if (*usecs < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", name),
				 errdetail("The %s given is %s.", name, BookingDescribeInterval(span))));
	if (*usecs > BOOKING_MAX_BUFFER_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at most 366 days", name),
				 errdetail("The %s given is %s.", name, BookingDescribeInterval(span))));
	/* stored as hours, so that SQL adds it as C does: a day is 24 hours here */
	span = palloc0(sizeof(Interval));
	span->time = *usecs;
	return IntervalPGetDatum(span);
}

/*
 * set_buffer(resource, before, after)
 */
Datum
booking_set_buffer(PG_FUNCTION_ARGS)
{
	BufferRequest req;

	memset(&req, 0, sizeof(req));
	req.resource = BookingArgId(fcinfo, 0, "resource");
	req.values[2] = BufferArg(fcinfo, 1, "before", &req.before);
	req.values[3] = BufferArg(fcinfo, 2, "after", &req.after);
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_set_buffer", BookingHome(req.resource), req.resource);

	PG_RETURN_DATUM(BookingCallOnResource(fcinfo, req.resource, SetBufferBody, &req));
}

BOOKING_SHARD_TWIN(set_buffer)
