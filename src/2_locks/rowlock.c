/*
 * rowlock.c
 *	  The counter rows of counted inventory (a resource row, a stripe),
 *	  found through their primary key and locked without the executor, and
 *	  the queue in which the buyers of one hot row wait for it.
 *
 *	  A sale that goes through SQL pays for a statement just to learn that
 *	  the row is held (SELECT ... SKIP LOCKED), and another to read what is
 *	  left; here one index probe reads the row's latest committed version
 *	  (the friendly sold-out check) and locks that very version without
 *	  waiting, as the executor's FOR NO KEY UPDATE SKIP LOCKED would.  The
 *	  statement that then takes the seats finds the row locked by us.
 *
 *	  Waiting: PostgreSQL wakes every transaction that waits for the holder
 *	  of a row when it commits, and all but one of them queue again (a
 *	  thundering herd on the lock manager, which is what caps a hot row on
 *	  few cores).  Buyers of one resource therefore queue on a heavyweight
 *	  lock of their own first (an advisory lock of class
 *	  BOOKING_QUEUE_LOCK_SPACE on the resource id), which the lock manager
 *	  grants one at a time in arrival order; only its holder waits for the
 *	  row, and it leaves the queue as soon as the row is its own.  The queue
 *	  lock is never held while waiting for anything but that row, and a
 *	  transaction that already holds the row never queues (its lock attempt
 *	  succeeds at once), so the queue adds no deadlock.
 *
 *	  READ COMMITTED only: under a snapshot isolation level the row must be
 *	  read as the transaction's snapshot sees it, and
 *	  4_inventory/seat_sale.c uses SQL.
 *
 *	  Layer 2, locks.  Locks: one counter row (a resource row or a stripe)
 *	  at a time, each after the queue lock of its buyers when it waits.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "access/xact.h"
#include "executor/tuptable.h"
#include "miscadmin.h"
#include "nodes/lockoptions.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "storage/proc.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/compat.h"
#include "1_ground/rowread.h"
#include "1_ground/citus_local.h"
#include "1_ground/shard.h"
#include "1_ground/timeout.h"
#include "2_locks/rowlock.h"

/*
 * advisory lock class of the waiting queue (pg_locks.objsubid): 16977 for a
 * resource row, 16978 + n for its stripe n (n < 64)
 */
#define BOOKING_QUEUE_LOCK_SPACE 16977

static Relation
OpenTable(BookingTable table, int64 home)
{
	Oid			relid;

	if (BookingDistributed())
	{
		relid = BookingLocalShard(table, home);
		/* locked here, the row would hold up Citus's next statement on that connection */
		if (!OidIsValid(relid) && !BookingCitusLocalAllowed())
			ereport(ERROR,
					(errcode(ERRCODE_FEATURE_NOT_SUPPORTED),
					 errmsg("booking cannot lock a row of this node's shards in a transaction that reached them through a connection"),
					 errhint("Keep citus.enable_local_execution on in a transaction that calls booking on a worker.")));
		if (!OidIsValid(relid))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the rows of home %lld are not on this node", (long long) home),
					 errhint("Make booking calls through the coordinator; it routes each to the node that holds its shard.")));
	}
	else
		relid = BookingTableOid(table);
	/* the call frame holds this lock already (tablelock.c) */
	return table_open(relid, RowExclusiveLock);
}

static int64
GetInt(TupleTableSlot *slot, AttrNumber attnum, bool is64)
{
	bool		isnull;
	Datum		d = slot_getattr(slot, attnum, &isnull);

	if (isnull)
		return 0;
	return is64 ? DatumGetInt64(d) : DatumGetInt32(d);
}

static int64
GetInterval(TupleTableSlot *slot, AttrNumber attnum)
{
	bool		isnull;
	Datum		d = slot_getattr(slot, attnum, &isnull);

	if (isnull)
		return 0;
	return BookingIntervalUsecs(DatumGetIntervalP(d), "buffer");
}

/*
 * A stripe's free seats, or -1 when its resource has a guest limit: such a
 * sale is decided under the resource row (limit.c), never on a stripe alone.
 */
static int32
StripeFree(TupleTableSlot *slot, AttrNumber free_col, AttrNumber limited_col)
{
	bool		isnull;
	Datum		limited = slot_getattr(slot, limited_col, &isnull);

	if (!isnull && DatumGetBool(limited))
		return -1;
	return (int32) GetInt(slot, free_col, false);
}

