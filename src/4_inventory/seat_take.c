/*
 * seat_take.c
 *	  Taking the seats of a reserve_seat and writing its booking row: at
 *	  READ COMMITTED in C, otherwise through statements (seat_sale.c).
 *
 *	  At READ COMMITTED one index probe reads the counter row's latest
 *	  committed version and locks that version if it is free
 *	  (2_locks/rowlock.c), so the common sale is that probe and one
 *	  statement; a buyer who finds the row held waits in the queue of the
 *	  resource's buyers, and the statement that then takes the seats finds
 *	  the row locked by us.  A striped resource goes to its stripes
 *	  (stripes.c).  When the seats look short, the slow path locks the
 *	  resource row and decides through counter.c (seat_sale.c).
 *
 *	  Layer 4, inventory.  Locks: the resource row, or one stripe, as
 *	  seat_sale.c says.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "2_locks/lock.h"
#include "2_locks/rowlock.h"
#include "4_inventory/line.h"
#include "4_inventory/seat_row.h"
#include "4_inventory/seat_sale.h"
#include "4_inventory/seat_take.h"
#include "4_inventory/stripes.h"

/*
 * take_wait_plan for a row this transaction has just locked at version $10
 * (rowlock.c): a TID scan finds it, whatever the planner thinks of the
 * table's size.  On Citus a shard's query goes through Citus's planner, and
 * the row is found by its key.
 */
static BookingPlan take_locked_plan = {
	"WITH u AS (UPDATE booking.resources SET taken = taken OPERATOR(pg_catalog.+) $2 "
	"WHERE ctid OPERATOR(pg_catalog.=) $10 AND home OPERATOR(pg_catalog.=) $7 "
	"AND id OPERATOR(pg_catalog.=) $1 AND stripes OPERATOR(pg_catalog.<=) 1 AND guest_limit IS NULL AND waiting OPERATOR(pg_catalog.=) 0 "
	"AND CAST(taken AS pg_catalog.int8) OPERATOR(pg_catalog.+) $2 OPERATOR(pg_catalog.<=) capacity "
	"RETURNING id) " BOOKING_INSERT_SEAT_ROW("u"),
	BOOKING_SEAT_ROW_PARAMS + 1, {BOOKING_SEAT_ROW_TYPES, TIDOID}
};

/* The row is ours at version tid: take the seats and write the booking row. */
static bool
RunTakeLocked(BookingSeatRequest *req, ItemPointer tid)
{
	Datum		values[BOOKING_SEAT_ROW_PARAMS + 1];
	char		nulls[BOOKING_SEAT_ROW_PARAMS + 1];

	if (BookingDistributed())
		return BookingSeatTakeWaitStatement(req);
	memcpy(values, req->row, sizeof(req->row));
	memcpy(nulls, req->row_nulls, sizeof(req->row_nulls));
	values[BOOKING_SEAT_ROW_PARAMS] = PointerGetDatum(tid);
	nulls[BOOKING_SEAT_ROW_PARAMS] = ' ';
	if (BookingExecute(&take_locked_plan, values, nulls, false, 1) != 1)
		return false;
	req->booking_id = BookingGetInt64(0, 1, NULL);
	return true;
}

typedef struct QueuedArgs
{
	BookingSeatRequest *req;
	ItemPointerData tid;
	TimestampTz deadline;
} QueuedArgs;

/*
 * In the queue of the resource's buyers, then the row (rowlock.c), then the
 * decision on its latest version: a refusal rolls back and so leaves the
 * row to the next buyer at once.
 */
static bool
RunTakeQueued(void *arg)
{
	QueuedArgs *qa = (QueuedArgs *) arg;
	BookingSeatRequest *req = qa->req;
	BookingResource r;

	if (BookingRowWaitResource(req->resource, req->home, &qa->tid, qa->deadline, &r) !=
		BOOKING_ROW_LOCKED)
		return false;
	if (r.stripes > 1 || r.guest_limit > 0 || r.waiting > 0 ||
		(int64) r.taken + req->quantity > r.capacity)
		return false;
	return RunTakeLocked(req, &qa->tid);
}

static BookingSeatOutcome
TakeQueued(BookingSeatRequest *req, ItemPointer tid)
{
	QueuedArgs	qa;
	BookingLockOutcome outcome;
	bool		taken;

	if (req->timeout_ms <= 0)
		return BOOKING_SEATS_BUSY;
	qa.req = req;
	qa.tid = *tid;
	qa.deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), req->timeout_ms);
	outcome = BookingWaitGuardedTry(RunTakeQueued, &qa, req->timeout_ms, &taken);
	return BookingSeatOutcomeOf(outcome, taken);
}

/*
 * READ COMMITTED, a striped resource (stripes.c): true when decided, false
 * when it has no stripes (any more).  Goes to the stripes first next time
 * only while one can serve: once they run dry, a sold-out answer should not
 * pay for a failed attempt first.
 */
