/*
 * events.c
 *	  Writing the outbox: one booking.events row per state change, in the
 *	  transaction that makes the change, so a rolled-back call leaves none
 *	  and a replayed key (which changes nothing) writes none; and nothing
 *	  while no consumer is registered (BookingEventsWanted).  The row is
 *	  written unnumbered; claim_events numbers it once it has committed
 *	  (outbox.c), which is what keeps a late commit from being skipped.
 *
 *	  A booking's event copies the booking row as it is after the change,
 *	  read back in C as this transaction wrote it (no SSI predicate lock),
 *	  so callers only say which booking, what kind of change and the status
 *	  it had before.
 *
 *	  While a consumer is registered, relays are woken by NOTIFY
 *	  booking_events.  PostgreSQL serializes the commits of transactions
 *	  that notify (one lock for the whole server, held through the commit),
 *	  which would make every booking that writes an event commit alone.  So
 *	  when the expiry worker serves this database (booking preloaded), a
 *	  transaction that wrote events only marks, once it has committed, that
 *	  there is news, and wakes the worker, which sends one NOTIFY for all
 *	  the commits since its last one, at most one every
 *	  BOOKING_NOTIFY_INTERVAL_MS (worker.c); a relay woken by it finds every
 *	  one of them committed.  Otherwise the transaction notifies
 *	  itself (PostgreSQL folds its identical notifications into one and
 *	  drops those of a rolled-back subtransaction).  Whether a consumer
 *	  exists is read again only after add_consumer or drop_consumer sent a
 *	  relcache invalidation.  Takes no locks beyond the row it inserts.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "access/xact.h"
#include "commands/async.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "catalog/namespace.h"
#include "utils/timestamp.h"

#include "booking.h"

#define NOTIFY_CHANNEL "booking_events"

static BookingPlan booking_event_plan = {
	"INSERT INTO booking.events (home, id, resource_id, booking_id, guest, kind, payload, created_at) "
	"VALUES ($1, COALESCE($2, pg_catalog.nextval('booking.events_id_seq'::pg_catalog.regclass)), "
	"$3, $4, $5, $6, pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object("
	"'quantity', $7, 'during', $8, 'expires_at', $9, 'group_id', $10, 'status_before', $11, "
	"'status_after', $12, 'code', $13)), pg_catalog.clock_timestamp())",
	13, {INT8OID, INT8OID, INT8OID, INT8OID, TEXTOID, TEXTOID, INT4OID, TSTZRANGEOID,
	TIMESTAMPTZOID, INT8OID, TEXTOID, TEXTOID, TEXTOID}
};

/*
 * On a Citus coordinator (hold_expire) the booking's rows are elsewhere:
 * the row is read through a statement, then the event written from it.
 */
static BookingPlan read_booking_plan = {
	"SELECT b.resource_id, b.guest, b.quantity, b.during, b.expires_at, b.group_id, b.status "
	"FROM booking.bookings b WHERE b.home OPERATOR(pg_catalog.=) $1 AND b.id OPERATOR(pg_catalog.=) $2",
	2, {INT8OID, INT8OID}
};

static BookingPlan resource_event_plan = {
	"INSERT INTO booking.events (home, id, resource_id, kind, payload, created_at) "
	"VALUES ($1, COALESCE($2, pg_catalog.nextval('booking.events_id_seq'::pg_catalog.regclass)), "
	"$3, $4, CAST($5 AS pg_catalog.jsonb), pg_catalog.clock_timestamp())",
	5, {INT8OID, INT8OID, INT8OID, TEXTOID, TEXTOID}
};
static BookingPlan consumers_plan = {
	"SELECT EXISTS (SELECT 1 FROM booking.consumers)", 0, {0}
};

/*
 * Whether booking.consumers has a row, as this backend last read it; read
 * again after a relcache invalidation of the table, which add_consumer and
 * drop_consumer send (outbox.c).
 */
static bool consumers_known = false;
static bool consumers_exist = false;
static Oid	consumers_relid = InvalidOid;

/* tables.c's relcache callback calls this: there are few slots for them */
void
BookingEventsForget(Oid relid)
{
	if (relid == InvalidOid || relid == consumers_relid)
		consumers_known = false;
}

/*
 * Whether events are written: while a consumer is registered.  Nobody else
 * could ever get them, and so a sale pays nothing for the outbox until it
 * is used.  add_consumer waits for the booking transactions in progress and
 * holds new ones until it commits, and a call reads this after its table
 * locks (which take in the invalidation), so a transaction that commits
 * after add_consumer writes its events.  On Citus, always: the nodes do
 * not share the invalidation.
 */
