/*
 * resource.c
 *	  Resources: booking.create_resource, booking.set_capacity (an optimistic
 *	  write for slow human edits), booking.set_stripes (the layout of the
 *	  seats: one counter row or N stripes), booking.set_buffer (the time a
 *	  stay keeps free around it) and booking.seats_left.
 *
 *	  set_capacity and set_stripes take the resource row lock, then its
 *	  stripes, then may expire lapsed holds of that resource (counter.c), in
 *	  that order.
 *
 *	  Resource rows are never deleted: bookings have no foreign key to them
 *	  (its check would lock the hot row on every striped sale), so a trigger
 *	  refuses DELETE, TRUNCATE and a change of id instead.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/trigger.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "booking.h"

PG_FUNCTION_INFO_V1(booking_create_resource);
PG_FUNCTION_INFO_V1(booking_set_capacity);
PG_FUNCTION_INFO_V1(booking_seats_left);
PG_FUNCTION_INFO_V1(booking_refuse_resource_delete);
PG_FUNCTION_INFO_V1(booking_set_stripes);
PG_FUNCTION_INFO_V1(booking_set_buffer);

#define BOOKING_MAX_NAME_BYTES 1024

static BookingPlan exists_plan = {
	"SELECT 1 FROM booking.resources WHERE home OPERATOR(pg_catalog.=) $2 "
	"AND id OPERATOR(pg_catalog.=) $1", 2, {INT8OID, INT8OID}
};
/* $5 the home, $6 the id (NULL: the sequence's next; on Citus drawn by shard.c) */
static BookingPlan create_plan = {
	"INSERT INTO booking.resources (home, id, name, capacity, pool_id, meta) "
	"VALUES ($5, COALESCE($6, pg_catalog.nextval('booking.resources_id_seq'::pg_catalog.regclass)), "
	"$1, $2, $3, $4) RETURNING id",
	6, {TEXTOID, INT4OID, INT8OID, JSONBOID, INT8OID, INT8OID}
};
static BookingPlan set_capacity_plan = {
	"UPDATE booking.resources SET capacity = $2, "
	"version = version OPERATOR(pg_catalog.+) 1 "
	"WHERE home OPERATOR(pg_catalog.=) $3 AND id OPERATOR(pg_catalog.=) $1 RETURNING version",
	3, {INT8OID, INT4OID, INT8OID}
};
static BookingPlan seats_left_plan = {
	"SELECT CAST(CASE WHEN r.stripes OPERATOR(pg_catalog.>) 1 THEN (SELECT COALESCE(pg_catalog.sum(s.free), 0) "
	"FROM booking.resource_stripes s WHERE s.home OPERATOR(pg_catalog.=) $3 "
	"AND s.resource_id OPERATOR(pg_catalog.=) $1) "
	"ELSE r.capacity OPERATOR(pg_catalog.-) r.taken END OPERATOR(pg_catalog.+) COALESCE(("
	"SELECT pg_catalog.sum(b.quantity) FROM booking.bookings b "
	"WHERE b.home OPERATOR(pg_catalog.=) $3 AND b.resource_id OPERATOR(pg_catalog.=) $1 "
	"AND b.status OPERATOR(pg_catalog.=) 'pending'::booking.status "
	"AND b.expires_at OPERATOR(pg_catalog.<=) $2 AND b.during IS NULL), 0) AS pg_catalog.int4) "
	"FROM booking.resources r WHERE r.home OPERATOR(pg_catalog.=) $3 AND r.id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, TIMESTAMPTZOID, INT8OID}
};

static int32
CheckCapacity(FunctionCallInfo fcinfo, int argno, int32 if_null)
{
	int32		capacity;

	if (PG_ARGISNULL(argno))
		return if_null;
	capacity = PG_GETARG_INT32(argno);
	if (capacity < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("capacity must not be negative"),
				 errdetail("The capacity given is %d.", capacity)));
	return capacity;
}

/*
 * create_resource(name, capacity, pool, meta) returns the new id
 */