static void
ReadResource(Relation rel, TupleTableSlot *slot, BookingResource *res)
{
	res->capacity = (int32) GetInt(slot, BookingColumnOf(rel, "capacity"), false);
	res->taken = (int32) GetInt(slot, BookingColumnOf(rel, "taken"), false);
	res->version = GetInt(slot, BookingColumnOf(rel, "version"), true);
	res->stripes = (int32) GetInt(slot, BookingColumnOf(rel, "stripes"), false);
	res->guest_limit = (int32) GetInt(slot, BookingColumnOf(rel, "guest_limit"), false);
	res->buffer_before = GetInterval(slot, BookingColumnOf(rel, "buffer_before"));
	res->buffer_after = GetInterval(slot, BookingColumnOf(rel, "buffer_after"));
	res->waiting = (int32) GetInt(slot, BookingColumnOf(rel, "waiting"), false);
	res->longest_slot = GetInterval(slot, BookingColumnOf(rel, "longest_slot"));
	{
		bool		isnull;

		(void) slot_getattr(slot, BookingColumnOf(rel, "opening_hours"), &isnull);
		res->has_hours = !isnull;
		res->slotted = DatumGetBool(slot_getattr(slot, BookingColumnOf(rel, "slotted"), &isnull)) && !isnull;
	}
}

/*
 * An index scan of a table's primary key on (home, <column> = key), latest
 * committed rows.  The index is opened at the first LatestNext: a look that
 * a row hint answers needs none.
 */
typedef struct LatestScan
{
	Relation	rel;
	Relation	pkey;			/* NULL until LatestNext */
	Snapshot	snapshot;
	IndexScanDesc scan;
	TupleTableSlot *slot;
	int64		home;
	const char *column;
	int64		key;
} LatestScan;

static void
BeginLatestScan(LatestScan *ls, BookingTable table, int64 home, const char *column, int64 key)
{
	/* our own earlier statements count, as they would for the next one */
	CommandCounterIncrement();
	ls->rel = OpenTable(table, home);
	ls->pkey = NULL;
	ls->scan = NULL;
	ls->home = home;
	ls->column = column;
	ls->key = key;
	ls->snapshot = RegisterSnapshot(GetLatestSnapshot());
	ls->slot = table_slot_create(ls->rel, NULL);
}

/* The scan's next row into ls->slot; false when there is none. */
static bool
LatestNext(LatestScan *ls)
{
	if (ls->scan == NULL)
	{
		ScanKeyData skey[2];

		ls->pkey = index_open(RelationGetPrimaryKeyIndex(ls->rel, false), AccessShareLock);
		ScanKeyInit(&skey[0], BookingIndexColumnOf(ls->pkey, BookingColumnOf(ls->rel, "home")),
					BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(ls->home));
		ScanKeyInit(&skey[1], BookingIndexColumnOf(ls->pkey, BookingColumnOf(ls->rel, ls->column)),
					BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(ls->key));
		ls->scan = index_beginscan(ls->rel, ls->pkey, ls->snapshot, NULL, 2, 0);
		index_rescan(ls->scan, skey, 2, NULL, 0);
	}
	return index_getnext_slot(ls->scan, ForwardScanDirection, ls->slot);
}

static void
EndLatestScan(LatestScan *ls)
{
	if (ls->scan != NULL)
	{
		index_endscan(ls->scan);
		index_close(ls->pkey, NoLock);
	}
	ExecDropSingleTupleTableSlot(ls->slot);
	UnregisterSnapshot(ls->snapshot);
	table_close(ls->rel, NoLock);
}

/*
 * The latest version of the row at start visible to the scan's snapshot,
 * following its update chain, into ls->slot; false when the place is gone
 * or no version from it is visible (deleted, or another row's chain).
 */
static bool
FetchLatestFrom(LatestScan *ls, TableScanDesc scan, const ItemPointerData *start)
{
	ItemPointerData tid = *start;

	if (!table_tuple_tid_valid(scan, &tid))
		return false;
	table_tuple_get_latest_tid(scan, &tid);
	return table_tuple_fetch_row_version(ls->rel, &tid, ls->snapshot, ls->slot);
}

