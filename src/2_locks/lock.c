/*
 * lock.c
 *	  Row locks on booking.resources, the lock every mutating call takes
 *	  before it decides anything; the guarded, bounded wait every lock wait
 *	  of the extension runs in; and the busy, retry and not_found answers of
 *	  a lock that was not granted.
 *
 *	  At READ COMMITTED the lock is first tried with SKIP LOCKED, which never
 *	  waits and never needs a subtransaction; only when another transaction
 *	  holds the row does the call wait, inside one internal subtransaction,
 *	  bounded by lock_timeout, so that a timeout becomes "busy" and a deadlock
 *	  "retry".  A call made thousands of times in one transaction therefore
 *	  piles up no subtransactions unless it really has to wait (a striped
 *	  resource is the exception: stripes.c says why).  Each statement runs
 *	  with a fresh snapshot, so the row is read as the latest committed
 *	  version once locked.
 *
 *	  At REPEATABLE READ and SERIALIZABLE the whole call already runs in one
 *	  guarded subtransaction (3_frame/call.c), so here the statements just wait; and
 *	  they read the row as the transaction's snapshot sees it (a newer
 *	  version makes PostgreSQL raise a serialization failure: "retry").
 *
 *	  Lock mode is FOR NO KEY UPDATE: it excludes other bookers but not the
 *	  FOR KEY SHARE lock a foreign key check takes.
 *
 *	  Layer 2, locks.  Locks: one resource row, in the caller's order.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/stats.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "2_locks/rowlock.h"

#define RESOURCE_COLUMNS "SELECT capacity, taken, version, stripes, " \
	"COALESCE(guest_limit, 0), buffer_before, buffer_after, waiting, opening_hours IS NOT NULL, slotted, " \
	"longest_slot " \
	"FROM booking.resources " \
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1"

static BookingPlan try_lock_plan = {
	RESOURCE_COLUMNS " FOR NO KEY UPDATE SKIP LOCKED", 2, {INT8OID, INT8OID}
};
static BookingPlan wait_lock_plan = {
	RESOURCE_COLUMNS " FOR NO KEY UPDATE", 2, {INT8OID, INT8OID}
};
static BookingPlan nowait_lock_plan = {
	RESOURCE_COLUMNS " FOR NO KEY UPDATE NOWAIT", 2, {INT8OID, INT8OID}
};
static BookingPlan exists_plan = {
	"SELECT 1 FROM booking.resources WHERE home OPERATOR(pg_catalog.=) $2 "
	"AND id OPERATOR(pg_catalog.=) $1", 2, {INT8OID, INT8OID}
};

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
	int64		home = BookingHome(la->id);
	Datum		values[2] = {Int64GetDatum(la->id), Int64GetDatum(home)};

	la->found = BookingExecute(la->plan, values, NULL, false, 1) == 1;
	if (la->found)
	{
		bool		isnull;

		la->res->id = la->id;
		la->res->home = home;
		la->res->capacity = BookingGetInt32(0, 1, NULL);
		la->res->taken = BookingGetInt32(0, 2, NULL);
		la->res->version = BookingGetInt64(0, 3, NULL);
		la->res->stripes = BookingGetInt32(0, 4, NULL);
		la->res->guest_limit = BookingGetInt32(0, 5, NULL);
		la->res->buffer_before = BookingIntervalUsecs(DatumGetIntervalP(BookingGetDatum(0, 6, &isnull)),
													  "buffer_before");
		la->res->buffer_after = BookingIntervalUsecs(DatumGetIntervalP(BookingGetDatum(0, 7, &isnull)),
													 "buffer_after");
		la->res->waiting = BookingGetInt32(0, 8, NULL);
		la->res->has_hours = BookingGetBool(0, 9);
		la->res->slotted = BookingGetBool(0, 10);
		la->res->longest_slot = BookingIntervalUsecs(DatumGetIntervalP(BookingGetDatum(0, 11, &isnull)),
													 "longest_slot");
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

static BookingLockOutcome
LockOutcomeOf(BookingGuardOutcome outcome)
{
	switch (outcome)
	{
		case BOOKING_GUARD_DONE:
			return BOOKING_LOCKED;
		case BOOKING_GUARD_BUSY:
		case BOOKING_GUARD_UNREACHABLE:
			return BOOKING_LOCK_BUSY;
		case BOOKING_GUARD_RETRY:
		case BOOKING_GUARD_OVERLAP:
		case BOOKING_GUARD_MOVED:
			break;
	}
	return BOOKING_LOCK_RETRY;
}

/*
 * Runs fn, which waits for a lock.  At READ COMMITTED it runs in a guarded
 * subtransaction with lock_timeout set; under a snapshot isolation level the
 * call frame has done both already.  A timeout of 0 or less never waits:
 * PostgreSQL's lock_timeout of 0 would mean "forever".
 */