bool
BookingEventsWanted(void)
{
	if (BookingDistributed())
		return true;
	if (!consumers_known)
	{
		consumers_relid = get_relname_relid("consumers", get_namespace_oid("booking", false));
		/* the latest committed state, whatever the isolation level */
		(void) BookingExecuteLatest(&consumers_plan, NULL, NULL, 1);
		consumers_exist = BookingGetBool(0, 1);
		consumers_known = true;
	}
	return consumers_exist;
}

bool		booking_notify = true;

/* news for the worker to pass on: shared, when booking is preloaded */
typedef struct EventsShared
{
	pg_atomic_uint32 pending;	/* a commit wrote events since the last NOTIFY */
	pg_atomic_uint32 worker_pgprocno;	/* the worker's, +1; 0: no worker */
	Oid			worker_database;	/* the database it serves */
} EventsShared;

static EventsShared *events_shared = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* this transaction wrote events that the worker is to announce */
static bool news_at_commit = false;

static void
EventsShmemRequest(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(EventsShared)));
}

static void
EventsShmemStartup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	events_shared = ShmemInitStruct("booking events", sizeof(EventsShared), &found);
	if (!found)
	{
		pg_atomic_init_u32(&events_shared->pending, 0);
		pg_atomic_init_u32(&events_shared->worker_pgprocno, 0);
		events_shared->worker_database = InvalidOid;
	}
	LWLockRelease(AddinShmemInitLock);
}

/* After the commit, the news is visible: tell the worker. */
static void
EventsXactCallback(XactEvent event, void *arg)
{
	uint32		procno;

	if (event != XACT_EVENT_COMMIT && event != XACT_EVENT_PARALLEL_COMMIT)
	{
		if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
			event == XACT_EVENT_PREPARE)
			news_at_commit = false;
		return;
	}
	if (!news_at_commit)
		return;
	news_at_commit = false;
	procno = pg_atomic_read_u32(&events_shared->worker_pgprocno);
	/* only the first commit since the worker's last NOTIFY wakes it */
	if (procno > 0 && pg_atomic_exchange_u32(&events_shared->pending, 1) == 0)
		SetLatch(&ProcGlobal->allProcs[procno - 1].procLatch);
}

/* Whether the expiry worker announces this database's events. */
static bool
WorkerAnnounces(void)
{
	return events_shared != NULL && pg_atomic_read_u32(&events_shared->worker_pgprocno) > 0 &&
		events_shared->worker_database == MyDatabaseId;
}

/* The worker: it announces the events of its database from now on. */
void
BookingEventsWorkerStarted(void)
{
	if (events_shared == NULL)
		return;
	events_shared->worker_database = MyDatabaseId;
	pg_write_barrier();
	pg_atomic_write_u32(&events_shared->worker_pgprocno, (uint32) MyProc->pgprocno + 1);
	on_shmem_exit(BookingEventsWorkerStopped, (Datum) 0);
}

void
BookingEventsWorkerStopped(int code, Datum arg)
{
	if (events_shared != NULL)
		pg_atomic_write_u32(&events_shared->worker_pgprocno, 0);
}

/*
 * The worker's turn: if a commit wrote events since the last call, one
 * NOTIFY in a transaction of its own.  The flag is cleared first, so a
 * commit after that raises it again and gets a NOTIFY of its own.
 */
bool
BookingEventsAnnounce(void)
{
	if (events_shared == NULL || pg_atomic_exchange_u32(&events_shared->pending, 0) == 0)
		return false;
	StartTransactionCommand();
	Async_Notify(NOTIFY_CHANNEL, "");
	CommitTransactionCommand();
	return true;
}

/* Whether a commit wrote events since the worker's last NOTIFY. */
bool
BookingEventsPending(void)
{
	return events_shared != NULL && pg_atomic_read_u32(&events_shared->pending) != 0;
}

