/*
 * guard.c
 *	  The one internal subtransaction the extension uses to turn an expected
 *	  failure into an outcome (PL/Python's plpy_spi.c pattern): a lock
 *	  timeout, a serialization failure, a deadlock and a violation of our own
 *	  exclusion constraint; any other error is re-thrown unchanged, unless
 *	  the caller's classifier expects it (a remote guard, 5_scaleout).
 *
 *	  At SERIALIZABLE a caught serialization failure leaves the transaction
 *	  without its guarantee: PostgreSQL does not always doom a transaction
 *	  whose error was caught in a subtransaction.  So once a guard caught one
 *	  raised by SSI, or a call answered "retry" (3_frame/call.c,
 *	  5_scaleout/route.c), the transaction's COMMIT fails with 40001 (a
 *	  pre-commit callback), and a client that commits anyway cannot lose the
 *	  guarantee silently.
 *
 *	  Layer 1, the ground.  Takes no locks of its own.
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/memutils.h"
#include "utils/resowner.h"

#include "booking.h"
#include "1_ground/guard.h"
#include "1_ground/tables.h"

/* a call in this transaction answered retry at SERIALIZABLE */
static bool serializable_retry = false;

static void
GuardXactCallback(XactEvent event, void *arg)
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
BookingGuardInit(void)
{
	RegisterXactCallback(GuardXactCallback, NULL);
}

/* Remembers, at SERIALIZABLE, that this transaction must not commit. */
void
BookingNoteSerializableRetry(void)
{
	if (IsolationIsSerializable())
		serializable_retry = true;
}

/*
 * Our exclusion constraint, or on a Citus node the same constraint on one
 * of its shards, which Citus names bookings_no_overlap_<shard id>.
 */
static bool
IsOverlapConstraint(const char *name)
{
	size_t		len = strlen(BOOKING_OVERLAP_CONSTRAINT);

	if (name == NULL || strncmp(name, BOOKING_OVERLAP_CONSTRAINT, len) != 0)
		return false;
	if (name[len] == '\0')
		return true;
	if (name[len] != '_' || name[len + 1] == '\0')
		return false;
	for (const char *p = name + len + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

/* try guards (kept != NULL) entered and not yet left */
static int	try_depth = 0;

/*
 * Runs fn in an internal subtransaction (the pattern of PL/Python's
 * plpy_spi.c) and keeps its work only when fn returns true; false rolls the
 * subtransaction back, releasing any row lock fn took on its way.  A lock
 * timeout, a serialization failure, a deadlock and a violation of our own
 * exclusion constraint come back as an outcome; any other error is
 * re-thrown unchanged, because it is a real bug.
 *
 * A guard that always keeps its work (kept == NULL) runs fn inline, without
 * a subtransaction, when it runs inside a try guard, and its errors end the
 * try.  A row lock taken in a subtransaction that commits into the try is
 * held, in PostgreSQL's eyes, by the whole transaction: a transaction that
 * starts waiting for it then goes on waiting for our top-level transaction,
 * even after the try rolled back and the row is free (a refused pool unit
 * kept another caller waiting until our caller's transaction ended).
 */
static BookingGuardOutcome
RunGuarded(BookingTryFn fn, void *arg, bool *kept,
		   BookingGuardClassifyFn classify, void *classify_arg)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	volatile BookingGuardOutcome outcome = BOOKING_GUARD_DONE;
	volatile bool keep = false;

	if (kept == NULL && classify == NULL && try_depth > 0)
	{
		(void) fn(arg);
		return BOOKING_GUARD_DONE;
	}

	BeginInternalSubTransaction(NULL);
	MemoryContextSwitchTo(oldcontext);

	if (kept != NULL)
		try_depth++;
	PG_TRY();
	{
		keep = fn(arg);
		if (kept != NULL)
			try_depth--;
		if (keep)
			ReleaseCurrentSubTransaction();
		else
			RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
	}
	PG_CATCH();
	{
		ErrorData  *edata;

		if (kept != NULL)
			try_depth--;
		MemoryContextSwitchTo(oldcontext);
		edata = CopyErrorData();
		FlushErrorState();
		RollbackAndReleaseCurrentSubTransaction();
		MemoryContextSwitchTo(oldcontext);
		CurrentResourceOwner = oldowner;
		keep = false;

		ereport(DEBUG1,
				(errmsg_internal("booking: caught %s: %s",
								 unpack_sql_state(edata->sqlerrcode), edata->message),
				 edata->detail ? errdetail_internal("%s", edata->detail) : 0));
		switch (edata->sqlerrcode)
		{
			case ERRCODE_LOCK_NOT_AVAILABLE:
				outcome = BOOKING_GUARD_BUSY;
				break;
			case ERRCODE_T_R_SERIALIZATION_FAILURE:

				/*
				 * A failure raised by SSI (predicate.c) is not always
				 * recorded on the transaction: once caught, it must not
				 * commit (the callback above).  A row changed since the snapshot
				 * (heapam) leaves SSI's bookkeeping intact.
				 */
				if (edata->filename != NULL && strcmp(edata->filename, "predicate.c") == 0)
					BookingNoteSerializableRetry();
				outcome = BOOKING_GUARD_RETRY;
				break;
			case ERRCODE_T_R_DEADLOCK_DETECTED:
				outcome = BOOKING_GUARD_RETRY;
				break;
			case ERRCODE_EXCLUSION_VIOLATION:
				if (IsOverlapConstraint(edata->constraint_name) &&
					edata->schema_name != NULL &&
					strcmp(edata->schema_name, "booking") == 0)
				{
					outcome = BOOKING_GUARD_OVERLAP;
					break;
				}
				ReThrowError(edata);
				break;
			default:
				{
					BookingGuardOutcome judged;

					if (classify == NULL || !classify(edata, classify_arg, &judged))
						ReThrowError(edata);
					outcome = judged;
				}
		}
		FreeErrorData(edata);
	}
	PG_END_TRY();

	if (kept)
		*kept = keep;
	return outcome;
}

BookingGuardOutcome
BookingRunGuardedTry(BookingTryFn fn, void *arg, bool *kept)
{
	return RunGuarded(fn, arg, kept, NULL, NULL);
}

/* BookingRunGuardedTry, with a judge of the errors it does not know */
BookingGuardOutcome
BookingRunGuardedTryClassified(BookingTryFn fn, void *arg, bool *kept,
							   BookingGuardClassifyFn classify, void *classify_arg)
{
	return RunGuarded(fn, arg, kept, classify, classify_arg);
}

typedef struct KeepAll
{
	BookingGuardedFn fn;
	void	   *arg;
} KeepAll;

static bool
RunKeepAll(void *arg)
{
	KeepAll    *k = (KeepAll *) arg;

	k->fn(k->arg);
	return true;
}

/* BookingRunGuardedTry for a fn whose work is always kept */
BookingGuardOutcome
BookingRunGuarded(BookingGuardedFn fn, void *arg)
{
	KeepAll		k = {fn, arg};

	return RunGuarded(RunKeepAll, &k, NULL, NULL, NULL);
}

/*
 * BookingRunGuarded with a judge of the errors it does not know; always in
 * a subtransaction of its own, also inside a try guard.
 */
BookingGuardOutcome
BookingRunGuardedClassified(BookingGuardedFn fn, void *arg,
							BookingGuardClassifyFn classify, void *classify_arg)
{
	KeepAll		k = {fn, arg};

	return RunGuarded(RunKeepAll, &k, NULL, classify, classify_arg);
}
