/*
 * idempotency.c
 *	  Idempotency keys: a retried request gets the stored result of the first
 *	  one, with replayed = true, and no work is done twice.
 *
 *	  A keyed call holds an advisory lock on a 64-bit hash of its key while
 *	  it runs, and releases it when it returns, not at commit: by then it has
 *	  inserted its result row in the caller's transaction (or, for busy and
 *	  retry, nothing).  A second request with the same key waits for that
 *	  lock, then looks the key up: a row of a transaction still in progress
 *	  makes it wait for that transaction to end, as a unique index waits for
 *	  a conflicting insert; a committed row is replayed.  Both waits are
 *	  bounded by lock_timeout.  A rollback forgets the key too.  Since no lock
 *	  outlives its call, 100,000 keyed calls in one transaction take no more
 *	  of the shared lock table than one.
 *
 *	  The look-up is a direct probe of the primary key index with a dirty
 *	  snapshot, which sees rows of transactions in progress (and so whom to
 *	  wait for) and takes no SSI predicate lock.  On one server the result
 *	  row is stored without a statement too (1_ground/rowwrite.c), unless a
 *	  trigger, rule, row security or CHECK someone added to the table must
 *	  apply.  Columns are found by name and
 *	  the OIDs cached until a relcache invalidation, so an added column does
 *	  not break it.
 *
 *	  Layer 3, the call frame.  Locks: the key's advisory lock (class
 *	  BOOKING_KEY_LOCK_SPACE), for the call only, after the table locks.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/compat.h"
#include "1_ground/result.h"
#include "1_ground/rowwrite.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/tables.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "3_frame/idempotency.h"

/* the advisory lock space of the key locks (field 4; the SQL functions use 1 and 2) */
#define BOOKING_KEY_LOCK_SPACE 3

/* a claim that keeps finding someone else's row gives up with busy */
#define BOOKING_KEY_MAX_ROUNDS 100

int			booking_idempotency_retention_s = 86400;

static BookingKeyClaim ClaimKeyRemote(BookingKey *key, int timeout_ms, BookingResult *res);

static BookingPlan store_plan = {
	"INSERT INTO booking.idempotency_keys "
	"(home, key, request, ok, code, booking_id, http_status, message, created_at) "
	"VALUES ($9, $1, $2, $3, $4, $5, $6, $7, $8)",
	9, {TEXTOID, TEXTOID, BOOLOID, TEXTOID, INT8OID, INT4OID, TEXTOID, TIMESTAMPTZOID, INT8OID}
};
static BookingPlan purge_plan = {
	"DELETE FROM booking.idempotency_keys WHERE home OPERATOR(pg_catalog.=) $3 "
	"AND key OPERATOR(pg_catalog.=) ANY (ARRAY("
	"SELECT key FROM booking.idempotency_keys "
	"WHERE home OPERATOR(pg_catalog.=) $3 AND created_at OPERATOR(pg_catalog.<) $1 "
	"LIMIT $2 FOR UPDATE SKIP LOCKED))",
	3, {TIMESTAMPTZOID, INT4OID, INT8OID}
};

/* the columns the probe reads, found by name */
typedef struct KeyColumns
{
	bool		valid;
	Oid			relid;
	AttrNumber	home;
	AttrNumber	key;
	AttrNumber	request;
	AttrNumber	code;
	AttrNumber	booking_id;
	AttrNumber	http_status;
	AttrNumber	message;
	AttrNumber	ok;
	AttrNumber	created_at;
} KeyColumns;

static KeyColumns key_columns;

static void
ForgetKeyColumns(Oid relid)
{
	if (!OidIsValid(relid) || relid == key_columns.relid)
		key_columns.valid = false;
}

void
BookingIdempotencyInit(void)
{
	/*
	 * PGC_SUSET: the retention decides what every caller's retry gets, and
	 * hold_expire, which the application role may run, purges with it.
	 */
	DefineCustomIntVariable("booking.idempotency_retention",
							"How long a stored idempotency result is kept before hold_expire purges it.",
							"Only superusers can change it.",
							&booking_idempotency_retention_s,
							86400, 1, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);
	BookingTablesOnForget(ForgetKeyColumns);
}

