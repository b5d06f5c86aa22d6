/*
 * slots.c
 *	  booking.free_slots, and the "next free slot" that unavailable and
 *	  just_taken answers carry in their message.  Read-only; takes no locks.
 *	  The query rides the GiST index of bookings_no_overlap.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/builtins.h"
#include "utils/rangetypes.h"
#include "utils/timestamp.h"

#include "booking.h"

PG_FUNCTION_INFO_V1(booking_free_slots);

/* how far ahead the next free slot is looked for */
#define NEXT_SLOT_HORIZON_USECS ((int64) 366 * USECS_PER_DAY)

static BookingPlan free_slots_plan = {
	"SELECT s FROM pg_catalog.unnest(pg_catalog.tstzmultirange($2) OPERATOR(pg_catalog.-) "
	"COALESCE((SELECT pg_catalog.range_agg(b.during) FROM booking.bookings b "
	"WHERE b.resource_id OPERATOR(pg_catalog.=) $1 "
	"AND b.during OPERATOR(pg_catalog.&&) $2 "
	"AND b.validity OPERATOR(pg_catalog.&&) $3 "
	"AND b.during IS NOT NULL "
	"AND b.status IN ('pending'::booking.status, 'confirmed'::booking.status)), "
	"'{}'::pg_catalog.tstzmultirange)) AS s "
	"WHERE (pg_catalog.upper(s) OPERATOR(pg_catalog.-) pg_catalog.lower(s)) "
	"OPERATOR(pg_catalog.>=) $4 "
	"AND EXISTS (SELECT 1 FROM booking.resources r WHERE r.id OPERATOR(pg_catalog.=) $1) "
	"ORDER BY s",
	4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INTERVALOID}
};

static int
RunFreeSlots(int64 resource, Datum within, TimestampTz now, Interval *min_length,
			 bool latest, long tcount)
{
	Datum		values[4];

	values[0] = Int64GetDatum(resource);
	values[1] = within;
	values[2] = BookingMakeRange(now, 0, true);
	values[3] = IntervalPGetDatum(min_length);
	if (latest)
		return BookingExecuteCommitted(&free_slots_plan, values, NULL, tcount);
	return BookingExecute(&free_slots_plan, values, NULL, true, tcount);
}

/*
 * The first free slot of length_us at or after from, within the horizon.
 * Runs inside the caller's SPI connection.
 */
bool
BookingNextFreeSlot(int64 resource, TimestampTz from, int64 length_us,
					TimestampTz now, TimestampTz *start)
{
	Interval   *len = palloc0(sizeof(Interval));
	RangeType  *slot;
	RangeBound	lo;
	RangeBound	hi;
	bool		empty;
	bool		isnull;

	len->time = length_us;
	if (RunFreeSlots(resource, BookingMakeRange(from, from + NEXT_SLOT_HORIZON_USECS, false),
					 now, len, true, 1) == 0)
		return false;
	slot = DatumGetRangeTypeP(BookingGetDatum(0, 1, &isnull));
	range_deserialize(lookup_type_cache(TSTZRANGEOID, TYPECACHE_RANGE_INFO),
					  slot, &lo, &hi, &empty);
	*start = DatumGetTimestampTz(lo.val);
	return true;
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
			 from, timestamptz_to_str(start + (upper - lower)));
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
	int			n;

	resource = BookingArgId(fcinfo, 0, "resource");
	BookingArgDuring(fcinfo, 1, "within", &lower, &upper);
	if (PG_ARGISNULL(2))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("min_length must not be null")));
	min_length = PG_GETARG_INTERVAL_P(2);
	if (BookingIntervalUsecs(min_length, "min_length") < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("min_length must not be negative")));

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);

	SPI_connect();
	n = RunFreeSlots(resource, BookingMakeRange(lower, upper, false),
					 GetCurrentTimestamp(), min_length, false, 0);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		Datum		value = BookingGetDatum(i, 1, &isnull);

		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, &value, &isnull);
	}
	SPI_finish();

	return (Datum) 0;
}
