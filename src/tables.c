/*
 * tables.c
 *	  The extension's tables as the C code sees them: their OIDs, cached
 *	  until a relcache invalidation says the catalog changed, and the table
 *	  locks a mutating call takes before its first statement.
 *
 *	  Why lock tables up front: every statement takes a lock on the tables it
 *	  touches, and PostgreSQL waits for it without limit when DDL, VACUUM FULL
 *	  or LOCK TABLE holds a conflicting one.  A call takes RowExclusiveLock on
 *	  each table it may write, first without waiting and, when that fails,
 *	  waiting in a guarded subtransaction bounded by the call's lock_timeout,
 *	  so such a wait ends in "busy" like a row lock wait.  Once held, the
 *	  locks last to the end of the transaction, so a long transaction pays
 *	  this once.  A relation lock needs no transaction id, so the guarded
 *	  wait leaves nothing behind.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "storage/lmgr.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "booking.h"

static const char *const table_names[BOOKING_NUM_TABLES] = {
	[BOOKING_TABLE_RESOURCES] = "resources",
	[BOOKING_TABLE_BOOKINGS] = "bookings",
	[BOOKING_TABLE_STRIPES] = "resource_stripes",
	[BOOKING_TABLE_KEYS] = "idempotency_keys",
};

static Oid	table_oids[BOOKING_NUM_TABLES];
static bool table_oids_valid = false;

/*
 * One relcache callback for the extension's caches of table facts: with
 * Citus loaded, PostgreSQL's ten callback slots run out fast.
 */
static void
ForgetTables(Datum arg, Oid relid)
{
	BookingEventsForget(relid);
	if (!OidIsValid(relid))
	{
		table_oids_valid = false;
		return;
	}
	for (int i = 0; i < BOOKING_NUM_TABLES; i++)
		if (table_oids[i] == relid)
			table_oids_valid = false;
}

void
BookingTablesInit(void)
{
	CacheRegisterRelcacheCallback(ForgetTables, (Datum) 0);
}

/* The cached OID of a table, or InvalidOid; no catalog access (callbacks use it). */
Oid
BookingTableOidIfKnown(BookingTable table)
{
	return table_oids_valid ? table_oids[table] : InvalidOid;
}

/* The OID of one of the extension's tables; an error if it is missing. */
Oid
BookingTableOid(BookingTable table)
{
	if (!table_oids_valid)
	{
		Oid			nsp = get_namespace_oid("booking", false);

		for (int i = 0; i < BOOKING_NUM_TABLES; i++)
		{
			table_oids[i] = get_relname_relid(table_names[i], nsp);
			if (!OidIsValid(table_oids[i]))
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_TABLE),
						 errmsg("relation \"booking.%s\" does not exist", table_names[i]),
						 errhint("The installed library expects the newest schema: run ALTER EXTENSION booking UPDATE.")));
		}
		table_oids_valid = true;
	}
	return table_oids[table];
}

typedef struct TableWait
{
	Oid			relid;
} TableWait;

static void
WaitForTable(void *arg)
{
	LockRelationOid(((TableWait *) arg)->relid, RowExclusiveLock);
}

/*
 * Takes RowExclusiveLock on every table of the extension a call may write
 * (the key table only for a keyed call).  The whole wait is bounded by
 * timeout_ms; 0 means do not wait.
 */
BookingLockOutcome
BookingLockTables(int timeout_ms, bool with_keys)
{
	TimestampTz deadline = 0;

	for (int i = 0; i < BOOKING_NUM_TABLES; i++)
	{
		TableWait	tw;
		BookingLockOutcome outcome;
		int			left_ms;

		if (i == BOOKING_TABLE_KEYS && !with_keys)
			continue;
		tw.relid = BookingTableOid((BookingTable) i);
		if (ConditionalLockRelationOid(tw.relid, RowExclusiveLock))
			continue;
		left_ms = BookingTimeLeft(timeout_ms, &deadline);
		if (left_ms <= 0)
			return BOOKING_LOCK_BUSY;
		outcome = BookingWaitGuarded(WaitForTable, &tw, left_ms);
		if (outcome != BOOKING_LOCKED)
			return outcome;
	}
	return BOOKING_LOCKED;
}

/*
 * What is left of a wait of timeout_ms whose clock starts at the first call
 * (*deadline 0 until then); 0 when nothing is left or no wait is allowed.
 */
int
BookingTimeLeft(int timeout_ms, TimestampTz *deadline)
{
	if (timeout_ms <= 0)
		return 0;
	if (*deadline == 0)
		*deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	return BookingMillisecondsLeft(*deadline);
}

/* Milliseconds until deadline, rounded up; 0 or less once it has passed. */
int
BookingMillisecondsLeft(TimestampTz deadline)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		left_us;

	if (now >= deadline)
		return 0;
	left_us = deadline - now;
	if (left_us / 1000 >= INT_MAX)
		return INT_MAX;
	return (int) ((left_us + 999) / 1000);
}
