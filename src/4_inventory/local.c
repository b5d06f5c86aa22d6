/*
 * local.c
 *	  A resource's local time.  reserve_nights books from a day's check-in
 *	  to a later day's check-out on the resource's wall clock, and
 *	  reserve_series moves an occurrence by k * every on that wall clock, so
 *	  that a weekly 09:00 lesson stays at 09:00 across a change of the
 *	  clocks.  The arithmetic is PostgreSQL's own: timestamptz AT TIME ZONE
 *	  to the wall clock, timestamp + interval there (months and days are
 *	  calendar steps, hours are hours), then back AT TIME ZONE.  A wall-clock
 *	  time the clocks skip (02:30 on a spring-forward night) is read as
 *	  PostgreSQL reads it: with the offset before the change, so it lands
 *	  an hour later; a repeated one (an autumn night) as standard time, the
 *	  second of the two.
 *
 *	  Layer 4, inventory.  Reads the resource row's zone and check times;
 *	  takes no locks.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "common/int.h"
#include "utils/builtins.h"
#include "utils/date.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/spi.h"
#include "4_inventory/local.h"

static BookingPlan local_plan = {
	"SELECT time_zone, check_in, check_out FROM booking.resources "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, INT8OID}
};

/* the zones the server knows by name, matched without regard to case */
static BookingPlan zone_plan = {
	"SELECT name FROM pg_catalog.pg_timezone_names "
	"WHERE pg_catalog.lower(name) OPERATOR(pg_catalog.=) pg_catalog.lower($1) "
	"ORDER BY name OPERATOR(pg_catalog.=) $1 DESC, name LIMIT 1",
	1, {TEXTOID}
};

/* The zone and check times of a resource; false when it does not exist. */
bool
BookingLocalRead(int64 resource, int64 home, BookingLocal *out)
{
	Datum		values[2] = {Int64GetDatum(resource), Int64GetDatum(home)};
	bool		isnull;

	if (BookingExecute(&local_plan, values, NULL, true, 1) == 0)
		return false;
	out->zone = TextDatumGetCString(BookingGetDatum(0, 1, &isnull));
	out->check_in = DatumGetTimeADT(BookingGetDatum(0, 2, &isnull));
	out->check_out = DatumGetTimeADT(BookingGetDatum(0, 3, &isnull));
	return true;
}

/*
 * The server's spelling of an IANA zone name (pg_timezone_names), or NULL
 * when it knows no such zone.  Abbreviations and POSIX offsets ("+03",
 * "EST5EDT,M3.2.0,M11.1.0") are not names: a venue's clock follows its
 * zone's rules, which only a name carries.
 */
char *
BookingLocalZoneName(const char *name)
{
	Datum		value = CStringGetTextDatum(name);
	bool		isnull;

	if (BookingExecute(&zone_plan, &value, NULL, true, 1) == 0)
		return NULL;
	return TextDatumGetCString(BookingGetDatum(0, 1, &isnull));
}

static TimestampTz
WallToInstant(const char *zone, Timestamp wall)
{
	return DatumGetTimestampTz(DirectFunctionCall2(timestamp_zone, CStringGetTextDatum(zone),
												   TimestampGetDatum(wall)));
}

/* The instant of a local day and time of day in zone; argname names the day. */
TimestampTz
BookingLocalAt(const char *zone, DateADT day, TimeADT time, const char *argname)
{
	int			overflow = 0;
	Timestamp	wall = date2timestamp_opt_overflow(day, &overflow);
	TimestampTz result = 0;

	/* a day the timestamps cannot hold, or whose instant falls outside them */
	if (overflow == 0 && !pg_add_s64_overflow(wall, time, &wall) && IS_VALID_TIMESTAMP(wall) &&
		wall > MIN_TIMESTAMP + USECS_PER_DAY && wall < END_TIMESTAMP - USECS_PER_DAY)
		result = WallToInstant(zone, wall);
	else
		overflow = 1;
	if (overflow != 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is out of range", argname),
				 errdetail("The %s given is %s.", argname,
						   DatumGetCString(DirectFunctionCall1(date_out, DateADTGetDatum(day))))));
	return result;
}

/*
 * every as a series of count may use it: positive in each of its parts (a
 * month, a day and a time of day never cancel out), and count - 1 steps of it
 * must fit an interval.
 */
void
BookingLocalCheckEvery(const Interval *every, int count)
{
	int32		m;
	int32		d;
	int64		t;

	if (every->month < 0 || every->day < 0 || every->time < 0 ||
		(every->month == 0 && every->day == 0 && every->time == 0))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("every must be positive"),
				 errdetail("The every given is %s; each of its months, days and time must be zero or more, and one of them more than zero.",
						   DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(every))))));
	if (pg_mul_s32_overflow(every->month, count, &m) || pg_mul_s32_overflow(every->day, count, &d) ||
		pg_mul_s64_overflow(every->time, count, &t))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("every is too long for %d occurrences", count),
				 errdetail("The every given is %s.",
						   DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(every))))));
}

/* wall + step; false when the result is outside what a timestamp holds */
static bool
AddToWall(Timestamp wall, const Interval *step, Timestamp *result)
{
	volatile Timestamp moved = 0;
	volatile bool failed = false;
	MemoryContext caller = CurrentMemoryContext;

	/* timestamp_pl_interval raises 22008 with no name; the callers name every */
	PG_TRY();
	{
		moved = DatumGetTimestamp(DirectFunctionCall2(timestamp_pl_interval, TimestampGetDatum(wall),
													  IntervalPGetDatum(step)));
	}
	PG_CATCH();
	{
		/* nothing was acquired on the way to the error: drop it */
		MemoryContextSwitchTo(caller);
		FlushErrorState();
		failed = true;
	}
	PG_END_TRY();
	*result = moved;
	return !failed && moved < END_TIMESTAMP - USECS_PER_DAY;
}

/*
 * every must be at least as long as the first occurrence [lower, upper)
 * (on the UTC clock; on the resource's, PlaceOccurrences in series.c checks
 * that no two occurrences overlap).  One too long to add is long enough.
 */
void
BookingLocalCheckLength(const Interval *every, TimestampTz lower, TimestampTz upper)
{
	Timestamp	next;

	if (AddToWall((Timestamp) lower, every, &next) && next < upper)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("every must be at least as long as first"),
				 errdetail("The every given is %s; first lasts %s.",
						   DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(every))),
						   DatumGetCString(DirectFunctionCall1(interval_out,
															   DirectFunctionCall2(timestamp_mi,
																				   TimestampGetDatum((Timestamp) upper),
																				   TimestampGetDatum((Timestamp) lower)))))));
}

/*
 * t moved by k * every on zone's wall clock.  The caller checked every with
 * BookingLocalCheckEvery for at least k steps; a result outside the
 * timestamps PostgreSQL can hold is an error naming every.
 */
TimestampTz
BookingLocalShift(const char *zone, TimestampTz t, const Interval *every, int k)
{
	Interval	step;
	Timestamp	wall;
	Timestamp	moved;

	if (k == 0)
		return t;
	step.month = every->month * k;
	step.day = every->day * k;
	step.time = every->time * k;
	wall = DatumGetTimestamp(DirectFunctionCall2(timestamptz_zone, CStringGetTextDatum(zone),
												 TimestampTzGetDatum(t)));
	if (!AddToWall(wall, &step, &moved))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("every takes occurrence %d out of range", k + 1),
				 errdetail("The every given is %s.",
						   DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(every))))));
	return WallToInstant(zone, moved);
}
