/*
 * news.c
 *	  The news the expiry worker passes on: a commit that wrote events wakes
 *	  the worker of its database (7_worker), which numbers them in a
 *	  transaction of its own and sends one NOTIFY booking_events for all the
 *	  commits since its last (events.c says why no caller notifies).
 *
 *	  One slot in shared memory per database a worker serves (with booking
 *	  preloaded): the worker's PGPROC number, whether a commit wrote events
 *	  since it last looked, and whether its last pass numbered (then claims
 *	  inside larger transactions leave the numbering to it).  A worker claims
 *	  its database's slot when it starts, so one database has one worker at
 *	  a time; the slot is freed when the worker exits.  A backend finds its
 *	  database's slot by a scan it remembers, checked at each use.  With
 *	  booking.database = '*', a commit that makes a database or installs
 *	  booking wakes the launcher, so that it need not wait for its next scan.
 *
 *	  Layer 3, the call frame.  Locks: the slots' spinlock, only to claim a
 *	  slot; everything else is atomic reads and writes.
 */
#include "postgres.h"

#include "access/xact.h"
#include "commands/async.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/spin.h"
#include "utils/guc.h"

#include "booking.h"
#include "1_ground/compat.h"
#include "1_ground/shard.h"
#include "3_frame/news.h"

#define NOTIFY_CHANNEL "booking_events"

bool		booking_notify = true;

typedef struct NewsSlot
{
	pg_atomic_uint32 pgprocno;	/* the worker's, +1; 0: the slot is free */
	Oid			database;		/* the database it serves, set before pgprocno */
	int			pid;			/* its process id */
	pg_atomic_uint32 pending;	/* a commit wrote events since it last looked */
	pg_atomic_uint32 numbers;	/* its last pass ran: it numbers events */
} NewsSlot;

typedef struct NewsShared
{
	slock_t		mutex;			/* held to claim a slot */
	pg_atomic_uint32 launcher_procno;	/* the launcher's PGPROC number, +1; 0: none */
	pg_atomic_uint32 arrivals;	/* commits that made a database or installed booking */
	NewsSlot	slots[BOOKING_NEWS_SLOTS];
} NewsShared;

static NewsShared *news = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* the slot of this backend's database, as last found (-1: none) */
static int	my_slot = -1;

/* the worker: the slot it claimed */
static int	worker_slot = -1;

/* this transaction wrote events that the worker is to number and announce */
static bool news_at_commit = false;

/* this transaction made a database or installed booking: the launcher looks */
static bool arrival_at_commit = false;

static void
NewsShmemRequest(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(NewsShared)));
}

static void
NewsShmemStartup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	news = ShmemInitStruct("booking news", sizeof(NewsShared), &found);
	if (!found)
	{
		SpinLockInit(&news->mutex);
		pg_atomic_init_u32(&news->launcher_procno, 0);
		pg_atomic_init_u32(&news->arrivals, 0);
		for (int i = 0; i < BOOKING_NEWS_SLOTS; i++)
		{
			pg_atomic_init_u32(&news->slots[i].pgprocno, 0);
			news->slots[i].database = InvalidOid;
			news->slots[i].pid = 0;
			pg_atomic_init_u32(&news->slots[i].pending, 0);
			pg_atomic_init_u32(&news->slots[i].numbers, 0);
		}
	}
	LWLockRelease(AddinShmemInitLock);
}

/* The slot that serves database, or -1. */
static int
SlotOf(Oid database)
{
	for (int i = 0; i < BOOKING_NEWS_SLOTS; i++)
	{
		if (pg_atomic_read_u32(&news->slots[i].pgprocno) == 0)
			continue;
		pg_read_barrier();
		if (news->slots[i].database == database)
			return i;
	}
	return -1;
}

/* The slot of this backend's database, or NULL when no worker serves it. */
static NewsSlot *
MySlot(void)
{
	if (news == NULL)
		return NULL;
	if (my_slot >= 0 && pg_atomic_read_u32(&news->slots[my_slot].pgprocno) != 0)
	{
		pg_read_barrier();
		if (news->slots[my_slot].database == MyDatabaseId)
			return &news->slots[my_slot];
	}
	my_slot = SlotOf(MyDatabaseId);
	return my_slot >= 0 ? &news->slots[my_slot] : NULL;
}

/* Wakes the worker of slot for news, unless news woke it already. */
static void
WakeWorker(NewsSlot *slot)
{
	uint32		procno = pg_atomic_read_u32(&slot->pgprocno);

	/* only the first commit since the worker last looked wakes it */
	if (procno > 0 && pg_atomic_exchange_u32(&slot->pending, 1) == 0)
		SetLatch(&GetPGProcByNumber(procno - 1)->procLatch);
}

/* After the commit, the news is visible: tell the worker. */
static void
NewsXactCallback(XactEvent event, void *arg)
{
	NewsSlot   *slot;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_PARALLEL_COMMIT)
	{
		/* a prepared transaction's events are numbered by the worker's next pass */
		if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
			event == XACT_EVENT_PREPARE)
			news_at_commit = arrival_at_commit = false;
		return;
	}
	if (arrival_at_commit)
	{
		uint32		procno;

		arrival_at_commit = false;
		if (news != NULL)
		{
			pg_atomic_fetch_add_u32(&news->arrivals, 1);
			procno = pg_atomic_read_u32(&news->launcher_procno);
			if (procno > 0)
				SetLatch(&GetPGProcByNumber(procno - 1)->procLatch);
		}
	}
	if (!news_at_commit)
		return;
	news_at_commit = false;
	slot = MySlot();
	if (slot != NULL)
		WakeWorker(slot);
}

