/*
 * seat.c
 *	  Counted inventory: booking.reserve_seat.
 *
 *	  A resource row carries its capacity and the seats taken by pending and
 *	  confirmed seat bookings.  reserve_seat locks that one row (lock.c),
 *	  decides on what it reads after the lock, bumps the counter and inserts
 *	  the booking, so its cost does not grow with the bookings already made.
 *	  A hold that lapsed stays counted until someone reclaims it under the
 *	  same row lock; reserve_seat does so only when the seats it needs are
 *	  not otherwise there, so a lapsed hold never blocks a sale.
 *
 *	  At READ COMMITTED the row is read and locked in C (rowlock.c), and a
 *	  buyer who finds it held waits in the queue of the resource's buyers;
 *	  the statement that takes the seats then finds the row locked by us.
 *	  When the seats look short, the slow path locks the resource row and
 *	  decides through counter.c, which reclaims lapsed holds, for either
 *	  layout.
 *
 *	  Locks: the resource row (FOR NO KEY UPDATE), then the lapsed booking
 *	  rows it expires, which no one else can hold without the resource lock.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"

PG_FUNCTION_INFO_V1(booking_reserve_seat);

/* the booking row alone, for the paths that take the seats otherwise */
static BookingPlan insert_plan = {
	BOOKING_INSERT_SEAT_ROW("(SELECT) AS one"),
	BOOKING_SEAT_ROW_PARAMS, {BOOKING_SEAT_ROW_TYPES}
};
/* the same on a resource with a guest limit: the row is counted (limit.c) */
static BookingPlan insert_limited_plan = {
	BOOKING_INSERT_LIMITED_SEAT_ROW("(SELECT) AS one"),
	BOOKING_SEAT_ROW_PARAMS, {BOOKING_SEAT_ROW_TYPES}
};

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
 * booking.h).  The row is locked only when the seats looked there, so a
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
static BookingPlan take_wait_plan = {
	"WITH u AS (UPDATE booking.resources SET taken = taken OPERATOR(pg_catalog.+) $2 "
	"WHERE home OPERATOR(pg_catalog.=) $7 AND id OPERATOR(pg_catalog.=) $1 "
	"AND stripes OPERATOR(pg_catalog.<=) 1 AND guest_limit IS NULL AND waiting OPERATOR(pg_catalog.=) 0 "
	"AND CAST(taken AS pg_catalog.int8) OPERATOR(pg_catalog.+) $2 OPERATOR(pg_catalog.<=) capacity "
	"RETURNING id) " BOOKING_INSERT_SEAT_ROW("u"),
	BOOKING_SEAT_ROW_PARAMS, {BOOKING_SEAT_ROW_TYPES}
};

/*
 * take_wait_plan for a row this transaction has just locked at version $9
 * (rowlock.c): a TID scan finds it, whatever the planner thinks of the
 * table's size.  On Citus a shard's query goes through Citus's planner, and
 * the row is found by its key.
 */
static BookingPlan take_locked_plan = {
	"WITH u AS (UPDATE booking.resources SET taken = taken OPERATOR(pg_catalog.+) $2 "
	"WHERE ctid OPERATOR(pg_catalog.=) $9 AND home OPERATOR(pg_catalog.=) $7 "
	"AND id OPERATOR(pg_catalog.=) $1 AND stripes OPERATOR(pg_catalog.<=) 1 AND guest_limit IS NULL AND waiting OPERATOR(pg_catalog.=) 0 "
	"AND CAST(taken AS pg_catalog.int8) OPERATOR(pg_catalog.+) $2 OPERATOR(pg_catalog.<=) capacity "
	"RETURNING id) " BOOKING_INSERT_SEAT_ROW("u"),
	BOOKING_SEAT_ROW_PARAMS + 1, {BOOKING_SEAT_ROW_TYPES, TIDOID}
};

typedef enum TakeOutcome
{
	SEATS_TAKEN,
	SEATS_SHORT,
	SEATS_ELSEWHERE,
	SEATS_BUSY,
	SEATS_RETRY
} TakeOutcome;

typedef struct SeatRequest
{
	int64		resource;
	int64		home;			/* the resource's (shard.c) */
	text	   *guest;
	int32		quantity;
	bool		has_hold;
	int64		hold_us;
	int			timeout_ms;
	TimestampTz now;
	TimestampTz expires_at;		/* of the hold */
	Datum		row[BOOKING_SEAT_ROW_PARAMS];	/* $1..$6 of booking.h */
	char		row_nulls[BOOKING_SEAT_ROW_PARAMS];
	int64		booking_id;		/* -1 until a statement wrote the row */
	bool		limited;		/* the resource has a guest limit */
} SeatRequest;

