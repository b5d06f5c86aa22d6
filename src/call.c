/*
 * call.c
 *	  The frame every mutating call runs in.  In order: the idempotency key's
 *	  lock and stored result, then the call's own body, then the stored result.
 *
 *	  At READ COMMITTED the frame adds nothing else: the body only waits in
 *	  guarded subtransactions where a wait is needed (lock.c).  At REPEATABLE
 *	  READ and SERIALIZABLE any statement may fail with a serialization error,
 *	  so the whole frame runs in one guarded subtransaction with lock_timeout
 *	  set, and such a failure comes back as "retry" with nothing written.
 */
#include "postgres.h"

#include "access/xact.h"

#include "booking.h"

typedef struct FrameArgs
{
	BookingCall *call;
	BookingResult *res;
} FrameArgs;

static void
RunFrame(void *arg)
{
	FrameArgs  *fa = (FrameArgs *) arg;
	BookingCall *call = fa->call;
	BookingResult *res = fa->res;

	if (call->key != NULL)
	{
		BookingLockOutcome outcome = BookingLockKey(call->key, call->timeout_ms);

		if (outcome == BOOKING_LOCK_BUSY)
		{
			BookingSetResult(res, BOOKING_BUSY, -1,
							 "Another request with this idempotency key is still in progress; try again shortly.");
			return;
		}
		if (outcome == BOOKING_LOCK_RETRY)
		{
			BookingSetLockOutcome(res, outcome, 0);
			return;
		}
		if (BookingReplayKey(call->key, call->request, res))
			return;
	}

	call->body(call->state, res);

	/* busy and retry say the work did not happen: a retry must do it */
	if (call->key != NULL && res->code != BOOKING_BUSY && res->code != BOOKING_RETRY)
		BookingStoreKey(call->key, call->request, res, call->now);
}

/*
 * Runs a call in its own SPI connection and returns its booking.result,
 * built after SPI_finish in the caller's memory context.
 */
Datum
BookingCallDatum(FunctionCallInfo fcinfo, BookingCall *call)
{
	BookingResult res;

	SPI_connect();
	BookingRunCall(call, &res);
	SPI_finish();
	return BookingResultDatum(fcinfo, &res);
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
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, call->resource);
			break;
		case BOOKING_GUARD_RETRY:
			BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, call->resource);
			break;
		case BOOKING_GUARD_OVERLAP:
			BookingSetResult(res, BOOKING_JUST_TAKEN, -1,
							 "The range was just booked by a concurrent request; nothing was written.");
			break;
	}
}
