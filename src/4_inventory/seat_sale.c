/*
 * seat_sale.c
 *	  What every path of reserve_seat shares: the request and the booking
 *	  row it writes, the outcome of an attempt, the sold-out answer, the slow
 *	  path that decides under the resource row through counter.c (which
 *	  reclaims lapsed holds, for either layout), and the paths through
 *	  statements at REPEATABLE READ and SERIALIZABLE.  The paths in C at
 *	  READ COMMITTED are seat_take.c's.
 *
 *	  A resource row carries its capacity and the seats taken by pending and
 *	  confirmed seat bookings.  A sale locks that one row, decides on what it
 *	  reads after the lock, bumps the counter and inserts the booking, so its
 *	  cost does not grow with the bookings already made.  A hold that lapsed
 *	  stays counted until someone reclaims it under the same row lock; a sale
 *	  does so only when the seats it needs are not otherwise there, so a
 *	  lapsed hold never blocks a sale.
 *
 *	  Layer 4, inventory.  Locks: the resource row (FOR NO KEY UPDATE), or
 *	  one stripe (stripes.c), then the lapsed booking rows it expires, which
 *	  no one else can hold without the resource lock.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/guard.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/shardplan.h"
#include "1_ground/spi.h"
#include "2_locks/lock.h"
#include "4_inventory/counter.h"
#include "4_inventory/limit.h"
#include "4_inventory/line.h"
#include "4_inventory/seat_row.h"
#include "4_inventory/seat_sale.h"
#include "4_inventory/stripes.h"

/*
 * An unlocked read: a sold-out answer needs no lock when the seats were not
 * there in a committed state and no lapsed hold could give them back.
 */
#define LAPSED_SEATS \
	"EXISTS (SELECT 1 FROM booking.bookings b " \
	"WHERE b.home OPERATOR(pg_catalog.=) $4 AND b.resource_id OPERATOR(pg_catalog.=) $1 " \
	"AND b.status OPERATOR(pg_catalog.=) 'pending'::booking.status " \
	"AND b.expires_at OPERATOR(pg_catalog.<=) $2 AND b.during IS NULL)"

static BookingPlan lapsed_plan = {
	"SELECT " LAPSED_SEATS, 4, {INT8OID, TIMESTAMPTZOID, INT4OID, INT8OID}
};

static BookingPlan peek_plan = {
	"SELECT r.capacity, r.taken, CASE WHEN r.stripes OPERATOR(pg_catalog.<=) 1 "
	"AND CAST(r.taken AS pg_catalog.int8) OPERATOR(pg_catalog.+) $3 OPERATOR(pg_catalog.>) r.capacity "
	"THEN " LAPSED_SEATS " ELSE false END, r.stripes, "
	/* striped: is there a stripe that can serve the quantity alone? */
	"r.stripes OPERATOR(pg_catalog.>) 1 AND EXISTS (SELECT 1 FROM booking.resource_stripes s "
	"WHERE s.home OPERATOR(pg_catalog.=) $4 AND s.resource_id OPERATOR(pg_catalog.=) $1 "
	"AND s.free OPERATOR(pg_catalog.>=) $3), r.waiting "
	"FROM booking.resources r WHERE r.home OPERATOR(pg_catalog.=) $4 AND r.id OPERATOR(pg_catalog.=) $1",
	4, {INT8OID, TIMESTAMPTZOID, INT4OID, INT8OID}
};

/* a striped resource no single stripe can serve: the total, and lapsed holds */
static BookingPlan striped_peek_plan = {
	"SELECT CAST(COALESCE(pg_catalog.sum(s.free), 0) AS pg_catalog.int4), "
	"EXISTS (SELECT 1 FROM booking.bookings b "
	"WHERE b.home OPERATOR(pg_catalog.=) $3 AND b.resource_id OPERATOR(pg_catalog.=) $1 "
	"AND b.status OPERATOR(pg_catalog.=) 'pending'::booking.status "
	"AND b.expires_at OPERATOR(pg_catalog.<=) $2 AND b.during IS NULL)"
	" FROM booking.resource_stripes s WHERE s.home OPERATOR(pg_catalog.=) $3 "
	"AND s.resource_id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, TIMESTAMPTZOID, INT8OID}
};

