/*
 * slots.c
 *	  booking.free_slots, and the "next free slot" that unavailable and
 *	  just_taken answers carry in their message.  Read-only; takes no locks.
 *	  The query rides the GiST index of bookings_no_overlap.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/rangetypes.h"
#include "utils/timestamp.h"

#include "booking.h"

PG_FUNCTION_INFO_V1(booking_free_slots);

/* how far ahead the next free slot is looked for */
#define NEXT_SLOT_HORIZON_USECS ((int64) 366 * USECS_PER_DAY)

#define FREE_SLOTS_QUERY "SELECT s FROM pg_catalog.unnest(pg_catalog.tstzmultirange($2) OPERATOR(pg_catalog.-) " \
	"COALESCE((SELECT pg_catalog.range_agg(b.during) FROM booking.bookings b " \
	"WHERE b.home OPERATOR(pg_catalog.=) $4 AND b.resource_id OPERATOR(pg_catalog.=) $1 " \
	"AND b.during OPERATOR(pg_catalog.&&) $2 " \
	"AND b.validity OPERATOR(pg_catalog.&&) $3 " \
	"AND b.during IS NOT NULL " \
	"AND b.status IN ('pending'::booking.status, 'confirmed'::booking.status)), " \
	"'{}'::pg_catalog.tstzmultirange)) AS s " \
	"WHERE EXISTS (SELECT 1 FROM booking.resources r WHERE r.home OPERATOR(pg_catalog.=) $4 " \
	"AND r.id OPERATOR(pg_catalog.=) $1) " \
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

/* the gaps, in time order; the caller filters them by length */
static int
RunFreeSlots(int64 resource, Datum within, TimestampTz now, bool latest)
{
	Datum		values[4];

	values[0] = Int64GetDatum(resource);
	values[1] = within;
	values[2] = BookingMakeRange(now, 0, true);
	values[3] = Int64GetDatum(BookingHome(resource));
	if (latest)
		return BookingExecuteCommitted(&free_slots_committed_plan, values, NULL, 0);
	return BookingExecute(&free_slots_plan, values, NULL, true, 0);
}

/*
 * Whether gap i of the last RunFreeSlots is at least min_us long, and its
 * bounds.  In C, so that a gap of hundreds of thousands of years, whose
 * length overflows an interval, still counts.
 */
static bool
GapAtLeast(int i, int64 min_us, TimestampTz *lower, TimestampTz *upper)
{
	bool		isnull;
	RangeBound	lo;
	RangeBound	hi;
	bool		empty;
	int64		length;

	range_deserialize(lookup_type_cache(TSTZRANGEOID, TYPECACHE_RANGE_INFO),
					  DatumGetRangeTypeP(BookingGetDatum(i, 1, &isnull)), &lo, &hi, &empty);
	*lower = DatumGetTimestampTz(lo.val);
	*upper = DatumGetTimestampTz(hi.val);
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
	TimestampTz until;
	int			n;

	if (pg_add_s64_overflow(from, NEXT_SLOT_HORIZON_USECS, &until) || !IS_VALID_TIMESTAMP(until))
		until = END_TIMESTAMP - 1;
	if (until <= from)
		return false;
	n = RunFreeSlots(resource, BookingMakeRange(from, until, false), now, true);
	for (int i = 0; i < n; i++)
	{
		TimestampTz lower;
		TimestampTz upper;

		if (GapAtLeast(i, length_us, &lower, &upper))
		{
			*start = lower;
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
				 errmsg("min_length must not be negative")));

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);

	SPI_connect();
	/* lapsed holds judged at the statement's start: STABLE, as declared */
	n = RunFreeSlots(resource, BookingMakeRange(lower, upper, false),
					 GetCurrentStatementStartTimestamp(), false);
	for (int i = 0; i < n; i++)
	{
		TimestampTz gap_lower;
		TimestampTz gap_upper;
		bool		isnull = false;
		Datum		value;

		if (!GapAtLeast(i, min_us, &gap_lower, &gap_upper))
			continue;
		value = BookingGetDatum(i, 1, &isnull);
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	}
	SPI_finish();

	return (Datum) 0;
}
