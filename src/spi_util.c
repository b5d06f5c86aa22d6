/*
 * spi_util.c
 *	  SPI plumbing: statements prepared once and kept (re-prepared when
 *	  invalidated, as ri_triggers.c does), typed result getters, the lock
 *	  timeout of a call, and the one internal subtransaction the extension
 *	  uses to turn an expected failure into a result code.  Takes no locks of
 *	  its own.
 */
#include "postgres.h"

#include "access/xact.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/resowner.h"
#include "utils/snapmgr.h"
#include "utils/snapshot.h"

#include "booking.h"

static SPIPlanPtr
PlanFor(BookingPlan *plan)
{
	if (plan->plan == NULL || !SPI_plan_is_valid(plan->plan))
	{
		SPIPlanPtr	fresh;

		if (plan->plan != NULL)
		{
			SPI_freeplan(plan->plan);
			plan->plan = NULL;
		}
		fresh = SPI_prepare(plan->sql, plan->nargs, plan->argtypes);
		if (fresh == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 plan->sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(fresh) != 0)
			elog(ERROR, "SPI_keepplan failed");
		plan->plan = fresh;
	}
	return plan->plan;
}

/* Runs a kept plan; returns the number of rows processed. */
int
BookingExecute(BookingPlan *plan, Datum *values, const char *nulls,
			   bool read_only, long tcount)
{
	int			rc;

	rc = SPI_execute_plan(PlanFor(plan), values, nulls, read_only, tcount);
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan failed for \"%s\": %s",
			 plan->sql, SPI_result_code_string(rc));
	return (int) SPI_processed;
}

/*
 * Runs a read-only plan with the latest snapshot, so that a friendly check
 * at REPEATABLE READ sees what was committed after the transaction's
 * snapshot (a booking, a stored idempotency result), as the RI triggers do.
 */
int
BookingExecuteLatest(BookingPlan *plan, Datum *values, const char *nulls, long tcount)
{
	int			rc;

	rc = SPI_execute_snapshot(PlanFor(plan), values, nulls,
							  GetLatestSnapshot(), InvalidSnapshot,
							  true, false, tcount);
	if (rc < 0)
		elog(ERROR, "SPI_execute_snapshot failed for \"%s\": %s",
			 plan->sql, SPI_result_code_string(rc));
	return (int) SPI_processed;
}

/*
 * Runs a read-only plan on the latest committed rows with SnapshotSelf,
 * which is not an MVCC snapshot and so takes no SSI predicate locks: a read
 * here cannot make a SERIALIZABLE caller fail at commit.  A non-MVCC index
 * scan can miss a row that is being updated, so this is only for hints
 * (the next free slot).
 */
int
BookingExecuteCommitted(BookingPlan *plan, Datum *values, const char *nulls, long tcount)
{
	int			rc;
	int			nestlevel = NewGUCNestLevel();

	/* an index-only scan trusts the visibility map, which needs MVCC */
	(void) set_config_option("enable_indexonlyscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	rc = SPI_execute_snapshot(PlanFor(plan), values, nulls,
							  SnapshotSelf, InvalidSnapshot,
							  true, false, tcount);
	AtEOXact_GUC(true, nestlevel);
	if (rc < 0)
		elog(ERROR, "SPI_execute_snapshot failed for \"%s\": %s",
			 plan->sql, SPI_result_code_string(rc));
	return (int) SPI_processed;
}

Datum
BookingGetDatum(int row, int col, bool *isnull)
{
	return SPI_getbinval(SPI_tuptable->vals[row], SPI_tuptable->tupdesc, col, isnull);
}

int64
BookingGetInt64(int row, int col, bool *isnull)
{
	bool		null;
	Datum		d = BookingGetDatum(row, col, &null);

	if (isnull)
		*isnull = null;
	return null ? 0 : DatumGetInt64(d);
}

int32
BookingGetInt32(int row, int col, bool *isnull)
{
	bool		null;
	Datum		d = BookingGetDatum(row, col, &null);

	if (isnull)
		*isnull = null;
	return null ? 0 : DatumGetInt32(d);
}

