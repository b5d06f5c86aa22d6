/*
 * amend.c
 *	  Changing a booking after the sale: booking.reduce (give back some of a
 *	  seat booking's seats) and booking.move_stay (give a stay another
 *	  range).
 *
 *	  Each locks the booking's resource row first (4_inventory/lifecycle.c),
 *	  decides on what it reads after the lock, and changes the booking row
 *	  in place: its id stays, and at no moment is neither the old nor the
 *	  new state held.  reduce gives its seats back as cancel does
 *	  (4_inventory/counter.c).  move_stay updates the range and its
 *	  footprint in one statement, so the exclusion
 *	  constraint compares the new footprint with every other stay's (its own
 *	  old one is the row being updated, so a move may overlap it); a
 *	  conflict rolls back a subtransaction and leaves the stay as it was.
 *
 *	  Layer 6, the calls.  Locks: the booking's resource row, then (reduce
 *	  on a striped resource) one stripe, then the booking row.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/guard.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/tables.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "3_frame/events.h"
#include "3_frame/idempotency.h"
#include "4_inventory/capacity.h"
#include "4_inventory/counter.h"
#include "4_inventory/lifecycle.h"
#include "4_inventory/hours.h"
#include "4_inventory/limit.h"
#include "4_inventory/line.h"
#include "4_inventory/slots.h"
#include "5_scaleout/route.h"

PG_FUNCTION_INFO_V1(booking_reduce);
PG_FUNCTION_INFO_V1(booking_move_stay);

static BookingPlan reduce_plan = {
	"UPDATE booking.bookings SET quantity = quantity OPERATOR(pg_catalog.-) $2 "
	"WHERE home OPERATOR(pg_catalog.=) $3 AND id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, INT4OID, INT8OID}
};

/* another stay in the way of footprint $2 (validity $3), in the latest committed state */
static BookingPlan in_the_way_plan = {
	"SELECT EXISTS (SELECT 1 FROM booking.bookings b WHERE b.home OPERATOR(pg_catalog.=) $4 "
	"AND b.resource_id OPERATOR(pg_catalog.=) $1 AND b.blocked OPERATOR(pg_catalog.&&) $2 "
	"AND b.validity OPERATOR(pg_catalog.&&) $3 AND b.blocked IS NOT NULL "
	"AND b.status IN ('pending'::booking.status, 'confirmed'::booking.status) "
	"AND b.id OPERATOR(pg_catalog.<>) $5)",
	5, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID, INT8OID}
};
static BookingPlan move_plan = {
	"UPDATE booking.bookings SET during = $2, blocked = $3 "
	"WHERE home OPERATOR(pg_catalog.=) $4 AND id OPERATOR(pg_catalog.=) $1",
	4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};

typedef struct AmendRequest
{
	BookingLifecycle life;
	int32		quantity;		/* reduce */
	TimestampTz lower;			/* move_stay */
	TimestampTz upper;
} AmendRequest;

/*
 * The booking, locked, if it still blocks; false with res set otherwise (a
 * hold found lapsed is expired now, as confirm does).
 */
static bool
LockLiveBooking(AmendRequest *req, BookingLocked *b, bool want_seat, BookingResult *res)
{
	BookingLifecycle *life = &req->life;

	if (!BookingLockBooking(life, b, res))
		return false;
	if (b->status == BOOKING_STATUS_CANCELLED || b->status == BOOKING_STATUS_EXPIRED ||
		b->status == BOOKING_STATUS_WAITING)
	{
		BookingSetResult(res, BOOKING_INVALID_STATE, life->booking,
						 "Booking %lld is %s and cannot be changed.", (long long) life->booking,
						 b->status == BOOKING_STATUS_WAITING ? "waiting in line" :
						 BookingStatusName(b->status));
		return false;
	}
	if (b->is_seat != want_seat)
	{
		BookingSetResult(res, BOOKING_INVALID_STATE, life->booking,
						 want_seat ? "Booking %lld is a stay; reduce gives back seats." :
						 "Booking %lld is a seat booking; move_stay moves stays.",
						 (long long) life->booking);
		return false;
	}
	if (b->status == BOOKING_STATUS_PENDING && b->expires_at <= life->now)
	{
		if (BookingEndBooking(life, b, "expired", res))
			BookingSetHoldExpired(res, life, b);
		return false;
	}
	return true;
}

