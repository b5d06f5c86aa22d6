/*
 * counter.c
 *	  Counted inventory behind one interface: the seats of a resource, kept
 *	  either on its own row (resources.taken) or on its stripes
 *	  (resource_stripes.free, stripes.c), for every call that holds the
 *	  resource row: take seats, give them back, read the free seats, set them,
 *	  and reclaim the seats of lapsed holds.  Callers never ask which layout
 *	  a resource has; stripes.c's fast path is the one place that takes seats
 *	  without the resource row.
 *
 *	  Every function here expects the caller to hold the resource row lock
 *	  and r to be what it read under that lock.
 *
 *	  Layer 4, inventory.  Locks: the resource row (the caller's), then
 *	  stripes in ascending order, then booking rows.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/result.h"
#include "1_ground/spi.h"
#include "2_locks/lock.h"
#include "3_frame/events.h"
#include "4_inventory/counter.h"
#include "4_inventory/stripes.h"

static BookingPlan reclaim_plan = {
	"UPDATE booking.bookings SET status = 'expired'::booking.status "
	"WHERE home OPERATOR(pg_catalog.=) $3 AND resource_id OPERATOR(pg_catalog.=) $1 "
	"AND status OPERATOR(pg_catalog.=) 'pending'::booking.status "
	"AND expires_at OPERATOR(pg_catalog.<=) $2 AND during IS NULL RETURNING id, quantity",
	3, {INT8OID, TIMESTAMPTZOID, INT8OID}
};
static BookingPlan write_taken_plan = {
	"UPDATE booking.resources SET taken = $2 "
	"WHERE home OPERATOR(pg_catalog.=) $3 AND id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, INT4OID, INT8OID}
};

static BookingPlan set_layout_plan = {
	"UPDATE booking.resources SET stripes = $3, taken = $4 "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	4, {INT8OID, INT8OID, INT4OID, INT4OID}
};

static bool
Striped(const BookingResource *r)
{
	return r->stripes > 1;
}

/* Sets the counter on the resource row. */
static void
WriteTaken(const BookingResource *r, int32 taken)
{
	Datum		values[3] = {Int64GetDatum(r->id), Int32GetDatum(taken), Int64GetDatum(r->home)};

	(void) BookingExecute(&write_taken_plan, values, NULL, false, 0);
}

/*
 * Expires the lapsed seat holds of the resource; returns the seats they
 * held.  The counter still counts them: the caller decides what to write.
 */
int32
BookingCounterReclaim(const BookingResource *r, TimestampTz now)
{
	Datum		values[3] = {Int64GetDatum(r->id), TimestampTzGetDatum(now), Int64GetDatum(r->home)};

	int			n = BookingExecute(&reclaim_plan, values, NULL, false, 0);

	return BookingCounterExpired(r->home, n);
}

/*
 * The n holds the last statement expired (its rows: id, seats): one
 * `expired` event each.  Returns their seats.
 */
int32
BookingCounterExpired(int64 home, int n)
{
	int64	   *ids = palloc(sizeof(int64) * Max(n, 1));
	int32		seats = 0;

	/* read every row first: each event runs a statement of its own */
	for (int i = 0; i < n; i++)
	{
		ids[i] = BookingGetInt64(i, 1, NULL);
		seats += BookingGetInt32(i, 2, NULL);
	}
	for (int i = 0; i < n; i++)
		BookingEmitEvent("expired", home, ids[i], "pending", "hold_expired");
	pfree(ids);
	return seats;
}

/*
 * The free seats.  Striped: every stripe is locked first (waiting up to
 * timeout_ms, 0: not at all); *outcome says whether they were.
 */
int64
BookingCounterFree(const BookingResource *r, int timeout_ms, BookingLockOutcome *outcome)
{
	if (Striped(r))
		return BookingStripesLockAll(r->id, timeout_ms, outcome);
	*outcome = BOOKING_LOCKED;
	return (int64) r->capacity - r->taken;
}

