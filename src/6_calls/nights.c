/*
 * nights.c
 *	  booking.reserve_nights: a stay given as days, the way a hotel sells
 *	  it.  It runs from the arrival day's check-in to the departure day's
 *	  check-out on the resource's wall clock (4_inventory/local.c), so that
 *	  a check-out at 11:00 and a check-in at 15:00 let two guests share the
 *	  changeover day, and a night over a change of the clocks is 23 or 25
 *	  hours long.  Once the range is known it is a stay like any other
 *	  (stay.c): the same pre-check, lock, guest limit and constraint.
 *
 *	  Layer 6, the calls.  Locks: the resource row, then the stay's booking
 *	  row (its insert).
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "3_frame/idempotency.h"
#include "4_inventory/local.h"
#include "4_inventory/range.h"
#include "5_scaleout/route.h"
#include "6_calls/stay.h"

PG_FUNCTION_INFO_V1(booking_reserve_nights);

typedef struct NightsRequest
{
	BookingStayRequest stay;	/* lower and upper are set by the body */
	DateADT		arrival;
	DateADT		departure;
} NightsRequest;

static char *
DateString(DateADT d)
{
	return DatumGetCString(DirectFunctionCall1(date_out, DateADTGetDatum(d)));
}

static DateADT
DateArg(FunctionCallInfo fcinfo, int argno, const char *name)
{
	DateADT		d;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	d = PG_GETARG_DATEADT(argno);
	if (DATE_NOT_FINITE(d))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a finite date", name),
				 errdetail("The %s given is %s.", name, DateString(d))));
	return d;
}

/*
 * The range, read on the node that holds the resource from the zone and
 * check times it has now; then reserve_stay's body.
 */
static void
ReserveNightsBody(void *state, BookingResult *res)
{
	NightsRequest *nr = (NightsRequest *) state;
	BookingStayRequest *req = &nr->stay;
	BookingLocal local;

	if (!BookingLocalRead(req->resource, req->home, &local))
	{
		BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, req->resource, req->timeout_ms);
		return;
	}
	req->lower = BookingLocalAt(local.zone, nr->arrival, local.check_in, "arrival");
	req->upper = BookingLocalAt(local.zone, nr->departure, local.check_out, "departure");
	/* only where the clocks jump at the very hour of the check times */
	if (req->lower >= req->upper)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("departure must end the stay after it begins"),
				 errdetail("The departure given is %s; from %s at %s to %s at %s in %s is no time at all.",
						   DateString(nr->departure), DateString(nr->arrival),
						   DatumGetCString(DirectFunctionCall1(time_out, TimeADTGetDatum(local.check_in))),
						   DateString(nr->departure),
						   DatumGetCString(DirectFunctionCall1(time_out, TimeADTGetDatum(local.check_out))),
						   local.zone)));
	BookingStayPrepare(req);
	BookingReserveStayBody(req, res);
}

/*
 * reserve_nights(resource, guest, arrival, departure, hold, idempotency_key,
 * lock_timeout, metadata)
 */
Datum
booking_reserve_nights(PG_FUNCTION_ARGS)
{
	NightsRequest *nr = palloc0(sizeof(NightsRequest));
	BookingStayRequest *req = &nr->stay;
	const char *key;
	const char *request = NULL;

	req->resource = BookingArgId(fcinfo, 0, "resource");
	req->home = BookingHome(req->resource);
	req->guest = BookingArgGuest(fcinfo, 1);
	nr->arrival = DateArg(fcinfo, 2, "arrival");
	nr->departure = DateArg(fcinfo, 3, "departure");
	if (nr->departure <= nr->arrival)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("departure must be after arrival"),
				 errdetail("The departure given is %s; the arrival is %s.",
						   DateString(nr->departure), DateString(nr->arrival))));
	req->has_hold = BookingArgHold(fcinfo, 4, &req->hold_us);
	key = BookingArgKey(fcinfo, 5);
	req->timeout_ms = BookingArgLockTimeout(fcinfo, 6);
	req->metadata = BookingArgMetadata(fcinfo, 7, &req->metadata_text);
	req->now = GetCurrentTimestamp();
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_reserve_nights", req->home, req->resource);

	if (key != NULL)
	{
		const char *fields[5];

		fields[0] = psprintf(INT64_FORMAT, req->resource);
		fields[1] = text_to_cstring(req->guest);
		/* day numbers: a date's text depends on the session's DateStyle */
		fields[2] = psprintf("%d", (int) nr->arrival);
		fields[3] = psprintf("%d", (int) nr->departure);
		fields[4] = req->has_hold ? psprintf(INT64_FORMAT, req->hold_us) : NULL;
		request = BookingRequestString("reserve_nights", 5, fields, req->metadata_text);
	}
	return BookingStayFrame(fcinfo, req, key, request, ReserveNightsBody, nr);
}

BOOKING_SHARD_TWIN(reserve_nights)
