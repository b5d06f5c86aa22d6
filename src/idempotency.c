/*
 * idempotency.c
 *	  Idempotency keys: a retried request gets the stored result of the first
 *	  one, with replayed = true, and no work is done twice.
 *
 *	  Requests with the same key are serialized by a transaction-level
 *	  advisory lock on a 64-bit hash of the key (taken before any resource
 *	  lock).  Holding it, the call looks the key up in the latest committed
 *	  rows (SnapshotSelf: key rows are never updated, and the read takes no
 *	  SSI predicate lock):
 *	  a stored row is replayed (or refused as a mismatch); otherwise the call
 *	  does its work and stores the result in the caller's transaction, so a
 *	  rollback forgets the key too.  A second request that arrives while the
 *	  first is in flight waits on the advisory lock, then replays.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "common/hashfn.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/guc.h"
#include "utils/lsyscache.h"
#include "utils/rel.h"
#include "utils/relcache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "booking.h"

/* the advisory lock space the key locks use (field 4; the SQL functions use 1 and 2) */
#define BOOKING_KEY_LOCK_SPACE 3

int			booking_idempotency_retention_s = 86400;

static BookingPlan store_plan = {
	"INSERT INTO booking.idempotency_keys "
	"(key, request, ok, code, booking_id, http_status, message, created_at) "
	"VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
	8, {TEXTOID, TEXTOID, BOOLOID, TEXTOID, INT8OID, INT4OID, TEXTOID, TIMESTAMPTZOID}
};
static BookingPlan purge_plan = {
	"DELETE FROM booking.idempotency_keys WHERE key OPERATOR(pg_catalog.=) ANY (ARRAY("
	"SELECT key FROM booking.idempotency_keys "
	"WHERE created_at OPERATOR(pg_catalog.<) $1 "
	"LIMIT $2 FOR UPDATE SKIP LOCKED))",
	2, {TIMESTAMPTZOID, INT4OID}
};

void
BookingIdempotencyInit(void)
{
	DefineCustomIntVariable("booking.idempotency_retention",
							"How long a stored idempotency result is kept before hold_expire purges it.",
							NULL,
							&booking_idempotency_retention_s,
							86400, 1, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);
}

static void
KeyLockTag(const char *key, LOCKTAG *tag)
{
	uint64		h = hash_bytes_extended((const unsigned char *) key, (int) strlen(key), 0);

	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) (h >> 32), (uint32) h,
						 BOOKING_KEY_LOCK_SPACE);
}

static void
WaitForKey(void *arg)
{
	(void) LockAcquire((LOCKTAG *) arg, ExclusiveLock, false, false);
}

/* Serializes requests that carry the same key, until the transaction ends. */
BookingLockOutcome
BookingLockKey(const char *key, int timeout_ms)
{
	LOCKTAG		tag;

	KeyLockTag(key, &tag);
	if (LockAcquire(&tag, ExclusiveLock, false, true) != LOCKACQUIRE_NOT_AVAIL)
		return BOOKING_LOCKED;
	if (timeout_ms == 0)
		return BOOKING_LOCK_BUSY;
	return BookingWaitGuarded(WaitForKey, &tag, timeout_ms);
}

/* columns of booking.idempotency_keys */
#define KEY_COLUMNS 8
#define KEY_ATT_KEY 1
#define KEY_ATT_REQUEST 2
#define KEY_ATT_CODE 4
#define KEY_ATT_BOOKING_ID 5
#define KEY_ATT_HTTP_STATUS 6
#define KEY_ATT_MESSAGE 7


/*
 * Looks the key up.  Returns true with res filled when the key was used
 * before: the stored result (replayed) or idempotency_mismatch.
 *
 * A probe of the primary key index, not a planned query: a plan cached
 * while the table was small would scan it all once it has grown.
 */
bool
BookingReplayKey(const char *key, const char *request, BookingResult *res)
{
	Oid			relid;
	Oid			pkey;
	Relation	rel;
	SysScanDesc scan;
	ScanKeyData skey;
	HeapTuple	tuple;
	Datum		values[KEY_COLUMNS];
	bool		nulls[KEY_COLUMNS];
	bool		found = false;

	relid = get_relname_relid("idempotency_keys", get_namespace_oid("booking", false));
	if (!OidIsValid(relid))
		elog(ERROR, "relation booking.idempotency_keys does not exist");
	rel = table_open(relid, AccessShareLock);
	pkey = RelationGetPrimaryKeyIndex(rel);
	if (RelationGetDescr(rel)->natts != KEY_COLUMNS || !OidIsValid(pkey))
		elog(ERROR, "booking.idempotency_keys does not have the expected columns and primary key");
	ScanKeyInit(&skey, KEY_ATT_KEY, BTEqualStrategyNumber, F_TEXTEQ, CStringGetTextDatum(key));
	scan = systable_beginscan(rel, pkey, true, SnapshotSelf, 1, &skey);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		char	   *code_name;
		BookingCode code;

		found = true;
		heap_deform_tuple(tuple, RelationGetDescr(rel), values, nulls);
		if (strcmp(TextDatumGetCString(values[KEY_ATT_REQUEST - 1]), request) != 0)
			BookingSetResult(res, BOOKING_IDEMPOTENCY_MISMATCH, -1,
							 "This idempotency key was already used for a different request; use a new key for a new request.");
		else
		{
			code_name = TextDatumGetCString(values[KEY_ATT_CODE - 1]);
			if (strcmp(code_name, "ok") == 0)
				code = DatumGetInt32(values[KEY_ATT_HTTP_STATUS - 1]) == 201 ?
					BOOKING_CREATED : BOOKING_DONE;
			else if (!BookingCodeFromName(code_name, &code))
				elog(ERROR, "unknown result code \"%s\" stored for an idempotency key", code_name);
			BookingSetResult(res, code,
							 nulls[KEY_ATT_BOOKING_ID - 1] ? -1 : DatumGetInt64(values[KEY_ATT_BOOKING_ID - 1]),
							 "%s", TextDatumGetCString(values[KEY_ATT_MESSAGE - 1]));
			res->replayed = true;
		}
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

void
BookingStoreKey(const char *key, const char *request, const BookingResult *res,
				TimestampTz now)
{
	Datum		values[8];
	char		nulls[8] = "        ";

	values[0] = CStringGetTextDatum(key);
	values[1] = CStringGetTextDatum(request);
	values[2] = BoolGetDatum(BookingCodeIsOk(res->code));
	values[3] = CStringGetTextDatum(BookingCodeName(res->code));
	values[4] = Int64GetDatum(res->booking_id);
	if (!res->has_booking_id)
		nulls[4] = 'n';
	values[5] = Int32GetDatum(BookingCodeHttpStatus(res->code));
	values[6] = CStringGetTextDatum(res->message);
	values[7] = TimestampTzGetDatum(now);
	(void) BookingExecute(&store_plan, values, nulls, false, 0);
}

/* Deletes up to batch keys older than booking.idempotency_retention. */
int64
BookingPurgeKeys(TimestampTz now, int32 batch)
{
	Datum		values[2];

	values[0] = TimestampTzGetDatum(now - (TimestampTz) booking_idempotency_retention_s * USECS_PER_SEC);
	values[1] = Int32GetDatum(batch);
	return BookingExecute(&purge_plan, values, NULL, false, 0);
}

/*
 * The canonical text of a request: the function and each argument that
 * defines it, length-prefixed so that no guest text can forge another
 * request.  NULL fields are written as "-".
 */
char *
BookingRequestString(const char *fn, int nfields, const char *const *fields)
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
	appendStringInfoChar(&buf, ')');
	return buf.data;
}