static bool
TakeStriped(BookingSeatRequest *req, BookingResult *res, bool *taken)
{
	int64		total;
	int			n;
	BookingResource r;
	ItemPointerData tid;

	*taken = false;
	switch (BookingStripesTakeCommitted(req->row, req->row_nulls, req->timeout_ms,
										&req->booking_id, &total, &n))
	{
		case BOOKING_LOCKED:
			BookingStripesRemember(req->resource, n);
			*taken = true;
			return true;
		case BOOKING_LOCK_BUSY:
			*taken = BookingSeatAfterTake(req, BOOKING_SEATS_BUSY, res);
			return true;
		case BOOKING_LOCK_RETRY:
			*taken = BookingSeatAfterTake(req, BOOKING_SEATS_RETRY, res);
			return true;
		case BOOKING_LOCK_NOT_FOUND:
			break;
	}
	BookingStripesRemember(req->resource, 0);
	if (n == 0)
		return false;
	if (total == BOOKING_STRIPES_LIMITED)
	{
		*taken = BookingSeatReclaimAndTake(req, res);
		return true;
	}
	if (total < req->quantity && !BookingSeatLapsedExist(req))
	{
		/* the capacity, for the message */
		if (!BookingRowPeekResource(req->resource, req->home, &r, &tid, true))
			BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, req->resource, req->timeout_ms);
		else
			BookingSeatSoldOut(res, req, r.capacity, (int64) r.capacity - total);
		return true;
	}
	/* the seats are there, but no single stripe has them: the slow path */
	*taken = BookingSeatReclaimAndTake(req, res);
	return true;
}

/*
 * READ COMMITTED: one index probe reads the row's latest committed version
 * and locks that version if it is free (rowlock.c), so the common sale is
 * that probe and one statement, and a buyer who finds the row held queues
 * for it without a statement that failed first.  Returns false, deciding
 * nothing, when a striped resource has no stripes (any more).
 */
static bool
TakeCommitted(BookingSeatRequest *req, BookingResult *res, bool *taken)
{
	BookingResource r;
	ItemPointerData tid;

	*taken = false;
	if (!BookingRowPeekResource(req->resource, req->home, &r, &tid, true))
	{
		BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, req->resource, req->timeout_ms);
		return true;
	}
	if (r.stripes > 1)
		return TakeStriped(req, res, taken);
	/* a line in the latest committed state: freed seats go to it, not to us */
	if (!BookingWaitlistLetsIn(&r, res))
		return true;
	if ((int64) r.taken + req->quantity > r.capacity)
	{
		/* no lock for a refusal, unless lapsed holds may give seats back */
		if (!BookingSeatLapsedExist(req))
			BookingSeatSoldOut(res, req, r.capacity, r.taken);
		else
			*taken = BookingSeatReclaimAndTake(req, res);
		return true;
	}
	/* a guest limit is checked under the row lock */
	if (r.guest_limit > 0)
	{
		*taken = BookingSeatReclaimAndTake(req, res);
		return true;
	}
	switch (BookingRowTryLock(BOOKING_TABLE_RESOURCES, req->home, &tid))
	{
		case BOOKING_ROW_LOCKED:
			*taken = BookingSeatAfterTake(req, RunTakeLocked(req, &tid) ?
										  BOOKING_SEATS_TAKEN : BOOKING_SEATS_SHORT, res);
			return true;
		case BOOKING_ROW_MISSING:
			BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, req->resource, req->timeout_ms);
			return true;
		case BOOKING_ROW_HELD:
			break;
	}
	*taken = BookingSeatAfterTake(req, TakeQueued(req, &tid), res);
	return true;
}

/*
 * Takes the seats; false with res set when it did not.  At READ COMMITTED
 * see TakeCommitted; otherwise, and when the stripes went away under us,
 * the statements of seat_sale.c.
 */
static bool
TakeSeats(BookingSeatRequest *req, BookingResult *res)
{
	if (!IsolationUsesXactSnapshot())
	{
		bool		done;

		if (BookingStripesHint(req->resource) > 1 && TakeStriped(req, res, &done))
			return done;
		if (TakeCommitted(req, res, &done))
			return done;
		/* the stripes went away under us: the statements */
	}
	return BookingSeatTakeByStatements(req, res);
}

/*
 * Takes the seats of req, prepared by BookingSeatPrepare, and writes its
 * booking row (req->booking_id); false with res set when it did not.
 */
bool
BookingSeatTake(BookingSeatRequest *req, BookingResult *res)
{
	if (!TakeSeats(req, res))
		return false;

	/* the slow paths take the seats without writing the row */
	if (req->booking_id < 0)
	{
		req->booking_id = BookingSeatRowInsert(req->row, req->row_nulls, req->limited);
	}
	return true;
}
