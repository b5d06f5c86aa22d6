/*
 * capacity.c
 *	  Capacity over time: a slot booking holds quantity units of its
 *	  resource's capacity over during (booking.reserve_slot, in
 *	  6_calls/slot.c), and at no instant may the slot bookings that block
 *	  hold more than the capacity.  No constraint can say that, so the
 *	  decision is made under the resource row's lock, which every writer of
 *	  a slot holds: the bookings that overlap the new range are read through
 *	  bookings_slots_idx, a B-tree on (home, resource_id, lower(during)), on the
 *	  latest committed state (at REPEATABLE READ the transaction's snapshot
 *	  may be older than the last holder of the lock), and swept in time
 *	  order.  They are found by where they start, a B-tree read from the
 *	  window's lower bound less the resource's longest slot booking
 *	  (resources.longest_slot, which BookingSlotMark keeps): the cost grows
 *	  with the bookings that start within that reach of the range, not with
 *	  all of the resource's.
 *
 *	  A slot booking has no footprint (blocked is NULL), so the exclusion
 *	  constraint of stays leaves it alone.  Stays and slots may share a
 *	  resource: a stay takes every unit of it over its footprint, so the
 *	  sweep counts a stay as the whole capacity, and a stay on a resource
 *	  that has sold slots (resources.slotted, set by the first slot) is
 *	  refused where any slot blocks.
 *
 *	  Layer 4, inventory.  Locks: none of its own; the caller holds the
 *	  resource row.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "3_frame/events.h"
#include "4_inventory/capacity.h"
#include "4_inventory/range.h"

/*
 * Generic on one server: its parameters never change the plan that fits
 * (the index on home, resource_id and during), but the plan cache, which
 * prices the generic plan far above a custom one, would plan every call
 * again, half of reserve_slot's time (bench/slots.sh).  Custom on Citus,
 * whose planner routes this UNION ALL to its shard only with the values.
 */
static BookingPlan use_plan = {
	BOOKING_SLOT_USE_SQL("$6"), 6,
	{INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID, INT8OID, TIMESTAMPTZOID},
	NULL, CURSOR_OPT_GENERIC_PLAN
};
static BookingPlan use_plan_distributed = {
	BOOKING_SLOT_USE_SQL("$6"), 6,
	{INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID, INT8OID, TIMESTAMPTZOID}
};

/* $7 the home, $8 the id (NULL: the sequence's next), $9 limited, $10 metadata, $11 quantity */
static BookingPlan insert_plan = {
	"INSERT INTO booking.bookings "
	"(home, id, resource_id, guest, quantity, during, status, expires_at, created_at, validity, "
	"limited, metadata) "
	"VALUES ($7, COALESCE($8, pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass)), "
	"$1, $2, $11, $3, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6, $9, $10) RETURNING id",
	11, {INT8OID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID, INT8OID,
	INT8OID, BOOLOID, JSONBOID, INT4OID}
};

/* $3 the new longest slot, an interval of microseconds alone (exact at any date) */
static BookingPlan mark_plan = {
	"UPDATE booking.resources SET slotted = true, longest_slot = $3 "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, INT8OID, INTERVALOID}
};

typedef struct Change
{
	TimestampTz at;
	int64		delta;
} Change;

static int
CompareChanges(const void *a, const void *b)
{
	const Change *x = (const Change *) a;
	const Change *y = (const Change *) b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	/* [) ranges: what ends at an instant is gone before what starts there */
	if (x->delta != y->delta)
		return x->delta < y->delta ? -1 : 1;
	return 0;
}

/*
 * The use over [lower, upper) of the n rows of the last statement whose
 * columns col, col + 1 and col + 2 are BOOKING_SLOT_USE_SQL's (a row whose
 * lower bound is NULL, from an outer join, holds nothing).
 */