/* Whether bigint column attnum of the row in ls->slot is value (not NULL). */
static bool
ColumnIs(LatestScan *ls, AttrNumber attnum, int64 value)
{
	bool		isnull;
	Datum		d = slot_getattr(ls->slot, attnum, &isnull);

	return !isnull && DatumGetInt64(d) == value;
}

/*
 * Where this backend last found the latest version of a resource row, by
 * id (a direct-mapped cache).  While another session holds a snapshot open
 * (a long report, pg_dump), no old version of a hot row can be removed: the
 * primary key's entry leads to the oldest, and a look from there walks every
 * version since (bench/run.sh snapshot: 60% of a seat sale's time after a
 * minute).  From the version last seen, the walk is only the updates since.
 */
#define ROW_HINTS 512

typedef struct RowHint
{
	Oid			relid;
	int64		id;
	int64		home;
	ItemPointerData tid;
} RowHint;

static RowHint row_hints[ROW_HINTS];

/*
 * Finds the latest version of resource id visible to the scan's snapshot by
 * following the update chain from the version last seen; false (the caller
 * uses the index) when there is no hint, or what it points to is gone or is
 * now another row (its line pointer reused after pruning).
 */
static bool
PeekFromHint(LatestScan *ls, int64 id, int64 home)
{
	RowHint    *h = &row_hints[(uint64) id % ROW_HINTS];
	TableScanDesc scan;
	bool		ok;

	if (h->relid != RelationGetRelid(ls->rel) || h->id != id || h->home != home ||
		IsolationUsesXactSnapshot())
		return false;
	scan = table_beginscan_tid(ls->rel, ls->snapshot);
	ok = FetchLatestFrom(ls, scan, &h->tid) &&
		ColumnIs(ls, BookingColumnOf(ls->rel, "id"), id) &&
		ColumnIs(ls, BookingColumnOf(ls->rel, "home"), home);
	table_endscan(scan);
	return ok;
}

static void
RememberHint(Relation rel, int64 id, int64 home, ItemPointer tid)
{
	RowHint    *h = &row_hints[(uint64) id % ROW_HINTS];

	h->relid = RelationGetRelid(rel);
	h->id = id;
	h->home = home;
	h->tid = *tid;
}

/*
 * Reads the latest committed version of resource id (and what this
 * transaction wrote to it), from where it was last seen or through the
 * primary key: false when there is none.  *tid is that version, for
 * BookingRowTryLock and BookingRowWait.  remember: the caller sells from
 * the row's counter, which every sale updates, so its place is kept for
 * the next look; a row that is only locked (a range's, a slot's) gets no
 * new versions, and its place would push a counter's out of the cache
 * (bench/run.sh snapshot: 1,000 rooms beside 100 sessions).
 */
bool
BookingRowPeekResource(int64 id, int64 home, BookingResource *res, ItemPointer tid, bool remember)
{
	LatestScan	ls;
	bool		found;

	BeginLatestScan(&ls, BOOKING_TABLE_RESOURCES, home, "id", id);
	found = PeekFromHint(&ls, id, home) || LatestNext(&ls);
	if (found)
	{
		res->id = id;
		res->home = home;
		ReadResource(ls.rel, ls.slot, res);
		*tid = ls.slot->tts_tid;
		if (remember)
			RememberHint(ls.rel, id, home, tid);
	}
	EndLatestScan(&ls);
	return found;
}

/*
 * Locks version tid of a counter row for the rest of the transaction
 * (FOR NO KEY UPDATE): with LockWaitSkip exactly that version, so what the
 * caller read from it still holds; with LockWaitBlock its latest version,
 * read into res when it is a resource row.
 */