BookingLockOutcome
BookingWaitGuarded(BookingGuardedFn fn, void *arg, int timeout_ms)
{
	int			nestlevel;
	volatile BookingGuardOutcome outcome = BOOKING_GUARD_DONE;

	if (timeout_ms <= 0)
		return BOOKING_LOCK_BUSY;
	/* booking.stats() counts the wait (an error ends it in the frame) */
	BookingStatsWaitBegin();
	if (IsolationUsesXactSnapshot())
	{
		fn(arg);
		BookingStatsWaitEnd();
		return BOOKING_LOCKED;
	}

	/*
	 * Inside a try guard the wait runs in the try's subtransaction
	 * (1_ground/guard.c), and a timeout ends the try: the wait ends here
	 * either way.
	 */
	nestlevel = BookingPushLockTimeout(timeout_ms);
	PG_TRY();
	{
		outcome = BookingRunGuarded(fn, arg);
	}
	PG_FINALLY();
	{
		BookingStatsWaitEnd();
	}
	PG_END_TRY();
	BookingPopLockTimeout(nestlevel);
	return LockOutcomeOf(outcome);
}

/*
 * Like BookingWaitGuarded, but the subtransaction is kept only when fn
 * returns true (*kept): a refusal decided under the lock rolls back and so
 * releases every row lock fn took, at every isolation level.  Under a
 * snapshot isolation level the frame has set lock_timeout already.
 */
BookingLockOutcome
BookingWaitGuardedTry(BookingTryFn fn, void *arg, int timeout_ms, bool *kept)
{
	int			nestlevel = -1;
	BookingGuardOutcome outcome;

	*kept = false;
	if (timeout_ms <= 0)
		return BOOKING_LOCK_BUSY;
	BookingStatsWaitBegin();
	if (!IsolationUsesXactSnapshot())
		nestlevel = BookingPushLockTimeout(timeout_ms);
	outcome = BookingRunGuardedTry(fn, arg, kept);
	if (nestlevel >= 0)
		BookingPopLockTimeout(nestlevel);
	BookingStatsWaitEnd();
	return LockOutcomeOf(outcome);
}

/* Whether resource id exists in the latest committed state. */
static bool
ResourceExists(int64 id)
{
	Datum		values[2] = {Int64GetDatum(id), Int64GetDatum(BookingHome(id))};

	return BookingExecuteLatest(&exists_plan, values, NULL, 1) == 1;
}

/*
 * Locks resource id for the rest of the transaction and reads it after the
 * lock: at READ COMMITTED its latest version, under a snapshot isolation
 * level the version the snapshot sees (a newer one is a serialization
 * failure).  "Not found" is decided on the latest committed state, never on
 * an older snapshot: a resource created after the caller's statement (or
 * transaction) began is waited for at READ COMMITTED, and answers "retry" at
 * REPEATABLE READ, where the snapshot cannot see it.
 */
BookingLockOutcome
BookingLockResource(int64 id, int timeout_ms, BookingResource *res)
{
	LockArgs	la = {id, NULL, false, res};
	ItemPointerData tid;

	if (IsolationUsesXactSnapshot())
	{
		/* errors go to the call frame's guard */
		la.plan = timeout_ms <= 0 ? &nowait_lock_plan : &wait_lock_plan;
		BookingStatsWaitBegin();
		RunLockStatement(&la);
		BookingStatsWaitEnd();
		if (la.found)
			return BOOKING_LOCKED;
		return ResourceExists(id) ? BOOKING_LOCK_RETRY : BOOKING_LOCK_NOT_FOUND;
	}

	if (!BookingRowPeekResource(id, BookingHome(id), res, &tid, true))
		return BOOKING_LOCK_NOT_FOUND;
	return BookingLockPeeked(res, &tid, timeout_ms);
}

