/*
 * worker.c
 *	  The expiry worker: when booking is in shared_preload_libraries, one
 *	  background worker connects to booking.database and runs
 *	  booking.hold_expire(booking.expire_batch) every booking.expire_interval,
 *	  one transaction and one snapshot per pass, at READ COMMITTED whatever
 *	  the defaults say, in the manner of worker_spi and pg_cron's launcher.
 *	  A pass that uses up its batch (holds expired, keys or events purged)
 *	  is followed by the next at once.
 *	  Between passes it numbers the outbox's new events when a commit that
 *	  wrote some wakes it (at most every BOOKING_NOTIFY_INTERVAL_MS, in a
 *	  transaction of its own, 3_frame/numbering.c) and sends NOTIFY
 *	  booking_events.
 *
 *	  How it behaves when something goes wrong:
 *	  - SIGTERM is die(), as in core: a pass blocked on a lock ends at once
 *	    (the lock wait checks for interrupts), the process exits with code 1,
 *	    and the postmaster (with booking.database = '*', the launcher) starts
 *	    it again after BOOKING_WORKER_RESTART_S seconds (pg_terminate_backend),
 *	    or not at all (server shutdown).
 *	  - An ERROR in a pass is caught: the transaction is aborted, the failure
 *	    is logged once per streak (again only if its message changes), and
 *	    the next pass waits twice as long each time, up to 5 minutes; a
 *	    successful pass or a reload ends the backoff.  The process stays.
 *	  - The extension missing from the database, or installed at another
 *	    version than this library's (a new build before ALTER EXTENSION
 *	    UPDATE): logged once, and the pass is skipped; every interval the
 *	    worker looks again.
 *	  - booking.database does not exist: the connection fails (FATAL) and the
 *	    postmaster tries again every BOOKING_WORKER_RESTART_S seconds.
 *	  - A reload (SIGHUP) rereads the settings and runs a pass at once.
 *
 *	  Layer 7, the worker: it runs hold_expire through SQL and calls only
 *	  lower layers (3_frame's numbering and news).
 *
 *	  Locks: a pass reads pg_extension, then takes the locks of hold_expire
 *	  (resource rows and stripes with SKIP LOCKED only, so it never waits
 *	  behind a sale).  The one thing it can wait for is a relation lock on a
 *	  booking table (DDL, LOCK TABLE, VACUUM FULL); that wait is bounded by
 *	  lock_timeout, set for the pass to booking.lock_timeout (0 counts as
 *	  1 ms, since lock_timeout 0 would mean no limit), so a pass cannot hang
 *	  forever, and by SIGTERM.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/dbcommands.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/tcopprot.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/timeout.h"
#include "3_frame/news.h"
#include "3_frame/numbering.h"
#include "6_calls/expire.h"
#include "7_worker/launcher.h"
#include "7_worker/worker.h"

#ifndef BOOKING_EXTVERSION
#error "BOOKING_EXTVERSION must be defined (the Makefile passes the control file's default_version)"
#endif

/* the longest a failed pass postpones the next one */
#define BOOKING_WORKER_MAX_BACKOFF_MS ((int64) 300 * 1000)

PGDLLEXPORT void booking_worker_main(Datum main_arg);

static int	booking_expire_interval_s = 10;
static int	booking_expire_batch = 10000;
static char *booking_database = NULL;

/* the database this worker serves, for its messages */
static char *worker_dbname = NULL;

/* started by the launcher (booking.database = '*'): it exits where booking is not installed */
static bool started_by_launcher = false;

/* what the last pass found; a change of it is what gets logged */
typedef enum WorkerState
{
	WORKER_STARTING,
	WORKER_RUNNING,				/* the last pass ran hold_expire */
	WORKER_NOT_INSTALLED,		/* no extension booking in the database */
	WORKER_OTHER_VERSION,		/* installed at another version */
	WORKER_FAILING				/* the last pass raised an error */
} WorkerState;

/*
 * The worker's state lives in statics, not in locals of the loop, so that
 * nothing of it is lost when an error unwinds to the loop's PG_CATCH.
 */
