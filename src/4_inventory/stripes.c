/*
 * stripes.c
 *	  Hot inventory: the striped counter (set_stripes, 6_calls/resource.c,
 *	  chooses it).
 *
 *	  One counter row caps a flash sale at one commit at a time: its row lock
 *	  is held until the commit's WAL flush.  A striped resource keeps its free
 *	  seats in N rows of booking.resource_stripes instead, so N buyers hold N
 *	  row locks and commit in parallel.  A buyer takes one stripe that can
 *	  serve the whole quantity with SKIP LOCKED, starting at a stripe picked
 *	  by its process id so that concurrent buyers spread out.  When no
 *	  unlocked stripe can, the buyer takes the slow path: the resource row,
 *	  then every stripe in ascending order (waiting, bounded by lock_timeout),
 *	  and decides on the total, so sold_out never comes from stripes that
 *	  merely were locked (counter.c).  The slow path also reclaims lapsed
 *	  holds and spreads the free seats evenly again, which is the
 *	  rebalancing.  This file never calls back into its callers: counter.c
 *	  uses its primitives (lock all, lock one, add, spread, rebuild).
 *
 *	  Invariant: capacity - sum(free) = the seats of pending and confirmed
 *	  bookings (lapsed holds included until reclaimed), as resources.taken is
 *	  for a resource with one counter row.
 *
 *	  Layer 4, inventory.  Locks: the fast path holds one stripe and waits
 *	  for nothing.  All else takes the resource row, then stripes in
 *	  ascending order, then booking rows: the order of the rest of the
 *	  extension.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/itemptr.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/guard.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/stats.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "2_locks/rowlock.h"
#include "4_inventory/seat_row.h"
#include "4_inventory/stripes.h"

/* looks at the stripes again this often after a wait found its stripe short */
#define STRIPE_ROUNDS 4

/*
 * $1..$9 are the booking row's (seat_row.h: $7 is the home); $10 the
 * offset, $11 the stripes.  Each buyer starts at its own stripe, so concurrent buyers
 * spread out.
 */
#define STRIPES_OF(alias) \
	alias "home OPERATOR(pg_catalog.=) $7 AND " alias "resource_id OPERATOR(pg_catalog.=) $1"

#define TAKE_ONE_UPDATE \
	"WITH c AS MATERIALIZED (SELECT stripe FROM booking.resource_stripes " \
	"WHERE " STRIPES_OF("") " AND free OPERATOR(pg_catalog.>=) $2 AND NOT limited " \
	"ORDER BY (stripe OPERATOR(pg_catalog.+) $10) OPERATOR(pg_catalog.%) $11 " \
	"LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED) " \
	"UPDATE booking.resource_stripes s SET free = s.free OPERATOR(pg_catalog.-) $2 FROM c " \
	"WHERE " STRIPES_OF("s.") " AND s.stripe OPERATOR(pg_catalog.=) c.stripe " \
	"RETURNING s.stripe"
#define TAKE_WAIT_UPDATE \
	"UPDATE booking.resource_stripes SET free = free OPERATOR(pg_catalog.-) $2 " \
	"WHERE " STRIPES_OF("") " " \
	"AND stripe OPERATOR(pg_catalog.=) ($10 OPERATOR(pg_catalog.%) $11) " \
	"AND free OPERATOR(pg_catalog.>=) $2 AND NOT limited RETURNING stripe"
static BookingPlan take_one_plan = {
	"WITH u AS (" TAKE_ONE_UPDATE ") " BOOKING_INSERT_SEAT_ROW("u"),
	BOOKING_SEAT_ROW_PARAMS + 2, {BOOKING_SEAT_ROW_TYPES, INT4OID, INT4OID}
};
static BookingPlan take_wait_plan = {
	"WITH u AS (" TAKE_WAIT_UPDATE ") " BOOKING_INSERT_SEAT_ROW("u"),
	BOOKING_SEAT_ROW_PARAMS + 2, {BOOKING_SEAT_ROW_TYPES, INT4OID, INT4OID}
};

/* on Citus the decisions alone; the row follows from VALUES (seat_row.c) */
static BookingPlan take_one_alone_plan = {
	TAKE_ONE_UPDATE, BOOKING_SEAT_ROW_PARAMS + 2, {BOOKING_SEAT_ROW_TYPES, INT4OID, INT4OID}
};
static BookingPlan take_wait_alone_plan = {
	TAKE_WAIT_UPDATE, BOOKING_SEAT_ROW_PARAMS + 2, {BOOKING_SEAT_ROW_TYPES, INT4OID, INT4OID}
};

