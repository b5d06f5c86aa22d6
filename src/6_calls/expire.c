/*
 * expire.c
 *	  booking.hold_expire(batch): the holds that lapsed become expired and
 *	  give their seats back, home by home; with them, the lines of
 *	  resources whose seats were freed are served, old idempotency keys and
 *	  old events purged.  The expiry worker (7_worker/worker.c) calls it.
 *
 *	  Layer 6, the calls.  Locks: the booking tables (bounded by
 *	  booking.lock_timeout), then resource locks with SKIP LOCKED only, so
 *	  it never waits behind a sale or another hold_expire, and it re-checks
 *	  each hold's status under the lock, so no hold is expired twice or both
 *	  confirmed and expired.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "common/pg_prng.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/guard.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "2_locks/tablelock.h"
#include "3_frame/idempotency.h"
#include "3_frame/numbering.h"
#include "4_inventory/counter.h"
#include "4_inventory/line.h"
#include "5_scaleout/remote.h"
#include "6_calls/expire.h"

PG_FUNCTION_INFO_V1(booking_hold_expire);

/*
 * Whether the last hold_expire of this backend used up its batch: holds
 * expired, keys purged, or one home's events purged; more may be waiting.
 */
static bool expire_filled = false;

/*
 * The home this backend's next hold_expire starts at (-1: none yet): the
 * one after the home where the last pass used up its batch, so that a
 * backlog in one home does not hold back the holds, keys, events and lines
 * of the homes after it pass after pass.  A backend's first pass starts at
 * a random home, for callers that make one pass per session.
 */
static int	expire_next_home = -1;

static BookingPlan lapsed_resources_plan = {
	"SELECT DISTINCT s.resource_id FROM (SELECT resource_id FROM booking.bookings "
	"WHERE home OPERATOR(pg_catalog.=) $3 "
	"AND status OPERATOR(pg_catalog.=) 'pending'::booking.status "
	"AND expires_at OPERATOR(pg_catalog.<=) $1 ORDER BY expires_at LIMIT $2) AS s "
	"ORDER BY 1",
	3, {TIMESTAMPTZOID, INT4OID, INT8OID}
};
static BookingPlan expire_plan = {
	"UPDATE booking.bookings SET status = 'expired'::booking.status "
	"WHERE home OPERATOR(pg_catalog.=) $4 AND id OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT id FROM booking.bookings "
	"WHERE home OPERATOR(pg_catalog.=) $4 AND resource_id OPERATOR(pg_catalog.=) $1 "
	"AND status OPERATOR(pg_catalog.=) 'pending'::booking.status "
	"AND expires_at OPERATOR(pg_catalog.<=) $2 ORDER BY expires_at LIMIT $3)) "
	"RETURNING id, CASE WHEN during IS NULL THEN quantity ELSE 0 END",
	4, {INT8OID, TIMESTAMPTZOID, INT4OID, INT8OID}
};

typedef struct ExpireArgs
{
	int64		resource;
	TimestampTz now;
	int32		limit;
	int64		expired;
} ExpireArgs;

/* Expires up to limit lapsed holds of one resource, unless it is locked. */
static void
ExpireResource(void *arg)
{
	ExpireArgs *ea = (ExpireArgs *) arg;
	BookingResource r;
	Datum		values[4];
	BookingGiveBack gb;

	/* a busy resource is skipped: its bookers reclaim lapsed holds themselves */
	if (!BookingTryLockResource(ea->resource, &r) ||
		BookingCounterOpenGiveBack(&r, 0, &gb) != BOOKING_LOCKED)
		return;
	values[0] = Int64GetDatum(ea->resource);
	values[1] = TimestampTzGetDatum(ea->now);
	values[2] = Int32GetDatum(ea->limit);
	values[3] = Int64GetDatum(r.home);
	ea->expired = BookingExecute(&expire_plan, values, NULL, false, 0);
	BookingCounterGiveBack(&gb, BookingCounterExpired(r.home, ea->expired));
	if (r.waiting > 0)
		BookingWaitlistServe(r.id, 0, ea->now);
}

