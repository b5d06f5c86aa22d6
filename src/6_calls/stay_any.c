/*
 * stay_any.c
 *	  Range inventory: booking.reserve_stay_any, a stay on any free unit of
 *	  a pool.
 *
 *	  A unit is taken with SKIP LOCKED first, so concurrent callers spread
 *	  over the pool, and waited for only when every free unit is locked by
 *	  someone else.  Each unit is tried in a subtransaction that is rolled
 *	  back unless the unit is booked, so a refused unit is released at once:
 *	  a caller never holds a refused unit while it waits for another.
 *
 *	  Layer 6, the calls.  Locks: one unit's resource row at a time, in
 *	  ascending id order, then its booking row.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/guard.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "4_inventory/capacity.h"
#include "4_inventory/hours.h"
#include "4_inventory/limit.h"
#include "4_inventory/range.h"
#include "4_inventory/slots.h"
#include "5_scaleout/route.h"
#include "6_calls/stay.h"

PG_FUNCTION_INFO_V1(booking_reserve_stay_any);

static BookingPlan pool_exists_plan = {
	"SELECT 1 FROM booking.resources WHERE home OPERATOR(pg_catalog.=) $4 "
	"AND id OPERATOR(pg_catalog.=) $1", 4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};

/* a pool's units live in its shard: one home */
static BookingPlan pool_units_plan = {
	"SELECT r.id FROM booking.resources r WHERE r.home OPERATOR(pg_catalog.=) $4 "
	"AND r.pool_id OPERATOR(pg_catalog.=) $1 ORDER BY r.id",
	4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};

/* the units of a pool that were free in the latest committed state ($2: the range) */
static BookingPlan free_units_plan = {
	"SELECT r.id FROM booking.resources r WHERE r.home OPERATOR(pg_catalog.=) $4 "
	"AND r.pool_id OPERATOR(pg_catalog.=) $1 "
	"AND NOT EXISTS (SELECT 1 FROM booking.bookings b WHERE b.home OPERATOR(pg_catalog.=) $4 "
	"AND b.resource_id OPERATOR(pg_catalog.=) r.id AND "
	BOOKING_BLOCKING_FOOTPRINT("b", BOOKING_FOOTPRINT_OF("r")) ") "
	"ORDER BY r.id",
	4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};

/* one attempt at one unit of a pool, in a subtransaction of its own */
typedef struct UnitTry
{
	BookingStayRequest *req;
	int64		unit;
	bool		wait;			/* false: SKIP LOCKED only */
	int			timeout_ms;
	BookingLockOutcome lock;
	int64		booking_id;
	bool		over_limit;		/* refused: the guest's limit on this unit */
	bool		closed;			/* refused: outside the unit's opening hours */
} UnitTry;

static bool
RunUnitTry(void *arg)
{
	UnitTry    *ut = (UnitTry *) arg;
	BookingResource r;
	BookingResult limit_res;
	TimestampTz closed_at;

	if (!ut->wait)
		ut->lock = BookingTryLockResource(ut->unit, &r) ? BOOKING_LOCKED : BOOKING_LOCK_BUSY;
	else
		ut->lock = BookingLockResource(ut->unit, ut->timeout_ms, &r);
	if (ut->lock != BOOKING_LOCKED)
		return false;
	if (!BookingOpenAllows(&r, ut->req->lower, ut->req->upper, &closed_at))
	{
		ut->closed = true;
		return false;
	}
	/* a unit whose slots are in the way is passed over, as a taken one */
	if (!BookingStayLeavesSlots(&r, ut->req->lower, ut->req->upper, ut->req->validity, -1,
								&limit_res))
		return false;
	if (!BookingGuestLimitAllows(&r, ut->req->guest, 1, BOOKING_LIMIT_STAYS, ut->req->now, &limit_res))
	{
		ut->over_limit = true;
		return false;
	}
	ut->booking_id = BookingStayInsert(ut->req, &r);
	return ut->booking_id >= 0;
}

/*
 * Tries one unit: true when it is booked.  The attempt's subtransaction is
 * kept only then, so a unit that is refused (taken since the pre-check) or
 * that could not be locked leaves no lock behind: a caller never holds a
 * refused unit while it waits for another, in any order.
 */
static bool
TryUnit(UnitTry *ut)
{
	bool		kept = false;
	int			nestlevel = -1;
	BookingGuardOutcome outcome;

	/* under a snapshot isolation level the statements wait by lock_timeout */
	if (ut->wait && IsolationUsesXactSnapshot() && ut->timeout_ms > 0)
		nestlevel = BookingPushLockTimeout(ut->timeout_ms);
	outcome = BookingRunGuardedTry(RunUnitTry, ut, &kept);
	if (nestlevel >= 0)
		BookingPopLockTimeout(nestlevel);
	if (outcome == BOOKING_GUARD_BUSY)
		ut->lock = BOOKING_LOCK_BUSY;
	else if (outcome != BOOKING_GUARD_DONE)
		ut->lock = BOOKING_LOCK_RETRY;
	return kept;
}

