/*
 * slots.c
 *	  booking.free_slots, and the "next free slot" that unavailable and
 *	  just_taken answers carry in their message.  The query rides the GiST
 *	  index of bookings_no_overlap.  A stay's footprint (bookings.blocked)
 *	  is its range widened by its resource's buffers, so a free slot is a
 *	  gap between footprints less the buffers a new stay brings.
 *
 *	  With opening hours (hours.c) free_slots lists only open time: each
 *	  gap cut to the open stretches it meets.
 *
 *	  Layer 4, inventory; free_slots, a read, sits here with the gaps it
 *	  reads.  Read-only; takes no locks.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/rangetypes.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "4_inventory/hours.h"
#include "4_inventory/slots.h"

PG_FUNCTION_INFO_V1(booking_free_slots);

/* how far ahead the next free slot is looked for */
#define NEXT_SLOT_HORIZON_USECS ((int64) 366 * USECS_PER_DAY)

/*
 * The gaps between the footprints of the stays that block (range.c) around
 * the window $2 widened by the resource's buffers (a stay fits in a gap when
 * it and its buffers do), in time order, with those buffers; no row for an
 * unknown resource.  One statement, so that on Citus it is one routed read.
 */
#define FREE_SLOTS_QUERY "SELECT s, r.buffer_before, r.buffer_after, r.opening_hours, r.time_zone " \
	"FROM booking.resources r, " \
	"LATERAL (SELECT " BOOKING_SQL_WIDENED("pg_catalog.lower($2)", "pg_catalog.upper($2)", \
										"r.buffer_before", "r.buffer_after") " AS w) AS wnd, " \
	"LATERAL pg_catalog.unnest(pg_catalog.tstzmultirange(wnd.w) OPERATOR(pg_catalog.-) " \
	"COALESCE((SELECT pg_catalog.range_agg(b.blocked) FROM booking.bookings b " \
	"WHERE b.home OPERATOR(pg_catalog.=) $4 AND b.resource_id OPERATOR(pg_catalog.=) $1 " \
	"AND b.blocked OPERATOR(pg_catalog.&&) wnd.w " \
	"AND b.validity OPERATOR(pg_catalog.&&) $3 " \
	"AND b.blocked IS NOT NULL " \
	"AND b.status IN ('pending'::booking.status, 'confirmed'::booking.status)), " \
	"'{}'::pg_catalog.tstzmultirange)) AS s " \
	"WHERE r.home OPERATOR(pg_catalog.=) $4 AND r.id OPERATOR(pg_catalog.=) $1 " \
	"ORDER BY s"

static BookingPlan free_slots_plan = {
	FREE_SLOTS_QUERY, 4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};

/*
 * The same query for the SnapshotSelf read of the next-free-slot hint.  A
 * plan of its own: a cached plan is not re-planned when enable_indexonlyscan
 * changes, and an index-only scan cannot run on a non-MVCC snapshot.
 */
static BookingPlan free_slots_committed_plan = {
	FREE_SLOTS_QUERY, 4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};

/* where a run of RunFreeSlots looked, and the resource's buffers */
typedef struct SlotWindow
{
	TimestampTz lower;
	TimestampTz upper;
	int64		before;
	int64		after;
	int			n;				/* gaps, read into lower[] and upper[] by ReadGaps */
	TimestampTz *gap_lower;
	TimestampTz *gap_upper;
	bool		has_hours;		/* the resource's opening hours, cut to the window */
	BookingOpenTime open;
} SlotWindow;

/* t + d, kept within the timestamps PostgreSQL can represent */
static TimestampTz
ShiftClamped(TimestampTz t, int64 d)
{
	TimestampTz r;

	if (pg_add_s64_overflow(t, d, &r))
		return d > 0 ? END_TIMESTAMP - 1 : MIN_TIMESTAMP;
	return Min(Max(r, MIN_TIMESTAMP), END_TIMESTAMP - 1);
}