void
BookingEventsInit(void)
{
	DefineCustomBoolVariable("booking.notify",
							 "Whether a transaction that wrote events sends NOTIFY booking_events while a consumer is registered.",
							 "Notifying transactions commit one at a time; turn it off when every relay polls. "
							 "Only superusers can change it.",
							 &booking_notify,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	RegisterXactCallback(EventsXactCallback, NULL);
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = EventsShmemRequest;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = EventsShmemStartup;
}

const char *
BookingStatusName(BookingStatus status)
{
	switch (status)
	{
		case BOOKING_STATUS_PENDING:
			return "pending";
		case BOOKING_STATUS_CONFIRMED:
			return "confirmed";
		case BOOKING_STATUS_CANCELLED:
			return "cancelled";
		case BOOKING_STATUS_EXPIRED:
			return "expired";
		case BOOKING_STATUS_WAITING:
			return "waiting";
	}
	return "unknown";
}

/*
 * NOTIFY booking_events (or news for the worker to announce), if a consumer
 * can hear it.  Not on Citus: its
 * nodes commit a transaction that wrote to several of them with PREPARE
 * TRANSACTION, which a transaction that notified cannot do; relays there
 * poll (docs/events.md).
 */
static void
NotifyConsumers(void)
{
	if (!booking_notify || BookingDistributed() || !BookingEventsWanted())
		return;
	if (WorkerAnnounces())
		news_at_commit = true;
	else
		Async_Notify(NOTIFY_CHANNEL, "");
}

static void
EventId(int64 home, Datum *value, char *null)
{
	/* on Citus an event lives in its resource's shard, like its booking */
	if (BookingDistributed())
	{
		*value = Int64GetDatum(BookingNewId("events_id_seq", home));
		*null = ' ';
	}
	else
	{
		*value = (Datum) 0;
		*null = 'n';
	}
}

/* Reads the booking through a statement (its rows are on another node). */
static void
ReadBookingRemote(int64 home, int64 booking, BookingOwnBooking *b)
{
	Datum		values[2] = {Int64GetDatum(home), Int64GetDatum(booking)};
	bool		isnull;

	if (BookingExecute(&read_booking_plan, values, NULL, false, 1) != 1)
		elog(ERROR, "booking %lld is not there to write its event", (long long) booking);
	b->resource = BookingGetInt64(0, 1, NULL);
	b->guest = datumCopy(BookingGetDatum(0, 2, &isnull), false, -1);
	b->quantity = BookingGetInt32(0, 3, NULL);
	b->during = BookingGetDatum(0, 4, &b->during_null);
	if (!b->during_null)
		b->during = datumCopy(b->during, false, -1);
	b->expires_at = BookingGetDatum(0, 5, &b->expires_null);
	b->group_id = BookingGetDatum(0, 6, &b->group_null);
	b->status = BookingGetDatum(0, 7, &isnull);
}

/*
 * The event of a change to booking (in home), written after the change:
 * kind, the status the booking had before (NULL: it is new) and the code of
 * the call that changed it.  The booking is read back as this transaction
 * wrote it (rowlock.c), without an SSI predicate lock.
 */
void
BookingEmitEvent(const char *kind, int64 home, int64 booking, const char *status_before,
				 const char *code)
{
	BookingOwnBooking b;
	Datum		values[13];
	char		nulls[13] = "             ";

	if (!BookingEventsWanted())
		return;
	if (!BookingRowReadOwnBooking(home, booking, &b))
		ReadBookingRemote(home, booking, &b);
	values[0] = Int64GetDatum(home);
	EventId(home, &values[1], &nulls[1]);
	values[2] = Int64GetDatum(b.resource);
	values[3] = Int64GetDatum(booking);
	values[4] = b.guest;
	values[5] = CStringGetTextDatum(kind);
	values[6] = Int32GetDatum(b.quantity);
	values[7] = b.during;
	nulls[7] = b.during_null ? 'n' : ' ';
	values[8] = b.expires_at;
	nulls[8] = b.expires_null ? 'n' : ' ';
	values[9] = b.group_id;
	nulls[9] = b.group_null ? 'n' : ' ';
	if (status_before != NULL)
		values[10] = CStringGetTextDatum(status_before);
	else
		nulls[10] = 'n';
	values[11] = CStringGetTextDatum(DatumGetCString(DirectFunctionCall1(enum_out, b.status)));
	values[12] = CStringGetTextDatum(code);
	(void) BookingExecute(&booking_event_plan, values, nulls, false, 0);
	NotifyConsumers();
}

/* The event of a change to the resource itself; payload is a JSON object. */
void
BookingEmitResourceEvent(const char *kind, const BookingResource *r, const char *payload)
{
	Datum		values[5];
	char		nulls[5] = "     ";

	if (!BookingEventsWanted())
		return;
	values[0] = Int64GetDatum(r->home);
	EventId(r->home, &values[1], &nulls[1]);
	values[2] = Int64GetDatum(r->id);
	values[3] = CStringGetTextDatum(kind);
	values[4] = CStringGetTextDatum(payload);
	(void) BookingExecute(&resource_event_plan, values, nulls, false, 0);
	NotifyConsumers();
}
