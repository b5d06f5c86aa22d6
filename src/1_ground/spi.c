/*
 * spi.c
 *	  SPI plumbing: statements prepared once and kept (re-prepared when
 *	  invalidated, as ri_triggers.c does), run with the caller's snapshot,
 *	  the latest one, or the latest committed rows, and typed getters of the
 *	  result.
 *
 *	  Layer 1, the ground.  Takes no locks of its own.
 */
#include "postgres.h"

#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/snapshot.h"

#include "booking.h"
#include "1_ground/spi.h"

/*
 * On Citus, every statement is planned for its parameters at each run.  A
 * kept generic plan of a statement on a shard of this node makes Citus
 * (13.2) plan the shard's query again at each run and add that plan to the
 * kept one, in the kept plan's memory: a backend that serves calls grew by
 * about 60 kB per call, without end.  A plan made for one run is freed
 * after it.  Statements prepared before the shard map was read keep theirs.
 */
static bool custom_plans = false;

void
BookingSpiCustomPlans(bool on)
{
	custom_plans = on;
}

static SPIPlanPtr
PlanFor(BookingPlan *plan)
{
	if (plan->plan == NULL || !SPI_plan_is_valid(plan->plan))
	{
		SPIPlanPtr	fresh;
		int			options = plan->cursor_options;

		if (plan->plan != NULL)
		{
			SPI_freeplan(plan->plan);
			plan->plan = NULL;
		}
		if (custom_plans)
			options = (options & ~CURSOR_OPT_GENERIC_PLAN) | CURSOR_OPT_CUSTOM_PLAN;
		fresh = SPI_prepare_cursor(plan->sql, plan->nargs, plan->argtypes, options);
		if (fresh == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 plan->sql, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(fresh) != 0)
			elog(ERROR, "SPI_keepplan failed");
		plan->plan = fresh;
	}
	return plan->plan;
}

/*
 * A plan marked by_index is made, and run, with sequential and bitmap scans
 * off: the outbox's tables can be empty, or analyzed while empty, when a
 * backend first runs a statement on them, and hold a backlog of hundreds
 * of thousands of rows a minute later.  A kept plan is made again only when
 * its table is analyzed, and the plan of an empty table reads every row
 * and sorts them: each claim of a relay that had started on an empty
 * outbox read the whole backlog.  Each such statement reads key ranges of
 * an index, whatever the statistics say.  (Joins stay free: with hash
 * joins off, the numbering's batch was joined to the unnumbered rows in a
 * nested loop the wrong way round.)  The plan cache may make the plan again
 * at any run, so the settings hold for the run.  Returns the GUC nest level
 * to end, or -1.
 */
static int
ByIndexBegin(BookingPlan *plan)
{
	int			nestlevel;

	if (!plan->by_index)
		return -1;
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("enable_seqscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	(void) set_config_option("enable_bitmapscan", "off", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

static void
ByIndexEnd(int nestlevel)
{
	if (nestlevel >= 0)
		AtEOXact_GUC(true, nestlevel);
}

/* Runs a kept plan; returns the number of rows processed. */
int
BookingExecute(BookingPlan *plan, Datum *values, const char *nulls,
			   bool read_only, long tcount)
{
	int			rc;
	int			nestlevel = ByIndexBegin(plan);

	rc = SPI_execute_plan(PlanFor(plan), values, nulls, read_only, tcount);
	ByIndexEnd(nestlevel);
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
	int			nestlevel = ByIndexBegin(plan);

	rc = SPI_execute_snapshot(PlanFor(plan), values, nulls,
							  GetLatestSnapshot(), InvalidSnapshot,
							  true, false, tcount);
	ByIndexEnd(nestlevel);
	if (rc < 0)
		elog(ERROR, "SPI_execute_snapshot failed for \"%s\": %s",
			 plan->sql, SPI_result_code_string(rc));
	return (int) SPI_processed;
}

/*
 * Runs a plan with the snapshot given, so that two statements read the same
 * state of the tables (numbering.c's low-water mark).
 */
int
BookingExecuteWith(BookingPlan *plan, Datum *values, const char *nulls,
				   Snapshot snapshot, long tcount)
{
	int			rc;
	int			nestlevel = ByIndexBegin(plan);

	rc = SPI_execute_snapshot(PlanFor(plan), values, nulls,
							  snapshot, InvalidSnapshot,
							  false, false, tcount);
	ByIndexEnd(nestlevel);
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

	(void) ByIndexBegin(plan);	/* ended with the level below */
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