static AttrNumber
KeyColumn(Oid relid, const char *name, Oid type)
{
	AttrNumber	attnum = get_attnum(relid, name);

	if (attnum == InvalidAttrNumber || get_atttype(relid, attnum) != type)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("booking.idempotency_keys has no column \"%s\" of type %s",
						name, format_type_be(type)),
				 errhint("Reinstall or update the extension (ALTER EXTENSION booking UPDATE).")));
	return attnum;
}

/* Resolves the columns of the locked table relid, unless already done. */
static void
LoadKeyColumns(Oid relid)
{
	if (key_columns.valid && key_columns.relid == relid)
		return;
	key_columns.valid = false;
	key_columns.relid = relid;
	key_columns.home = KeyColumn(relid, "home", INT8OID);
	key_columns.key = KeyColumn(relid, "key", TEXTOID);
	key_columns.request = KeyColumn(relid, "request", TEXTOID);
	key_columns.code = KeyColumn(relid, "code", TEXTOID);
	key_columns.booking_id = KeyColumn(relid, "booking_id", INT8OID);
	key_columns.http_status = KeyColumn(relid, "http_status", INT4OID);
	key_columns.message = KeyColumn(relid, "message", TEXTOID);
	key_columns.ok = KeyColumn(relid, "ok", BOOLOID);
	key_columns.created_at = KeyColumn(relid, "created_at", TIMESTAMPTZOID);
	key_columns.valid = true;
}

typedef enum KeyState
{
	KEY_ABSENT,
	KEY_IN_FLIGHT,				/* a row of a transaction in progress */
	KEY_STORED					/* res filled: a replay or a mismatch */
} KeyState;

/* Turns a stored row into the replayed result (or a mismatch). */
static void
ReplayRow(HeapTuple tuple, TupleDesc desc, const char *request, BookingResult *res)
{
	bool		isnull;
	Datum		d;
	char	   *code_name;
	BookingCode code;
	int32		http_status;
	int64		booking_id = -1;

	d = heap_getattr(tuple, key_columns.request, desc, &isnull);
	if (isnull || strcmp(TextDatumGetCString(d), request) != 0)
	{
		BookingSetResult(res, BOOKING_IDEMPOTENCY_MISMATCH, -1,
						 "This idempotency key was already used for a different request; use a new key for a new request.");
		return;
	}

	d = heap_getattr(tuple, key_columns.code, desc, &isnull);
	if (isnull)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("idempotency key row without a result code")));
	code_name = TextDatumGetCString(d);
	d = heap_getattr(tuple, key_columns.http_status, desc, &isnull);
	http_status = isnull ? 0 : DatumGetInt32(d);
	if (strcmp(code_name, "ok") == 0)
		code = http_status == 201 ? BOOKING_CREATED : BOOKING_DONE;
	else if (!BookingCodeFromName(code_name, &code))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("unknown result code \"%s\" stored for an idempotency key", code_name)));
	d = heap_getattr(tuple, key_columns.booking_id, desc, &isnull);
	if (!isnull)
		booking_id = DatumGetInt64(d);
	d = heap_getattr(tuple, key_columns.message, desc, &isnull);
	BookingSetResult(res, code, booking_id, "%s", isnull ? "" : TextDatumGetCString(d));
	res->replayed = true;
}

/*
 * Looks the key up with a dirty snapshot: committed rows, ours, and rows of
 * transactions in progress (*xwait: whom to wait for).
 */
