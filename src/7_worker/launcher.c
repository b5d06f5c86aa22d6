/*
 * launcher.c
 *	  booking.database = '*': the expiry worker of every database that has
 *	  the extension, in the manner of autovacuum's launcher.  The launcher is
 *	  a background worker connected to no database; every
 *	  BOOKING_LAUNCHER_SCAN_S it lists the databases that take connections
 *	  (pg_database, a shared catalog) and starts a worker (worker.c) in each
 *	  that has none.  A worker stays while its database has the extension,
 *	  and exits where it has not: the launcher looks there again after
 *	  BOOKING_LAUNCHER_REPROBE_S, or at once when a commit made a database
 *	  or installed the extension (the utility hook below marks those), so
 *	  a new database is served within about a second, without a restart.
 *	  A worker that stopped while it served (pg_terminate_backend, an error)
 *	  is started again after BOOKING_WORKER_RESTART_S.  One worker a
 *	  database: a worker claims its database's slot (3_frame/news.c), and a
 *	  launcher that was restarted leaves alone the databases whose slot is
 *	  taken by a worker it did not start.
 *
 *	  A process connected to a database keeps DROP DATABASE, ALTER DATABASE
 *	  ... RENAME or SET TABLESPACE, and CREATE DATABASE ... TEMPLATE of it
 *	  from running (PostgreSQL stops only its own autovacuum workers).  With
 *	  booking preloaded, a ProcessUtility hook in the backend that runs such
 *	  a command first stops the worker of that database, in either mode,
 *	  and waits for it to leave; the command's lock on the database keeps a
 *	  new one out until it is done.
 *
 *	  Layer 7, the worker.  Locks: AccessShareLock on pg_database to list
 *	  it; a command's hook takes none.
 */
#include "postgres.h"

#include <signal.h>

#include "access/heapam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_database.h"
#include "commands/dbcommands.h"
#include "commands/defrem.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "pgstat.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "tcop/utility.h"
#include "utils/memutils.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "3_frame/news.h"
#include "7_worker/launcher.h"

/* how often the launcher lists the databases */
#define BOOKING_LAUNCHER_SCAN_S 10
/* how long a database without the extension goes without a look */
#define BOOKING_LAUNCHER_REPROBE_S 60
/* how long a command waits for the worker of its database to leave */
#define BOOKING_WORKER_LEAVE_MS 10000

PGDLLEXPORT void booking_launcher_main(Datum main_arg);

/* a database the launcher knows */
typedef struct LauncherDb
{
	Oid			oid;
	BackgroundWorkerHandle *handle; /* its worker, while one runs */
	bool		served;			/* that worker claimed the database */
	bool		listed;			/* in the last list of pg_database */
	TimestampTz next_start;		/* no worker before this */
} LauncherDb;

static LauncherDb *dbs = NULL;
static int	ndbs = 0;
static int	maxdbs = 0;
static bool warned_no_slot = false;

static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/* The launcher, registered when booking is preloaded with booking.database = '*'. */
void
BookingLauncherRegister(void)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BOOKING_WORKER_RESTART_S;
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "booking");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "booking_launcher_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "booking launcher");
	snprintf(worker.bgw_type, BGW_MAXLEN, "booking launcher");
	RegisterBackgroundWorker(&worker);
}

static LauncherDb *
FindDb(Oid oid)
{
	for (int i = 0; i < ndbs; i++)
		if (dbs[i].oid == oid)
			return &dbs[i];
	return NULL;
}

/* Lists the databases that take connections, marking each one listed. */
static void
ListDatabases(TimestampTz now)
{
	Relation	rel;
	TableScanDesc scan;
	HeapTuple	tuple;

	for (int i = 0; i < ndbs; i++)
		dbs[i].listed = false;
	StartTransactionCommand();
	(void) GetTransactionSnapshot();
	rel = table_open(DatabaseRelationId, AccessShareLock);
	scan = table_beginscan_catalog(rel, 0, NULL);
	while (HeapTupleIsValid(tuple = heap_getnext(scan, ForwardScanDirection)))
	{
		Form_pg_database d = (Form_pg_database) GETSTRUCT(tuple);
		LauncherDb *db;

		if (!d->datallowconn || d->datistemplate)
			continue;
		db = FindDb(d->oid);
		if (db == NULL)
		{
			if (ndbs == maxdbs)
			{
				maxdbs = Max(16, maxdbs * 2);
				dbs = dbs == NULL ? MemoryContextAlloc(TopMemoryContext, sizeof(LauncherDb) * maxdbs) :
					repalloc(dbs, sizeof(LauncherDb) * maxdbs);
			}
			db = &dbs[ndbs++];
			db->oid = d->oid;
			db->handle = NULL;
			db->served = false;
			db->next_start = now;
		}
		db->listed = true;
	}
	table_endscan(scan);
	table_close(rel, AccessShareLock);
	CommitTransactionCommand();
}