Datum
booking_create_resource(PG_FUNCTION_ARGS)
{
	text	   *name;
	int32		capacity;
	Datum		values[6];
	char		nulls[6];
	int64		id;
	int64		home;

	memset(nulls, ' ', sizeof(nulls));
	if (PG_ARGISNULL(0))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("name must not be null")));
	name = PG_GETARG_TEXT_PP(0);
	if (VARSIZE_ANY_EXHDR(name) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("name must not be empty")));
	if (VARSIZE_ANY_EXHDR(name) > BOOKING_MAX_NAME_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("name must be at most %d bytes long", BOOKING_MAX_NAME_BYTES)));
	capacity = CheckCapacity(fcinfo, 1, 1);

	values[0] = PointerGetDatum(name);
	values[1] = Int32GetDatum(capacity);
	if (PG_ARGISNULL(2))
	{
		values[2] = (Datum) 0;
		nulls[2] = 'n';
	}
	else
		values[2] = PG_GETARG_DATUM(2);
	if (PG_ARGISNULL(3))
		values[3] = DirectFunctionCall1(jsonb_in, CStringGetDatum("{}"));
	else
		values[3] = PG_GETARG_DATUM(3);

	SPI_connect();
	if (!PG_ARGISNULL(2))
	{
		Datum		pool[2] = {values[2], Int64GetDatum(BookingHome(DatumGetInt64(values[2])))};

		if (BookingExecute(&exists_plan, pool, NULL, false, 1) == 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("pool %lld is not an existing resource", (long long) PG_GETARG_INT64(2)),
					 errhint("Create the pool with booking.create_resource first.")));
	}

	/* on Citus a unit is numbered to land in its pool's shard */
	if (BookingDistributed())
	{
		id = BookingNewId("resources_id_seq",
						  PG_ARGISNULL(2) ? -1 : BookingHome(DatumGetInt64(values[2])));
		home = BookingHome(id);
		values[5] = Int64GetDatum(id);
	}
	else
	{
		home = 0;
		nulls[5] = 'n';
	}
	values[4] = Int64GetDatum(home);
	(void) BookingExecute(&create_plan, values, nulls, false, 1);
	id = BookingGetInt64(0, 1, NULL);
	SPI_finish();

	PG_RETURN_INT64(id);
}

/* The free seats of r, whose row the caller holds (its stripes locked too); false with res set. */
static bool
LockFreeSeats(const BookingResource *r, int64 *free, BookingResult *res)
{
	BookingLockOutcome outcome;

	*free = BookingCounterFree(r, booking_lock_timeout_ms, &outcome);
	if (outcome == BOOKING_LOCKED)
		return true;
	BookingSetLockOutcome(res, outcome, r->id, booking_lock_timeout_ms);
	return false;
}

typedef struct CapacityRequest
{
	int64		resource;
	int32		capacity;
	int64		expected_version;
	TimestampTz now;
} CapacityRequest;

static void
SetCapacityBody(void *state, BookingResult *res)
{
	CapacityRequest *req = (CapacityRequest *) state;
	BookingResource r;
	BookingLockOutcome outcome;
	int64		free;
	int32		taken;
	Datum		values[3];
	int64		version;
	int32		ended;

	outcome = BookingLockResource(req->resource, booking_lock_timeout_ms, &r);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, req->resource, booking_lock_timeout_ms);
		return;
	}
	if (r.version != req->expected_version)
	{
		BookingSetResult(res, BOOKING_VERSION_CONFLICT, -1,
						 "Resource %lld was changed meanwhile: it is at version %lld, not %lld. Reload it and try again.",
						 (long long) req->resource, (long long) r.version,
						 (long long) req->expected_version);
		return;
	}

	if (!LockFreeSeats(&r, &free, res))
		return;
	taken = (int32) (r.capacity - free);
	if (req->capacity < taken)
	{
		int32		reclaimed = BookingCounterReclaim(&r, req->now);

		taken -= reclaimed;
		if (req->capacity < taken)
		{
			if (reclaimed > 0)
				BookingCounterSetTaken(&r, r.capacity, taken);
			BookingSetResult(res, BOOKING_CAPACITY_BELOW_TAKEN, -1,
							 "Resource %lld already has %d seats taken; its capacity cannot go down to %d.",
							 (long long) req->resource, taken, req->capacity);
			return;
		}
	}

	/* the counter first: taken <= capacity holds after each statement */
	BookingCounterSetTaken(&r, req->capacity, taken);
	values[0] = Int64GetDatum(req->resource);
	values[1] = Int32GetDatum(req->capacity);
	values[2] = Int64GetDatum(r.home);
	(void) BookingExecute(&set_capacity_plan, values, NULL, false, 1);
	version = BookingGetInt64(0, 1, NULL);
	{
		char		payload[128];

		snprintf(payload, sizeof(payload),
				 "{\"capacity_before\": %d, \"capacity_after\": %d, \"version\": " INT64_FORMAT ", \"code\": \"ok\"}",
				 r.capacity, req->capacity, version);
		BookingEmitResourceEvent("capacity_changed", &r, payload);
	}
	/*
	 * Entries that ask for more than the new capacity leave the line; seats
	 * that a larger capacity, or reclaimed holds, free go to the rest first.
	 */
	ended = BookingWaitlistTrim(&r, req->capacity);
	if (r.waiting > 0)
		BookingWaitlistServe(r.id, booking_lock_timeout_ms, req->now);
	if (ended > 0)
		BookingSetResult(res, BOOKING_DONE, -1,
						 "Resource %lld now has capacity %d (version %lld); %d waiting %s for more seats than that left the line.",
						 (long long) req->resource, req->capacity, (long long) version, ended,
						 ended == 1 ? "entry that asked" : "entries that asked");
	else
		BookingSetResult(res, BOOKING_DONE, -1,
						 "Resource %lld now has capacity %d (version %lld).",
						 (long long) req->resource, req->capacity, (long long) version);
}