static void
ReduceBody(void *state, BookingResult *res)
{
	AmendRequest *req = (AmendRequest *) state;
	BookingLifecycle *life = &req->life;
	BookingLocked b;
	BookingGiveBack gb;
	BookingLockOutcome outcome;
	Datum		values[3];

	if (!LockLiveBooking(req, &b, true, res))
		return;
	if (req->quantity > b.quantity)
	{
		BookingSetResult(res, BOOKING_INVALID_STATE, life->booking,
						 "Booking %lld holds %d %s; %d cannot be given back.",
						 (long long) life->booking, b.quantity, b.quantity == 1 ? "seat" : "seats",
						 req->quantity);
		return;
	}
	if (req->quantity == b.quantity)
	{
		/* all of them: a cancel, with a cancel's answer */
		if (!BookingEndBooking(life, &b, "cancelled", res))
			return;
		BookingSetResult(res, BOOKING_DONE, life->booking,
						 "Booking %lld is cancelled: all its %d %s given back.",
						 (long long) life->booking, b.quantity, b.quantity == 1 ? "seat was" : "seats were");
		return;
	}

	outcome = BookingCounterOpenGiveBack(&b.resource, life->timeout_ms, &gb);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, b.resource.id, life->timeout_ms);
		return;
	}
	values[0] = Int64GetDatum(life->booking);
	values[1] = Int32GetDatum(req->quantity);
	values[2] = Int64GetDatum(life->home);
	(void) BookingExecute(&reduce_plan, values, NULL, false, 0);
	BookingEmitEvent("reduced", life->home, life->booking, BookingStatusName(b.status), "ok");
	BookingCounterGiveBack(&gb, req->quantity);
	/* the freed seats go to the line first, in this transaction */
	if (b.resource.waiting > 0)
		BookingWaitlistServe(b.resource.id, life->timeout_ms, life->now);
	BookingSetResult(res, BOOKING_DONE, life->booking,
					 "Booking %lld now holds %d %s; %d given back.",
					 (long long) life->booking, b.quantity - req->quantity,
					 b.quantity - req->quantity == 1 ? "seat" : "seats", req->quantity);
}

typedef struct MoveArgs
{
	Datum		values[4];
	char		nulls[4];
} MoveArgs;

static void
RunMove(void *arg)
{
	MoveArgs   *ma = (MoveArgs *) arg;

	(void) BookingExecute(&move_plan, ma->values, ma->nulls, false, 0);
}

static void
SetMoveRefusal(BookingResult *res, BookingCode code, AmendRequest *req, int64 resource)
{
	char		next[BOOKING_MESSAGE_LEN / 2];

	BookingDescribeNextSlot(next, sizeof(next), resource, req->lower, req->upper, req->life.now);
	BookingSetResult(res, code, -1,
					 code == BOOKING_UNAVAILABLE ?
					 "Booking %lld keeps its range: resource %lld is already booked for part of the new one.%s" :
					 "Booking %lld keeps its range: resource %lld was just booked for an overlapping range by a concurrent request.%s",
					 (long long) req->life.booking, (long long) resource, next);
}

/*
 * Whether slot booking b's units fit over the new range beside every other
 * booking of its resource that blocks (capacity.c); false with res set
 * (sold_out) when not.
 */
static bool
SlotMoveFits(AmendRequest *req, BookingLocked *b, Datum validity, BookingResult *res)
{
	BookingSlotUse use;
	TimestampTz at;
	int64		free_at;

	BookingSlotReadUse(&b->resource, req->lower, req->upper, validity, req->life.booking, &use);
	if (BookingSlotFits(&use, b->resource.capacity, b->quantity, &at, &free_at))
		return true;
	BookingSetResult(res, BOOKING_SOLD_OUT, -1,
					 "Booking %lld keeps its range: resource %lld has %lld %s free at %s; it holds %d.",
					 (long long) req->life.booking, (long long) b->resource.id, (long long) free_at,
					 free_at == 1 ? "unit" : "units", timestamptz_to_str(at), b->quantity);
	return false;
}