/* Starts the worker of db; false when no background worker slot is free. */
static bool
StartWorker(LauncherDb *db)
{
	BackgroundWorker worker;

	memset(&worker, 0, sizeof(worker));
	worker.bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker.bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker.bgw_restart_time = BGW_NEVER_RESTART;	/* the launcher does */
	snprintf(worker.bgw_library_name, BGW_MAXLEN, "booking");
	snprintf(worker.bgw_function_name, BGW_MAXLEN, "booking_worker_main");
	snprintf(worker.bgw_name, BGW_MAXLEN, "booking expiry worker");
	snprintf(worker.bgw_type, BGW_MAXLEN, "booking expiry worker");
	worker.bgw_main_arg = ObjectIdGetDatum(db->oid);
	worker.bgw_notify_pid = MyProcPid;
	return RegisterDynamicBackgroundWorker(&worker, &db->handle);
}

/*
 * One look at every database: a worker that stopped is forgotten (and
 * started again later), a database without one gets one when its time has
 * come.  Returns the milliseconds until the next start due.
 */
static long
TendDatabases(TimestampTz now)
{
	long		next_ms = BOOKING_LAUNCHER_SCAN_S * 1000L;
	int			kept = 0;

	for (int i = 0; i < ndbs; i++)
	{
		LauncherDb *db = &dbs[i];
		pid_t		pid;

		if (db->handle != NULL)
		{
			switch (GetBackgroundWorkerPid(db->handle, &pid))
			{
				case BGWH_STARTED:
					if (BookingNewsWorkerPid(db->oid) == (int) pid)
						db->served = true;
					break;
				case BGWH_NOT_YET_STARTED:
					break;
				case BGWH_STOPPED:
				case BGWH_POSTMASTER_DIED:
					pfree(db->handle);
					db->handle = NULL;
					db->next_start = TimestampTzPlusMilliseconds(now, (db->served ? BOOKING_WORKER_RESTART_S :
																	   BOOKING_LAUNCHER_REPROBE_S) * 1000L);
					db->served = false;
					break;
			}
		}
		/* a database that is gone is forgotten once its worker is */
		if (!db->listed && db->handle == NULL)
			continue;
		if (db->listed && db->handle == NULL)
		{
			if (now >= db->next_start && BookingNewsWorkerPid(db->oid) != 0)
			{
				/* served by a worker this launcher did not start (it was restarted) */
				db->next_start = TimestampTzPlusMilliseconds(now, BOOKING_LAUNCHER_SCAN_S * 1000L);
				next_ms = Min(next_ms, BOOKING_LAUNCHER_SCAN_S * 1000L);
			}
			else if (now >= db->next_start)
			{
				if (StartWorker(db))
					warned_no_slot = false;
				else
				{
					db->handle = NULL;
					db->next_start = TimestampTzPlusMilliseconds(now, BOOKING_LAUNCHER_REPROBE_S * 1000L);
					if (!warned_no_slot)
						ereport(WARNING,
								(errmsg("booking launcher: no background worker slot is free for the expiry worker of a database"),
								 errhint("Raise max_worker_processes: booking needs one for its launcher and one for each database that has the extension.")));
					warned_no_slot = true;
				}
			}
			else
				next_ms = Min(next_ms, TimestampDifferenceMilliseconds(now, db->next_start));
		}
		dbs[kept++] = *db;
	}
	ndbs = kept;
	return Max(next_ms, 1);
}