static KeyState
ProbeKey(BookingKey *key, TransactionId *xwait, BookingResult *res)
{
	Relation	rel;
	Oid			relid;
	Oid			pkey;
	SysScanDesc scan;
	ScanKeyData skey[2];
	SnapshotData dirty;
	HeapTuple	tuple;
	KeyState	state = KEY_ABSENT;

	/*
	 * On Citus the rows are in this node's shard, not in the (empty) table
	 * the coordinator knows: a call that reaches here was routed to the node
	 * that holds its home.
	 */
	if (BookingDistributed())
	{
		relid = BookingLocalShard(BOOKING_TABLE_KEYS, key->home);
		if (!OidIsValid(relid))
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("the idempotency keys of home %lld are not on this node", (long long) key->home),
					 errhint("Make booking calls through the coordinator; it routes each to the node that holds its shard.")));
	}
	else
		relid = BookingTableOid(BOOKING_TABLE_KEYS);

	/* lock first: invalidations that arrive with the lock are seen below */
	rel = table_open(relid, AccessShareLock);
	LoadKeyColumns(RelationGetRelid(rel));
	pkey = RelationGetPrimaryKeyIndex(rel, false);
	if (!OidIsValid(pkey))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("booking.idempotency_keys has no primary key")));
	memset(&dirty, 0, sizeof(dirty));
	InitDirtySnapshot(dirty);
	ScanKeyInit(&skey[0], key_columns.home, BTEqualStrategyNumber, F_INT8EQ,
				Int64GetDatum(key->home));
	ScanKeyInit(&skey[1], key_columns.key, BTEqualStrategyNumber, F_TEXTEQ,
				CStringGetTextDatum(key->key));
	scan = systable_beginscan(rel, pkey, true, &dirty, 2, skey);
	while (HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		if (TransactionIdIsValid(dirty.xmin))
		{
			/* another transaction's row, not yet committed */
			*xwait = dirty.xmin;
			state = KEY_IN_FLIGHT;
			break;
		}
		ReplayRow(tuple, RelationGetDescr(rel), key->request, res);
		state = KEY_STORED;
		break;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return state;
}

static void
KeyLockTag(const char *key, LOCKTAG *tag)
{
	uint64		h = hash_bytes_extended((const unsigned char *) key, (int) strlen(key), 0);

	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) (h >> 32), (uint32) h,
						 BOOKING_KEY_LOCK_SPACE);
}

static void
WaitForKeyLock(void *arg)
{
	(void) LockAcquire((LOCKTAG *) arg, ExclusiveLock, false, false);
}

static void
WaitForXact(void *arg)
{
	XactLockTableWait(*(TransactionId *) arg, NULL, NULL, XLTW_None);
}

/* Waits for what blocks the claim; BOOKING_LOCKED when it may go on. */
static BookingLockOutcome
WaitBounded(BookingGuardedFn fn, void *arg, int timeout_ms, TimestampTz *deadline)
{
	int			left_ms = BookingTimeLeft(timeout_ms, deadline);

	if (left_ms <= 0)
		return BOOKING_LOCK_BUSY;
	return BookingWaitGuarded(fn, arg, left_ms);
}

/*
 * Claims the key for this call: BOOKING_KEY_OWNED with the key's lock held
 * (BookingFinishKey releases it), BOOKING_KEY_REPLAYED with res set, or
 * busy / retry when the wait for the request that holds the key ran out or
 * deadlocked.
 */