static WorkerState worker_state = WORKER_STARTING;
static char *state_detail = NULL;	/* the version, or the message last logged */
static int	failed_passes = 0;	/* consecutive failed passes */
static int	backoff_steps = 0;	/* failed passes since a success or a reload */
static TimestampTz next_pass = 0;	/* 0: at once */
static TimestampTz next_announce = 0;	/* the earliest the next NOTIFY may go */
static bool in_pass = false;
static MemoryContext worker_cxt = NULL;

void
BookingWorkerInit(void)
{
	BackgroundWorker worker;

	DefineCustomIntVariable("booking.expire_interval",
							"How often the expiry worker runs booking.hold_expire().",
							"0 disables the worker's passes; a pass that uses up its batch is followed by the next at once.",
							&booking_expire_interval_s,
							10, 0, INT_MAX / 1000,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	DefineCustomIntVariable("booking.expire_batch",
							"How many holds, and how many old idempotency keys, one pass of the expiry worker handles at most.",
							"It is the batch argument of the worker's booking.hold_expire() call.",
							&booking_expire_batch,
							10000, 1, INT_MAX,
							PGC_SIGHUP,
							0,
							NULL, NULL, NULL);

	/* a postmaster-level setting can only be defined while preloading */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomStringVariable("booking.database",
							   "The database in which the expiry worker runs; '*': every database that has the extension.",
							   "With '*' a launcher starts one worker per database, and finds new databases without a restart.",
							   &booking_database,
							   "postgres",
							   PGC_POSTMASTER,
							   0,
							   NULL, NULL, NULL);

	/* the commands that need a database to itself stop its worker first */
	BookingLauncherHookUtility();
	if (strcmp(booking_database, "*") == 0)
	{
		BookingLauncherRegister();
		return;
	}

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	/* after pg_terminate_backend, or while the database is missing */
	worker.bgw_restart_time = BOOKING_WORKER_RESTART_S;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "booking");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "booking_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "booking expiry worker");
	snprintf(worker.bgw_type, BGW_MAXLEN, "booking expiry worker");
	RegisterBackgroundWorker(&worker);
}

/*
 * NoteState: logs a change of what the passes find, once; staying in the
 * same state (with the same version) logs nothing, so a misconfiguration
 * costs one line, not one per interval.
 */
static void
NoteState(WorkerState state, const char *detail)
{
	if (detail == NULL)
		detail = "";
	if (state == worker_state && state_detail != NULL && strcmp(detail, state_detail) == 0)
		return;

	switch (state)
	{
		case WORKER_RUNNING:
			if (worker_state == WORKER_FAILING)
				ereport(LOG,
						(errmsg("booking expiry worker: a pass succeeded again in database \"%s\"",
								worker_dbname),
						 errdetail("%d pass(es) in a row had failed before it.", failed_passes)));
			else if (worker_state != WORKER_STARTING)
				ereport(LOG,
						(errmsg("booking expiry worker: passes resume in database \"%s\"",
								worker_dbname)));
			break;
		case WORKER_NOT_INSTALLED:
			ereport(LOG,
					(errmsg("booking expiry worker: extension \"booking\" is not installed in database \"%s\"",
							worker_dbname),
					 errdetail("The worker looks again every booking.expire_interval.")));
			break;
		case WORKER_OTHER_VERSION:
			ereport(WARNING,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("booking expiry worker: extension \"booking\" in database \"%s\" is version %s, but the library is version %s",
							worker_dbname, detail, BOOKING_EXTVERSION),
					 errdetail("Passes are skipped until the versions match; the worker looks again every booking.expire_interval."),
					 errhint("Run ALTER EXTENSION booking UPDATE TO '%s' in that database, or install the library of version %s.",
							 BOOKING_EXTVERSION, detail)));
			break;
		case WORKER_STARTING:
		case WORKER_FAILING:
			break;
	}

	if (state != WORKER_FAILING)
		failed_passes = 0;
	worker_state = state;
	if (state_detail)
		pfree(state_detail);
	state_detail = MemoryContextStrdup(TopMemoryContext, detail);
}