typedef struct PurgeArgs
{
	int64		home;
	TimestampTz now;
	int32		batch;
	int64		purged;
} PurgeArgs;

static void
PurgeKeys(void *arg)
{
	PurgeArgs  *pa = (PurgeArgs *) arg;

	pa->purged = BookingPurgeKeys(pa->home, pa->now, pa->batch);
}

/*
 * The outbox's old events, and the lines of resources whose seats were
 * freed by a call that could not wait for their stripes (a safety net: the
 * calls that free seats serve the line themselves).
 */
static void
TendHome(void *arg)
{
	PurgeArgs  *pa = (PurgeArgs *) arg;

	(void) BookingWaitlistServeHome(pa->home, pa->now, pa->batch);
	pa->purged = BookingPurgeEvents(pa->home, pa->now, pa->batch);
}

/* the work of hold_expire in one home (shard.c): on one server, all of it */
typedef struct HomeArgs
{
	int64		home;
	TimestampTz now;
	int32		batch;			/* holds left to expire */
	int32		keys;			/* keys left to purge */
	int32		tend;			/* events to purge, lines to serve: the batch */
	int64		expired;
	int64		purged;
	bool		events_filled;	/* the events' purge used up its batch */
} HomeArgs;

static void
ExpireHome(void *arg)
{
	HomeArgs   *ha = (HomeArgs *) arg;
	Datum		values[3];
	int			nres;
	int64	   *resources;

	values[0] = TimestampTzGetDatum(ha->now);
	values[1] = Int32GetDatum(ha->batch);
	values[2] = Int64GetDatum(ha->home);
	nres = BookingExecute(&lapsed_resources_plan, values, NULL, false, 0);
	resources = palloc(sizeof(int64) * Max(nres, 1));
	for (int i = 0; i < nres; i++)
		resources[i] = BookingGetInt64(i, 1, NULL);

	for (int i = 0; i < nres && ha->expired < ha->batch; i++)
	{
		ExpireArgs	ea = {resources[i], ha->now, (int32) (ha->batch - ha->expired), 0};

		/*
		 * Under a snapshot isolation level a resource changed after the
		 * snapshot fails with a serialization error: skip it, as if locked.
		 */
		if (IsolationUsesXactSnapshot())
		{
			if (BookingRunGuarded(ExpireResource, &ea) != BOOKING_GUARD_DONE)
				continue;
		}
		else
			ExpireResource(&ea);
		ha->expired += ea.expired;
	}

	if (ha->keys > 0)
	{
		PurgeArgs	pa = {ha->home, ha->now, ha->keys, 0};

		if (IsolationUsesXactSnapshot())
			(void) BookingRunGuarded(PurgeKeys, &pa);
		else
			PurgeKeys(&pa);
		ha->purged = pa.purged;
	}
	{
		PurgeArgs	pa = {ha->home, ha->now, ha->tend, 0};

		if (IsolationUsesXactSnapshot())
			(void) BookingRunGuarded(TendHome, &pa);
		else
			TendHome(&pa);
		ha->events_filled = pa.purged >= ha->tend;
	}
}

typedef struct TablesArgs
{
	BookingLockOutcome outcome;
} TablesArgs;

static void
RunLockTables(void *arg)
{
	((TablesArgs *) arg)->outcome = BookingLockTables(BookingLockTimeoutDefault(), true);
}

/*
 * The table locks of hold_expire, bounded by booking.lock_timeout: false
 * when DDL or LOCK TABLE holds a table longer.  Under a snapshot isolation
 * level no call frame has set lock_timeout, so the wait gets a guard of its
 * own here.
 */