static BookingRowOutcome
LockVersion(BookingTable table, int64 home, ItemPointer tid, LockWaitPolicy wait,
			BookingResource *res, int32 *free)
{
	Relation	rel = OpenTable(table, home);
	TupleTableSlot *slot = table_slot_create(rel, NULL);
	TM_FailureData tmfd;
	TM_Result	result;
	BookingRowOutcome outcome;

	result = table_tuple_lock(rel, tid, InvalidSnapshot, slot,
							  GetCurrentCommandId(true), LockTupleNoKeyExclusive, wait,
							  wait == LockWaitBlock ? TUPLE_LOCK_FLAG_FIND_LAST_VERSION : 0,
							  &tmfd);
	switch (result)
	{
		case TM_Ok:
			outcome = BOOKING_ROW_LOCKED;
			if (res != NULL)
				ReadResource(rel, slot, res);
			if (free != NULL)
				*free = StripeFree(slot, BookingColumnOf(rel, "free"), BookingColumnOf(rel, "limited"));
			*tid = slot->tts_tid;
			break;
		case TM_WouldBlock:
		case TM_Updated:
			/* held, or changed since it was read: only a wait follows it */
			outcome = BOOKING_ROW_HELD;
			break;
		case TM_Deleted:
			outcome = BOOKING_ROW_MISSING;
			break;
		default:
			elog(ERROR, "unexpected result %d locking a row of \"%s\"",
				 (int) result, RelationGetRelationName(rel));
			outcome = BOOKING_ROW_MISSING;	/* keep compiler quiet */
	}
	ExecDropSingleTupleTableSlot(slot);
	table_close(rel, NoLock);
	return outcome;
}

BookingRowOutcome
BookingRowTryLock(BookingTable table, int64 home, ItemPointer tid)
{
	return LockVersion(table, home, tid, LockWaitSkip, NULL, NULL);
}

/*
 * The time in the queue counts: the row's wait gets what is left of it.
 * The caller set lock_timeout for the whole wait; it is set again only when
 * the queue took a part of it.
 */
static void
PushTimeLeft(TimestampTz deadline)
{
	int			left_ms = BookingMillisecondsLeft(deadline);

	if (left_ms <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("canceling statement due to lock timeout")));
	if (left_ms < LockTimeout)
		(void) BookingPushLockTimeout(left_ms);
}

/*
 * Waits for the resource row in the queue of its buyers and locks its
 * latest version, read into res.  The caller runs it in a guarded
 * subtransaction with lock_timeout set to end at deadline, and pops that
 * setting afterwards (the setting made here for the row's wait with it); an
 * error releases the queue with the subtransaction.
 */
BookingRowOutcome
BookingRowWaitResource(int64 id, int64 home, ItemPointer tid, TimestampTz deadline,
					   BookingResource *res)
{
	LOCKTAG		tag;
	BookingRowOutcome outcome;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) ((uint64) id >> 32), (uint32) id,
						 BOOKING_QUEUE_LOCK_SPACE);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
	PushTimeLeft(deadline);
	outcome = LockVersion(BOOKING_TABLE_RESOURCES, home, tid, LockWaitBlock, res, NULL);
	LockRelease(&tag, ExclusiveLock, false);
	if (outcome == BOOKING_ROW_LOCKED)
	{
		res->id = id;
		res->home = home;
	}
	return outcome;
}

/*
 * The same for the stripes of a striped resource, whose versions pile up
 * behind a held snapshot as a resource row's do, one chain per stripe: the
 * places of all of a resource's stripes, in stripe order.  The set is
 * complete while every place leads to a live row of that resource and
 * stripe: set_stripes deletes every stripe and inserts the new ones
 * (4_inventory/stripes.c), so a changed set ends every old chain in a
 * deleted version, and the look goes back to the index.
 */
#define STRIPE_HINTS 32

typedef struct StripeHint
{
	Oid			relid;
	int64		resource;
	int64		home;
	int			n;
	int32		stripe[BOOKING_MAX_STRIPES];
	ItemPointerData tid[BOOKING_MAX_STRIPES];
} StripeHint;

static StripeHint stripe_hints[STRIPE_HINTS];

/* the columns of a stripe row that a look reads, found once per look */
typedef struct StripeColumns
{
	AttrNumber	resource;
	AttrNumber	home;
	AttrNumber	stripe;
	AttrNumber	free;
	AttrNumber	limited;
} StripeColumns;

static void
FindStripeColumns(Relation rel, StripeColumns *cols)
{
	cols->resource = BookingColumnOf(rel, "resource_id");
	cols->home = BookingColumnOf(rel, "home");
	cols->stripe = BookingColumnOf(rel, "stripe");
	cols->free = BookingColumnOf(rel, "free");
	cols->limited = BookingColumnOf(rel, "limited");
}