static void
PrepareSeatRow(SeatRequest *req)
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
	req->booking_id = -1;
	req->limited = false;
}

static bool
RunTakeWait(void *arg)
{
	SeatRequest *req = (SeatRequest *) arg;

	if (BookingExecute(&take_wait_plan, req->row, req->row_nulls, false, 1) != 1)
		return false;
	req->booking_id = BookingGetInt64(0, 1, NULL);
	return true;
}

/*
 * Locks the counter row without waiting and takes the seats in the same
 * statement: SEATS_TAKEN, SEATS_SHORT (we hold the lock, the seats are not
 * there), or SEATS_ELSEWHERE (another transaction holds the row, the seats
 * looked short, or the resource is striped or unknown: the peek tells which).
 */
static TakeOutcome
TakeNow(SeatRequest *req)
{
	bool		isnull;

	if (BookingExecute(&take_now_plan, req->row, req->row_nulls, false, 1) == 0)
		return SEATS_ELSEWHERE;
	(void) BookingGetInt32(0, 1, &isnull);
	return isnull ? SEATS_SHORT : SEATS_TAKEN;
}

/* A guarded wait's outcome as a take outcome. */
static TakeOutcome
TakeOutcomeOf(BookingLockOutcome outcome, bool taken)
{
	switch (outcome)
	{
		case BOOKING_LOCKED:
			return taken ? SEATS_TAKEN : SEATS_SHORT;
		case BOOKING_LOCK_BUSY:
			return SEATS_BUSY;
		default:
			return SEATS_RETRY;
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
static TakeOutcome
TakeWaiting(SeatRequest *req)
{
	BookingLockOutcome outcome;
	bool		taken;

	if (req->timeout_ms <= 0)
		return SEATS_BUSY;
	outcome = BookingWaitGuardedTry(RunTakeWait, req, req->timeout_ms, &taken);
	return TakeOutcomeOf(outcome, taken);
}

static void
SetSoldOut(BookingResult *res, SeatRequest *req, int32 capacity, int64 taken)
{
	BookingSetResult(res, BOOKING_SOLD_OUT, -1,
					 "Sold out: %d %s requested and resource %lld has %lld of %d left.",
					 req->quantity, req->quantity == 1 ? "seat was" : "seats were",
					 (long long) req->resource, (long long) Max(capacity - taken, 0),
					 capacity);
}

typedef struct ReclaimArgs
{
	SeatRequest *req;
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
	SeatRequest *req = ra->req;
	BookingResult *res = ra->res;
	BookingResource r;
	BookingLockOutcome outcome;
	int64		free_left;

	outcome = BookingLockResource(req->resource, req->timeout_ms, &r);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, req->resource, req->timeout_ms);
		return false;
	}
	req->limited = r.guest_limit > 0;
	if (!BookingWaitlistLetsIn(&r, res) ||
		!BookingGuestLimitAllows(&r, req->guest, req->quantity, false, req->now, res))
		return false;
	switch (BookingCounterTakeSeats(&r, req->quantity, req->timeout_ms, req->now, &free_left))
	{
		case BOOKING_COUNTER_TAKEN:
			return true;
		case BOOKING_COUNTER_SOLD_OUT:
			SetSoldOut(res, req, r.capacity, r.capacity - free_left);
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
static bool
ReclaimAndTake(SeatRequest *req, BookingResult *res)
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
static bool
AfterTake(SeatRequest *req, TakeOutcome outcome, BookingResult *res)
{
	switch (outcome)
	{
		case SEATS_TAKEN:
			return true;
		case SEATS_SHORT:
		case SEATS_ELSEWHERE:
			return ReclaimAndTake(req, res);
		case SEATS_BUSY:
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, req->resource, req->timeout_ms);
			return false;
		case SEATS_RETRY:
			break;
	}
	BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, req->resource, req->timeout_ms);
	return false;
}

/* Whether lapsed seat holds could give seats back (latest committed state). */
static bool
LapsedSeatsExist(SeatRequest *req)
{
	Datum		values[4] = {Int64GetDatum(req->resource), TimestampTzGetDatum(req->now),
	Int32GetDatum(req->quantity), Int64GetDatum(req->home)};

	(void) BookingExecuteLatest(&lapsed_plan, values, NULL, 1);
	return BookingGetBool(0, 1);
}

