/*
 * slot.c
 *	  Capacity over time: booking.reserve_slot takes quantity units of a
 *	  resource's capacity over a range (a class of 20 per time slot, a
 *	  restaurant of 40 covers).  The sweep that decides it is
 *	  4_inventory/capacity.c's; here the call locks the resource row,
 *	  checks the opening hours and the guest limit, and inserts.
 *
 *	  Layer 6, the calls.  Locks: the resource row, then the booking row
 *	  (its insert).
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
#include "2_locks/rowlock.h"
#include "3_frame/call.h"
#include "3_frame/idempotency.h"
#include "4_inventory/capacity.h"
#include "4_inventory/hours.h"
#include "4_inventory/limit.h"
#include "4_inventory/range.h"
#include "5_scaleout/route.h"
#include "6_calls/stay.h"

PG_FUNCTION_INFO_V1(booking_reserve_slot);

typedef struct SlotRequest
{
	BookingStayRequest stay;	/* the range, the hold, the guest */
	int32		quantity;
} SlotRequest;

static void
ReserveSlotBody(void *state, BookingResult *res)
{
	SlotRequest *sr = (SlotRequest *) state;
	BookingStayRequest *req = &sr->stay;
	BookingResource r;
	BookingLockOutcome outcome;
	ItemPointerData tid;
	BookingSlotUse use;
	TimestampTz at;
	int64		free_at;
	int64		booking_id;

	/* READ COMMITTED: the row read and locked in C, as for a stay (stay.c) */
	if (!IsolationUsesXactSnapshot())
	{
		if (!BookingRowPeekResource(req->resource, req->home, &r, &tid, false))
		{
			BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, req->resource, req->timeout_ms);
			return;
		}
		r.id = req->resource;
		r.home = req->home;
		outcome = BookingLockPeeked(&r, &tid, req->timeout_ms);
	}
	else
		outcome = BookingLockResource(req->resource, req->timeout_ms, &r);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, req->resource, req->timeout_ms);
		return;
	}
	if (!BookingOpenAllows(&r, req->lower, req->upper, &at))
	{
		BookingSetClosed(res, req->resource, at, "");
		return;
	}
	if (!BookingGuestLimitAllows(&r, req->guest, sr->quantity, BOOKING_LIMIT_UNITS, req->now, res))
		return;

	/* under the lock every slot of the resource that blocks is committed */
	BookingSlotReadUse(&r, req->lower, req->upper, req->validity, -1, &use);
	if (!BookingSlotFits(&use, r.capacity, sr->quantity, &at, &free_at))
	{
		BookingSlotSetShort(res, req->resource, sr->quantity, at, free_at);
		return;
	}
	BookingSlotMark(&r, req->lower, req->upper);
	booking_id = BookingSlotInsert(req, &r, sr->quantity);
	BookingStaySetCreated(res, booking_id,
						  psprintf("%d %s of resource %lld", sr->quantity,
								   sr->quantity == 1 ? "unit" : "units", (long long) req->resource),
						  req);
}

/*
 * reserve_slot(resource, guest, during, quantity, hold, idempotency_key,
 * lock_timeout, metadata)
 */
Datum
booking_reserve_slot(PG_FUNCTION_ARGS)
{
	SlotRequest *sr = palloc0(sizeof(SlotRequest));
	BookingStayRequest *req = &sr->stay;
	const char *key;
	char	   *request = NULL;

	req->resource = BookingArgId(fcinfo, 0, "resource");
	req->home = BookingHome(req->resource);
	req->guest = BookingArgGuest(fcinfo, 1);
	BookingArgDuring(fcinfo, 2, "during", &req->lower, &req->upper);
	sr->quantity = BookingArgQuantity(fcinfo, 3);
	req->has_hold = BookingArgHold(fcinfo, 4, &req->hold_us);
	key = BookingArgKey(fcinfo, 5);
	req->timeout_ms = BookingArgLockTimeout(fcinfo, 6);
	req->metadata = BookingArgMetadata(fcinfo, 7, &req->metadata_text);
	req->now = GetCurrentTimestamp();

	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_reserve_slot", req->home, req->resource);
	BookingStayPrepare(req);
	if (key != NULL)
	{
		const char *fields[6];

		fields[0] = psprintf(INT64_FORMAT, req->resource);
		fields[1] = text_to_cstring(req->guest);
		fields[2] = psprintf(INT64_FORMAT, (int64) req->lower);
		fields[3] = psprintf(INT64_FORMAT, (int64) req->upper);
		fields[4] = psprintf("%d", sr->quantity);
		fields[5] = req->has_hold ? psprintf(INT64_FORMAT, req->hold_us) : NULL;
		request = BookingRequestString("reserve_slot", 6, fields, req->metadata_text);
	}
	return BookingStayFrame(fcinfo, req, key, request, ReserveSlotBody, sr);
}

BOOKING_SHARD_TWIN(reserve_slot)
