/*
 * worker.c
 *	  The expiry worker: when booking is in shared_preload_libraries, a
 *	  background worker runs booking.hold_expire() every
 *	  booking.expire_interval in the database booking.database, one
 *	  transaction per pass, in the manner of pg_cron's launcher.  A database
 *	  without the extension is logged once and looked at again next pass.
 *	  Its locks are those of hold_expire (SKIP LOCKED resource rows).
 */
#include "postgres.h"

#include "access/xact.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/utility.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "booking.h"

PGDLLEXPORT void booking_worker_main(Datum main_arg);

static int	booking_expire_interval_s = 10;
static char *booking_database = NULL;

static volatile sig_atomic_t got_sigterm = false;

void
BookingWorkerInit(void)
{
	BackgroundWorker worker;

	DefineCustomIntVariable("booking.expire_interval",
							"How often the expiry worker runs booking.hold_expire().",
							"0 disables the worker's passes.",
							&booking_expire_interval_s,
							10, 0, INT_MAX / 1000,
							PGC_SIGHUP,
							GUC_UNIT_S,
							NULL, NULL, NULL);

	/* a postmaster-level setting can only be defined while preloading */
	if (!process_shared_preload_libraries_in_progress)
		return;

	DefineCustomStringVariable("booking.database",
							   "The database in which the expiry worker runs.",
							   NULL,
							   &booking_database,
							   "postgres",
							   PGC_POSTMASTER,
							   0,
							   NULL, NULL, NULL);

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	/* a fatal error (the database is missing, say) retries, slowly */
	worker.bgw_restart_time = 10;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "booking");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "booking_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "booking expiry worker");
	snprintf(worker.bgw_type, BGW_MAXLEN, "booking expiry worker");
	RegisterBackgroundWorker(&worker);
}

static void
HandleSigterm(SIGNAL_ARGS)
{
	int			save_errno = errno;

	got_sigterm = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/* One pass: one transaction, one snapshot, one call of hold_expire. */
static void
RunExpiryPass(bool *warned_missing)
{
	bool		installed;

	SetCurrentStatementStartTimestamp();
	StartTransactionCommand();
	/* hold_expire is meant for READ COMMITTED, whatever the database default */
	XactIsoLevel = XACT_READ_COMMITTED;
	SPI_connect();
	PushActiveSnapshot(GetTransactionSnapshot());
	pgstat_report_activity(STATE_RUNNING, "SELECT booking.hold_expire()");

	installed = SPI_execute("SELECT 1 FROM pg_catalog.pg_extension "
							"WHERE extname OPERATOR(pg_catalog.=) 'booking'",
							true, 1) == SPI_OK_SELECT && SPI_processed == 1;
	if (installed)
	{
		if (SPI_execute("SELECT booking.hold_expire()", false, 1) != SPI_OK_SELECT)
			elog(ERROR, "booking.hold_expire() failed");
		*warned_missing = false;
	}
	else if (!*warned_missing)
	{
		ereport(LOG,
				(errmsg("booking expiry worker: extension \"booking\" is not installed in database \"%s\"",
						booking_database),
				 errdetail("The worker looks again every booking.expire_interval.")));
		*warned_missing = true;
	}

	SPI_finish();
	PopActiveSnapshot();
	CommitTransactionCommand();
	pgstat_report_stat(true);
	pgstat_report_activity(STATE_IDLE, NULL);
}

void
booking_worker_main(Datum main_arg)
{
	bool		warned_missing = false;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, HandleSigterm);
	BackgroundWorkerUnblockSignals();

	BackgroundWorkerInitializeConnection(booking_database, NULL, 0);
	pgstat_report_appname("booking expiry worker");
	ereport(LOG,
			(errmsg("booking expiry worker started in database \"%s\"", booking_database)));

	while (!got_sigterm)
	{
		int			flags = WL_LATCH_SET | WL_EXIT_ON_PM_DEATH;
		long		timeout_ms = 0;

		if (booking_expire_interval_s > 0)
		{
			RunExpiryPass(&warned_missing);
			flags |= WL_TIMEOUT;
			timeout_ms = (long) booking_expire_interval_s * 1000L;
		}

		(void) WaitLatch(MyLatch, flags, timeout_ms, PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
		CHECK_FOR_INTERRUPTS();

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
	}

	ereport(LOG, (errmsg("booking expiry worker shutting down")));
	proc_exit(0);
}