/*
 * Lock without waiting and take the seats in one statement ($1 and $2 of
 * seat_row.h).  The row is locked only when the seats looked there, so a
 * refusal takes no lock (and no commit flush).  No row: another transaction
 * holds the lock, the seats looked short, or the resource is striped or
 * unknown.  A NULL: we hold the lock but the seats were gone by then.  The
 * booking row follows in a statement of its own: under contention this one
 * mostly finds the row held, and an INSERT here would be set up for nothing.
 */
static BookingPlan take_now_plan = {
	"WITH l AS (SELECT id, capacity, taken FROM booking.resources "
	"WHERE home OPERATOR(pg_catalog.=) $7 AND id OPERATOR(pg_catalog.=) $1 "
	"AND stripes OPERATOR(pg_catalog.<=) 1 AND guest_limit IS NULL AND waiting OPERATOR(pg_catalog.=) 0 "
	"AND CAST(taken AS pg_catalog.int8) OPERATOR(pg_catalog.+) $2 OPERATOR(pg_catalog.<=) capacity "
	"FOR NO KEY UPDATE SKIP LOCKED), "
	"u AS (UPDATE booking.resources r SET taken = l.taken OPERATOR(pg_catalog.+) $2 FROM l "
	"WHERE r.home OPERATOR(pg_catalog.=) $7 AND r.id OPERATOR(pg_catalog.=) l.id "
	"AND CAST(l.taken AS pg_catalog.int8) OPERATOR(pg_catalog.+) $2 OPERATOR(pg_catalog.<=) l.capacity RETURNING r.taken) "
	"SELECT (SELECT u.taken FROM u) FROM l",
	BOOKING_SEAT_ROW_PARAMS, {BOOKING_SEAT_ROW_TYPES}
};

/*
 * The same decision after waiting for the lock (the statement may wait),
 * and the booking row with it: the lock is held from here to the commit,
 * so the less that follows, the sooner the next buyer gets the row.
 */
#define TAKE_WAIT_UPDATE \
	"UPDATE booking.resources SET taken = taken OPERATOR(pg_catalog.+) $2 " \
	"WHERE home OPERATOR(pg_catalog.=) $7 AND id OPERATOR(pg_catalog.=) $1 " \
	"AND stripes OPERATOR(pg_catalog.<=) 1 AND guest_limit IS NULL AND waiting OPERATOR(pg_catalog.=) 0 " \
	"AND CAST(taken AS pg_catalog.int8) OPERATOR(pg_catalog.+) $2 OPERATOR(pg_catalog.<=) capacity " \
	"RETURNING id"
static BookingPlan take_wait_plan = {
	"WITH u AS (" TAKE_WAIT_UPDATE ") " BOOKING_INSERT_SEAT_ROW("u"),
	BOOKING_SEAT_ROW_PARAMS, {BOOKING_SEAT_ROW_TYPES}
};

/* on Citus the decision alone; the row follows from VALUES (seat_row.c) */
static BookingPlan take_wait_alone_plan = {
	TAKE_WAIT_UPDATE, BOOKING_SEAT_ROW_PARAMS, {BOOKING_SEAT_ROW_TYPES}
};

