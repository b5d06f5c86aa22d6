/*
 * events.c
 *	  Writing the outbox: one booking.events row per state change, in the
 *	  transaction that makes the change, so a rolled-back call leaves none
 *	  and a replayed key (which changes nothing) writes none; and nothing
 *	  while no consumer is registered (BookingEventsWanted).  The row is
 *	  written unnumbered; it is numbered once it has committed (numbering.c),
 *	  which is what keeps a late commit from being skipped.
 *
 *	  A booking's event copies the booking row as it is after the change,
 *	  read back in C as this transaction wrote it (no SSI predicate lock),
 *	  so callers only say which booking, what kind of change and the status
 *	  it had before.
 *
 *	  Nothing is sent from the caller's transaction: a transaction that has
 *	  run NOTIFY cannot PREPARE (two-phase commit), and transactions that
 *	  notify commit one at a time.  When an expiry worker serves this
 *	  database (booking preloaded), a transaction that wrote events leaves
 *	  news for it (news.c), which numbers the new events in a transaction of
 *	  its own and then sends one NOTIFY booking_events for all of them, at
 *	  most one every BOOKING_NOTIFY_INTERVAL_MS (7_worker/worker.c).
 *	  Otherwise relays poll.
 *
 *	  Whether a consumer exists is read again after a relcache invalidation
 *	  of booking.consumers, and read with a dirty snapshot, so that a
 *	  registration still in progress counts: add_consumer inserts its row,
 *	  invalidates at once (not at its commit), then waits only for the
 *	  booking transactions that were already running (6_calls/consumers.c).
 *
 *	  Layer 3, the call frame.  Takes no locks beyond the row it inserts and
 *	  a share lock on booking.consumers.
 */
#include "postgres.h"

#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "commands/async.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/proc.h"
#include "storage/shmem.h"
#include "storage/sinval.h"
#include "utils/builtins.h"
#include "utils/datum.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "catalog/namespace.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/compat.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/tables.h"
#include "2_locks/rowlock.h"
#include "3_frame/events.h"
#include "3_frame/news.h"

/*
 * The event's id: on Citus always given ($2), since Citus evaluates every
 * nextval() of a statement before it sends it, also one a COALESCE skips.
 */
#define EVENT_ID "COALESCE($2, pg_catalog.nextval('booking.events_id_seq'::pg_catalog.regclass))"

/*
 * The booking's metadata ($14) is added as it is: jsonb_strip_nulls would
 * also strip the nulls inside it.
 */
#define BOOKING_EVENT(id) \
	"INSERT INTO booking.events (home, id, resource_id, booking_id, guest, kind, payload, created_at) " \
	"VALUES ($1, " id ", " \
	"$3, $4, $5, $6, pg_catalog.jsonb_strip_nulls(pg_catalog.jsonb_build_object(" \
	"'quantity', $7, 'during', $8, 'expires_at', $9, 'group_id', $10, 'status_before', $11, " \
	"'status_after', $12, 'code', $13)) OPERATOR(pg_catalog.||) " \
	"CASE WHEN $14 IS NULL THEN '{}'::pg_catalog.jsonb " \
	"ELSE pg_catalog.jsonb_build_object('metadata', $14) END, pg_catalog.clock_timestamp())"
#define BOOKING_EVENT_TYPES \
	INT8OID, INT8OID, INT8OID, INT8OID, TEXTOID, TEXTOID, INT4OID, TSTZRANGEOID, \
	TIMESTAMPTZOID, INT8OID, TEXTOID, TEXTOID, TEXTOID, JSONBOID

/* [on Citus] */
static BookingPlan booking_event_plans[2] = {
	{BOOKING_EVENT(EVENT_ID), 14, {BOOKING_EVENT_TYPES}},
	{BOOKING_EVENT("$2"), 14, {BOOKING_EVENT_TYPES}}
};

/*
 * On a Citus coordinator (hold_expire) the booking's rows are elsewhere:
 * the row is read through a statement, then the event written from it.
 */
static BookingPlan read_booking_plan = {
	"SELECT b.resource_id, b.guest, b.quantity, b.during, b.expires_at, b.group_id, b.status, b.metadata "
	"FROM booking.bookings b WHERE b.home OPERATOR(pg_catalog.=) $1 AND b.id OPERATOR(pg_catalog.=) $2",
	2, {INT8OID, INT8OID}
};

#define RESOURCE_EVENT(id) \
	"INSERT INTO booking.events (home, id, resource_id, kind, payload, created_at) " \
	"VALUES ($1, " id ", $3, $4, CAST($5 AS pg_catalog.jsonb), pg_catalog.clock_timestamp())"