/* the other statements: $1 the resource, $2 its home, then their own */
#define STRIPES_OF_RESOURCE \
	"home OPERATOR(pg_catalog.=) $2 AND resource_id OPERATOR(pg_catalog.=) $1"

static BookingPlan lock_one_plan = {
	"SELECT stripe FROM booking.resource_stripes WHERE " STRIPES_OF_RESOURCE " "
	"ORDER BY (stripe OPERATOR(pg_catalog.+) $3) OPERATOR(pg_catalog.%) $4 "
	"LIMIT 1 FOR NO KEY UPDATE SKIP LOCKED",
	4, {INT8OID, INT8OID, INT4OID, INT4OID}
};
static BookingPlan wait_one_plan = {
	"SELECT stripe FROM booking.resource_stripes WHERE " STRIPES_OF_RESOURCE " "
	"ORDER BY stripe LIMIT 1 FOR NO KEY UPDATE",
	2, {INT8OID, INT8OID}
};
static BookingPlan add_plan = {
	"UPDATE booking.resource_stripes SET free = free OPERATOR(pg_catalog.+) $4 "
	"WHERE " STRIPES_OF_RESOURCE " AND stripe OPERATOR(pg_catalog.=) $3",
	4, {INT8OID, INT8OID, INT4OID, INT4OID}
};
static BookingPlan lock_all_plan = {
	"SELECT free FROM booking.resource_stripes WHERE " STRIPES_OF_RESOURCE " "
	"ORDER BY stripe FOR NO KEY UPDATE",
	2, {INT8OID, INT8OID}
};
static BookingPlan lock_all_nowait_plan = {
	"SELECT free FROM booking.resource_stripes WHERE " STRIPES_OF_RESOURCE " "
	"ORDER BY stripe FOR NO KEY UPDATE NOWAIT",
	2, {INT8OID, INT8OID}
};
static BookingPlan spread_plan = {
	"UPDATE booking.resource_stripes SET free = CAST(($3 OPERATOR(pg_catalog./) $4) "
	"OPERATOR(pg_catalog.+) (CASE WHEN stripe OPERATOR(pg_catalog.<) ($3 OPERATOR(pg_catalog.%) $4) "
	"THEN 1 ELSE 0 END) AS pg_catalog.int4) WHERE " STRIPES_OF_RESOURCE,
	4, {INT8OID, INT8OID, INT8OID, INT4OID}
};
static BookingPlan drop_stripes_plan = {
	"DELETE FROM booking.resource_stripes WHERE " STRIPES_OF_RESOURCE,
	2, {INT8OID, INT8OID}
};
static BookingPlan make_stripes_plan = {
	"INSERT INTO booking.resource_stripes (home, resource_id, stripe, free, limited) "
	"SELECT $2, $1, s, 0, $4 FROM pg_catalog.generate_series(0, $3 OPERATOR(pg_catalog.-) 1) AS s",
	4, {INT8OID, INT8OID, INT4OID, BOOLOID}
};
static BookingPlan mark_stripes_plan = {
	"UPDATE booking.resource_stripes SET limited = $3 WHERE " STRIPES_OF_RESOURCE " "
	"AND limited OPERATOR(pg_catalog.<>) $3",
	3, {INT8OID, INT8OID, BOOLOID}
};

/*
 * The resources this backend last saw striped with a stripe that could
 * serve, so that a buyer of a hot striped session goes straight to its
 * stripes.  Only a hint: a stale entry costs one attempt that finds no
 * stripe, and the buyer forgets it.
 */
#define STRIPE_HINTS 64

typedef struct StripeHint
{
	int64		resource;
	int32		stripes;
} StripeHint;

static StripeHint stripe_hints[STRIPE_HINTS];

void
BookingStripesRemember(int64 resource, int32 stripes)
{
	StripeHint *h = &stripe_hints[(uint64) resource % STRIPE_HINTS];

	if (stripes > 1)
	{
		h->resource = resource;
		h->stripes = stripes;
	}
	else if (h->resource == resource)
		h->resource = 0;
}