/* A stay's footprint on r: [lower, upper) widened by r's buffers. */
Datum
BookingStayFootprint(TimestampTz lower, TimestampTz upper, const BookingResource *r)
{
	return BookingMakeRange(ShiftClamped(lower, -r->buffer_before),
							ShiftClamped(upper, r->buffer_after), false);
}

/* the n gaps of the last statement, out of SPI's rows */
static void
ReadGaps(SlotWindow *w, int n)
{
	TypeCacheEntry *typcache = lookup_type_cache(TSTZRANGEOID, TYPECACHE_RANGE_INFO);

	w->n = n;
	w->gap_lower = palloc(sizeof(TimestampTz) * Max(n, 1));
	w->gap_upper = palloc(sizeof(TimestampTz) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		RangeBound	lo;
		RangeBound	hi;
		bool		empty;

		range_deserialize(typcache, DatumGetRangeTypeP(BookingGetDatum(i, 1, &isnull)), &lo, &hi, &empty);
		w->gap_lower[i] = DatumGetTimestampTz(lo.val);
		w->gap_upper[i] = DatumGetTimestampTz(hi.val);
	}
}

/*
 * The pieces of [lower, upper) that are open (all of it without hours), in
 * time order, at least min_us long; false when there is none.  *k: the open
 * stretch to start from, moved on.
 */
static bool
NextOpenPiece(const SlotWindow *w, TimestampTz lower, TimestampTz upper, int64 min_us, int *k,
			  TimestampTz *a, TimestampTz *b)
{
	if (!w->has_hours)
	{
		if (*k > 0)
			return false;
		*k = 1;
		*a = lower;
		*b = upper;
		return true;
	}
	for (; *k < w->open.n; (*k)++)
	{
		int64		length;

		*a = Max(lower, w->open.lower[*k]);
		*b = Min(upper, w->open.upper[*k]);
		if (w->open.lower[*k] >= upper)
			return false;
		if (*b <= *a)
			continue;
		if (pg_sub_s64_overflow(*b, *a, &length) || length >= min_us)
		{
			(*k)++;
			return true;
		}
	}
	return false;
}

/*
 * The gaps between footprints around [w->lower, w->upper), in time order,
 * and the resource's buffers; the caller shrinks the gaps by them (SlotOf).
 */
static int
RunFreeSlots(int64 resource, SlotWindow *w, TimestampTz now, bool latest)
{
	Datum		values[4];
	bool		isnull;
	int			n;

	values[0] = Int64GetDatum(resource);
	values[1] = BookingMakeRange(w->lower, w->upper, false);
	values[2] = BookingMakeRange(now, 0, true);
	values[3] = Int64GetDatum(BookingHome(resource));
	if (latest)
		n = BookingExecuteCommitted(&free_slots_committed_plan, values, NULL, 0);
	else
		n = BookingExecute(&free_slots_plan, values, NULL, true, 0);
	ReadGaps(w, n);
	w->before = w->after = 0;
	w->has_hours = false;
	if (n > 0)
	{
		bool		no_hours;
		Datum		hours = BookingGetDatum(0, 4, &no_hours);

		w->before = BookingIntervalUsecs(DatumGetIntervalP(BookingGetDatum(0, 2, &isnull)),
										 "buffer_before");
		w->after = BookingIntervalUsecs(DatumGetIntervalP(BookingGetDatum(0, 3, &isnull)),
										"buffer_after");
		w->has_hours = !no_hours;
		/* a statement of its own, after the gaps were copied out */
		if (w->has_hours)
			BookingOpenTimeOf(PointerGetDatum(PG_DETOAST_DATUM_COPY(hours)),
							  PointerGetDatum(DatumGetTextPCopy(BookingGetDatum(0, 5, &isnull))),
							  w->lower, w->upper, &w->open);
	}
	return n;
}

/*
 * Where stays may lie in gap i of the last RunFreeSlots: the gap less the
 * buffers, within the window.  True when that is at least min_us long.  In
 * C, so that a gap of hundreds of thousands of years, whose length
 * overflows an interval, still counts.
 */
