/*
 * local_time.c
 *	  booking.set_time_zone, booking.set_check_times and
 *	  booking.set_opening_hours: the wall clock a resource's nights and
 *	  series are read on (4_inventory/local.c), and the windows of it its
 *	  stays must lie in (4_inventory/hours.c).  They apply to calls made
 *	  after them; a stay already booked keeps its instants.
 *
 *	  Layer 6, the calls.  Locks: the resource row.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/date.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "4_inventory/hours.h"
#include "4_inventory/local.h"
#include "5_scaleout/route.h"

PG_FUNCTION_INFO_V1(booking_set_time_zone);
PG_FUNCTION_INFO_V1(booking_set_check_times);
PG_FUNCTION_INFO_V1(booking_set_opening_hours);

static BookingPlan set_zone_plan = {
	"UPDATE booking.resources SET time_zone = $3, version = version OPERATOR(pg_catalog.+) 1 "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1 RETURNING version",
	3, {INT8OID, INT8OID, TEXTOID}
};

static BookingPlan set_times_plan = {
	"UPDATE booking.resources SET check_in = $3, check_out = $4, "
	"version = version OPERATOR(pg_catalog.+) 1 "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1 RETURNING version",
	4, {INT8OID, INT8OID, TIMEOID, TIMEOID}
};

static BookingPlan set_hours_plan = {
	"UPDATE booking.resources SET opening_hours = $3, version = version OPERATOR(pg_catalog.+) 1 "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1 RETURNING version",
	3, {INT8OID, INT8OID, JSONBOID}
};

typedef struct LocalRequest
{
	int64		resource;
	Jsonb	   *hours;			/* set_opening_hours: NULL is always open */
	char	   *zone;			/* set_time_zone: the server's spelling */
	TimeADT		check_in;
	TimeADT		check_out;
} LocalRequest;

static char *
TimeString(TimeADT t)
{
	return DatumGetCString(DirectFunctionCall1(time_out, TimeADTGetDatum(t)));
}

/*
 * Under the resource's row lock, plan's UPDATE of one setting ($1 the id,
 * $2 the home, the rest the caller's); false with res set when the lock was
 * not had.  *version: the resource's new version.
 */
static bool
WriteSetting(LocalRequest *req, BookingPlan *plan, Datum *values, const char *nulls,
			 int64 *version, BookingResult *res)
{
	BookingResource r;

	if (!BookingLockResourceFor(req->resource, BookingLockTimeoutDefault(), &r, res))
		return false;
	values[0] = Int64GetDatum(r.id);
	values[1] = Int64GetDatum(r.home);
	(void) BookingExecute(plan, values, nulls, false, 1);
	*version = BookingGetInt64(0, 1, NULL);
	return true;
}

static void
SetTimeZoneBody(void *state, BookingResult *res)
{
	LocalRequest *req = (LocalRequest *) state;
	Datum		values[3] = {0, 0, CStringGetTextDatum(req->zone)};
	int64		version;

	if (WriteSetting(req, &set_zone_plan, values, NULL, &version, res))
		BookingSetResult(res, BOOKING_DONE, -1,
						 "Resource %lld now keeps the local time of %s (version %lld).",
						 (long long) req->resource, req->zone, (long long) version);
}

static void
SetCheckTimesBody(void *state, BookingResult *res)
{
	LocalRequest *req = (LocalRequest *) state;
	Datum		values[4] = {0, 0, TimeADTGetDatum(req->check_in), TimeADTGetDatum(req->check_out)};
	int64		version;

	if (WriteSetting(req, &set_times_plan, values, NULL, &version, res))
		BookingSetResult(res, BOOKING_DONE, -1,
						 "Nights on resource %lld now run from check-in at %s to check-out at %s, local time (version %lld).",
						 (long long) req->resource, TimeString(req->check_in), TimeString(req->check_out),
						 (long long) version);
}

/*
 * New hours apply to calls made after them: stays already booked outside
 * them are kept (a venue that shortens its hours decides about those).
 */