/* the stripes a resource had when this backend last looked, or 0 */
int32
BookingStripesHint(int64 resource)
{
	StripeHint *h = &stripe_hints[(uint64) resource % STRIPE_HINTS];

	return h->resource == resource ? h->stripes : 0;
}

static int32
StripeOffset(int32 stripes)
{
	return (int32) (MyProcPid % Max(stripes, 1));
}

typedef struct TakeOneArgs
{
	BookingPlan *plan;
	BookingPlan *alone;			/* the same on Citus, without the row */
	Datum		values[BOOKING_SEAT_ROW_PARAMS + 2];
	char		nulls[BOOKING_SEAT_ROW_PARAMS + 2];
	int64		booking_id;
} TakeOneArgs;

static bool
RunTakeOne(void *arg)
{
	TakeOneArgs *ta = (TakeOneArgs *) arg;

	return BookingSeatTakeWithRow(ta->plan, ta->alone, ta->values, ta->nulls, &ta->booking_id);
}

/*
 * Takes the seats from one stripe and writes the booking row (row: the
 * parameters of seat_row.h) in the same statement: first from any unlocked
 * stripe that has them, then, if the caller may wait, from the stripe at
 * the caller's own offset.  Returns BOOKING_LOCKED with *booking_id when
 * the seats were taken, BOOKING_LOCK_NOT_FOUND when no single stripe could
 * serve them (the slow path decides), or busy.
 *
 * Each attempt runs in a subtransaction that is rolled back when nothing was
 * taken.  A row lock is taken before the "free >= quantity" recheck on the
 * row's latest version, and a row that fails the recheck stays locked; a
 * buyer going on to the slow path with such a lock would wait for the
 * resource row while the slow path's owner waits for that stripe.
 */
BookingLockOutcome
BookingStripesTakeFast(const Datum *row, const char *row_nulls, int32 stripes,
					   int timeout_ms, int64 *booking_id)
{
	TakeOneArgs ta;
	bool		taken = false;
	BookingGuardOutcome outcome;
	int			nestlevel;

	ta.plan = &take_one_plan;
	ta.alone = &take_one_alone_plan;
	memcpy(ta.values, row, sizeof(Datum) * BOOKING_SEAT_ROW_PARAMS);
	memcpy(ta.nulls, row_nulls, BOOKING_SEAT_ROW_PARAMS);
	ta.values[BOOKING_SEAT_ROW_PARAMS] = Int32GetDatum(StripeOffset(stripes));
	ta.values[BOOKING_SEAT_ROW_PARAMS + 1] = Int32GetDatum(Max(stripes, 1));
	ta.nulls[BOOKING_SEAT_ROW_PARAMS] = ta.nulls[BOOKING_SEAT_ROW_PARAMS + 1] = ' ';
	ta.booking_id = -1;
	outcome = BookingRunGuardedTry(RunTakeOne, &ta, &taken);
	if (outcome == BOOKING_GUARD_DONE && taken)
	{
		*booking_id = ta.booking_id;
		return BOOKING_LOCKED;
	}
	if (outcome != BOOKING_GUARD_DONE)
		return outcome == BOOKING_GUARD_BUSY ? BOOKING_LOCK_BUSY : BOOKING_LOCK_RETRY;
	if (timeout_ms <= 0)
		return BOOKING_LOCK_NOT_FOUND;

	/* every stripe that has the seats is held: queue on our own stripe */
	ta.plan = &take_wait_plan;
	ta.alone = &take_wait_alone_plan;
	BookingStatsWaitBegin();
	nestlevel = BookingPushLockTimeout(timeout_ms);
	outcome = BookingRunGuardedTry(RunTakeOne, &ta, &taken);
	BookingPopLockTimeout(nestlevel);
	BookingStatsWaitEnd();
	if (outcome == BOOKING_GUARD_DONE)
	{
		*booking_id = ta.booking_id;
		return taken ? BOOKING_LOCKED : BOOKING_LOCK_NOT_FOUND;
	}
	return outcome == BOOKING_GUARD_BUSY ? BOOKING_LOCK_BUSY : BOOKING_LOCK_RETRY;
}

/*
 * take_wait_plan for a stripe this transaction has just locked at version
 * $10 (2_locks/rowlock.c), found by a TID scan
 */