/*
 * set_capacity(resource, capacity, expected_version)
 */
Datum
booking_set_capacity(PG_FUNCTION_ARGS)
{
	CapacityRequest req;
	BookingCall call;

	req.resource = BookingArgId(fcinfo, 0, "resource");
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("capacity must not be null")));
	req.capacity = CheckCapacity(fcinfo, 1, 0);
	req.expected_version = BookingArgId(fcinfo, 2, "expected_version");
	req.now = GetCurrentTimestamp();
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_set_capacity", BookingHome(req.resource), req.resource);

	memset(&call, 0, sizeof(call));
	call.timeout_ms = booking_lock_timeout_ms;
	call.resource = req.resource;
	call.now = req.now;
	call.body = SetCapacityBody;
	call.state = &req;

	PG_RETURN_DATUM(BookingCallDatum(fcinfo, &call));
}

BOOKING_SHARD_TWIN(set_capacity)

/*
 * seats_left(resource): capacity minus the seats of pending and confirmed
 * bookings, counting lapsed holds as free.  NULL for an unknown resource.
 * Whether a hold lapsed is judged at the statement's start, so the function
 * is STABLE as declared: every call in one statement gives one answer.
 */
Datum
booking_seats_left(PG_FUNCTION_ARGS)
{
	Datum		values[3];
	bool		found;
	int32		left = 0;

	values[0] = Int64GetDatum(BookingArgId(fcinfo, 0, "resource"));
	values[1] = TimestampTzGetDatum(GetCurrentStatementStartTimestamp());
	values[2] = Int64GetDatum(BookingHome(DatumGetInt64(values[0])));

	SPI_connect();
	found = BookingExecute(&seats_left_plan, values, NULL, true, 1) == 1;
	if (found)
		left = BookingGetInt32(0, 1, NULL);
	SPI_finish();

	if (!found)
		PG_RETURN_NULL();
	PG_RETURN_INT32(left);
}

/*
 * The statement triggers on booking.resources that keep every booking's
 * resource in place, as the foreign key did: DELETE and UPDATE OF id are
 * refused for every role; TRUNCATE is refused unless booking.bookings is
 * empty once the statement has truncated what it lists (an AFTER trigger, so
 * "TRUNCATE booking.bookings, booking.resources" still works).
 */
