/*
 * tablelock.c
 *	  The table locks a mutating call takes before its first statement.
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
 *
 *	  Layer 2, locks.  Locks: RowExclusiveLock on the extension's tables, in
 *	  the order of BookingTable, before anything else (booking.h).
 */
#include "postgres.h"

#include "storage/lmgr.h"

#include "booking.h"
#include "1_ground/tables.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "2_locks/tablelock.h"

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
		/* not locked up front: only events.c writes it, and its statement locks it */
		if (i == BOOKING_TABLE_EVENTS)
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