static BookingPlan take_locked_plan = {
	"WITH u AS (UPDATE booking.resource_stripes SET free = free OPERATOR(pg_catalog.-) $2 "
	"WHERE ctid OPERATOR(pg_catalog.=) $10 AND " STRIPES_OF("") " "
	"AND free OPERATOR(pg_catalog.>=) $2 RETURNING stripe) "
	BOOKING_INSERT_SEAT_ROW("u"),
	BOOKING_SEAT_ROW_PARAMS + 1, {BOOKING_SEAT_ROW_TYPES, TIDOID}
};
/* on Citus: the stripe by its key, without the row (seat_row.c) */
static BookingPlan take_locked_key_plan = {
	"UPDATE booking.resource_stripes SET free = free OPERATOR(pg_catalog.-) $2 "
	"WHERE " STRIPES_OF("") " AND stripe OPERATOR(pg_catalog.=) $10 "
	"AND free OPERATOR(pg_catalog.>=) $2 RETURNING stripe",
	BOOKING_SEAT_ROW_PARAMS + 1, {BOOKING_SEAT_ROW_TYPES, INT4OID}
};

/* Takes the seats from a stripe we hold at version tid, with the booking row. */
static bool
TakeFromLocked(const Datum *row, const char *row_nulls, const BookingStripeRow *s,
			   int64 *booking_id)
{
	Datum		values[BOOKING_SEAT_ROW_PARAMS + 1];
	char		nulls[BOOKING_SEAT_ROW_PARAMS + 1];

	memcpy(values, row, sizeof(Datum) * BOOKING_SEAT_ROW_PARAMS);
	memcpy(nulls, row_nulls, BOOKING_SEAT_ROW_PARAMS);
	nulls[BOOKING_SEAT_ROW_PARAMS] = ' ';
	if (BookingDistributed())
	{
		values[BOOKING_SEAT_ROW_PARAMS] = Int32GetDatum(s->stripe);
		if (BookingExecute(&take_locked_key_plan, values, nulls, false, 1) != 1)
			return false;
		*booking_id = BookingSeatRowInsert(values, nulls, false);
		return true;
	}
	values[BOOKING_SEAT_ROW_PARAMS] = PointerGetDatum(&s->tid);
	if (BookingExecute(&take_locked_plan, values, nulls, false, 1) != 1)
		return false;
	*booking_id = BookingGetInt64(0, 1, NULL);
	return true;
}

typedef struct WaitStripeArgs
{
	const Datum *row;
	const char *row_nulls;
	BookingStripeRow stripe;
	TimestampTz deadline;
	int64		booking_id;
} WaitStripeArgs;

/* Waits for the stripe; keeps it only when it still has the seats. */
static bool
RunWaitStripe(void *arg)
{
	WaitStripeArgs *wa = (WaitStripeArgs *) arg;
	int32		free;

	if (BookingRowWaitStripe(DatumGetInt64(wa->row[0]), wa->stripe.stripe,
							 DatumGetInt64(wa->row[6]), &wa->stripe.tid, wa->deadline,
							 &free) != BOOKING_ROW_LOCKED ||
		free < DatumGetInt32(wa->row[1]))
		return false;
	return TakeFromLocked(wa->row, wa->row_nulls, &wa->stripe, &wa->booking_id);
}

/*
 * The striped path at READ COMMITTED: one look reads every stripe's
 * latest committed version (2_locks/rowlock.c); the buyer locks, without
 * waiting, the first stripe from its own offset that has the seats,
 * exactly at the version it read (so no lock is ever taken on a stripe
 * that cannot serve, and no subtransaction is needed), and takes them with
 * the booking row in one statement.  When every stripe that has them is held, it waits for the
 * first of them in its order (bounded, in a guarded subtransaction that a
 * refusal rolls back).  Returns BOOKING_LOCK_NOT_FOUND when no single stripe
 * can serve (*total: the free seats of all, *nstripes 0 if the resource has
 * no stripes), or busy / retry.
 */