void
booking_launcher_main(Datum main_arg)
{
	TimestampTz next_scan = 0;
	uint32		arrivals_seen;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	pqsignal(SIGTERM, die);
	BackgroundWorkerUnblockSignals();
	/* no database: pg_database is a shared catalog */
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);
	pgstat_report_appname("booking launcher");
	ereport(LOG, (errmsg("booking launcher started: an expiry worker for every database that has the extension")));
	BookingNewsLauncherStarted();
	arrivals_seen = BookingNewsArrivals();

	for (;;)
	{
		TimestampTz now;
		long		wait_ms;

		CHECK_FOR_INTERRUPTS();
		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
		}
		now = GetCurrentTimestamp();
		if (BookingNewsArrivals() != arrivals_seen)
		{
			/* a new database, or booking installed: look everywhere not served */
			arrivals_seen = BookingNewsArrivals();
			for (int i = 0; i < ndbs; i++)
				if (dbs[i].handle == NULL)
					dbs[i].next_start = now;
			next_scan = now;
		}
		if (now >= next_scan)
		{
			ListDatabases(now);
			next_scan = TimestampTzPlusMilliseconds(now, BOOKING_LAUNCHER_SCAN_S * 1000L);
		}
		wait_ms = TendDatabases(now);
		wait_ms = Min(wait_ms, TimestampDifferenceMilliseconds(now, next_scan));
		/* a worker that starts or stops sets our latch (bgw_notify_pid) */
		(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
						 Max(wait_ms, 1), PG_WAIT_EXTENSION);
		ResetLatch(MyLatch);
	}
}

/*
 * The database a command needs to itself: DROP DATABASE, CREATE DATABASE
 * ... TEMPLATE, ALTER DATABASE ... RENAME or SET TABLESPACE; NULL for any
 * other command.
 */
static const char *
DatabaseNeeded(Node *parsetree)
{
	ListCell   *lc;

	switch (nodeTag(parsetree))
	{
		case T_DropdbStmt:
			return ((DropdbStmt *) parsetree)->dbname;
		case T_CreatedbStmt:
			foreach(lc, ((CreatedbStmt *) parsetree)->options)
			{
				DefElem    *opt = lfirst_node(DefElem, lc);

				if (strcmp(opt->defname, "template") == 0 && opt->arg != NULL)
					return defGetString(opt);
			}
			return NULL;
		case T_RenameStmt:
			if (((RenameStmt *) parsetree)->renameType == OBJECT_DATABASE)
				return ((RenameStmt *) parsetree)->subname;
			return NULL;
		case T_AlterDatabaseStmt:
			foreach(lc, ((AlterDatabaseStmt *) parsetree)->options)
			{
				if (strcmp(lfirst_node(DefElem, lc)->defname, "tablespace") == 0)
					return ((AlterDatabaseStmt *) parsetree)->dbname;
			}
			return NULL;
		default:
			return NULL;
	}
}

/* Stops the worker of database dbname, if any, and waits for it to leave. */
static void
StopWorkerOf(const char *dbname)
{
	Oid			database = get_database_oid(dbname, true);
	int			pid;

	if (!OidIsValid(database) || database == MyDatabaseId ||
		(pid = BookingNewsWorkerPid(database)) == 0)
		return;
	if (kill(pid, SIGTERM) != 0)
		return;
	for (int waited = 0; waited < BOOKING_WORKER_LEAVE_MS; waited += 10)
	{
		if (BookingNewsWorkerPid(database) != pid)
			return;
		CHECK_FOR_INTERRUPTS();
		pg_usleep(10000L);
	}
}

static void
BookingProcessUtility(PlannedStmt *pstmt, const char *queryString, bool readOnlyTree,
					  ProcessUtilityContext context, ParamListInfo params,
					  QueryEnvironment *queryEnv, DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *parsetree = pstmt->utilityStmt;
	const char *dbname = DatabaseNeeded(parsetree);

	if (dbname != NULL)
		StopWorkerOf(dbname);
	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context, params, queryEnv, dest, qc);
	/*
	 * A database to serve may have arrived, or one whose worker was stopped
	 * above may be served again: the launcher looks once this commits.
	 */
	if (dbname != NULL || IsA(parsetree, CreatedbStmt) ||
		(IsA(parsetree, CreateExtensionStmt) &&
		 strcmp(((CreateExtensionStmt *) parsetree)->extname, "booking") == 0))
		BookingNewsArrivalAtCommit();
}

/* Installs the hook above, in every backend (booking is preloaded). */
void
BookingLauncherHookUtility(void)
{
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = BookingProcessUtility;
}
