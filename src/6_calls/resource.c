/*
 * resource.c
 *	  Resources: booking.create_resource, booking.set_capacity (an optimistic
 *	  write for slow human edits), booking.set_stripes (the layout of the
 *	  seats: one counter row or N stripes) and booking.seats_left
 *	  (booking.set_buffer is buffer.c, set_guest_limit guest_limit.c).
 *
 *	  Resource rows are never deleted: bookings have no foreign key to them
 *	  (its check would lock the hot row on every striped sale), so a trigger
 *	  refuses DELETE, TRUNCATE and a change of id instead.
 *
 *	  Layer 6, the calls.  Locks: set_capacity and set_stripes take the
 *	  resource row lock, then its stripes, then may expire lapsed holds of
 *	  that resource (4_inventory/counter.c), in that order.
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
#include "1_ground/args.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "3_frame/events.h"
#include "4_inventory/capacity.h"
#include "4_inventory/counter.h"
#include "4_inventory/line.h"
#include "5_scaleout/route.h"

PG_FUNCTION_INFO_V1(booking_create_resource);
PG_FUNCTION_INFO_V1(booking_set_capacity);
PG_FUNCTION_INFO_V1(booking_seats_left);
PG_FUNCTION_INFO_V1(booking_refuse_resource_delete);
PG_FUNCTION_INFO_V1(booking_set_stripes);

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
				 errmsg("name must not be empty"),
				 errdetail("The name given is an empty string.")));
	if (VARSIZE_ANY_EXHDR(name) > BOOKING_MAX_NAME_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("name must be at most %d bytes long", BOOKING_MAX_NAME_BYTES),
				 errdetail("The name given is %d bytes long.", (int) VARSIZE_ANY_EXHDR(name))));
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
	int64		free;
	int32		taken;
	Datum		values[3];
	int64		version;
	int32		ended;

	if (!BookingLockResourceFor(req->resource, BookingLockTimeoutDefault(), &r, res))
		return;
	if (r.version != req->expected_version)
	{
		BookingSetResult(res, BOOKING_VERSION_CONFLICT, -1,
						 "Resource %lld was changed meanwhile: it is at version %lld, not %lld. Reload it and try again.",
						 (long long) req->resource, (long long) r.version,
						 (long long) req->expected_version);
		return;
	}

	/* slots: no instant from now on may hold more than the new capacity */
	if (r.slotted)
	{
		BookingSlotUse use;
		TimestampTz at;
		int64		peak;

		BookingSlotReadUse(&r, req->now, END_TIMESTAMP - 1, BookingMakeRange(req->now, 0, true),
						   -1, &use);
		peak = BookingSlotPeak(&use, &at);
		if (req->capacity < peak)
		{
			BookingSetResult(res, BOOKING_CAPACITY_BELOW_TAKEN, -1,
							 "Resource %lld has %lld %s booked at %s; its capacity cannot go down to %d.",
							 (long long) req->resource, (long long) peak,
							 peak == 1 ? "unit" : "units", timestamptz_to_str(at), req->capacity);
			return;
		}
	}
	if (!BookingCounterFreeFor(&r, BookingLockTimeoutDefault(), &free, res))
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
		BookingWaitlistServe(r.id, BookingLockTimeoutDefault(), req->now);
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

	PG_RETURN_DATUM(BookingCallOnResource(fcinfo, req.resource, SetCapacityBody, &req));
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
	int64		free;

	if (!BookingLockResourceFor(req->resource, BookingLockTimeoutDefault(), &r, res))
		return;
	if (!BookingCounterFreeFor(&r, BookingLockTimeoutDefault(), &free, res))
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

	PG_RETURN_DATUM(BookingCallOnResource(fcinfo, req.resource, SetStripesBody, &req));
}

BOOKING_SHARD_TWIN(set_stripes)