BookingLockOutcome
BookingStripesTakeCommitted(const Datum *row, const char *row_nulls, int timeout_ms,
							int64 *booking_id, int64 *total, int *nstripes)
{
	BookingStripeRow rows[BOOKING_MAX_STRIPES];
	int64		resource = DatumGetInt64(row[0]);
	int32		quantity = DatumGetInt32(row[1]);
	int64		home = DatumGetInt64(row[6]);
	TimestampTz deadline = 0;
	WaitStripeArgs wa;

	for (int round = 0;; round++)
	{
		int			n;
		int			first = -1;
		int32		offset;
		bool		taken = false;
		int			left_ms;

		n = BookingRowPeekStripes(resource, home, rows, BOOKING_MAX_STRIPES);
		*nstripes = n;
		*total = 0;
		for (int i = 0; i < n; i++)
		{
			if (rows[i].free < 0)
			{
				*total = BOOKING_STRIPES_LIMITED;
				return BOOKING_LOCK_NOT_FOUND;
			}
			*total += rows[i].free;
		}
		if (n == 0)
			return BOOKING_LOCK_NOT_FOUND;

		offset = StripeOffset(n);
		for (int k = 0; k < n; k++)
		{
			BookingStripeRow *s = &rows[(k + offset) % n];

			if (s->free < quantity)
				continue;
			if (first < 0)
				first = (k + offset) % n;
			switch (BookingRowTryLock(BOOKING_TABLE_STRIPES, home, &s->tid))
			{
				case BOOKING_ROW_LOCKED:
					if (!TakeFromLocked(row, row_nulls, s, booking_id))
						elog(ERROR, "stripe %d of resource %lld changed under its row lock",
							 s->stripe, (long long) resource);
					return BOOKING_LOCKED;
				case BOOKING_ROW_HELD:
				case BOOKING_ROW_MISSING:
					break;
			}
		}
		if (first < 0)
			return BOOKING_LOCK_NOT_FOUND;
		left_ms = BookingTimeLeft(timeout_ms, &deadline);
		if (left_ms <= 0)
			return BOOKING_LOCK_BUSY;

		wa.row = row;
		wa.row_nulls = row_nulls;
		wa.stripe = rows[first];
		wa.deadline = deadline;
		wa.booking_id = -1;
		switch (BookingWaitGuardedTry(RunWaitStripe, &wa, left_ms, &taken))
		{
			case BOOKING_LOCKED:
				if (taken)
				{
					*booking_id = wa.booking_id;
					return BOOKING_LOCKED;
				}
				break;
			case BOOKING_LOCK_BUSY:
				return BOOKING_LOCK_BUSY;
			default:
				return BOOKING_LOCK_RETRY;
		}

		/*
		 * The stripe ran short while we waited: near the end of a sale every
		 * buyer converges on the few stripes left.  Look again, a few times,
		 * before the slow path locks them all.
		 */
		if (round >= STRIPE_ROUNDS - 1)
			return BOOKING_LOCK_NOT_FOUND;
	}
}

typedef struct LockAllArgs
{
	int64		resource;
	BookingPlan *plan;
	int64		free;
} LockAllArgs;

static void
RunLockAll(void *arg)
{
	LockAllArgs *la = (LockAllArgs *) arg;
	Datum		values[2] = {Int64GetDatum(la->resource), Int64GetDatum(BookingHome(la->resource))};
	int			n = BookingExecute(la->plan, values, NULL, false, 0);

	la->free = 0;
	for (int i = 0; i < n; i++)
		la->free += BookingGetInt32(i, 1, NULL);
}

/* Locks every stripe in ascending order; returns their free seats. */
int64
BookingStripesLockAll(int64 resource, int timeout_ms, BookingLockOutcome *outcome)
{
	LockAllArgs la = {resource, &lock_all_plan, 0};

	/* the caller holds the resource row: only fast-path buyers hold stripes */
	if (timeout_ms > 0)
	{
		*outcome = BookingWaitGuarded(RunLockAll, &la, timeout_ms);
		return la.free;
	}

	/* NOWAIT; under a snapshot isolation level the call frame's guard catches it */
	la.plan = &lock_all_nowait_plan;
	*outcome = BOOKING_LOCKED;
	if (IsolationUsesXactSnapshot())
		RunLockAll(&la);
	else
		switch (BookingRunGuarded(RunLockAll, &la))
		{
			case BOOKING_GUARD_DONE:
				break;
			case BOOKING_GUARD_BUSY:
		case BOOKING_GUARD_UNREACHABLE:
				*outcome = BOOKING_LOCK_BUSY;
				break;
			default:
				*outcome = BOOKING_LOCK_RETRY;
		}
	return la.free;
}