/* Reads stripe row ls->slot into row. */
static void
ReadStripe(LatestScan *ls, const StripeColumns *cols, BookingStripeRow *row)
{
	row->stripe = (int32) GetInt(ls->slot, cols->stripe, false);
	row->free = StripeFree(ls->slot, cols->free, cols->limited);
	row->tid = ls->slot->tts_tid;
}

/*
 * The stripes of resource from their places last seen into rows; -1 (the
 * caller uses the index) when there is no hint, it has more than max, or
 * one place is gone or now holds another row.
 */
static int
PeekStripesFromHint(LatestScan *ls, const StripeColumns *cols, int64 resource, int64 home,
					BookingStripeRow *rows, int max)
{
	StripeHint *h = &stripe_hints[(uint64) resource % STRIPE_HINTS];
	TableScanDesc scan;
	int			n = 0;

	if (h->relid != RelationGetRelid(ls->rel) || h->resource != resource || h->home != home ||
		h->n == 0 || h->n > max || IsolationUsesXactSnapshot())
		return -1;
	scan = table_beginscan_tid(ls->rel, ls->snapshot);
	for (; n < h->n; n++)
	{
		if (!FetchLatestFrom(ls, scan, &h->tid[n]) ||
			!ColumnIs(ls, cols->resource, resource) || !ColumnIs(ls, cols->home, home))
			break;
		ReadStripe(ls, cols, &rows[n]);
		if (rows[n].stripe != h->stripe[n])
			break;
	}
	table_endscan(scan);
	return n == h->n ? n : -1;
}

static void
RememberStripes(Relation rel, int64 resource, int64 home, const BookingStripeRow *rows, int n)
{
	StripeHint *h = &stripe_hints[(uint64) resource % STRIPE_HINTS];

	h->relid = RelationGetRelid(rel);
	h->resource = resource;
	h->home = home;
	h->n = n;
	for (int i = 0; i < n; i++)
	{
		h->stripe[i] = rows[i].stripe;
		h->tid[i] = rows[i].tid;
	}
}

/*
 * Reads the latest committed version of every stripe of a resource, in
 * stripe order, up to max (at most BOOKING_MAX_STRIPES), from where they
 * were last seen or through the primary key; returns how many there are.
 */
int
BookingRowPeekStripes(int64 resource, int64 home, BookingStripeRow *rows, int max)
{
	LatestScan	ls;
	StripeColumns cols;
	int			n;

	Assert(max <= BOOKING_MAX_STRIPES);
	BeginLatestScan(&ls, BOOKING_TABLE_STRIPES, home, "resource_id", resource);
	FindStripeColumns(ls.rel, &cols);
	n = PeekStripesFromHint(&ls, &cols, resource, home, rows, max);
	if (n < 0)
	{
		n = 0;
		while (n < max && LatestNext(&ls))
			ReadStripe(&ls, &cols, &rows[n++]);
	}
	/* none found is no hint: stripes made later must be looked for */
	RememberStripes(ls.rel, resource, home, rows, n);
	EndLatestScan(&ls);
	return n;
}

/*
 * Waits for a stripe row in the queue of its buyers (as for a resource
 * row, a queue per stripe: at the end of a striped sale every buyer
 * converges on the few stripes left) and locks its latest version; *free
 * is what it has then.  Run as BookingRowWaitResource is.
 */
BookingRowOutcome
BookingRowWaitStripe(int64 resource, int32 stripe, int64 home, ItemPointer tid,
					 TimestampTz deadline, int32 *free)
{
	LOCKTAG		tag;
	BookingRowOutcome outcome;

	if (stripe < 0 || stripe >= BOOKING_MAX_STRIPES)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("resource %lld has a stripe numbered %d", (long long) resource, stripe),
				 errhint("set_stripes numbers stripes from 0 to 63; run it again to rebuild them.")));
	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) ((uint64) resource >> 32), (uint32) resource,
						 BOOKING_QUEUE_LOCK_SPACE + 1 + stripe);
	(void) LockAcquire(&tag, ExclusiveLock, false, false);
	PushTimeLeft(deadline);
	outcome = LockVersion(BOOKING_TABLE_STRIPES, home, tid, LockWaitBlock, NULL, free);
	LockRelease(&tag, ExclusiveLock, false);
	return outcome;
}