static bool
SlotOf(int i, const SlotWindow *w, int64 min_us, TimestampTz *lower, TimestampTz *upper)
{
	int64		length;

	*lower = Max(ShiftClamped(w->gap_lower[i], w->before), w->lower);
	*upper = Min(ShiftClamped(w->gap_upper[i], -w->after), w->upper);
	if (*upper <= *lower)
		return false;
	if (pg_sub_s64_overflow(*upper, *lower, &length))
		return true;
	return length >= min_us;
}

/*
 * The first free slot of length_us at or after from, within the horizon
 * (clipped to the last representable instant).  Runs inside the caller's
 * SPI connection.
 */
bool
BookingNextFreeSlot(int64 resource, TimestampTz from, int64 length_us,
					TimestampTz now, TimestampTz *start)
{
	SlotWindow	w;
	int			n;

	w.lower = from;
	if (pg_add_s64_overflow(from, NEXT_SLOT_HORIZON_USECS, &w.upper) || !IS_VALID_TIMESTAMP(w.upper))
		w.upper = END_TIMESTAMP - 1;
	if (w.upper <= from)
		return false;
	n = RunFreeSlots(resource, &w, now, true);
	for (int i = 0; i < n; i++)
	{
		TimestampTz lower;
		TimestampTz upper;
		TimestampTz a;
		TimestampTz b;
		int			k = 0;

		if (SlotOf(i, &w, length_us, &lower, &upper) &&
			NextOpenPiece(&w, lower, upper, length_us, &k, &a, &b))
		{
			*start = a;
			return true;
		}
	}
	return false;
}

/* " The next free slot of the same length is [a, b)." or "" */
void
BookingDescribeNextSlot(char *buf, size_t len, int64 resource,
						TimestampTz lower, TimestampTz upper, TimestampTz now)
{
	TimestampTz start;
	char	   *from;

	buf[0] = '\0';
	if (!BookingNextFreeSlot(resource, lower, upper - lower, now, &start))
		return;
	from = pstrdup(timestamptz_to_str(start));
	snprintf(buf, len, " The next free slot of the same length is from %s to %s.",
			 from, timestamptz_to_str(start + (upper - lower)));	/* fits: found in range */
}

static void
PutSlot(ReturnSetInfo *rsinfo, TimestampTz lower, TimestampTz upper)
{
	bool		isnull = false;
	Datum		value = BookingMakeRange(lower, upper, false);

	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
}

/*
 * free_slots(resource, within, min_length) returns setof tstzrange
 */
Datum
booking_free_slots(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		resource;
	TimestampTz lower;
	TimestampTz upper;
	Interval   *min_length;
	int64		min_us;
	int			n;
	SlotWindow	w;

	resource = BookingArgId(fcinfo, 0, "resource");
	BookingArgDuring(fcinfo, 1, "within", &lower, &upper);
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("min_length must not be null")));
	min_length = PG_GETARG_INTERVAL_P(2);
	min_us = BookingIntervalUsecs(min_length, "min_length");
	if (min_us < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_length must not be negative"),
				 errdetail("The min_length given is %s.", BookingDescribeInterval(min_length))));

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);

	SPI_connect();
	/* lapsed holds judged at the statement's start: STABLE, as declared */
	w.lower = lower;
	w.upper = upper;
	n = RunFreeSlots(resource, &w, GetCurrentStatementStartTimestamp(), false);
	for (int i = 0; i < n; i++)
	{
		TimestampTz slot_lower;
		TimestampTz slot_upper;

		TimestampTz a;
		TimestampTz b;
		int			k = 0;

		if (!SlotOf(i, &w, min_us, &slot_lower, &slot_upper))
			continue;
		/* only open time, when the resource has opening hours (hours.c) */
		while (NextOpenPiece(&w, slot_lower, slot_upper, min_us, &k, &a, &b))
			PutSlot(rsinfo, a, b);
	}
	SPI_finish();

	return (Datum) 0;
}