static bool
LockTablesForExpiry(void)
{
	TablesArgs	ta = {BOOKING_LOCK_BUSY};
	int			nestlevel = -1;
	BookingGuardOutcome outcome;
	int			timeout_ms = BookingLockTimeoutDefault();

	if (!IsolationUsesXactSnapshot())
		return BookingLockTables(timeout_ms, true) == BOOKING_LOCKED;
	if (timeout_ms > 0)
		nestlevel = BookingPushLockTimeout(timeout_ms);
	outcome = BookingRunGuarded(RunLockTables, &ta);
	if (nestlevel >= 0)
		BookingPopLockTimeout(nestlevel);
	return outcome == BOOKING_GUARD_DONE && ta.outcome == BOOKING_LOCKED;
}

/*
 * hold_expire(batch) returns the number of holds moved to expired
 */
Datum
booking_hold_expire(PG_FUNCTION_ARGS)
{
	int32		batch = PG_ARGISNULL(0) ? 1000 : PG_GETARG_INT32(0);
	TimestampTz now = GetCurrentTimestamp();
	int64		expired = 0;
	int64		purged = 0;
	int			unreachable = 0;
	int			moving = 0;
	bool		events_filled = false;
	int			nhomes;
	int64	   *homes;
	int			start;
	int			k;

	expire_filled = false;
	if (batch <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch must be greater than zero"),
				 errdetail("The batch given is %d.", batch)));

	SPI_connect();
	/* a maintenance call: no booking.result to say busy with, so an error */
	if (!LockTablesForExpiry())
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not lock the booking tables within booking.lock_timeout (%d ms)",
						BookingLockTimeoutDefault()),
				 errdetail("Another transaction holds a conflicting lock on one of them (a schema change, VACUUM FULL or LOCK TABLE)."),
				 errhint("Run booking.hold_expire() again later; the expiry worker does so by itself.")));
	nhomes = BookingAllHomes(&homes);
	if (nhomes > 0 && (expire_next_home < 0 || expire_next_home >= nhomes))
		expire_next_home = (int) pg_prng_uint64_range(&pg_global_prng_state, 0, nhomes - 1);
	start = expire_next_home;
	for (k = 0; k < nhomes && expired < batch; k++)
	{
		int			i = (start + k) % nhomes;
		HomeArgs	ha = {homes[i], now, (int32) (batch - expired), (int32) (batch - purged), batch, 0, 0, false};

		/* on Citus a shard on a node that is down is skipped, and said */
		if (BookingDistributed())
		{
			BookingGuardOutcome outcome = BookingRunGuardedRemote(ExpireHome, &ha, &homes[i], 1);

			if (outcome == BOOKING_GUARD_UNREACHABLE)
			{
				unreachable++;
				continue;
			}
			if (outcome == BOOKING_GUARD_MOVED)
			{
				moving++;
				continue;
			}
		}
		else
			ExpireHome(&ha);
		expired += ha.expired;
		purged += ha.purged;
		events_filled |= ha.events_filled;
	}
	SPI_finish();
	/* the home after the last one visited: start again, after a full round */
	if (nhomes > 0)
		expire_next_home = (start + k) % nhomes;
	expire_filled = expired >= batch || purged >= batch || events_filled;
	if (unreachable > 0)
		ereport(WARNING,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("hold_expire skipped %d of %d shards: their node cannot be reached", unreachable, nhomes),
				 errdetail("Lapsed holds there still block no one; they are expired once the node is back.")));
	if (moving > 0)
		ereport(WARNING,
				(errmsg("hold_expire skipped %d of %d shards: they moved to another node during the pass", moving, nhomes),
				 errdetail("Lapsed holds there still block no one; the next pass expires them.")));

	PG_RETURN_INT64(expired);
}

/* whether the last hold_expire used up its batch; clears the answer */
bool
BookingExpireFilledTake(void)
{
	bool		filled = expire_filled;

	expire_filled = false;
	return filled;
}