/* [on Citus] */
static BookingPlan resource_event_plans[2] = {
	{RESOURCE_EVENT(EVENT_ID), 5, {INT8OID, INT8OID, INT8OID, TEXTOID, TEXTOID}},
	{RESOURCE_EVENT("$2"), 5, {INT8OID, INT8OID, INT8OID, TEXTOID, TEXTOID}}
};
/*
 * Whether booking.consumers has a row, as this backend last read it; read
 * again after a relcache invalidation of the table, which add_consumer and
 * drop_consumer send (6_calls/consumers.c).
 */
static bool consumers_known = false;
static bool consumers_exist = false;
static Oid	consumers_relid = InvalidOid;

/* 1_ground/tables.c's relcache callback calls this: there are few slots for them */
static void
ForgetConsumers(Oid relid)
{
	if (relid == InvalidOid || relid == consumers_relid)
		consumers_known = false;
}

/*
 * Whether booking.consumers has a row that is committed, or inserted by a
 * transaction still in progress (a dirty snapshot): a registration counts
 * from the moment add_consumer inserted it.  Not an MVCC snapshot, so no
 * SSI predicate lock is taken.
 */
static bool
ConsumersExist(void)
{
	Relation	rel = table_open(consumers_relid, AccessShareLock);
	SnapshotData dirty;
	TableScanDesc scan;
	TupleTableSlot *slot;
	bool		found;

	InitDirtySnapshot(dirty);
	slot = table_slot_create(rel, NULL);
	scan = table_beginscan(rel, &dirty, 0, NULL);
	found = table_scan_getnextslot(scan, ForwardScanDirection, slot);
	table_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, AccessShareLock);
	return found;
}

/*
 * Whether events are written: while a consumer is registered, or being
 * registered.  Nobody else could ever get them, and so a sale pays nothing
 * for the outbox until it is used.  A call reads this after its table locks
 * (which take in the invalidation add_consumer sends before it waits), and
 * add_consumer waits for the booking transactions that took theirs before,
 * so every transaction that commits after add_consumer writes its events.
 * On Citus, always: the nodes do not share the invalidation.
 */
bool
BookingEventsWanted(void)
{
	if (BookingDistributed())
		return true;
	if (!consumers_known)
	{
		consumers_relid = get_relname_relid("consumers", get_namespace_oid("booking", false));
		if (!OidIsValid(consumers_relid))
			elog(ERROR, "relation \"booking.consumers\" does not exist");
		consumers_exist = ConsumersExist();
		consumers_known = true;
	}
	return consumers_exist;
}

/*
 * Makes every backend of this database read booking.consumers again at its
 * next lock (the call's table locks), now: not at commit, as a catalog
 * change's invalidation would be.
 */
void
BookingEventsInvalidateNow(void)
{
	SharedInvalidationMessage msg;
	Oid			relid = get_relname_relid("consumers", get_namespace_oid("booking", false));

	msg.rc.id = SHAREDINVALRELCACHE_ID;
	msg.rc.dbId = MyDatabaseId;
	msg.rc.relId = relid;
	SendSharedInvalidMessages(&msg, 1);
}

void
BookingEventsInit(void)
{
	BookingTablesOnForget(ForgetConsumers);
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
	b->metadata = BookingGetDatum(0, 8, &b->metadata_null);
	if (!b->metadata_null)
		b->metadata = datumCopy(b->metadata, false, -1);
}

/*
 * The event of a change to booking (in home), written after the change:
 * kind, the status the booking had before (NULL: it is new) and the code of
 * the call that changed it.  The booking is read back as this transaction
 * wrote it (2_locks/rowlock.c), without an SSI predicate lock.
 */
void
BookingEmitEvent(const char *kind, int64 home, int64 booking, const char *status_before,
				 const char *code)
{
	BookingOwnBooking b;
	Datum		values[14];
	char		nulls[14];

	memset(nulls, ' ', sizeof(nulls));
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
	values[13] = b.metadata;
	nulls[13] = b.metadata_null ? 'n' : ' ';
	(void) BookingExecute(&booking_event_plans[BookingDistributed() ? 1 : 0], values, nulls, false, 0);
	BookingNewsMark();
}

/* The event of a change to the resource itself; payload is a JSON object. */
void
BookingEmitResourceEvent(const char *kind, const BookingResource *r, const char *payload)
{
	Datum		values[5];
	char		nulls[5];

	memset(nulls, ' ', sizeof(nulls));
	if (!BookingEventsWanted())
		return;
	values[0] = Int64GetDatum(r->home);
	EventId(r->home, &values[1], &nulls[1]);
	values[2] = Int64GetDatum(r->id);
	values[3] = CStringGetTextDatum(kind);
	values[4] = CStringGetTextDatum(payload);
	(void) BookingExecute(&resource_event_plans[BookingDistributed() ? 1 : 0], values, nulls, false, 0);
	BookingNewsMark();
}