static void
MoveStayBody(void *state, BookingResult *res)
{
	AmendRequest *req = (AmendRequest *) state;
	BookingLifecycle *life = &req->life;
	BookingLocked b;
	MoveArgs	ma;
	Datum		footprint;
	Datum		validity;
	char	   *from;
	TimestampTz closed_at;

	if (!LockLiveBooking(req, &b, false, res))
		return;
	/* an ended stay is history: moving it would book anew, past the rules */
	if (b.ends_at <= life->now)
	{
		BookingSetResult(res, BOOKING_INVALID_STATE, life->booking,
						 "Booking %lld ended at %s; a stay that has ended cannot be moved, book a new one.",
						 (long long) life->booking, timestamptz_to_str(b.ends_at));
		return;
	}
	if (!BookingOpenAllows(&b.resource, req->lower, req->upper, &closed_at))
	{
		BookingSetClosed(res, b.resource.id, closed_at, "");
		return;
	}
	/* a move is checked against the guest limit as the stay booked anew */
	if (req->upper > life->now &&
		!BookingGuestLimitAllowsMove(&b.resource, life->booking, b.quantity,
									 b.is_slot ? BOOKING_LIMIT_UNITS : BOOKING_LIMIT_STAYS,
									 life->now, res))
		return;
	validity = BookingMakeRange(b.created_at, b.expires_at, b.status == BOOKING_STATUS_CONFIRMED);
	if (b.is_slot)
	{
		if (!SlotMoveFits(req, &b, validity, res))
			return;
		/* a longer range reaches further back: the sweeps must read from there */
		BookingSlotMark(&b.resource, req->lower, req->upper);
		footprint = (Datum) 0;
	}
	else
	{
		if (!BookingStayLeavesSlots(&b.resource, req->lower, req->upper, validity, life->booking, res))
			return;
		footprint = BookingStayFootprint(req->lower, req->upper, &b.resource);
	}

	/*
	 * Under the room's lock every stay of it that blocks is committed, so
	 * this check is exact; at SERIALIZABLE it is skipped (see 6_calls/stay.c) and
	 * the constraint alone refuses.
	 */
	if (!b.is_slot && !IsolationIsSerializable())
	{
		Datum		values[5] = {Int64GetDatum(b.resource.id), footprint, validity,
		Int64GetDatum(life->home), Int64GetDatum(life->booking)};

		(void) BookingExecuteLatest(&in_the_way_plan, values, NULL, 1);
		if (BookingGetBool(0, 1))
		{
			SetMoveRefusal(res, BOOKING_UNAVAILABLE, req, b.resource.id);
			return;
		}
	}

	memset(ma.nulls, ' ', sizeof(ma.nulls));
	ma.values[0] = Int64GetDatum(life->booking);
	ma.values[1] = BookingMakeRange(req->lower, req->upper, false);
	ma.values[2] = footprint;
	ma.values[3] = Int64GetDatum(life->home);
	/* a slot has no footprint */
	ma.nulls[2] = b.is_slot ? 'n' : ' ';
	switch (BookingRunGuarded(RunMove, &ma))
	{
		case BOOKING_GUARD_DONE:
			break;
		case BOOKING_GUARD_OVERLAP:
			SetMoveRefusal(res, BOOKING_JUST_TAKEN, req, b.resource.id);
			return;
		case BOOKING_GUARD_BUSY:
		case BOOKING_GUARD_UNREACHABLE:
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, b.resource.id, life->timeout_ms);
			return;
		case BOOKING_GUARD_RETRY:
		case BOOKING_GUARD_MOVED:
			BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, b.resource.id, life->timeout_ms);
			return;
	}
	BookingEmitEvent("moved", life->home, life->booking, BookingStatusName(b.status), "ok");
	from = pstrdup(timestamptz_to_str(req->lower));
	BookingSetResult(res, BOOKING_DONE, life->booking,
					 "Booking %lld now runs from %s to %s.", (long long) life->booking,
					 from, timestamptz_to_str(req->upper));
}

static Datum
RunAmendCall(FunctionCallInfo fcinfo, AmendRequest *req, const char *fn, char *key,
			 int nfields, const char *const *fields, BookingBodyFn body)
{
	BookingCall call;

	if (BookingForwarding())
		return BookingForward(fcinfo, psprintf("shard_%s", fn), req->life.home, req->life.booking);

	memset(&call, 0, sizeof(call));
	call.key = key;
	if (key != NULL)
		call.request = BookingRequestString(fn, nfields, fields, NULL);
	call.timeout_ms = req->life.timeout_ms;
	call.home = req->life.home;
	call.now = req->life.now;
	call.body = body;
	call.state = req;
	return BookingCallDatum(fcinfo, &call);
}

static void
ReadBookingArg(FunctionCallInfo fcinfo, AmendRequest *req)
{
	memset(req, 0, sizeof(*req));
	req->life.booking = BookingArgId(fcinfo, 0, "booking");
	req->life.home = BookingHome(req->life.booking);
	req->life.timeout_ms = BookingLockTimeoutDefault();
	req->life.now = GetCurrentTimestamp();
}

/*
 * reduce(booking, quantity, idempotency_key)
 */
Datum
booking_reduce(PG_FUNCTION_ARGS)
{
	AmendRequest req;
	const char *fields[2];

	ReadBookingArg(fcinfo, &req);
	req.quantity = BookingArgQuantity(fcinfo, 1);
	fields[0] = psprintf(INT64_FORMAT, req.life.booking);
	fields[1] = psprintf("%d", req.quantity);
	return RunAmendCall(fcinfo, &req, "reduce", BookingArgKey(fcinfo, 2), 2, fields, ReduceBody);
}

BOOKING_SHARD_TWIN(reduce)

/*
 * move_stay(booking, during, idempotency_key, lock_timeout)
 */
Datum
booking_move_stay(PG_FUNCTION_ARGS)
{
	AmendRequest req;
	const char *fields[3];

	ReadBookingArg(fcinfo, &req);
	BookingArgDuring(fcinfo, 1, "during", &req.lower, &req.upper);
	req.life.timeout_ms = BookingArgLockTimeout(fcinfo, 3);
	fields[0] = psprintf(INT64_FORMAT, req.life.booking);
	fields[1] = psprintf(INT64_FORMAT, (int64) req.lower);
	fields[2] = psprintf(INT64_FORMAT, (int64) req.upper);
	return RunAmendCall(fcinfo, &req, "move_stay", BookingArgKey(fcinfo, 2), 3, fields,
						MoveStayBody);
}

BOOKING_SHARD_TWIN(move_stay)