void
BookingSeatPrepare(BookingSeatRequest *req)
{
	req->expires_at = req->has_hold ? req->now + req->hold_us : 0;
	req->row[0] = Int64GetDatum(req->resource);
	req->row[1] = Int32GetDatum(req->quantity);
	req->row[2] = PointerGetDatum(req->guest);
	req->row[3] = TimestampTzGetDatum(req->expires_at);
	req->row[4] = TimestampTzGetDatum(req->now);
	req->row[5] = BookingMakeRange(req->now, req->expires_at, !req->has_hold);
	req->row[6] = Int64GetDatum(req->home);
	memset(req->row_nulls, ' ', sizeof(req->row_nulls));
	if (!req->has_hold)
		req->row_nulls[3] = 'n';
	/* on Citus the booking's id is drawn to land in the resource's shard */
	if (BookingDistributed())
		req->row[7] = Int64GetDatum(BookingNewId("bookings_id_seq", req->home));
	else
		req->row_nulls[7] = 'n';
	req->row[8] = PointerGetDatum(req->metadata);
	if (req->metadata == NULL)
		req->row_nulls[8] = 'n';
	req->booking_id = -1;
	req->limited = false;
}

bool
BookingSeatTakeWaitStatement(void *arg)
{
	BookingSeatRequest *req = (BookingSeatRequest *) arg;

	return BookingSeatTakeWithRow(&take_wait_plan, &take_wait_alone_plan,
								  req->row, req->row_nulls, &req->booking_id);
}

/*
 * Locks the counter row without waiting and takes the seats in the same
 * statement: BOOKING_SEATS_TAKEN, BOOKING_SEATS_SHORT (we hold the lock, the
 * seats are not there), or BOOKING_SEATS_ELSEWHERE (another transaction holds
 * the row, the seats looked short, or the resource is striped or unknown:
 * the peek tells which).
 */
static BookingSeatOutcome
TakeNow(BookingSeatRequest *req)
{
	bool		isnull;

	if (BookingExecuteOnShard(&take_now_plan, DatumGetInt64(req->row[6]), req->row,
							  req->row_nulls, false, 1) == 0)
		return BOOKING_SEATS_ELSEWHERE;
	(void) BookingGetInt32(0, 1, &isnull);
	return isnull ? BOOKING_SEATS_SHORT : BOOKING_SEATS_TAKEN;
}

/* A guarded wait's outcome as a take outcome. */
BookingSeatOutcome
BookingSeatOutcomeOf(BookingLockOutcome outcome, bool taken)
{
	switch (outcome)
	{
		case BOOKING_LOCKED:
			return taken ? BOOKING_SEATS_TAKEN : BOOKING_SEATS_SHORT;
		case BOOKING_LOCK_BUSY:
			return BOOKING_SEATS_BUSY;
		default:
			return BOOKING_SEATS_RETRY;
	}
}

/*
 * The same conditional UPDATE, waiting for the row (bounded, in a guarded
 * subtransaction), so the row lock is held from the decision to the commit
 * and no longer.  When the seats were gone by the time the row was ours,
 * PostgreSQL has still locked it (its recheck of the updated row locks the
 * newest version first): rolling the subtransaction back releases it, so a
 * refused buyer in an open transaction blocks no one.
 */
static BookingSeatOutcome
TakeWaiting(BookingSeatRequest *req)
{
	BookingLockOutcome outcome;
	bool		taken;

	if (req->timeout_ms <= 0)
		return BOOKING_SEATS_BUSY;
	outcome = BookingWaitGuardedTry(BookingSeatTakeWaitStatement, req, req->timeout_ms, &taken);
	return BookingSeatOutcomeOf(outcome, taken);
}

void
BookingSeatSoldOut(BookingResult *res, BookingSeatRequest *req, int32 capacity, int64 taken)
{
	BookingSetResult(res, BOOKING_SOLD_OUT, -1,
					 "Sold out: %d %s requested and resource %lld has %lld of %d left.",
					 req->quantity, req->quantity == 1 ? "seat was" : "seats were",
					 (long long) req->resource, (long long) Max(capacity - taken, 0),
					 capacity);
}

typedef struct ReclaimArgs
{
	BookingSeatRequest *req;
	BookingResult *res;
} ReclaimArgs;

/*
 * Under the resource lock: expire the lapsed holds and decide again.  True
 * when the seats are now taken; false with res set otherwise.
 */
