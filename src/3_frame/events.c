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
#include "commands/sequence.h"
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
#include "utils/json.h"
#include "utils/jsonb.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/numeric.h"
#include "catalog/namespace.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/compat.h"
#include "1_ground/rowread.h"
#include "1_ground/rowwrite.h"
#include "1_ground/shard.h"
#include "1_ground/shardplan.h"
#include "1_ground/spi.h"
#include "1_ground/tables.h"
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

/*
 * booking.events as a booking's event writes it without a statement
 * (WriteEventDirect): its columns, resolved once per relcache invalidation.
 * direct is false when the table has a column this library does not fill
 * (a later schema, or a user's column): then the statement writes it.
 */
typedef struct EventColumns
{
	bool		known;
	bool		direct;
	Oid			relid;
	Oid			seqid;			/* booking.events_id_seq */
	int			natts;
	AttrNumber	home;
	AttrNumber	id;
	AttrNumber	resource_id;
	AttrNumber	booking_id;
	AttrNumber	guest;
	AttrNumber	kind;
	AttrNumber	payload;
	AttrNumber	seq;
	AttrNumber	created_at;
} EventColumns;

static EventColumns event_columns;

/* the output function of tstzrange, for the payload's during */
static FmgrInfo range_out_fn;
static bool range_out_known = false;