typedef struct WaitArgs
{
	BookingResource *res;
	ItemPointerData tid;
	TimestampTz deadline;
	BookingRowOutcome outcome;
} WaitArgs;

static void
RunWaitResource(void *arg)
{
	WaitArgs   *wa = (WaitArgs *) arg;

	wa->outcome = BookingRowWaitResource(wa->res->id, wa->res->home, &wa->tid,
										 wa->deadline, wa->res);
}

/*
 * READ COMMITTED: locks resource res->id at version tid, which the caller
 * has just read with BookingRowPeekResource into res (rowlock.c), or waits
 * for it in the queue of its buyers; res is then its latest version.
 */
BookingLockOutcome
BookingLockPeeked(BookingResource *res, ItemPointer tid, int timeout_ms)
{
	WaitArgs	wa;
	BookingLockOutcome outcome;

	switch (BookingRowTryLock(BOOKING_TABLE_RESOURCES, res->home, tid))
	{
		case BOOKING_ROW_LOCKED:
			return BOOKING_LOCKED;
		case BOOKING_ROW_MISSING:
			return BOOKING_LOCK_NOT_FOUND;
		case BOOKING_ROW_HELD:
			break;
	}
	if (timeout_ms <= 0)
		return BOOKING_LOCK_BUSY;
	wa.res = res;
	wa.tid = *tid;
	wa.deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	wa.outcome = BOOKING_ROW_MISSING;
	outcome = BookingWaitGuarded(RunWaitResource, &wa, timeout_ms);
	if (outcome == BOOKING_LOCKED && wa.outcome != BOOKING_ROW_LOCKED)
		return BOOKING_LOCK_NOT_FOUND;
	return outcome;
}

/*
 * Locks resource id through statements, which a Citus coordinator routes to
 * the worker that holds the row: without waiting first, then waiting up to
 * timeout_ms in a guarded subtransaction.  For calls that run where the
 * rows may not be (forget_guest), at READ COMMITTED.
 */
BookingLockOutcome
BookingLockResourceByStatement(int64 id, int timeout_ms, BookingResource *res)
{
	LockArgs	la = {id, &try_lock_plan, false, res};
	BookingLockOutcome outcome;

	RunLockStatement(&la);
	if (la.found)
		return BOOKING_LOCKED;
	if (!ResourceExists(id))
		return BOOKING_LOCK_NOT_FOUND;
	la.plan = &wait_lock_plan;
	outcome = BookingWaitGuarded(RunLockStatement, &la, timeout_ms);
	if (outcome == BOOKING_LOCKED && !la.found)
		return BOOKING_LOCK_NOT_FOUND;
	return outcome;
}

/*
 * BookingLockResource for a call's body: true when granted; otherwise false
 * with res set to the lock's answer (busy, retry or not_found).
 */
bool
BookingLockResourceFor(int64 id, int timeout_ms, BookingResource *r, BookingResult *res)
{
	BookingLockOutcome outcome = BookingLockResource(id, timeout_ms, r);

	if (outcome == BOOKING_LOCKED)
		return true;
	BookingSetLockOutcome(res, outcome, id, timeout_ms);
	return false;
}

/*
 * The result of a lock that was not granted.  A busy answer names the
 * timeout it waited, so a client can tell "locked" from "locked too long".
 */
void
BookingSetLockOutcome(BookingResult *res, BookingLockOutcome outcome, int64 resource,
					  int timeout_ms)
{
	char		what[64];

	if (resource > 0)
		snprintf(what, sizeof(what), "Resource %lld", (long long) resource);
	else
		snprintf(what, sizeof(what), "The resource");

	switch (outcome)
	{
		case BOOKING_LOCK_BUSY:
			if (timeout_ms > 0)
				BookingSetResult(res, BOOKING_BUSY, -1,
								 "%s is busy: another transaction held it longer than the lock_timeout of %d ms; try again shortly.",
								 what, timeout_ms);
			else
				BookingSetResult(res, BOOKING_BUSY, -1,
								 "%s is busy: another transaction holds it and lock_timeout is 0; try again shortly.",
								 what);
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