Datum
booking_refuse_resource_delete(PG_FUNCTION_ARGS)
{
	TriggerData *trigdata = (TriggerData *) fcinfo->context;
	bool		orphans;

	if (!CALLED_AS_TRIGGER(fcinfo))
		ereport(ERROR,
				(errcode(ERRCODE_E_R_I_E_TRIGGER_PROTOCOL_VIOLATED),
				 errmsg("booking.refuse_resource_delete() must be called as a trigger")));
	if (TRIGGER_FIRED_BY_UPDATE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("booking.resources ids cannot be changed"),
				 errdetail("Bookings refer to their resource by id.")));
	if (TRIGGER_FIRED_BY_DELETE(trigdata->tg_event))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("booking.resources rows cannot be deleted"),
				 errdetail("Bookings refer to their resource by id, and a resource keeps its bookings' history."),
				 errhint("Set its capacity to 0 to stop selling it.")));

	SPI_connect();
	orphans = SPI_execute("SELECT 1 FROM booking.bookings LIMIT 1", true, 1) == SPI_OK_SELECT &&
		SPI_processed > 0;
	SPI_finish();
	if (orphans)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("booking.resources cannot be truncated while booking.bookings has rows"),
				 errhint("Truncate both in one statement: TRUNCATE booking.bookings, booking.resources.")));
	return PointerGetDatum(NULL);
}

typedef struct StripesRequest
{
	int64		resource;
	int32		stripes;
} StripesRequest;

static void
SetStripesBody(void *state, BookingResult *res)
{
	StripesRequest *req = (StripesRequest *) state;
	BookingResource r;
	BookingLockOutcome outcome;
	int64		free;

	outcome = BookingLockResource(req->resource, booking_lock_timeout_ms, &r);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, req->resource, booking_lock_timeout_ms);
		return;
	}
	if (!LockFreeSeats(&r, &free, res))
		return;

	BookingCounterSetLayout(&r, req->stripes, free);

	if (req->stripes > 1)
		BookingSetResult(res, BOOKING_DONE, -1,
						 "Resource %lld now sells its %lld free seats from %d stripes.",
						 (long long) req->resource, (long long) free, req->stripes);
	else
		BookingSetResult(res, BOOKING_DONE, -1,
						 "Resource %lld now sells its %lld free seats from one counter row.",
						 (long long) req->resource, (long long) free);
}

/*
 * set_stripes(resource, stripes): 2..64 stripes, or 0/1 for one counter row
 */
Datum
booking_set_stripes(PG_FUNCTION_ARGS)
{
	StripesRequest req;
	BookingCall call;

	req.resource = BookingArgId(fcinfo, 0, "resource");
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("stripes must not be null")));
	req.stripes = PG_GETARG_INT32(1);
	if (req.stripes < 0 || req.stripes > BOOKING_MAX_STRIPES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("stripes must be between 0 and %d", BOOKING_MAX_STRIPES),
				 errdetail("The stripes given are %d.", req.stripes)));
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_set_stripes", BookingHome(req.resource), req.resource);

	memset(&call, 0, sizeof(call));
	call.timeout_ms = booking_lock_timeout_ms;
	call.resource = req.resource;
	call.now = GetCurrentTimestamp();
	call.body = SetStripesBody;
	call.state = &req;

	PG_RETURN_DATUM(BookingCallDatum(fcinfo, &call));
}

BOOKING_SHARD_TWIN(set_stripes)

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
	BookingLockOutcome outcome;
	int64		version;

	outcome = BookingLockResource(req->resource, booking_lock_timeout_ms, &r);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, req->resource, booking_lock_timeout_ms);
		return;
	}
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
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, req->resource, booking_lock_timeout_ms);
			return;
		case BOOKING_GUARD_RETRY:
		case BOOKING_GUARD_MOVED:
			BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, req->resource, booking_lock_timeout_ms);
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
				 errdetail("A month has no fixed length; give the buffer in days or hours.")));
	*usecs = BookingIntervalUsecs(span, name);
	if (*usecs < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be negative", name)));
	if (*usecs > BOOKING_MAX_BUFFER_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be at most 366 days", name)));
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
	BookingCall call;

	memset(&req, 0, sizeof(req));
	req.resource = BookingArgId(fcinfo, 0, "resource");
	req.values[2] = BufferArg(fcinfo, 1, "before", &req.before);
	req.values[3] = BufferArg(fcinfo, 2, "after", &req.after);
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_set_buffer", BookingHome(req.resource), req.resource);

	memset(&call, 0, sizeof(call));
	call.timeout_ms = booking_lock_timeout_ms;
	call.resource = req.resource;
	call.home = BookingHome(req.resource);
	call.now = GetCurrentTimestamp();
	call.body = SetBufferBody;
	call.state = &req;

	PG_RETURN_DATUM(BookingCallDatum(fcinfo, &call));
}

BOOKING_SHARD_TWIN(set_buffer)
