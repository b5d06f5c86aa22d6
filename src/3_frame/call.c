/*
 * call.c
 *	  The frame every mutating call runs in.  In order: the table locks
 *	  (2_locks/tablelock.c), the idempotency key's claim and stored result,
 *	  then the call's own body, then its result stored under the key.
 *
 *	  At READ COMMITTED the frame adds nothing else: the body only waits in
 *	  guarded subtransactions where a wait is needed (2_locks/lock.c).  At
 *	  REPEATABLE READ and SERIALIZABLE any statement may fail with a
 *	  serialization error, so the whole frame runs in one guarded
 *	  subtransaction with lock_timeout set, and such a failure comes back as
 *	  "retry" with nothing written.  At SERIALIZABLE a call that answered
 *	  "retry" also keeps its transaction from committing (1_ground/guard.c).
 *
 *	  Layer 3, the call frame.  Locks: the tables, then the key's lock; the
 *	  body takes the rest in the order of booking.h.
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/guard.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/stats.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "2_locks/tablelock.h"
#include "3_frame/call.h"
#include "3_frame/idempotency.h"
#include "3_frame/once.h"

typedef struct FrameArgs
{
	BookingCall *call;
	BookingResult *res;
} FrameArgs;

static void
SetTablesBusy(BookingResult *res, BookingLockOutcome outcome, int timeout_ms)
{
	if (outcome == BOOKING_LOCK_RETRY)
		BookingSetLockOutcome(res, outcome, 0, timeout_ms);
	else if (timeout_ms > 0)
		BookingSetResult(res, BOOKING_BUSY, -1,
						 "The booking tables are locked by another transaction (a schema change, VACUUM FULL or LOCK TABLE) for longer than the lock_timeout of %d ms; try again shortly.",
						 timeout_ms);
	else
		BookingSetResult(res, BOOKING_BUSY, -1,
						 "The booking tables are locked by another transaction (a schema change, VACUUM FULL or LOCK TABLE) and lock_timeout is 0; try again shortly.");
}

static void
SetKeyBusy(BookingResult *res, int timeout_ms)
{
	if (timeout_ms > 0)
		BookingSetResult(res, BOOKING_BUSY, -1,
						 "Another request with this idempotency key is still in progress after the lock_timeout of %d ms; try again shortly.",
						 timeout_ms);
	else
		BookingSetResult(res, BOOKING_BUSY, -1,
						 "Another request with this idempotency key is still in progress and lock_timeout is 0; try again shortly.");
}

static void
RunFrame(void *arg)
{
	FrameArgs  *fa = (FrameArgs *) arg;
	BookingCall *call = fa->call;
	BookingResult *res = fa->res;
	BookingLockOutcome outcome;
	BookingKey	key;

	outcome = BookingLockTables(call->timeout_ms, call->key != NULL);
	if (outcome != BOOKING_LOCKED)
	{
		SetTablesBusy(res, outcome, call->timeout_ms);
		return;
	}

	if (call->key == NULL)
	{
		call->body(call->state, res);
		return;
	}

	key.home = call->home;
	key.key = call->key;
	key.request = call->request;
	switch (BookingClaimKey(&key, call->timeout_ms, call->now, res))
	{
		case BOOKING_KEY_OWNED:
			break;
		case BOOKING_KEY_REPLAYED:
			return;
		case BOOKING_KEY_BUSY:
			SetKeyBusy(res, call->timeout_ms);
			return;
		case BOOKING_KEY_RETRY:
			BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, 0, call->timeout_ms);
			return;
	}
	call->body(call->state, res);
	BookingFinishKey(&key, res, call->now);
}

/*
 * Runs a call in its own SPI connection and returns its booking.result,
 * built after SPI_finish in the caller's memory context.  booking.stats()
 * counts it (1_ground/stats.c); an evaluation that only repeats it is
 * neither run nor counted (once.c).
 */
Datum
BookingCallDatum(FunctionCallInfo fcinfo, BookingCall *call)
{
	BookingResult res;
	BookingStatsCall sc;

	/* a copy of this call made by (f(...)).* answers its result (once.c) */
	if (BookingOnceRepeat(fcinfo, &res))
		return BookingResultDatum(fcinfo, &res);
	BookingStatsBegin(fcinfo, &sc);
	SPI_connect();
	BookingRunCall(call, &res);
	SPI_finish();
	BookingStatsEnd(&sc, res.code);
	BookingOnceRemember(fcinfo, &res);
	return BookingResultDatum(fcinfo, &res);
}

/*
 * The frame of a call on one resource that takes no key (the admin calls),
 * waiting booking.lock_timeout.
 */
Datum
BookingCallOnResource(FunctionCallInfo fcinfo, int64 resource, BookingBodyFn body, void *state)
{
	BookingCall call;

	memset(&call, 0, sizeof(call));
	call.timeout_ms = BookingLockTimeoutDefault();
	call.resource = resource;
	call.home = BookingHome(resource);
	call.now = GetCurrentTimestamp();
	call.body = body;
	call.state = state;
	return BookingCallDatum(fcinfo, &call);
}

void
BookingRunCall(BookingCall *call, BookingResult *res)
{
	FrameArgs	fa = {call, res};
	int			nestlevel = -1;
	BookingGuardOutcome outcome;

	if (!IsolationUsesXactSnapshot())
	{
		RunFrame(&fa);
		return;
	}

	if (call->timeout_ms > 0)
		nestlevel = BookingPushLockTimeout(call->timeout_ms);
	outcome = BookingRunGuarded(RunFrame, &fa);
	if (nestlevel >= 0)
		BookingPopLockTimeout(nestlevel);

	switch (outcome)
	{
		case BOOKING_GUARD_DONE:
			break;
		case BOOKING_GUARD_BUSY:
		case BOOKING_GUARD_UNREACHABLE:
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, call->resource, call->timeout_ms);
			break;
		case BOOKING_GUARD_RETRY:
		case BOOKING_GUARD_MOVED:
			BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, call->resource, call->timeout_ms);
			break;
		case BOOKING_GUARD_OVERLAP:
			BookingSetResult(res, BOOKING_JUST_TAKEN, -1,
							 "The range was just booked by a concurrent request; nothing was written.");
			break;
	}
	if (res->code == BOOKING_RETRY)
		BookingNoteSerializableRetry();
}