/*
 * PassDelayMs: the wait before the next pass: the interval, doubled for
 * each failed pass since the last success or reload, up to 5 minutes (or
 * the interval, if that is longer).  A failing pass then costs the server
 * little, and a lasting failure is retried for as long as it lasts.
 */
static int64
PassDelayMs(void)
{
	int64		interval = (int64) booking_expire_interval_s * 1000;
	int64		cap = Max(interval, BOOKING_WORKER_MAX_BACKOFF_MS);
	int64		delay = interval;

	for (int i = 0; i < backoff_steps && delay < cap; i++)
		delay *= 2;
	return Min(delay, cap);
}

/*
 * BeginWork: a transaction and a snapshot for a pass or a numbering, at
 * READ COMMITTED whatever the database default, with every lock wait
 * bounded (a relation lock held by DDL, say): lock_timeout is SET LOCAL to
 * booking.lock_timeout, undone at the end of the transaction (0, do not
 * wait, counts as 1 ms, since lock_timeout 0 would mean no limit).
 */
static void
BeginWork(const char *activity)
{
	char		timeout[32];

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	XactIsoLevel = XACT_READ_COMMITTED;
	snprintf(timeout, sizeof(timeout), "%d", Max(booking_lock_timeout_ms, 1));
	(void) set_config_option("lock_timeout", timeout, PGC_SUSET, PGC_S_SESSION,
							 GUC_ACTION_LOCAL, true, 0, false);
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	debug_query_string = activity;
	pgstat_report_activity(STATE_RUNNING, activity);
}

static void
EndWork(void)
{
	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	debug_query_string = NULL;
	pgstat_report_stat(true);
	pgstat_report_activity(STATE_IDLE, NULL);
}

/*
 * InstalledState: whether the extension is installed in the worker's
 * database at the library's version; *version gets the installed version
 * when it differs.  In BeginWork's transaction.
 */
static WorkerState
InstalledState(char *version, size_t version_len)
{
	int			ret;
	char	   *installed;

	ret = SPI_execute("SELECT extversion FROM pg_catalog.pg_extension "
					  "WHERE extname OPERATOR(pg_catalog.=) 'booking'", true, 1);
	if (ret != SPI_OK_SELECT)
		elog(ERROR, "SPI_execute failed reading pg_extension: %s", SPI_result_code_string(ret));
	if (SPI_processed == 0)
		return WORKER_NOT_INSTALLED;
	installed = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (installed == NULL || strcmp(installed, BOOKING_EXTVERSION) != 0)
	{
		strlcpy(version, installed ? installed : "(null)", version_len);
		return WORKER_OTHER_VERSION;
	}
	return WORKER_RUNNING;
}

/*
 * Numbers the events committed since the last time (3_frame/numbering.c),
 * in the current transaction, and sends one NOTIFY booking_events when there was
 * news or anything to number: a relay woken by it finds them delivered.
 * From now on claims made inside larger transactions leave the numbering
 * to this worker.
 */
static void
NumberAndAnnounce(bool news)
{
	int64		numbered = BookingNumberAll(booking_expire_batch);

	if (news || numbered > 0)
		BookingNewsAnnounce();
	BookingNewsWorkerNumbering(true);
}

/*
 * RunPass: one transaction, one snapshot: check the installed version, then
 * call hold_expire and number what is committed (a transaction prepared for
 * two-phase commit sends no news when it commits).  Returns what it found;
 * *version gets the installed version when it differs from the library's;
 * *filled whether hold_expire used up its batch (holds, keys or events).
 */
static WorkerState
RunPass(char *version, size_t version_len, bool *filled)
{
	WorkerState found;
	static char activity[64];	/* debug_query_string points here */

	*filled = false;
	snprintf(activity, sizeof(activity), "SELECT booking.hold_expire(%d)", booking_expire_batch);
	BeginWork(activity);
	found = InstalledState(version, version_len);
	if (found == WORKER_RUNNING)
	{
		Oid			argtypes[1] = {INT4OID};
		Datum		values[1] = {Int32GetDatum(booking_expire_batch)};
		int			ret;

		ret = SPI_execute_with_args("SELECT booking.hold_expire($1)", 1, argtypes, values,
									NULL, false, 1);
		if (ret != SPI_OK_SELECT)
			elog(ERROR, "SPI_execute_with_args failed calling booking.hold_expire: %s",
				 SPI_result_code_string(ret));
		*filled = BookingExpireFilledTake();
		NumberAndAnnounce(false);
	}
	else
		BookingNewsWorkerNumbering(false);
	EndWork();
	return found;
}