void
BookingSlotUseOfRows(int n, int col, TimestampTz lower, TimestampTz upper, BookingSlotUse *use)
{
	Change	   *changes = palloc(sizeof(Change) * Max(2 * n, 1));
	int			m = 0;

	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		TimestampTz a = DatumGetTimestampTz(BookingGetDatum(i, col, &isnull));
		TimestampTz b;
		int32		q;
		int64		units;

		if (isnull)
			continue;
		b = DatumGetTimestampTz(BookingGetDatum(i, col + 1, &isnull));
		q = BookingGetInt32(i, col + 2, &isnull);
		units = isnull ? BOOKING_SLOT_WHOLE : q;
		/* clipped to the window: only the instants in it matter */
		changes[m].at = Max(a, lower);
		changes[m++].delta = units;
		changes[m].at = Min(b, upper);
		changes[m++].delta = -units;
	}
	qsort(changes, m, sizeof(Change), CompareChanges);
	use->lower = lower;
	use->upper = upper;
	use->n = m;
	use->at = palloc(sizeof(TimestampTz) * Max(m, 1));
	use->delta = palloc(sizeof(int64) * Max(m, 1));
	for (int i = 0; i < m; i++)
	{
		use->at[i] = changes[i].at;
		use->delta[i] = changes[i].delta;
	}
	pfree(changes);
}

/* t moved by d, held inside the timestamps PostgreSQL can write */
static TimestampTz
Shifted(TimestampTz t, int64 d)
{
	TimestampTz s;

	if (pg_add_s64_overflow(t, d, &s) || s < MIN_TIMESTAMP)
		return d < 0 ? MIN_TIMESTAMP : END_TIMESTAMP - 1;
	if (s >= END_TIMESTAMP)
		return END_TIMESTAMP - 1;
	return s;
}

/*
 * The use of r's units over [lower, upper) by the bookings that block a
 * newcomer of validity, but booking except (-1: none), latest committed:
 * the caller holds r's lock, and those who held it before committed.
 */
void
BookingSlotReadUse(const BookingResource *r, TimestampTz lower, TimestampTz upper,
				   Datum validity, int64 except, BookingSlotUse *use)
{
	Datum		values[6];
	int			n;

	values[0] = Int64GetDatum(r->id);
	values[1] = BookingMakeRange(lower, upper, false);
	values[2] = validity;
	values[3] = Int64GetDatum(r->home);
	values[4] = Int64GetDatum(except);
	values[5] = TimestampTzGetDatum(Shifted(lower, -r->longest_slot));
	n = BookingExecuteLatest(BookingDistributed() ? &use_plan_distributed : &use_plan,
							 values, NULL, 0);
	BookingSlotUseOfRows(n, 1, lower, upper, use);
}

/*
 * Whether quantity more units fit at every instant of the window; when not,
 * *short_at is the earliest instant they do not and *free_at what is free
 * there.
 */
bool
BookingSlotFits(const BookingSlotUse *use, int32 capacity, int32 quantity,
				TimestampTz *short_at, int64 *free_at)
{
	int64		used = 0;
	int			i = 0;
	TimestampTz t = use->lower;

	for (;;)
	{
		/* every change at t, then the use that holds from t on */
		while (i < use->n && use->at[i] <= t)
			used += use->delta[i++];
		if (t < use->upper && used + quantity > capacity)
		{
			*short_at = t;
			*free_at = Max((int64) capacity - used, 0);
			return false;
		}
		if (i >= use->n)
			return true;
		t = use->at[i];
	}
}

/*
 * The most units slot bookings hold at any instant of the window, and the
 * first instant they hold that many (*at); stays are left out: they take
 * whatever the capacity is.
 */
int64
BookingSlotPeak(const BookingSlotUse *use, TimestampTz *at)
{
	int64		used = 0;
	int64		peak = 0;

	*at = use->lower;
	for (int i = 0; i < use->n; i++)
	{
		if (use->delta[i] != BOOKING_SLOT_WHOLE && use->delta[i] != -BOOKING_SLOT_WHOLE)
			used += use->delta[i];
		/* the peak is read once every change at an instant is applied */
		if ((i + 1 == use->n || use->at[i + 1] != use->at[i]) && used > peak)
		{
			peak = used;
			*at = use->at[i];
		}
	}
	return peak;
}