static bool
RunReclaimAndTake(void *arg)
{
	ReclaimArgs *ra = (ReclaimArgs *) arg;
	BookingSeatRequest *req = ra->req;
	BookingResult *res = ra->res;
	BookingResource r;
	int64		free_left;

	if (!BookingLockResourceFor(req->resource, req->timeout_ms, &r, res))
		return false;
	req->limited = r.guest_limit > 0;
	if (!BookingWaitlistLetsIn(&r, res) ||
		!BookingGuestLimitAllows(&r, req->guest, req->quantity, BOOKING_LIMIT_SEATS, req->now, res))
		return false;
	switch (BookingCounterTakeSeats(&r, req->quantity, req->timeout_ms, req->now, &free_left))
	{
		case BOOKING_COUNTER_TAKEN:
			return true;
		case BOOKING_COUNTER_SOLD_OUT:
			BookingSeatSoldOut(res, req, r.capacity, r.capacity - free_left);
			return false;
		case BOOKING_COUNTER_BUSY:
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, req->resource, req->timeout_ms);
			return false;
		case BOOKING_COUNTER_RETRY:
			break;
	}
	BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, req->resource, req->timeout_ms);
	return false;
}

/*
 * The seats are short at the lock: lapsed holds may still be counted.
 * Expire them under the lock and decide again, in a subtransaction that is
 * kept only when the seats are taken: a refusal keeps no lock (on the row or
 * its stripes) and writes nothing, and the lapsed holds stay counted until a
 * sale that needs them, or hold_expire, reclaims them.  Returns true when
 * the seats are now taken.
 */
bool
BookingSeatReclaimAndTake(BookingSeatRequest *req, BookingResult *res)
{
	ReclaimArgs ra = {req, res};
	bool		taken = false;

	switch (BookingRunGuardedTry(RunReclaimAndTake, &ra, &taken))
	{
		case BOOKING_GUARD_DONE:
			return taken;
		case BOOKING_GUARD_BUSY:
		case BOOKING_GUARD_UNREACHABLE:
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, req->resource, req->timeout_ms);
			return false;
		case BOOKING_GUARD_RETRY:
		case BOOKING_GUARD_OVERLAP:
		case BOOKING_GUARD_MOVED:
			break;
	}
	BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, req->resource, req->timeout_ms);
	return false;
}

/* Acts on a take outcome; false with res set when nothing was taken. */
bool
BookingSeatAfterTake(BookingSeatRequest *req, BookingSeatOutcome outcome, BookingResult *res)
{
	switch (outcome)
	{
		case BOOKING_SEATS_TAKEN:
			return true;
		case BOOKING_SEATS_SHORT:
		case BOOKING_SEATS_ELSEWHERE:
			return BookingSeatReclaimAndTake(req, res);
		case BOOKING_SEATS_BUSY:
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, req->resource, req->timeout_ms);
			return false;
		case BOOKING_SEATS_RETRY:
			break;
	}
	BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, req->resource, req->timeout_ms);
	return false;
}

/* Whether lapsed seat holds could give seats back (latest committed state). */
bool
BookingSeatLapsedExist(BookingSeatRequest *req)
{
	Datum		values[4] = {Int64GetDatum(req->resource), TimestampTzGetDatum(req->now),
	Int32GetDatum(req->quantity), Int64GetDatum(req->home)};

	(void) BookingExecuteLatest(&lapsed_plan, values, NULL, 1);
	return BookingGetBool(0, 1);
}

/*
 * Takes the seats through statements: at REPEATABLE READ and SERIALIZABLE,
 * and at READ COMMITTED when the stripes went away under the C paths
 * (seat_take.c).  The common case is one statement (the counter row is free
 * and has the seats); otherwise an unlocked peek at the latest committed
 * state answers sold_out, not_found or "striped" without queueing behind
 * the sale.  A resource this backend last saw striped goes to its stripes
 * first.  At SERIALIZABLE the attempts without waiting and the peek are
 * skipped: SSI would track them.  False with res set when it did not.
 */