/*
 * RunNumbering: a commit wrote events (or a claim found some unnumbered):
 * number them, in a transaction of its own, and announce them.  Runs also
 * while the passes are off (booking.expire_interval 0).
 */
static void
RunNumbering(void)
{
	char		version[NAMEDATALEN];

	BeginWork("booking: numbering events");
	if (InstalledState(version, sizeof(version)) == WORKER_RUNNING)
		NumberAndAnnounce(true);
	else
		BookingNewsWorkerNumbering(false);
	EndWork();
}

/*
 * WorkerStep: one turn of the loop: interrupts, a reload, a pass if one is
 * due, else a sleep until the next is.  Its errors go to the loop's
 * PG_CATCH; die() raises FATAL, which is never caught.
 */
static void
WorkerStep(void)
{
	int			flags = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;
	long		timeout_ms = -1;

	CHECK_FOR_INTERRUPTS();

	/*
	 * Number and announce what the commits since the last time wrote
	 * (3_frame/events.c), at most every BOOKING_NOTIFY_INTERVAL_MS: a busy worker is
	 * a busy core, and one numbering serves many commits.
	 */
	if (GetCurrentTimestamp() >= next_announce && BookingNewsTake())
	{
		in_pass = true;
		RunNumbering();
		in_pass = false;
		next_announce = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), BOOKING_NOTIFY_INTERVAL_MS);
	}

	if (ConfigReloadPending)
	{
		ConfigReloadPending = false;
		ProcessConfigFile(PGC_SIGHUP);
		/* a reload may be what fixed a failing pass: try at once */
		next_pass = 0;
		backoff_steps = 0;
	}

	if (booking_expire_interval_s > 0)
	{
		TimestampTz now = GetCurrentTimestamp();

		if (now >= next_pass)
		{
			char		version[NAMEDATALEN];
			WorkerState found;
			bool		filled;

			in_pass = true;
			found = RunPass(version, sizeof(version), &filled);
			in_pass = false;
			/* the launcher looks again later: no process waits in such a database */
			if (found == WORKER_NOT_INSTALLED && started_by_launcher)
				proc_exit(0);
			if (found == WORKER_RUNNING && worker_state == WORKER_STARTING && started_by_launcher)
				ereport(LOG,
						(errmsg("booking expiry worker started in database \"%s\"", worker_dbname)));
			NoteState(found, found == WORKER_OTHER_VERSION ? version : NULL);
			backoff_steps = 0;

			/*
			 * A batch used up means more may be waiting than a pass takes:
			 * the next pass runs at once, until one takes less, so that holds
			 * lapsing (or keys and events aging) faster than batch per
			 * interval, as in a flash sale, do not pile up.  Each such pass
			 * took a full batch, so this cannot spin on nothing.
			 */
			if (filled)
				next_pass = 0;
			else
				next_pass = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), PassDelayMs());
			return;				/* interrupts and reloads first, then sleep */
		}
		timeout_ms = TimestampDifferenceMilliseconds(now, next_pass);
		flags |= WL_TIMEOUT;
	}

	/* news that came too soon after the last numbering: wake for it in time */
	if (BookingNewsPending())
	{
		long		wait = (long) TimestampDifferenceMilliseconds(GetCurrentTimestamp(), next_announce);

		timeout_ms = timeout_ms < 0 ? wait : Min(timeout_ms, wait);
		flags |= WL_TIMEOUT;
	}
	(void) WaitLatch(MyLatch, flags, timeout_ms, PG_WAIT_EXTENSION);
	ResetLatch(MyLatch);
}