BookingKeyClaim
BookingClaimKey(BookingKey *key, int timeout_ms, TimestampTz now, BookingResult *res)
{
	TimestampTz deadline = 0;

	KeyLockTag(key->key, &key->tag);
	key->remote = false;
	if (BookingDistributed() && !OidIsValid(BookingLocalShard(BOOKING_TABLE_KEYS, key->home)))
		return ClaimKeyRemote(key, timeout_ms, res);
	for (int round = 0; round < BOOKING_KEY_MAX_ROUNDS; round++)
	{
		TransactionId xwait = InvalidTransactionId;
		BookingLockOutcome outcome = BOOKING_LOCKED;
		KeyState	state;

		if (LockAcquire(&key->tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
			outcome = WaitBounded(WaitForKeyLock, &key->tag, timeout_ms, &deadline);
		if (outcome != BOOKING_LOCKED)
			return outcome == BOOKING_LOCK_BUSY ? BOOKING_KEY_BUSY : BOOKING_KEY_RETRY;

		state = ProbeKey(key, &xwait, res);
		if (state == KEY_ABSENT)
			return BOOKING_KEY_OWNED;
		LockRelease(&key->tag, ExclusiveLock, false);
		if (state == KEY_STORED)
			return BOOKING_KEY_REPLAYED;

		/*
		 * The first request returned but its transaction is still open: wait
		 * for that transaction, then look again.
		 */
		if (ConditionalXactLockTableWait(xwait, false))
			continue;
		outcome = WaitBounded(WaitForXact, &xwait, timeout_ms, &deadline);
		if (outcome != BOOKING_LOCKED)
			return outcome == BOOKING_LOCK_BUSY ? BOOKING_KEY_BUSY : BOOKING_KEY_RETRY;
	}
	return BOOKING_KEY_BUSY;
}

/*
 * Stores the result row on one server without a statement
 * (1_ground/rowwrite.c): the heap tuple and its index entries as an INSERT
 * makes them.  Its one CHECK, the key's length, is what BookingArgKey
 * enforces on every key before any call.  False, writing nothing, when
 * someone has added a trigger, rule, row security or CHECK constraint to
 * the table: then the statement stores it, so that they apply.
 */
static bool
StoreKeyDirect(BookingKey *key, const BookingResult *res, TimestampTz now)
{
	Relation	rel = table_open(BookingTableOid(BOOKING_TABLE_KEYS), RowExclusiveLock);
	TupleDesc	desc = RelationGetDescr(rel);
	Datum	   *values;
	bool	   *nulls;

	if (!BookingRowWritable(rel, "idempotency_keys_key_check"))
	{
		table_close(rel, NoLock);
		return false;
	}
	values = palloc0(sizeof(Datum) * desc->natts);
	nulls = palloc(sizeof(bool) * desc->natts);
	LoadKeyColumns(RelationGetRelid(rel));
	for (int i = 0; i < desc->natts; i++)
		nulls[i] = true;
#define SET_COLUMN(col, value) \
	do { values[key_columns.col - 1] = (value); nulls[key_columns.col - 1] = false; } while (0)
	SET_COLUMN(home, Int64GetDatum(key->home));
	SET_COLUMN(key, CStringGetTextDatum(key->key));
	SET_COLUMN(request, CStringGetTextDatum(key->request));
	SET_COLUMN(ok, BoolGetDatum(BookingCodeIsOk(res->code)));
	SET_COLUMN(code, CStringGetTextDatum(BookingCodeName(res->code)));
	if (res->has_booking_id)
		SET_COLUMN(booking_id, Int64GetDatum(res->booking_id));
	SET_COLUMN(http_status, Int32GetDatum(BookingCodeHttpStatus(res->code)));
	SET_COLUMN(message, CStringGetTextDatum(res->message));
	SET_COLUMN(created_at, TimestampTzGetDatum(now));
#undef SET_COLUMN
	/* a column added later without a default would be NULL here: refuse */
	for (int i = 0; i < desc->natts; i++)
		if (nulls[i] && !TupleDescAttr(desc, i)->attisdropped &&
			i != key_columns.booking_id - 1 && TupleDescAttr(desc, i)->attnotnull)
			ereport(ERROR,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("booking.idempotency_keys has a column \"%s\" this library does not fill",
							NameStr(TupleDescAttr(desc, i)->attname)),
					 errhint("Reinstall or update the extension (ALTER EXTENSION booking UPDATE).")));
	BookingRowInsert(rel, values, nulls);
	table_close(rel, NoLock);
	return true;
}

/* Stores the result row through the executor, as Citus must see it. */
static void
StoreKeyStatement(BookingKey *key, const BookingResult *res, TimestampTz now)
{
	Datum		values[9];
	char		nulls[9];

	memset(nulls, ' ', sizeof(nulls));
	values[0] = CStringGetTextDatum(key->key);
	values[1] = CStringGetTextDatum(key->request);
	values[2] = BoolGetDatum(BookingCodeIsOk(res->code));
	values[3] = CStringGetTextDatum(BookingCodeName(res->code));
	values[4] = Int64GetDatum(res->booking_id);
	if (!res->has_booking_id)
		nulls[4] = 'n';
	values[5] = Int32GetDatum(BookingCodeHttpStatus(res->code));
	values[6] = CStringGetTextDatum(res->message);
	values[7] = TimestampTzGetDatum(now);
	values[8] = Int64GetDatum(key->home);
	(void) BookingExecute(&store_plan, values, nulls, false, 0);
}

/*
 * Stores the call's result under the key, in the caller's transaction,
 * unless it says nothing happened (busy, retry: a retry must do the work),
 * then lets the next request with the key go on.
 */
void
BookingFinishKey(BookingKey *key, const BookingResult *res, TimestampTz now)
{
	if (res->code != BOOKING_BUSY && res->code != BOOKING_RETRY)
	{
		if (BookingDistributed() || !StoreKeyDirect(key, res, now))
			StoreKeyStatement(key, res, now);
	}
	if (!key->remote)
		LockRelease(&key->tag, ExclusiveLock, false);
}

/*
 * The look-up on a Citus coordinator, for a group whose members live on
 * several nodes: the key's shard is elsewhere, so it reads the committed
 * rows through the executor.  The key's lock is then held to commit (only
 * such groups run here, so they see each other through it).
 */
static BookingPlan remote_probe_plan = {
	"SELECT request, code, booking_id, http_status, message FROM booking.idempotency_keys "
	"WHERE home OPERATOR(pg_catalog.=) $1 AND key OPERATOR(pg_catalog.=) $2",
	2, {INT8OID, TEXTOID}
};

static BookingKeyClaim
ClaimKeyRemote(BookingKey *key, int timeout_ms, BookingResult *res)
{
	TimestampTz deadline = 0;
	BookingLockOutcome outcome = BOOKING_LOCKED;
	Datum		values[2] = {Int64GetDatum(key->home), CStringGetTextDatum(key->key)};
	char	   *code_name;
	BookingCode code;
	bool		isnull;
	int64		booking_id;

	key->remote = true;
	if (LockAcquire(&key->tag, ExclusiveLock, false, true) == LOCKACQUIRE_NOT_AVAIL)
		outcome = WaitBounded(WaitForKeyLock, &key->tag, timeout_ms, &deadline);
	if (outcome != BOOKING_LOCKED)
		return outcome == BOOKING_LOCK_BUSY ? BOOKING_KEY_BUSY : BOOKING_KEY_RETRY;
	if (BookingExecuteLatest(&remote_probe_plan, values, NULL, 1) == 0)
		return BOOKING_KEY_OWNED;
	if (strcmp(SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1), key->request) != 0)
	{
		BookingSetResult(res, BOOKING_IDEMPOTENCY_MISMATCH, -1,
						 "This idempotency key was already used for a different request; use a new key for a new request.");
		return BOOKING_KEY_REPLAYED;
	}
	code_name = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	if (strcmp(code_name, "ok") == 0)
		code = BookingGetInt32(0, 4, NULL) == 201 ? BOOKING_CREATED : BOOKING_DONE;
	else if (!BookingCodeFromName(code_name, &code))
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("unknown result code \"%s\" stored for an idempotency key", code_name)));
	booking_id = BookingGetInt64(0, 3, &isnull);
	BookingSetResult(res, code, isnull ? -1 : booking_id, "%s",
					 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 5));
	res->replayed = true;
	return BOOKING_KEY_REPLAYED;
}

