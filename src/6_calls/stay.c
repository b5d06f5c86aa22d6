/*
 * stay.c
 *	  Range inventory: booking.reserve_stay, and what the calls that book
 *	  stays share (stays.c: reserve_stays, stay_any.c: reserve_stay_any):
 *	  their arguments, their key's request and their frame.  The stay
 *	  itself, its pre-check and its constraint are 4_inventory/range.c's.
 *
 *	  Layer 6, the calls.  Locks: the resource row, then the stay's booking
 *	  row (its insert).
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "3_frame/idempotency.h"
#include "4_inventory/capacity.h"
#include "4_inventory/hours.h"
#include "4_inventory/limit.h"
#include "4_inventory/range.h"
#include "5_scaleout/route.h"
#include "6_calls/stay.h"

PG_FUNCTION_INFO_V1(booking_reserve_stay);

/* reserve_stay's body; reserve_nights (nights.c) runs it once it knows the range */
void
BookingReserveStayBody(void *state, BookingResult *res)
{
	BookingStayRequest *req = (BookingStayRequest *) state;
	BookingResource r;
	BookingLockOutcome outcome;
	ItemPointerData tid;
	int64		booking_id;
	TimestampTz closed_at;

	/*
	 * A friendly answer for what was taken before this request arrived, then
	 * the room's lock; at READ COMMITTED the room is locked in C at the
	 * version read (rowlock.c).  At SERIALIZABLE the pre-check is skipped:
	 * its read of the GiST pages that every concurrent stay writes would
	 * make SSI abort callers at commit, so there a taken range is refused by
	 * the constraint alone (just_taken).
	 */
	if (!IsolationIsSerializable() && !BookingStayPrecheck(req, req->resource, &r, &tid, res))
		return;
	if (!IsolationUsesXactSnapshot())
		outcome = BookingLockPeeked(&r, &tid, req->timeout_ms);
	else
		outcome = BookingLockResource(req->resource, req->timeout_ms, &r);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, req->resource, req->timeout_ms);
		return;
	}
	if (!BookingOpenAllows(&r, req->lower, req->upper, &closed_at))
	{
		BookingSetClosed(res, req->resource, closed_at, "");
		return;
	}
	if (!BookingStayLeavesSlots(&r, req->lower, req->upper, req->validity, -1, res))
		return;
	if (!BookingGuestLimitAllows(&r, req->guest, 1, BOOKING_LIMIT_STAYS, req->now, res))
		return;

	booking_id = BookingStayInsert(req, &r);
	if (booking_id < 0)
	{
		BookingStaySetRefusal(res, BOOKING_JUST_TAKEN, req->resource, req);
		return;
	}
	BookingStaySetCreated(res, booking_id, psprintf("resource %lld", (long long) req->resource), req);
}

void
BookingStayReadArgs(FunctionCallInfo fcinfo, BookingStayRequest *req)
{
	req->guest = BookingArgGuest(fcinfo, 1);
	BookingArgDuring(fcinfo, 2, "during", &req->lower, &req->upper);
	req->has_hold = BookingArgHold(fcinfo, 3, &req->hold_us);
	req->timeout_ms = BookingArgLockTimeout(fcinfo, 5);
	req->metadata = BookingArgMetadata(fcinfo, 6, &req->metadata_text);
	req->now = GetCurrentTimestamp();
}

static char *
StayRequestString(const char *fn, const char *target, BookingStayRequest *req)
{
	const char *fields[5];

	fields[0] = target;
	fields[1] = text_to_cstring(req->guest);
	fields[2] = psprintf(INT64_FORMAT, (int64) req->lower);
	fields[3] = psprintf(INT64_FORMAT, (int64) req->upper);
	fields[4] = req->has_hold ? psprintf(INT64_FORMAT, req->hold_us) : NULL;
	return BookingRequestString(fn, 5, fields, req->metadata_text);
}

/*
 * The call frame of a stay call on req's resource, with the key and the
 * request it made of its arguments (NULL without a key); body gets state.
 */
Datum
BookingStayFrame(FunctionCallInfo fcinfo, BookingStayRequest *req, const char *key,
				 const char *request, BookingBodyFn body, void *state)
{
	BookingCall call;

	memset(&call, 0, sizeof(call));
	call.key = key;
	call.request = request;
	call.timeout_ms = req->timeout_ms;
	call.resource = req->resource;
	call.home = req->home;
	call.now = req->now;
	call.body = body;
	call.state = state;
	return BookingCallDatum(fcinfo, &call);
}

Datum
BookingStayRunCall(FunctionCallInfo fcinfo, BookingStayRequest *req, const char *fn,
				   const char *target, BookingBodyFn body, bool route)
{
	const char *key = BookingArgKey(fcinfo, 4);

	if (route && BookingForwarding())
		return BookingForward(fcinfo, psprintf("shard_%s", fn), req->home, req->resource);
	BookingStayPrepare(req);
	return BookingStayFrame(fcinfo, req, key, key != NULL ? StayRequestString(fn, target, req) : NULL,
							body, req);
}

/*
 * A stay call on the one resource (or pool) of argument 0, named argname in
 * its errors: reserve_stay and reserve_stay_any.
 */
Datum
BookingStayCallOn(FunctionCallInfo fcinfo, const char *argname, const char *fn,
				  BookingBodyFn body)
{
	BookingStayRequest *req = palloc0(sizeof(BookingStayRequest));

	req->resource = BookingArgId(fcinfo, 0, argname);
	req->home = BookingHome(req->resource);
	BookingStayReadArgs(fcinfo, req);
	return BookingStayRunCall(fcinfo, req, fn, psprintf(INT64_FORMAT, req->resource), body, true);
}

/*
 * reserve_stay(resource, guest, during, hold, idempotency_key, lock_timeout,
 * metadata)
 */
Datum
booking_reserve_stay(PG_FUNCTION_ARGS)
{
	return BookingStayCallOn(fcinfo, "resource", "reserve_stay", BookingReserveStayBody);
}

BOOKING_SHARD_TWIN(reserve_stay)
