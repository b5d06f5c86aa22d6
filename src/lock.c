/*
 * lock.c
 *	  Row locks on booking.resources, the lock every mutating call takes
 *	  before it decides anything, and the booking.lock_timeout GUC.
 *
 *	  At READ COMMITTED the lock is first tried with SKIP LOCKED, which never
 *	  waits and never needs a subtransaction; only when another transaction
 *	  holds the row does the call wait, inside one internal subtransaction,
 *	  bounded by lock_timeout, so that a timeout becomes "busy" and a deadlock
 *	  "retry".  A call made thousands of times in one transaction therefore
 *	  piles up no subtransactions unless it really has to wait (a striped
 *	  resource is the exception: stripes.c says why).
 *
 *	  At REPEATABLE READ and SERIALIZABLE the whole call already runs in one
 *	  guarded subtransaction (call.c), so here the statements just wait.
 *
 *	  Lock mode is FOR NO KEY UPDATE: it excludes other bookers but not the
 *	  FOR KEY SHARE lock a foreign key check takes.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/guc.h"

#include "booking.h"

int			booking_lock_timeout_ms = 3000;

#define RESOURCE_COLUMNS "SELECT capacity, taken, version, stripes FROM booking.resources WHERE id OPERATOR(pg_catalog.=) $1"

static BookingPlan try_lock_plan = {
	RESOURCE_COLUMNS " FOR NO KEY UPDATE SKIP LOCKED", 1, {INT8OID}
};
static BookingPlan wait_lock_plan = {
	RESOURCE_COLUMNS " FOR NO KEY UPDATE", 1, {INT8OID}
};
static BookingPlan nowait_lock_plan = {
	RESOURCE_COLUMNS " FOR NO KEY UPDATE NOWAIT", 1, {INT8OID}
};
static BookingPlan exists_plan = {
	"SELECT 1 FROM booking.resources WHERE id OPERATOR(pg_catalog.=) $1", 1, {INT8OID}
};

void
BookingLockInit(void)
{
	DefineCustomIntVariable("booking.lock_timeout",
							"How long a booking call waits for a resource lock before answering busy.",
							"0 means do not wait at all (NOWAIT); there is no wait-forever setting. "
							"The lock_timeout argument of a call overrides it.",
							&booking_lock_timeout_ms,
							3000, 0, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);
}

typedef struct LockArgs
{
	int64		id;
	BookingPlan *plan;
	bool		found;
	BookingResource *res;
} LockArgs;

static void
RunLockStatement(void *arg)
{
	LockArgs   *la = (LockArgs *) arg;
	Datum		values[1] = {Int64GetDatum(la->id)};

	la->found = BookingExecute(la->plan, values, NULL, false, 1) == 1;
	if (la->found)
	{
		la->res->id = la->id;
		la->res->capacity = BookingGetInt32(0, 1, NULL);
		la->res->taken = BookingGetInt32(0, 2, NULL);
		la->res->version = BookingGetInt64(0, 3, NULL);
		la->res->stripes = BookingGetInt32(0, 4, NULL);
	}
}

/* Locks the row without waiting; false if it is missing or locked. */
bool
BookingTryLockResource(int64 id, BookingResource *res)
{
	LockArgs	la = {id, &try_lock_plan, false, res};

	RunLockStatement(&la);
	return la.found;
}

/*
 * Runs fn, which waits for a lock.  At READ COMMITTED it runs in a guarded
 * subtransaction with lock_timeout set; under a snapshot isolation level the
 * call frame has done both already.  timeout_ms must be positive.
 */
BookingLockOutcome
BookingWaitGuarded(BookingGuardedFn fn, void *arg, int timeout_ms)
{
	int			nestlevel;
	BookingGuardOutcome outcome;

	Assert(timeout_ms > 0);
	if (IsolationUsesXactSnapshot())
	{
		fn(arg);
		return BOOKING_LOCKED;
	}

	nestlevel = BookingPushLockTimeout(timeout_ms);
	outcome = BookingRunGuarded(fn, arg);
	BookingPopLockTimeout(nestlevel);

	switch (outcome)
	{
		case BOOKING_GUARD_DONE:
			return BOOKING_LOCKED;
		case BOOKING_GUARD_BUSY:
			return BOOKING_LOCK_BUSY;
		case BOOKING_GUARD_RETRY:
		case BOOKING_GUARD_OVERLAP:
			break;
	}
	return BOOKING_LOCK_RETRY;
}

/*
 * Locks resource id for the rest of the transaction and reads it after the
 * lock, so every decision is made on the current row.
 */
BookingLockOutcome
BookingLockResource(int64 id, int timeout_ms, BookingResource *res)
{
	LockArgs	la = {id, NULL, false, res};
	BookingLockOutcome outcome;

	if (IsolationUsesXactSnapshot())
	{
		/* errors go to the call frame's guard */
		la.plan = timeout_ms == 0 ? &nowait_lock_plan : &wait_lock_plan;
		RunLockStatement(&la);
		return la.found ? BOOKING_LOCKED : BOOKING_LOCK_NOT_FOUND;
	}

	if (BookingTryLockResource(id, res))
		return BOOKING_LOCKED;

	{
		Datum		values[1] = {Int64GetDatum(id)};

		if (BookingExecute(&exists_plan, values, NULL, true, 1) == 0)
			return BOOKING_LOCK_NOT_FOUND;
	}
	if (timeout_ms == 0)
		return BOOKING_LOCK_BUSY;

	la.plan = &wait_lock_plan;
	outcome = BookingWaitGuarded(RunLockStatement, &la, timeout_ms);
	if (outcome == BOOKING_LOCKED && !la.found)
		return BOOKING_LOCK_NOT_FOUND;
	return outcome;
}

void
BookingSetLockOutcome(BookingResult *res, BookingLockOutcome outcome, int64 resource)
{
	switch (outcome)
	{
		case BOOKING_LOCK_BUSY:
			if (resource > 0)
				BookingSetResult(res, BOOKING_BUSY, -1,
								 "Resource %lld is busy with other bookings; try again shortly.",
								 (long long) resource);
			else
				BookingSetResult(res, BOOKING_BUSY, -1,
								 "The resource is busy with other bookings; try again shortly.");
			break;
		case BOOKING_LOCK_RETRY:
			BookingSetResult(res, BOOKING_RETRY, -1,
							 "A concurrent transaction conflicted with this request; retry the whole transaction.");
			break;
		case BOOKING_LOCK_NOT_FOUND:
			BookingSetResult(res, BOOKING_NOT_FOUND, -1,
							 "Resource %lld does not exist.", (long long) resource);
			break;
		case BOOKING_LOCKED:
			elog(ERROR, "a granted lock is not a result");
	}
}