static void
SetOpeningHoursBody(void *state, BookingResult *res)
{
	LocalRequest *req = (LocalRequest *) state;
	Datum		values[3] = {0, 0, PointerGetDatum(req->hours)};
	char		nulls[3] = {' ', ' ', req->hours == NULL ? 'n' : ' '};
	int64		version;

	if (WriteSetting(req, &set_hours_plan, values, nulls, &version, res))
		BookingSetResult(res, BOOKING_DONE, -1,
						 req->hours == NULL ?
						 "Resource %lld is now always open (version %lld)." :
						 "Resource %lld now takes bookings only within its opening hours (version %lld).",
						 (long long) req->resource, (long long) version);
}

/*
 * set_opening_hours(resource, hours)
 */
Datum
booking_set_opening_hours(PG_FUNCTION_ARGS)
{
	LocalRequest req;

	memset(&req, 0, sizeof(req));
	req.resource = BookingArgId(fcinfo, 0, "resource");
	req.hours = PG_ARGISNULL(1) ? NULL : PG_GETARG_JSONB_P(1);
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_set_opening_hours", BookingHome(req.resource), req.resource);

	/* checked before anything is locked or written: 22023 naming hours */
	if (req.hours != NULL)
	{
		SPI_connect();
		BookingCheckHours(req.hours);
		SPI_finish();
	}

	PG_RETURN_DATUM(BookingCallOnResource(fcinfo, req.resource, SetOpeningHoursBody, &req));
}

/*
 * set_time_zone(resource, time_zone)
 */
Datum
booking_set_time_zone(PG_FUNCTION_ARGS)
{
	LocalRequest req;
	char	   *given;
	MemoryContext caller = CurrentMemoryContext;

	memset(&req, 0, sizeof(req));
	req.resource = BookingArgId(fcinfo, 0, "resource");
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("time_zone must not be null"),
				 errhint("Pass 'UTC' for the default.")));
	given = text_to_cstring(PG_GETARG_TEXT_PP(1));
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_set_time_zone", BookingHome(req.resource), req.resource);

	/* the name is checked where it is used, by that node's zone files */
	SPI_connect();
	req.zone = strlen(given) <= 64 ? BookingLocalZoneName(given) : NULL;
	if (req.zone != NULL)
		req.zone = MemoryContextStrdup(caller, req.zone);
	SPI_finish();
	if (req.zone == NULL)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("time_zone must be an IANA time zone name this server knows"),
				 errdetail("The time_zone given is \"%s\".", strlen(given) <= 64 ? given : "(over 64 bytes)"),
				 errhint("See pg_timezone_names, e.g. 'Europe/Paris' or 'America/New_York'.")));
	PG_RETURN_DATUM(BookingCallOnResource(fcinfo, req.resource, SetTimeZoneBody, &req));
}

static TimeADT
CheckTimeArg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	TimeADT		t;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name),
				 errhint("Pass '00:00' for midnight.")));
	t = PG_GETARG_TIMEADT(argno);
	if (t < 0 || t >= USECS_PER_DAY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a time of day before 24:00", name),
				 errdetail("The %s given is %s.", name, TimeString(t))));
	return t;
}

/*
 * set_check_times(resource, check_in, check_out)
 */
Datum
booking_set_check_times(PG_FUNCTION_ARGS)
{
	LocalRequest req;

	memset(&req, 0, sizeof(req));
	req.resource = BookingArgId(fcinfo, 0, "resource");
	req.check_in = CheckTimeArg(fcinfo, 1, "check_in");
	req.check_out = CheckTimeArg(fcinfo, 2, "check_out");
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_set_check_times", BookingHome(req.resource), req.resource);

	PG_RETURN_DATUM(BookingCallOnResource(fcinfo, req.resource, SetCheckTimesBody, &req));
}

BOOKING_SHARD_TWIN(set_time_zone)
BOOKING_SHARD_TWIN(set_check_times)
BOOKING_SHARD_TWIN(set_opening_hours)
