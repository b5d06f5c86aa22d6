/*
 * slots_left.c
 *	  booking.slots_left: the free units of a resource over a window, as
 *	  consecutive ranges of one free count (capacity.c reads and sweeps the
 *	  use), cut to open time when the resource has opening hours (hours.c).
 *
 *	  Layer 4, inventory; a read, beside the use it reads.  Read-only;
 *	  takes no locks.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "4_inventory/capacity.h"
#include "4_inventory/hours.h"

PG_FUNCTION_INFO_V1(booking_slots_left);

/*
 * Where the slot bookings that reach into $2 start at the earliest: its
 * lower bound less r's longest slot, in seconds as a double (exact to well
 * under the second taken off for its rounding), no earlier than the first
 * instant a timestamp holds, where the subtraction would fail.
 */
#define SLOTS_FROM \
	"pg_catalog.to_timestamp(GREATEST(pg_catalog.date_part('epoch', pg_catalog.lower($2)) " \
	"OPERATOR(pg_catalog.-) pg_catalog.date_part('epoch', r.longest_slot) " \
	"OPERATOR(pg_catalog.-) 1, -210866803200))"

/*
 * The resource's capacity and hours with the use of its units over $2 (no
 * row for an unknown resource; one row with a NULL use when nothing
 * blocks).  One statement, so that on Citus it is one routed read.
 */
static BookingPlan left_plan = {
	"SELECT r.capacity, r.opening_hours, r.time_zone, u.lo, u.hi, u.q "
	"FROM booking.resources r LEFT JOIN LATERAL (" BOOKING_SLOT_USE_SQL(SLOTS_FROM) ") u ON true "
	"WHERE r.home OPERATOR(pg_catalog.=) $4 AND r.id OPERATOR(pg_catalog.=) $1",
	5, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID, INT8OID}
};

/* a run of one free count */
typedef struct Step
{
	TimestampTz lower;
	TimestampTz upper;
	int32		free;
} Step;

/* The runs of use over its window, neighbours of one count merged. */
static int
StepsOf(const BookingSlotUse *use, int32 capacity, Step *steps)
{
	int64		used = 0;
	int			i = 0;
	int			n = 0;
	TimestampTz t = use->lower;

	while (t < use->upper)
	{
		TimestampTz next;
		int32		free;

		while (i < use->n && use->at[i] <= t)
			used += use->delta[i++];
		next = i < use->n ? Min(use->at[i], use->upper) : use->upper;
		free = (int32) Max((int64) capacity - used, 0);
		if (n > 0 && steps[n - 1].free == free)
			steps[n - 1].upper = next;
		else
		{
			steps[n].lower = t;
			steps[n].upper = next;
			steps[n].free = free;
			n++;
		}
		t = next;
	}
	return n;
}

static void
PutStep(ReturnSetInfo *rsinfo, TimestampTz lower, TimestampTz upper, int32 free)
{
	Datum		values[2];
	bool		nulls[2] = {false, false};

	values[0] = BookingMakeRange(lower, upper, false);
	values[1] = Int32GetDatum(free);
	tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
}

/*
 * slots_left(resource, within) returns table (during tstzrange, free integer)
 */
Datum
booking_slots_left(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	BookingResource r;
	TimestampTz lower;
	TimestampTz upper;
	BookingSlotUse use;
	BookingOpenTime open;
	Step	   *steps;
	int			nsteps;
	Datum		values[5];
	Datum		hours;
	Datum		zone = (Datum) 0;
	bool		always_open;
	bool		isnull;
	int			n;

	memset(&r, 0, sizeof(r));
	r.id = BookingArgId(fcinfo, 0, "resource");
	r.home = BookingHome(r.id);
	BookingArgDuring(fcinfo, 1, "within", &lower, &upper);

	InitMaterializedSRF(fcinfo, MAT_SRF_USE_EXPECTED_DESC);

	SPI_connect();
	values[0] = Int64GetDatum(r.id);
	values[1] = BookingMakeRange(lower, upper, false);
	/* lapsed holds judged at the statement's start: STABLE, as declared */
	values[2] = BookingMakeRange(GetCurrentStatementStartTimestamp(), 0, true);
	values[3] = Int64GetDatum(r.home);
	values[4] = Int64GetDatum(-1);
	n = BookingExecute(&left_plan, values, NULL, true, 0);
	/* an unknown resource has no rows, as free_slots */
	if (n == 0)
	{
		SPI_finish();
		return (Datum) 0;
	}
	r.capacity = BookingGetInt32(0, 1, NULL);
	hours = BookingGetDatum(0, 2, &always_open);
	if (!always_open)
	{
		hours = PointerGetDatum(PG_DETOAST_DATUM_COPY(hours));
		zone = PointerGetDatum(DatumGetTextPCopy(BookingGetDatum(0, 3, &isnull)));
	}
	BookingSlotUseOfRows(n, 4, lower, upper, &use);
	steps = palloc(sizeof(Step) * (use.n + 1));
	nsteps = StepsOf(&use, r.capacity, steps);
	if (always_open)
	{
		for (int i = 0; i < nsteps; i++)
			PutStep(rsinfo, steps[i].lower, steps[i].upper, steps[i].free);
	}
	else
	{
		/* each run cut to the open stretches it meets; they never touch */
		int			i = 0;

		/* a statement of its own, after the rows were read */
		BookingOpenTimeOf(hours, zone, lower, upper, &open);
		for (int k = 0; k < open.n; k++)
		{
			while (i < nsteps && steps[i].upper <= open.lower[k])
				i++;
			for (int j = i; j < nsteps && steps[j].lower < open.upper[k]; j++)
			{
				TimestampTz a = Max(steps[j].lower, open.lower[k]);
				TimestampTz b = Min(steps[j].upper, open.upper[k]);

				if (a < b)
					PutStep(rsinfo, a, b, steps[j].free);
			}
		}
	}
	SPI_finish();

	return (Datum) 0;
}