/* 1_ground/tables.c's relcache callback calls this: there are few slots for them */
static void
ForgetEventFacts(Oid relid)
{
	if (relid == InvalidOid || relid == consumers_relid)
		consumers_known = false;
	if (relid == InvalidOid || relid == event_columns.relid)
		event_columns.known = false;
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
	BookingTablesOnForget(ForgetEventFacts);
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

/* Resolves booking.events's columns (relid, opened by the caller). */
static void
LoadEventColumns(Relation rel)
{
	TupleDesc	desc = RelationGetDescr(rel);
	int			known = 0;
	int			live = 0;

	memset(&event_columns, 0, sizeof(event_columns));
	event_columns.relid = RelationGetRelid(rel);
	event_columns.seqid = get_relname_relid("events_id_seq", RelationGetNamespace(rel));
	event_columns.natts = desc->natts;
	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);
		const char *name = NameStr(att->attname);
		AttrNumber *col = NULL;
		Oid			type = InvalidOid;

		if (att->attisdropped)
			continue;
		live++;
#define COLUMN(c, t) \
		if (strcmp(name, #c) == 0) { col = &event_columns.c; type = (t); }
		COLUMN(home, INT8OID)
		else COLUMN(id, INT8OID)
		else COLUMN(resource_id, INT8OID)
		else COLUMN(booking_id, INT8OID)
		else COLUMN(guest, TEXTOID)
		else COLUMN(kind, TEXTOID)
		else COLUMN(payload, JSONBOID)
		else COLUMN(seq, INT8OID)
		else COLUMN(created_at, TIMESTAMPTZOID)
#undef COLUMN
		if (col != NULL && att->atttypid == type && !att->attgenerated)
		{
			*col = att->attnum;
			known++;
		}
	}
	event_columns.direct = known == 9 && live == 9 && OidIsValid(event_columns.seqid);
	event_columns.known = true;
}

static void
PushKey(JsonbParseState **st, const char *key)
{
	JsonbValue	v;

	v.type = jbvString;
	v.val.string.val = (char *) key;
	v.val.string.len = strlen(key);
	(void) pushJsonbValue(st, WJB_KEY, &v);
}

static void
PushString(JsonbParseState **st, const char *key, const char *value)
{
	JsonbValue	v;

	PushKey(st, key);
	v.type = jbvString;
	v.val.string.val = (char *) value;
	v.val.string.len = strlen(value);
	(void) pushJsonbValue(st, WJB_VALUE, &v);
}

static void
PushNumber(JsonbParseState **st, const char *key, int64 value)
{
	JsonbValue	v;

	PushKey(st, key);
	v.type = jbvNumeric;
	v.val.numeric = int64_to_numeric(value);
	(void) pushJsonbValue(st, WJB_VALUE, &v);
}

/* metadata, an object (1_ground/args.c), copied in as it is */
static void
PushObject(JsonbParseState **st, const char *key, Jsonb *value)
{
	JsonbIterator *it = JsonbIteratorInit(&value->root);
	JsonbIteratorToken tok;
	JsonbValue	v;

	PushKey(st, key);
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
		(void) pushJsonbValue(st, tok, (tok == WJB_KEY || tok == WJB_VALUE || tok == WJB_ELEM) ? &v : NULL);
}

/*
 * The payload the statement's jsonb_build_object makes, made in C: the
 * same keys, values and forms (a range as its text, a time as JSON's ISO
 * form in the session's time zone), the NULL ones left out, the metadata
 * as given.  metadata.sql compares the two.
 */
static Jsonb *
EventPayload(const BookingOwnBooking *b, const char *status_before, const char *status_after,
			 const char *code)
{
	JsonbParseState *st = NULL;
	JsonbValue *res;

	(void) pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	PushNumber(&st, "quantity", b->quantity);
	if (!b->during_null)
	{
		if (!range_out_known)
		{
			Oid			out;
			bool		varlena;

			getTypeOutputInfo(TSTZRANGEOID, &out, &varlena);
			fmgr_info_cxt(out, &range_out_fn, TopMemoryContext);
			range_out_known = true;
		}
		PushString(&st, "during", OutputFunctionCall(&range_out_fn, b->during));
	}
	if (!b->expires_null)
		PushString(&st, "expires_at", JsonEncodeDateTime(NULL, b->expires_at, TIMESTAMPTZOID, NULL));
	if (!b->group_null)
		PushNumber(&st, "group_id", DatumGetInt64(b->group_id));
	if (status_before != NULL)
		PushString(&st, "status_before", status_before);
	PushString(&st, "status_after", status_after);
	PushString(&st, "code", code);
	if (!b->metadata_null)
		PushObject(&st, "metadata", DatumGetJsonbP(b->metadata));
	res = pushJsonbValue(&st, WJB_END_OBJECT, NULL);
	return JsonbValueToJsonb(res);
}

/*
 * Writes a booking's event without a statement (1_ground/rowwrite.c): on
 * one server, where a sale's event is a fifth of its cost through a
 * prepared INSERT.  False, writing nothing, when the table is not the one
 * this library knows: then the statement writes it.
 */
static bool
WriteEventDirect(const char *kind, int64 home, int64 booking, const BookingOwnBooking *b,
				 const char *status_before, const char *status_after, const char *code)
{
	Relation	rel;
	Datum	   *values;
	bool	   *nulls;

	if (!event_columns.known)
	{
		Oid			relid = get_relname_relid("events", get_namespace_oid("booking", false));

		if (!OidIsValid(relid))
			return false;
		rel = table_open(relid, RowExclusiveLock);
		LoadEventColumns(rel);
	}
	else
		rel = table_open(event_columns.relid, RowExclusiveLock);
	if (!event_columns.direct || !BookingRowWritable(rel, "events_kind_check") ||
		RelationGetDescr(rel)->natts != event_columns.natts)
	{
		table_close(rel, NoLock);
		return false;
	}
	values = palloc0(sizeof(Datum) * event_columns.natts);
	nulls = palloc(sizeof(bool) * event_columns.natts);
	for (int i = 0; i < event_columns.natts; i++)
		nulls[i] = true;
#define SET_COLUMN(col, value) \
	do { values[event_columns.col - 1] = (value); nulls[event_columns.col - 1] = false; } while (0)
	SET_COLUMN(home, Int64GetDatum(home));
	SET_COLUMN(id, Int64GetDatum(nextval_internal(event_columns.seqid, false)));
	SET_COLUMN(resource_id, Int64GetDatum(b->resource));
	SET_COLUMN(booking_id, Int64GetDatum(booking));
	SET_COLUMN(guest, b->guest);
	SET_COLUMN(kind, CStringGetTextDatum(kind));
	SET_COLUMN(payload, JsonbPGetDatum(EventPayload(b, status_before, status_after, code)));
	SET_COLUMN(created_at, TimestampTzGetDatum(GetCurrentTimestamp()));
#undef SET_COLUMN
	BookingRowInsert(rel, values, nulls);
	table_close(rel, NoLock);
	return true;
}

/* Writes the event of booking (in home) as b is after the change. */
static void
EmitFrom(const char *kind, int64 home, int64 booking, const BookingOwnBooking *b,
		 const char *status_before, const char *status_after, const char *code)
{
	Datum		values[14];
	char		nulls[14];

	/* the xid before the id: numbering.c's low-water mark counts on it */
	(void) GetTopTransactionId();
	if (!BookingDistributed() &&
		WriteEventDirect(kind, home, booking, b, status_before, status_after, code))
	{
		BookingNewsMark();
		return;
	}
	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(home);
	EventId(home, &values[1], &nulls[1]);
	values[2] = Int64GetDatum(b->resource);
	values[3] = Int64GetDatum(booking);
	values[4] = b->guest;
	values[5] = CStringGetTextDatum(kind);
	values[6] = Int32GetDatum(b->quantity);
	values[7] = b->during;
	nulls[7] = b->during_null ? 'n' : ' ';
	values[8] = b->expires_at;
	nulls[8] = b->expires_null ? 'n' : ' ';
	values[9] = b->group_id;
	nulls[9] = b->group_null ? 'n' : ' ';
	if (status_before != NULL)
		values[10] = CStringGetTextDatum(status_before);
	else
		nulls[10] = 'n';
	values[11] = CStringGetTextDatum(status_after);
	values[12] = CStringGetTextDatum(code);
	values[13] = b->metadata;
	nulls[13] = b->metadata_null ? 'n' : ' ';
	(void) BookingExecuteOnShard(&booking_event_plans[BookingDistributed() ? 1 : 0], home,
								 values, nulls, false, 0);
	BookingNewsMark();
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

	if (!BookingEventsWanted())
		return;
	if (!BookingRowReadOwnBooking(home, booking, &b))
		ReadBookingRemote(home, booking, &b);
	EmitFrom(kind, home, booking, &b, status_before,
			 DatumGetCString(DirectFunctionCall1(enum_out, b.status)), code);
}

/*
 * The "reserved" event (code ok) of a booking the call has just inserted,
 * from the values it inserted (during and expires_at NULL: none; pending
 * when held), without reading the row back: on one server while
 * booking.bookings has no trigger that could have changed the row.
 * Otherwise, and on Citus, the row is read back as BookingEmitEvent does.
 */
void
BookingEmitReserved(int64 home, int64 booking, int64 resource, text *guest, int32 quantity,
					const Datum *during, const TimestampTz *expires_at, Jsonb *metadata)
{
	Relation	rel;
	bool		as_given;
	BookingOwnBooking b;

	if (!BookingEventsWanted())
		return;
	if (BookingDistributed())
	{
		BookingEmitEvent("reserved", home, booking, NULL, "ok");
		return;
	}
	rel = table_open(BookingTableOid(BOOKING_TABLE_BOOKINGS), RowExclusiveLock);
	as_given = rel->trigdesc == NULL;
	table_close(rel, NoLock);
	if (!as_given)
	{
		BookingEmitEvent("reserved", home, booking, NULL, "ok");
		return;
	}
	memset(&b, 0, sizeof(b));
	b.resource = resource;
	b.guest = PointerGetDatum(guest);
	b.quantity = quantity;
	b.during = during != NULL ? *during : (Datum) 0;
	b.during_null = during == NULL;
	b.expires_at = expires_at != NULL ? TimestampTzGetDatum(*expires_at) : (Datum) 0;
	b.expires_null = expires_at == NULL;
	b.group_null = true;
	b.metadata = PointerGetDatum(metadata);
	b.metadata_null = metadata == NULL;
	EmitFrom("reserved", home, booking, &b, NULL, expires_at != NULL ? "pending" : "confirmed", "ok");
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
	(void) GetTopTransactionId();	/* before the id: see EmitFrom */
	values[0] = Int64GetDatum(r->home);
	EventId(r->home, &values[1], &nulls[1]);
	values[2] = Int64GetDatum(r->id);
	values[3] = CStringGetTextDatum(kind);
	values[4] = CStringGetTextDatum(payload);
	(void) BookingExecuteOnShard(&resource_event_plans[BookingDistributed() ? 1 : 0], r->home,
								 values, nulls, false, 0);
	BookingNewsMark();
}