/*
 * BookingCounterFree for a call's body: false with res set to the lock's
 * answer when the stripes could not be had.
 */
bool
BookingCounterFreeFor(const BookingResource *r, int timeout_ms, int64 *free, BookingResult *res)
{
	BookingLockOutcome outcome;

	*free = BookingCounterFree(r, timeout_ms, &outcome);
	if (outcome == BOOKING_LOCKED)
		return true;
	BookingSetLockOutcome(res, outcome, r->id, timeout_ms);
	return false;
}

/*
 * Makes the counter say taken seats of capacity (the resource row's
 * capacity may be about to change to it).  Striped: the stripes, locked by
 * BookingCounterFree, get an even split of the free seats.
 */
void
BookingCounterSetTaken(const BookingResource *r, int32 capacity, int32 taken)
{
	if (Striped(r))
		BookingStripesSpread(r->id, r->stripes, (int64) capacity - taken);
	else if (taken != r->taken)
		WriteTaken(r, taken);
}

/*
 * Takes quantity seats, reclaiming lapsed holds when the free seats fall
 * short.  *free_left: the free seats after the decision.  A refusal that
 * expired holds gives their seats back too, so the counter always matches
 * the bookings (reserve_seat rolls a refusal back anyway).
 */
BookingCounterTake
BookingCounterTakeSeats(const BookingResource *r, int32 quantity, int timeout_ms,
						TimestampTz now, int64 *free_left)
{
	BookingLockOutcome outcome;
	int64		free;
	int32		reclaimed = 0;
	bool		taken;

	free = BookingCounterFree(r, timeout_ms, &outcome);
	if (outcome == BOOKING_LOCK_BUSY)
		return BOOKING_COUNTER_BUSY;
	if (outcome != BOOKING_LOCKED)
		return BOOKING_COUNTER_RETRY;

	if (free < quantity)
	{
		reclaimed = BookingCounterReclaim(r, now);
		free += reclaimed;
	}
	taken = free >= quantity;
	*free_left = taken ? free - quantity : free;
	if (taken || reclaimed > 0)
		BookingCounterSetTaken(r, r->capacity, (int32) (r->capacity - *free_left));
	return taken ? BOOKING_COUNTER_TAKEN : BOOKING_COUNTER_SOLD_OUT;
}

/*
 * Gets ready to give seats back, before anything is written: a striped
 * resource needs one stripe locked (any free one, else it waits for the
 * first, up to timeout_ms; 0: busy at once).
 */
BookingLockOutcome
BookingCounterOpenGiveBack(const BookingResource *r, int timeout_ms, BookingGiveBack *gb)
{
	gb->resource = *r;
	gb->stripe = 0;
	if (!Striped(r))
		return BOOKING_LOCKED;
	return BookingStripesLockOne(r->id, r->stripes, timeout_ms, &gb->stripe);
}

/* Gives seats back (after BookingCounterOpenGiveBack answered locked). */
void
BookingCounterGiveBack(BookingGiveBack *gb, int32 seats)
{
	if (seats <= 0)
		return;
	if (Striped(&gb->resource))
		BookingStripeAdd(gb->resource.id, gb->stripe, seats);
	else
	{
		WriteTaken(&gb->resource, gb->resource.taken - seats);
		gb->resource.taken -= seats;
	}
}

/*
 * Moves the free seats to another layout: stripes > 1 of them, or the
 * counter row (0 or 1).  The caller holds the row and, through
 * BookingCounterFree, the stripes.
 */
void
BookingCounterSetLayout(const BookingResource *r, int32 stripes, int64 free)
{
	Datum		values[4] = {Int64GetDatum(r->id), Int64GetDatum(r->home), Int32GetDatum(stripes),
	Int32GetDatum(stripes > 1 ? 0 : (int32) (r->capacity - free))};

	BookingStripesRebuild(r, stripes, free);
	(void) BookingExecute(&set_layout_plan, values, NULL, false, 0);
}