/* The row is ours at version tid: take the seats and write the booking row. */
static bool
RunTakeLocked(SeatRequest *req, ItemPointer tid)
{
	Datum		values[BOOKING_SEAT_ROW_PARAMS + 1];
	char		nulls[BOOKING_SEAT_ROW_PARAMS + 1];

	if (BookingDistributed())
		return RunTakeWait(req);
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
	SeatRequest *req;
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
	SeatRequest *req = qa->req;
	BookingResource r;

	if (BookingRowWaitResource(req->resource, req->home, &qa->tid, qa->deadline, &r) !=
		BOOKING_ROW_LOCKED)
		return false;
	if (r.stripes > 1 || r.guest_limit > 0 || r.waiting > 0 ||
		(int64) r.taken + req->quantity > r.capacity)
		return false;
	return RunTakeLocked(req, &qa->tid);
}

static TakeOutcome
TakeQueued(SeatRequest *req, ItemPointer tid)
{
	QueuedArgs	qa;
	BookingLockOutcome outcome;
	bool		taken;

	if (req->timeout_ms <= 0)
		return SEATS_BUSY;
	qa.req = req;
	qa.tid = *tid;
	qa.deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), req->timeout_ms);
	outcome = BookingWaitGuardedTry(RunTakeQueued, &qa, req->timeout_ms, &taken);
	return TakeOutcomeOf(outcome, taken);
}

/*
 * READ COMMITTED, a striped resource (stripes.c): true when decided, false
 * when it has no stripes (any more).  Goes to the stripes first next time
 * only while one can serve: once they run dry, a sold-out answer should not
 * pay for a failed attempt first.
 */
static bool
TakeStriped(SeatRequest *req, BookingResult *res, bool *taken)
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
			*taken = AfterTake(req, SEATS_BUSY, res);
			return true;
		case BOOKING_LOCK_RETRY:
			*taken = AfterTake(req, SEATS_RETRY, res);
			return true;
		case BOOKING_LOCK_NOT_FOUND:
			break;
	}
	BookingStripesRemember(req->resource, 0);
	if (n == 0)
		return false;
	if (total == BOOKING_STRIPES_LIMITED)
	{
		*taken = ReclaimAndTake(req, res);
		return true;
	}
	if (total < req->quantity && !LapsedSeatsExist(req))
	{
		/* the capacity, for the message */
		if (!BookingRowPeekResource(req->resource, req->home, &r, &tid))
			BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, req->resource, req->timeout_ms);
		else
			SetSoldOut(res, req, r.capacity, (int64) r.capacity - total);
		return true;
	}
	/* the seats are there, but no single stripe has them: the slow path */
	*taken = ReclaimAndTake(req, res);
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
TakeCommitted(SeatRequest *req, BookingResult *res, bool *taken)
{
	BookingResource r;
	ItemPointerData tid;

	*taken = false;
	if (!BookingRowPeekResource(req->resource, req->home, &r, &tid))
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
		if (!LapsedSeatsExist(req))
			SetSoldOut(res, req, r.capacity, r.taken);
		else
			*taken = ReclaimAndTake(req, res);
		return true;
	}
	/* a guest limit is checked under the row lock */
	if (r.guest_limit > 0)
	{
		*taken = ReclaimAndTake(req, res);
		return true;
	}
	switch (BookingRowTryLock(BOOKING_TABLE_RESOURCES, req->home, &tid))
	{
		case BOOKING_ROW_LOCKED:
			*taken = AfterTake(req, RunTakeLocked(req, &tid) ? SEATS_TAKEN : SEATS_SHORT, res);
			return true;
		case BOOKING_ROW_MISSING:
			BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, req->resource, req->timeout_ms);
			return true;
		case BOOKING_ROW_HELD:
			break;
	}
	*taken = AfterTake(req, TakeQueued(req, &tid), res);
	return true;
}

/*
 * Takes the seats; false with res set when it did not.  At READ COMMITTED
 * see TakeCommitted.  Under a snapshot isolation level the rows are read
 * through statements: the common case is one statement (the counter row is
 * free and has the seats); otherwise an unlocked peek at the latest
 * committed state answers sold_out, not_found or "striped" without queueing
 * behind the sale.  A resource this backend last saw striped goes to its
 * stripes first.  At SERIALIZABLE the attempts without waiting and the peek
 * are skipped: SSI would track them.
 */