/*
 * HandleError: the loop's PG_CATCH.  Aborts the pass's transaction, logs
 * the first failure of a streak (and any failure whose message differs from
 * the last one logged), and postpones the next pass.  An error outside a
 * pass can only be a query cancel that arrived between passes: there was
 * nothing to cancel, so it is dropped.
 */
static void
HandleError(void)
{
	ErrorData  *edata;
	bool		was_in_pass = in_pass;

	HOLD_INTERRUPTS();
	MemoryContextSwitchTo(worker_cxt);
	edata = CopyErrorData();
	FlushErrorState();
	AbortCurrentTransaction();
	/* until a pass or a numbering succeeds, claims number for themselves */
	BookingNewsWorkerNumbering(false);
	debug_query_string = NULL;
	pgstat_report_activity(STATE_IDLE, NULL);
	in_pass = false;
	RESUME_INTERRUPTS();

	if (was_in_pass)
	{
		int64		delay_ms;

		failed_passes++;
		backoff_steps++;
		delay_ms = PassDelayMs();
		next_pass = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), delay_ms);

		if (worker_state != WORKER_FAILING || state_detail == NULL ||
			strcmp(edata->message ? edata->message : "", state_detail) != 0)
		{
			ereport(WARNING,
					(errcode(edata->sqlerrcode),
					 errmsg("booking expiry worker: a pass failed in database \"%s\": %s",
							worker_dbname, edata->message ? edata->message : "(no message)"),
					 errdetail("The next pass is in %lld s, later ones wait up to twice as long each time "
							   "until one succeeds; further failures with this message are not logged.",
							   (long long) (delay_ms / 1000))));
			worker_state = WORKER_FAILING;
			if (state_detail)
				pfree(state_detail);
			state_detail = MemoryContextStrdup(TopMemoryContext,
											   edata->message ? edata->message : "");
		}
	}
	else
		ereport(DEBUG1,
				(errmsg_internal("booking expiry worker: ignored between passes: %s",
								 edata->message ? edata->message : "(no message)")));

	MemoryContextSwitchTo(TopMemoryContext);
	MemoryContextReset(worker_cxt);
}

/*
 * The worker of one database: booking.database's (main_arg 0), or the one
 * the launcher started it for (main_arg its OID).
 */
void
booking_worker_main(Datum main_arg)
{
	Oid			database = DatumGetObjectId(main_arg);

	/* core's handlers: die() makes a blocked pass end at its next interrupt check */
	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();

	/* FATAL if the database does not exist: the postmaster (or the launcher) tries again later */
	started_by_launcher = OidIsValid(database);
	if (started_by_launcher)
		BackgroundWorkerInitializeConnectionByOid(database, InvalidOid, 0);
	else
		BackgroundWorkerInitializeConnection(booking_database, NULL, 0);
	pgstat_report_appname("booking expiry worker");
	StartTransactionCommand();
	worker_dbname = MemoryContextStrdup(TopMemoryContext, get_database_name(MyDatabaseId));
	CommitTransactionCommand();

	/* one worker a database: another serves it already (or no slot is free) */
	if (!BookingNewsWorkerStarted())
	{
		ereport(LOG,
				(errmsg("booking expiry worker: database \"%s\" is served by another worker, or %d databases are served already",
						worker_dbname, BOOKING_NEWS_SLOTS)));
		proc_exit(0);
	}
	if (!started_by_launcher)
		ereport(LOG,
				(errmsg("booking expiry worker started in database \"%s\"", worker_dbname)));

	/* a database without the extension keeps no worker of the launcher's */
	if (started_by_launcher)
	{
		char		version[NAMEDATALEN];
		WorkerState found;

		BeginWork("booking: looking for the extension");
		found = InstalledState(version, sizeof(version));
		EndWork();
		if (found == WORKER_NOT_INSTALLED)
			proc_exit(0);
	}

	worker_cxt = AllocSetContextCreate(TopMemoryContext, "booking expiry worker",
									   ALLOCSET_DEFAULT_SIZES);
	MemoryContextSwitchTo(TopMemoryContext);

	for (;;)
	{
		PG_TRY();
		{
			WorkerStep();
		}
		PG_CATCH();
		{
			HandleError();
		}
		PG_END_TRY();
	}
}