/* Deletes up to batch keys older than booking.idempotency_retention. */
int64
BookingPurgeKeys(int64 home, TimestampTz now, int32 batch)
{
	Datum		values[3];

	values[0] = TimestampTzGetDatum(now - (TimestampTz) booking_idempotency_retention_s * USECS_PER_SEC);
	values[1] = Int32GetDatum(batch);
	values[2] = Int64GetDatum(home);
	return BookingExecute(&purge_plan, values, NULL, false, 0);
}

/*
 * The canonical text of a request: the function and each argument that
 * defines it, length-prefixed so that no guest text can forge another
 * request.  NULL fields are written as "-".  The caller's metadata (0.8.0),
 * when given, is one more field at the end: a key stored for a call without
 * metadata, before 0.8.0 too, still matches the same call.
 */
char *
BookingRequestString(const char *fn, int nfields, const char *const *fields,
					 const char *metadata)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoString(&buf, fn);
	appendStringInfoChar(&buf, '(');
	for (int i = 0; i < nfields; i++)
	{
		if (i > 0)
			appendStringInfoChar(&buf, ',');
		if (fields[i] == NULL)
			appendStringInfoChar(&buf, '-');
		else
			appendStringInfo(&buf, "%zu:%s", strlen(fields[i]), fields[i]);
	}
	if (metadata != NULL)
		appendStringInfo(&buf, ",%zu:%s", strlen(metadata), metadata);
	appendStringInfoChar(&buf, ')');
	return buf.data;
}