static bool
TakeSeats(SeatRequest *req, BookingResult *res)
{
	Datum		values[4];
	int32		capacity;
	int32		taken;
	int32		stripes;
	TakeOutcome outcome = SEATS_ELSEWHERE;
	bool		serializable = IsolationIsSerializable();

	if (!IsolationUsesXactSnapshot())
	{
		bool		done;

		if (BookingStripesHint(req->resource) > 1 && TakeStriped(req, res, &done))
			return done;
		if (TakeCommitted(req, res, &done))
			return done;
		/* the stripes went away under us: the statements below */
	}
	else if (!serializable)
	{
		int32		hinted = BookingStripesHint(req->resource);

		if (hinted > 1)
		{
			switch (BookingStripesTakeFast(req->row, req->row_nulls, hinted, 0, &req->booking_id))
			{
				case BOOKING_LOCKED:
					return true;
				case BOOKING_LOCK_RETRY:
					return AfterTake(req, SEATS_RETRY, res);
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
		if (outcome != SEATS_ELSEWHERE)
			return AfterTake(req, outcome, res);
	}
	if (serializable)
		return AfterTake(req, req->timeout_ms <= 0 ? SEATS_ELSEWHERE : TakeWaiting(req), res);

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
			SetSoldOut(res, req, capacity, taken);
			return false;
		}
		return AfterTake(req, TakeWaiting(req), res);
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
			SetSoldOut(res, req, capacity, (int64) capacity - free);
			return false;
		}
	}
	switch (BookingStripesTakeFast(req->row, req->row_nulls, stripes, req->timeout_ms,
								   &req->booking_id))
	{
		case BOOKING_LOCKED:
			return true;
		case BOOKING_LOCK_NOT_FOUND:
			return ReclaimAndTake(req, res);
		case BOOKING_LOCK_BUSY:
			return AfterTake(req, SEATS_BUSY, res);
		case BOOKING_LOCK_RETRY:
			break;
	}
	return AfterTake(req, SEATS_RETRY, res);
}

static void
ReserveSeatBody(void *state, BookingResult *res)
{
	SeatRequest *req = (SeatRequest *) state;

	PrepareSeatRow(req);
	if (!TakeSeats(req, res))
		return;

	/* the slow paths take the seats without writing the row */
	if (req->booking_id < 0)
	{
		(void) BookingExecute(req->limited ? &insert_limited_plan : &insert_plan,
							  req->row, req->row_nulls, false, 1);
		req->booking_id = BookingGetInt64(0, 1, NULL);
	}
	BookingEmitEvent("reserved", req->home, req->booking_id, NULL, "ok");

	if (req->has_hold)
		BookingSetResult(res, BOOKING_CREATED, req->booking_id,
						 "Held %d %s on resource %lld until %s; confirm before then.",
						 req->quantity, req->quantity == 1 ? "seat" : "seats",
						 (long long) req->resource,
						 timestamptz_to_str(req->expires_at));
	else
		BookingSetResult(res, BOOKING_CREATED, req->booking_id,
						 "Reserved %d %s on resource %lld.",
						 req->quantity, req->quantity == 1 ? "seat" : "seats",
						 (long long) req->resource);
}

/*
 * reserve_seat(resource, guest, quantity, hold, idempotency_key, lock_timeout)
 */
Datum
booking_reserve_seat(PG_FUNCTION_ARGS)
{
	SeatRequest req;
	BookingCall call;
	char	   *key;

	req.resource = BookingArgId(fcinfo, 0, "resource");
	req.home = BookingHome(req.resource);
	req.guest = BookingArgGuest(fcinfo, 1);
	req.quantity = BookingArgQuantity(fcinfo, 2);
	req.has_hold = BookingArgHold(fcinfo, 3, &req.hold_us);
	key = BookingArgKey(fcinfo, 4);
	req.timeout_ms = BookingArgLockTimeout(fcinfo, 5);
	req.now = GetCurrentTimestamp();
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_reserve_seat", req.home, req.resource);

	memset(&call, 0, sizeof(call));
	call.key = key;
	if (key != NULL)
	{
		const char *fields[4];

		fields[0] = psprintf(INT64_FORMAT, req.resource);
		fields[1] = text_to_cstring(req.guest);
		fields[2] = psprintf("%d", req.quantity);
		fields[3] = req.has_hold ? psprintf(INT64_FORMAT, req.hold_us) : NULL;
		call.request = BookingRequestString("reserve_seat", 4, fields);
	}
	call.timeout_ms = req.timeout_ms;
	call.resource = req.resource;
	call.home = req.home;
	call.now = req.now;
	call.body = ReserveSeatBody;
	call.state = &req;

	PG_RETURN_DATUM(BookingCallDatum(fcinfo, &call));
}

BOOKING_SHARD_TWIN(reserve_seat)