bool
BookingSeatTakeByStatements(BookingSeatRequest *req, BookingResult *res)
{
	Datum		values[4];
	int32		capacity;
	int32		taken;
	int32		stripes;
	BookingSeatOutcome outcome = BOOKING_SEATS_ELSEWHERE;
	bool		serializable = IsolationIsSerializable();

	if (IsolationUsesXactSnapshot() && !serializable)
	{
		int32		hinted = BookingStripesHint(req->resource);

		if (hinted > 1)
		{
			switch (BookingStripesTakeFast(req->row, req->row_nulls, hinted, 0, &req->booking_id))
			{
				case BOOKING_LOCKED:
					return true;
				case BOOKING_LOCK_RETRY:
					return BookingSeatAfterTake(req, BOOKING_SEATS_RETRY, res);
				default:
					/* the peek below remembers it again if it still is striped */
					BookingStripesRemember(req->resource, 0);
					break;
			}
		}
	}

	if (IsolationUsesXactSnapshot() && (!serializable || req->timeout_ms <= 0))
	{
		outcome = TakeNow(req);
		if (outcome != BOOKING_SEATS_ELSEWHERE)
			return BookingSeatAfterTake(req, outcome, res);
	}
	if (serializable)
		return BookingSeatAfterTake(req, req->timeout_ms <= 0 ?
									BOOKING_SEATS_ELSEWHERE : TakeWaiting(req), res);

	values[0] = Int64GetDatum(req->resource);
	values[1] = TimestampTzGetDatum(req->now);
	values[2] = Int32GetDatum(req->quantity);
	values[3] = Int64GetDatum(req->home);
	if (BookingExecuteLatest(&peek_plan, values, NULL, 1) == 0)
	{
		BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, req->resource, req->timeout_ms);
		return false;
	}
	capacity = BookingGetInt32(0, 1, NULL);
	taken = BookingGetInt32(0, 2, NULL);
	stripes = BookingGetInt32(0, 4, NULL);
	/*
	 * A line in the latest committed state: freed seats go to it, not to
	 * us.  Decided here, as the locked paths decide it, and not by a wait
	 * that lock_timeout 0 would answer busy.
	 */
	{
		BookingResource line;

		memset(&line, 0, sizeof(line));
		line.id = req->resource;
		line.waiting = BookingGetInt32(0, 6, NULL);
		if (!BookingWaitlistLetsIn(&line, res))
			return false;
	}
	/*
	 * Go to the stripes first next time only while one can serve: once they
	 * run dry, a sold-out answer should not pay for a failed attempt first.
	 */
	BookingStripesRemember(req->resource, BookingGetBool(0, 5) ? stripes : 0);
	if (stripes <= 1)
	{
		if ((int64) taken + req->quantity > capacity && !BookingGetBool(0, 3))
		{
			BookingSeatSoldOut(res, req, capacity, taken);
			return false;
		}
		return BookingSeatAfterTake(req, TakeWaiting(req), res);
	}

	/* hot inventory */
	if (!BookingGetBool(0, 5))
	{
		int32		free;

		values[2] = Int64GetDatum(req->home);
		(void) BookingExecuteLatest(&striped_peek_plan, values, NULL, 1);
		free = BookingGetInt32(0, 1, NULL);
		if (free < req->quantity && !BookingGetBool(0, 2))
		{
			BookingSeatSoldOut(res, req, capacity, (int64) capacity - free);
			return false;
		}
	}
	switch (BookingStripesTakeFast(req->row, req->row_nulls, stripes, req->timeout_ms,
								   &req->booking_id))
	{
		case BOOKING_LOCKED:
			return true;
		case BOOKING_LOCK_NOT_FOUND:
			return BookingSeatReclaimAndTake(req, res);
		case BOOKING_LOCK_BUSY:
			return BookingSeatAfterTake(req, BOOKING_SEATS_BUSY, res);
		case BOOKING_LOCK_RETRY:
			break;
	}
	return BookingSeatAfterTake(req, BOOKING_SEATS_RETRY, res);
}
