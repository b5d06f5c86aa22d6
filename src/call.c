/*
 * call.c
 *	  The frame every mutating call runs in.  In order: the table locks
 *	  (tables.c), the idempotency key's claim and stored result, then the
 *	  call's own body, then its result stored under the key.
 *
 *	  At READ COMMITTED the frame adds nothing else: the body only waits in
 *	  guarded subtransactions where a wait is needed (lock.c).  At REPEATABLE
 *	  READ and SERIALIZABLE any statement may fail with a serialization error,
 *	  so the whole frame runs in one guarded subtransaction with lock_timeout
 *	  set, and such a failure comes back as "retry" with nothing written.
 *
 *	  At SERIALIZABLE a caught serialization failure leaves the transaction
 *	  without its guarantee: PostgreSQL does not always doom a transaction
 *	  whose error was caught in a subtransaction.  So once a call answered
 *	  "retry" there, the transaction's COMMIT fails with 40001 (a pre-commit
 *	  callback), and a client that commits anyway cannot lose the guarantee
 *	  silently.
 */
#include "postgres.h"

#include "access/xact.h"

#include "booking.h"

/* a call in this transaction answered retry at SERIALIZABLE */
static bool serializable_retry = false;

static void
CallXactCallback(XactEvent event, void *arg)
{
	switch (event)
	{
		case XACT_EVENT_PRE_COMMIT:
		case XACT_EVENT_PARALLEL_PRE_COMMIT:
		case XACT_EVENT_PRE_PREPARE:
			if (serializable_retry)
			{
				serializable_retry = false;
				ereport(ERROR,
						(errcode(ERRCODE_T_R_SERIALIZATION_FAILURE),
						 errmsg("could not commit: a booking call in this transaction answered retry"),
						 errdetail("At SERIALIZABLE, a transaction in which a booking call answered retry cannot keep its serializability guarantee."),
						 errhint("Retry the whole transaction.")));
			}
			break;
		default:
			serializable_retry = false;
			break;
	}
}

void
BookingCallInit(void)
{
	RegisterXactCallback(CallXactCallback, NULL);
}

/* Remembers, at SERIALIZABLE, that this transaction must not commit. */
void
BookingNoteSerializableRetry(void)
{
	if (IsolationIsSerializable())
		serializable_retry = true;
}

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
 * counts it (stats.c); an evaluation that only repeats it is neither run
 * nor counted (once.c).
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