bool
BookingGetBool(int row, int col)
{
	bool		null;
	Datum		d = BookingGetDatum(row, col, &null);

	return !null && DatumGetBool(d);
}

/*
 * Sets lock_timeout for the rest of the call.  PostgreSQL's 0 means "wait
 * forever": callers use NOWAIT or SKIP LOCKED for 0, and anything below 1
 * that still arrives here becomes 1 ms, never an unbounded wait.
 */
int
BookingPushLockTimeout(int timeout_ms)
{
	int			nestlevel = NewGUCNestLevel();
	char		buf[32];

	snprintf(buf, sizeof(buf), "%d", Max(timeout_ms, 1));
	(void) set_config_option("lock_timeout", buf, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

void
BookingPopLockTimeout(int nestlevel)
{
	AtEOXact_GUC(true, nestlevel);
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
RunGuarded(BookingTryFn fn, void *arg, bool *kept, bool remote,
		   const int64 *homes, int nhomes)
{
	MemoryContext oldcontext = CurrentMemoryContext;
	ResourceOwner oldowner = CurrentResourceOwner;
	volatile BookingGuardOutcome outcome = BOOKING_GUARD_DONE;
	volatile bool keep = false;
	uint64		generation;

	if (kept == NULL && !remote && try_depth > 0)
	{
		(void) fn(arg);
		return BOOKING_GUARD_DONE;
	}

	generation = remote ? BookingShardMapGeneration() : 0;
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
				 * commit (call.c).  A row changed since the snapshot
				 * (heapam) leaves SSI's bookkeeping intact.
				 */
				if (edata->filename != NULL && strcmp(edata->filename, "predicate.c") == 0)
					BookingNoteSerializableRetry();
				outcome = BOOKING_GUARD_RETRY;
				break;
			case ERRCODE_T_R_DEADLOCK_DETECTED:
				outcome = BOOKING_GUARD_RETRY;
				break;
			case ERRCODE_CONNECTION_EXCEPTION:
			case ERRCODE_CONNECTION_FAILURE:
			case ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION:
				if (!remote)
					ReThrowError(edata);
				outcome = BOOKING_GUARD_UNREACHABLE;
				break;
			case ERRCODE_INTERNAL_ERROR:

				/*
				 * A call that waited out the end of a shard move (Citus
				 * blocks writes while it switches the shard over) finds
				 * the shard gone from the node it was sent to, and Citus
				 * raises XX000.  Only then is it a retry: the next call
				 * goes to the shard's new node.  The worker may see the
				 * move committed before this node does: wait for the move
				 * to end here before looking.
				 */
				if (!remote)
					ReThrowError(edata);
				for (int i = 0; i < nhomes; i++)
					BookingAwaitShardMove(homes[i]);
				if (BookingShardMapGeneration() != generation)
				{
					outcome = BOOKING_GUARD_MOVED;
					break;
				}
				ReThrowError(edata);
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
				ReThrowError(edata);
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
	return RunGuarded(fn, arg, kept, false, NULL, 0);
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

	return RunGuarded(RunKeepAll, &k, NULL, false, NULL, 0);
}

/*
 * BookingRunGuarded for work that crosses to another node of a Citus
 * cluster: a connection failure (a node that is down) comes back as
 * BOOKING_GUARD_UNREACHABLE too, instead of a raw error.
 */
BookingGuardOutcome
BookingRunGuardedRemote(BookingGuardedFn fn, void *arg, const int64 *homes, int nhomes)
{
	KeepAll		k = {fn, arg};

	return RunGuarded(RunKeepAll, &k, NULL, true, homes, nhomes);
}

/* BookingRunGuardedTry for work that crosses to another node */
BookingGuardOutcome
BookingRunGuardedRemoteTry(BookingTryFn fn, void *arg, bool *kept,
						   const int64 *homes, int nhomes)
{
	return RunGuarded(fn, arg, kept, true, homes, nhomes);
}