static void
ReserveStayAnyBody(void *state, BookingResult *res)
{
	BookingStayRequest *req = (BookingStayRequest *) state;
	Datum		values[4] = {Int64GetDatum(req->resource), req->during, req->validity,
	Int64GetDatum(req->home)};
	int64	   *units;
	bool	   *tried;
	int			nunits;
	TimestampTz deadline = 0;
	int64		busy_unit = 0;
	bool		retry = false;
	bool		over_limit = false;
	bool		any_closed = false;
	bool		any_refused = false;

	if (BookingExecuteLatest(&pool_exists_plan, values, NULL, 1) == 0)
	{
		BookingSetResult(res, BOOKING_NOT_FOUND, -1,
						 "Pool %lld does not exist.", (long long) req->resource);
		return;
	}

	/* at SERIALIZABLE, skip the read of the GiST pages: try every unit */
	if (IsolationIsSerializable())
		nunits = BookingExecuteLatest(&pool_units_plan, values, NULL, 0);
	else
		nunits = BookingExecuteLatest(&free_units_plan, values, NULL, 0);
	units = palloc(sizeof(int64) * Max(nunits, 1));
	tried = palloc0(sizeof(bool) * Max(nunits, 1));
	for (int i = 0; i < nunits; i++)
		units[i] = BookingGetInt64(i, 1, NULL);

	/*
	 * First pass: units nobody holds, without waiting, so concurrent callers
	 * spread over the pool instead of queueing on one unit.  Second pass:
	 * wait for the units others hold, since their bookers may still fail, in
	 * ascending order and at most lock_timeout in all.
	 */
	for (int pass = 0; pass < 2; pass++)
	{
		for (int i = 0; i < nunits; i++)
		{
			UnitTry		ut = {req, units[i], pass == 1, 0, BOOKING_LOCK_BUSY, -1, false, false};

			if (tried[i])
				continue;
			if (pass == 1 && req->timeout_ms > 0)
			{
				if (deadline == 0)
					deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), req->timeout_ms);
				ut.timeout_ms = BookingMillisecondsLeft(deadline);
			}
			if (TryUnit(&ut))
			{
				BookingStaySetCreated(res, ut.booking_id,
							   psprintf("unit %lld of pool %lld", (long long) units[i],
										(long long) req->resource), req);
				return;
			}
			switch (ut.lock)
			{
				case BOOKING_LOCKED:
				case BOOKING_LOCK_NOT_FOUND:
					tried[i] = true;	/* refused, or gone */
					over_limit |= ut.over_limit;
					any_closed |= ut.closed;
					any_refused |= !ut.closed;
					break;
				case BOOKING_LOCK_BUSY:
					if (pass == 1)
						busy_unit = units[i];
					break;
				case BOOKING_LOCK_RETRY:
					/* at SERIALIZABLE the transaction cannot commit: stop here */
					if (IsolationIsSerializable())
					{
						BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, req->resource, req->timeout_ms);
						return;
					}
					tried[i] = true;	/* changed since the snapshot: try the next */
					retry = true;
					break;
			}
		}
	}

	if (retry)
		BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, req->resource, req->timeout_ms);
	else if (busy_unit > 0)
		BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, busy_unit, req->timeout_ms);
	else if (over_limit)
		BookingSetResult(res, BOOKING_GUEST_LIMIT, -1,
						 "Guest limit: every free unit of pool %lld limits the stays one guest may have, and this guest is at that limit.",
						 (long long) req->resource);
	else if (any_closed && !any_refused)
		BookingSetResult(res, BOOKING_CLOSED, -1,
						 "Every unit of pool %lld that is free for that range is closed for part of it; a booking must lie within opening hours.",
						 (long long) req->resource);
	else
		BookingSetResult(res, BOOKING_SOLD_OUT, -1,
						 "Sold out: no unit of pool %lld is free for that range.",
						 (long long) req->resource);
}

/*
 * reserve_stay_any(pool, guest, during, hold, idempotency_key, lock_timeout,
 * metadata)
 */
Datum
booking_reserve_stay_any(PG_FUNCTION_ARGS)
{
	return BookingStayCallOn(fcinfo, "pool", "reserve_stay_any", ReserveStayAnyBody);
}

BOOKING_SHARD_TWIN(reserve_stay_any)