/*
 * Inserts a slot booking of quantity units on r, which the caller holds and
 * has found room on; returns its id.
 */
int64
BookingSlotInsert(BookingStayRequest *req, const BookingResource *r, int32 quantity)
{
	Datum		values[11];
	char		nulls[11];
	int64		id;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(r->id);
	BookingStayRowValues(req, values, nulls);
	values[6] = Int64GetDatum(r->home);
	/* on Citus the booking's id is drawn to land in the resource's shard */
	if (BookingDistributed())
		values[7] = Int64GetDatum(BookingNewId("bookings_id_seq", r->home));
	else
		nulls[7] = 'n';
	values[8] = BoolGetDatum(r->guest_limit > 0);
	values[9] = PointerGetDatum(req->metadata);
	if (req->metadata == NULL)
		nulls[9] = 'n';
	values[10] = Int32GetDatum(quantity);
	(void) BookingExecute(&insert_plan, values, nulls, false, 1);
	id = BookingGetInt64(0, 1, NULL);
	BookingEmitEvent("reserved", r->home, id, NULL, "ok");
	return id;
}

/*
 * Records that r holds a slot booking over [lower, upper), which the caller
 * holds r to write: r sells slots from then on (its stays look for slots in
 * their way, BookingStayLeavesSlots), and its longest_slot grows to the
 * booking's length if it is longer.  Written only when either changes: once
 * per resource, or seldom.
 */
void
BookingSlotMark(const BookingResource *r, TimestampTz lower, TimestampTz upper)
{
	int64		length;
	Interval   *span;
	Datum		values[3];

	/* from 4713 BC to 294276 AD is more microseconds than an int64 holds */
	if (pg_sub_s64_overflow(upper, lower, &length))
		length = PG_INT64_MAX;
	if (r->slotted && length <= r->longest_slot)
		return;
	span = palloc0(sizeof(Interval));
	span->time = Max(length, r->longest_slot);
	values[0] = Int64GetDatum(r->id);
	values[1] = Int64GetDatum(r->home);
	values[2] = IntervalPGetDatum(span);
	(void) BookingExecute(&mark_plan, values, NULL, false, 0);
}

void
BookingSlotSetShort(BookingResult *res, int64 resource, int32 quantity, TimestampTz short_at,
					int64 free_at)
{
	BookingSetResult(res, BOOKING_SOLD_OUT, -1,
					 "Resource %lld has %lld %s free at %s; %d %s asked for.",
					 (long long) resource, (long long) free_at, free_at == 1 ? "unit" : "units",
					 timestamptz_to_str(short_at), quantity, quantity == 1 ? "was" : "were");
}

/*
 * Whether a stay of r over [lower, upper) (validity, but booking except)
 * leaves every slot of r alone: a stay takes all the units, so any slot
 * booking that blocks in its footprint is in its way.  Free for a resource
 * that never sold a slot.  False with res set (unavailable) otherwise.
 */
bool
BookingStayLeavesSlots(const BookingResource *r, TimestampTz lower, TimestampTz upper,
					   Datum validity, int64 except, BookingResult *res)
{
	BookingSlotUse use;

	if (!r->slotted)
		return true;
	BookingSlotReadUse(r, Shifted(lower, -r->buffer_before), Shifted(upper, r->buffer_after),
					   validity, except, &use);
	/* other stays are the constraint's to refuse */
	for (int i = 0; i < use.n; i++)
	{
		if (use.delta[i] > 0 && use.delta[i] < BOOKING_SLOT_WHOLE)
		{
			BookingSetResult(res, BOOKING_UNAVAILABLE, -1,
							 "Resource %lld has slot bookings from %s within that range; a stay takes all of its units.",
							 (long long) r->id, timestamptz_to_str(use.at[i]));
			return false;
		}
	}
	return true;
}