/* Sets the stripes' free seats to an even split of free (all locked). */
void
BookingStripesSpread(int64 resource, int32 stripes, int64 free)
{
	Datum		values[4] = {Int64GetDatum(resource), Int64GetDatum(BookingHome(resource)),
	Int64GetDatum(free), Int32GetDatum(stripes)};

	(void) BookingExecute(&spread_plan, values, NULL, false, 0);
}

typedef struct WaitOneArgs
{
	int64		resource;
	bool		found;
	int32		stripe;
} WaitOneArgs;

static void
RunWaitOne(void *arg)
{
	WaitOneArgs *wa = (WaitOneArgs *) arg;
	Datum		values[2] = {Int64GetDatum(wa->resource), Int64GetDatum(BookingHome(wa->resource))};

	wa->found = BookingExecute(&wait_one_plan, values, NULL, false, 1) == 1;
	if (wa->found)
		wa->stripe = BookingGetInt32(0, 1, NULL);
}

/*
 * Locks one stripe to give seats back to: any unlocked one, else waits for
 * the first (timeout 0: busy).  The caller holds the resource row.
 */
BookingLockOutcome
BookingStripesLockOne(int64 resource, int32 stripes, int timeout_ms, int32 *stripe)
{
	Datum		values[4];
	WaitOneArgs wa = {resource, false, 0};
	BookingLockOutcome outcome;

	values[0] = Int64GetDatum(resource);
	values[1] = Int64GetDatum(BookingHome(resource));
	values[2] = Int32GetDatum(StripeOffset(stripes));
	values[3] = Int32GetDatum(Max(stripes, 1));
	if (BookingExecute(&lock_one_plan, values, NULL, false, 1) == 1)
	{
		*stripe = BookingGetInt32(0, 1, NULL);
		return BOOKING_LOCKED;
	}
	if (timeout_ms <= 0)
		return BOOKING_LOCK_BUSY;
	outcome = BookingWaitGuarded(RunWaitOne, &wa, timeout_ms);
	if (outcome == BOOKING_LOCKED && !wa.found)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("striped resource %lld has no stripes", (long long) resource),
				 errdetail("booking.resources says it is striped, but booking.resource_stripes has no row for it.")));
	*stripe = wa.stripe;
	return outcome;
}

/* Gives seats back to a stripe the caller has locked. */
void
BookingStripeAdd(int64 resource, int32 stripe, int32 seats)
{
	Datum		values[4] = {Int64GetDatum(resource), Int64GetDatum(BookingHome(resource)),
	Int32GetDatum(stripe), Int32GetDatum(seats)};

	(void) BookingExecute(&add_plan, values, NULL, false, 0);
}

/*
 * Whether the fast path must leave a resource's stripes alone: with a guest
 * limit (limit.c) or a line (line.c) every sale decides under the
 * resource row.
 */
static bool
StripesLimited(int32 guest_limit, int32 waiting)
{
	return guest_limit > 0 || waiting > 0;
}

/*
 * Replaces the stripes of r, whose row, and stripes if any, the caller
 * holds: none when stripes <= 1, else that many sharing free seats.
 */
void
BookingStripesRebuild(const BookingResource *r, int32 stripes, int64 free)
{
	Datum		values[4] = {Int64GetDatum(r->id), Int64GetDatum(r->home),
		Int32GetDatum(stripes), BoolGetDatum(StripesLimited(r->guest_limit, r->waiting))};

	(void) BookingExecute(&drop_stripes_plan, values, NULL, false, 0);
	if (stripes <= 1)
		return;
	(void) BookingExecute(&make_stripes_plan, values, NULL, false, 0);
	BookingStripesSpread(r->id, stripes, free);
}

/*
 * r's guest limit or line (row held by the caller) becomes guest_limit and
 * waiting: marks its stripes when that changes whether they step aside.
 */
void
BookingStripesMark(const BookingResource *r, int32 guest_limit, int32 waiting)
{
	Datum		values[3] = {Int64GetDatum(r->id), Int64GetDatum(r->home),
		BoolGetDatum(StripesLimited(guest_limit, waiting))};

	if (r->stripes <= 1 ||
		StripesLimited(guest_limit, waiting) == StripesLimited(r->guest_limit, r->waiting))
		return;
	(void) BookingExecute(&mark_stripes_plan, values, NULL, false, 0);
}