void
BookingNewsInit(void)
{
	DefineCustomBoolVariable("booking.notify",
							 "Whether the expiry worker sends NOTIFY booking_events after it numbered new events.",
							 "Turn it off when every relay polls. Only superusers can change it.",
							 &booking_notify,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	RegisterXactCallback(NewsXactCallback, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = NewsShmemRequest;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = NewsShmemStartup;
}

/*
 * This transaction wrote events: news for the worker to number and announce
 * once it commits, when a worker serves this database.  Not on Citus, where
 * the coordinator's claims number.
 */
void
BookingNewsMark(void)
{
	if (!BookingDistributed() && MySlot() != NULL)
		news_at_commit = true;
}

/*
 * Whether the expiry worker numbers this database's events: it serves this
 * database, and its last pass found the extension at the library's version.
 */
bool
BookingNewsWorkerNumbers(void)
{
	NewsSlot   *slot = MySlot();

	return slot != NULL && pg_atomic_read_u32(&slot->numbers) != 0;
}

/* A claim that leaves the numbering to the worker found events to number. */
void
BookingNewsWakeWorker(void)
{
	NewsSlot   *slot = MySlot();

	if (slot != NULL)
		WakeWorker(slot);
}

/*
 * The process id of the worker that serves database, or 0: for a command
 * that needs the database to itself (7_worker/launcher.c).
 */
int
BookingNewsWorkerPid(Oid database)
{
	int			i;

	if (news == NULL || (i = SlotOf(database)) < 0)
		return 0;
	return news->slots[i].pid;
}

/*
 * This transaction makes a database or installs booking: once it commits,
 * the launcher looks for databases to serve at once rather than at its
 * next scan (7_worker/launcher.c).
 */
void
BookingNewsArrivalAtCommit(void)
{
	arrival_at_commit = true;
}

static void
LauncherStopped(int code, Datum arg)
{
	if (news != NULL)
		pg_atomic_write_u32(&news->launcher_procno, 0);
}

/* The launcher: commits that make a database or install booking wake it. */
void
BookingNewsLauncherStarted(void)
{
	if (news == NULL)
		return;
	pg_atomic_write_u32(&news->launcher_procno, (uint32) GetNumberFromPGProc(MyProc) + 1);
	on_shmem_exit(LauncherStopped, (Datum) 0);
}

/* The launcher: how many such commits there were; a change means look again. */
uint32
BookingNewsArrivals(void)
{
	return news == NULL ? 0 : pg_atomic_read_u32(&news->arrivals);
}

/*
 * The worker: it serves the events of its database from now on.  False
 * when another worker serves the database already (one at a time), or all
 * BOOKING_NEWS_SLOTS slots are taken.
 */
bool
BookingNewsWorkerStarted(void)
{
	int			free_slot = -1;

	if (news == NULL)
		return true;
	SpinLockAcquire(&news->mutex);
	for (int i = 0; i < BOOKING_NEWS_SLOTS; i++)
	{
		if (pg_atomic_read_u32(&news->slots[i].pgprocno) == 0)
		{
			if (free_slot < 0)
				free_slot = i;
		}
		else if (news->slots[i].database == MyDatabaseId)
		{
			SpinLockRelease(&news->mutex);
			return false;
		}
	}
	if (free_slot >= 0)
	{
		NewsSlot   *slot = &news->slots[free_slot];

		slot->database = MyDatabaseId;
		slot->pid = MyProcPid;
		pg_atomic_write_u32(&slot->pending, 0);
		pg_atomic_write_u32(&slot->numbers, 0);
		pg_write_barrier();
		pg_atomic_write_u32(&slot->pgprocno, (uint32) GetNumberFromPGProc(MyProc) + 1);
	}
	SpinLockRelease(&news->mutex);
	if (free_slot < 0)
		return false;
	worker_slot = free_slot;
	on_shmem_exit(BookingNewsWorkerStopped, (Datum) 0);
	return true;
}

void
BookingNewsWorkerStopped(int code, Datum arg)
{
	if (news != NULL && worker_slot >= 0)
	{
		pg_atomic_write_u32(&news->slots[worker_slot].numbers, 0);
		pg_atomic_write_u32(&news->slots[worker_slot].pgprocno, 0);
		worker_slot = -1;
	}
}

/* The worker: whether its passes run (it numbers), after each pass. */
void
BookingNewsWorkerNumbering(bool numbering)
{
	if (news != NULL && worker_slot >= 0)
		pg_atomic_write_u32(&news->slots[worker_slot].numbers, numbering ? 1 : 0);
}

/*
 * The worker: whether a commit wrote events since it last looked; clears
 * the flag, so that a commit after this raises it again.
 */
bool
BookingNewsTake(void)
{
	return news != NULL && worker_slot >= 0 &&
		pg_atomic_exchange_u32(&news->slots[worker_slot].pending, 0) != 0;
}

/* The worker: whether a commit wrote events since it last looked. */
bool
BookingNewsPending(void)
{
	return news != NULL && worker_slot >= 0 &&
		pg_atomic_read_u32(&news->slots[worker_slot].pending) != 0;
}

/* The worker: NOTIFY booking_events, in its own transaction. */
void
BookingNewsAnnounce(void)
{
	if (booking_notify)
		Async_Notify(NOTIFY_CHANNEL, "");
}
