/*
 * hours.c
 *	  Opening hours: per weekday, windows of the resource's wall clock
 *	  (["09:00", "17:00"], "24:00" as an end), stored in
 *	  resources.opening_hours; NULL is always open.  A stay must lie
 *	  entirely inside one open stretch: the windows of each local day, with
 *	  those that touch (an evening until 24:00 and the next morning from
 *	  00:00) merged.  The windows are wall-clock: 00:00-06:00 in Europe/Paris
 *	  is five hours on the spring day and seven on the autumn one, which
 *	  PostgreSQL's AT TIME ZONE gives.  The instants are computed in one
 *	  statement over the arguments only (no table), so that on Citus it runs
 *	  where the call runs.
 *
 *	  Layer 4, inventory.  Reads the resource's hours and zone; takes no
 *	  locks (the callers hold the resource row, which set_opening_hours
 *	  writes under the same lock).
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/rangetypes.h"
#include "utils/timestamp.h"
#include "utils/typcache.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/spi.h"
#include "4_inventory/hours.h"

static BookingPlan hours_plan = {
	"SELECT opening_hours, time_zone FROM booking.resources "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, INT8OID}
};

/*
 * The open stretches of hours $1 in zone $2 that meet [$3, $4), merged, in
 * time order: every window of every local day from the day before $3 to the
 * day after $4.
 */
static BookingPlan open_plan = {
	"SELECT pg_catalog.lower(o), pg_catalog.upper(o) FROM pg_catalog.unnest(("
	"SELECT pg_catalog.range_agg(pg_catalog.tstzrange("
	"pg_catalog.timezone($2, d.day OPERATOR(pg_catalog.+) (w.value OPERATOR(pg_catalog.->>) 0)::pg_catalog.interval), "
	"pg_catalog.timezone($2, d.day OPERATOR(pg_catalog.+) (w.value OPERATOR(pg_catalog.->>) 1)::pg_catalog.interval))) "
	"FROM pg_catalog.generate_series("
	"(pg_catalog.timezone($2, $3)::pg_catalog.date OPERATOR(pg_catalog.-) 1)::pg_catalog.timestamp, "
	"(pg_catalog.timezone($2, $4)::pg_catalog.date OPERATOR(pg_catalog.+) 1)::pg_catalog.timestamp, "
	"'1 day'::pg_catalog.interval) AS d(day), "
	"pg_catalog.jsonb_array_elements(COALESCE($1 OPERATOR(pg_catalog.->) (ARRAY['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'])"
	"[pg_catalog.date_part('dow', d.day)::integer OPERATOR(pg_catalog.+) 1], '[]'::pg_catalog.jsonb)) AS w(value))) AS o "
	"WHERE o OPERATOR(pg_catalog.&&) pg_catalog.tstzrange($3, $4) ORDER BY 1",
	4, {JSONBOID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID}
};

/* the entries of hours: weekday, the type of its value, and each window */
static BookingPlan shape_plan = {
	"SELECT e.key, pg_catalog.jsonb_typeof(e.value), w.value OPERATOR(pg_catalog.->>) 0, "
	"w.value OPERATOR(pg_catalog.->>) 1, pg_catalog.jsonb_typeof(w.value), "
	"CASE WHEN pg_catalog.jsonb_typeof(w.value) OPERATOR(pg_catalog.=) 'array' "
	"THEN pg_catalog.jsonb_array_length(w.value) END, "
	"pg_catalog.jsonb_typeof(w.value OPERATOR(pg_catalog.->) 0), pg_catalog.jsonb_typeof(w.value OPERATOR(pg_catalog.->) 1) "
	"FROM pg_catalog.jsonb_each($1) AS e LEFT JOIN LATERAL pg_catalog.jsonb_array_elements("
	"CASE WHEN pg_catalog.jsonb_typeof(e.value) OPERATOR(pg_catalog.=) 'array' THEN e.value END) AS w ON true",
	1, {JSONBOID}
};

static const char *const weekdays[] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};

static void
Malformed(const char *what)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("hours must map weekdays to lists of [\"HH:MM\", \"HH:MM\"] windows"),
			 errdetail("The hours given have %s.", what),
			 errhint("For example {\"mon\": [[\"09:00\", \"12:00\"], [\"14:00\", \"18:00\"]], \"sat\": [[\"10:00\", \"24:00\"]]}; a day not listed is closed; NULL is always open.")));
}

/* minutes after midnight of "HH:MM" (00:00 .. 24:00), or -1 */
static int
Minutes(const char *s)
{
	if (s == NULL || strlen(s) != 5 || s[2] != ':' ||
		s[0] < '0' || s[0] > '2' || s[1] < '0' || s[1] > '9' ||
		s[3] < '0' || s[3] > '5' || s[4] < '0' || s[4] > '9')
		return -1;
	{
		int			h = (s[0] - '0') * 10 + (s[1] - '0');
		int			m = (s[3] - '0') * 10 + (s[4] - '0');

		if (h > 24 || (h == 24 && m != 0))
			return -1;
		return h * 60 + m;
	}
}

/* Raises 22023 naming hours unless hours is a well-formed week of windows. */
void
BookingCheckHours(Jsonb *hours)
{
	Datum		value = JsonbPGetDatum(hours);
	int			n;

	if (!JB_ROOT_IS_OBJECT(hours) || JB_ROOT_IS_SCALAR(hours))
		Malformed("no JSON object at the top");
	if (VARSIZE(hours) > 8192)
		Malformed("more than 8 kB");
	n = BookingExecute(&shape_plan, &value, NULL, true, 0);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		char	   *day = TextDatumGetCString(BookingGetDatum(i, 1, &isnull));
		char	   *type = TextDatumGetCString(BookingGetDatum(i, 2, &isnull));
		bool		known = false;
		int			from;
		int			to;
		Datum		d;

		for (int k = 0; k < lengthof(weekdays); k++)
			known |= strcmp(day, weekdays[k]) == 0;
		if (!known)
			Malformed(psprintf("the key \"%s\", which is not one of mon, tue, wed, thu, fri, sat, sun", day));
		if (strcmp(type, "array") != 0)
			Malformed(psprintf("a value of type %s for \"%s\", where a list of windows belongs", type, day));
		d = BookingGetDatum(i, 5, &isnull);
		if (isnull)
			continue;			/* an empty list: closed that day */
		if (strcmp(TextDatumGetCString(d), "array") != 0 || BookingGetInt32(i, 6, NULL) != 2)
			Malformed(psprintf("a window of \"%s\" that is not a list of two times", day));
		d = BookingGetDatum(i, 7, &isnull);
		if (isnull || strcmp(TextDatumGetCString(d), "string") != 0)
			Malformed(psprintf("a window of \"%s\" whose start is not a string", day));
		d = BookingGetDatum(i, 8, &isnull);
		if (isnull || strcmp(TextDatumGetCString(d), "string") != 0)
			Malformed(psprintf("a window of \"%s\" whose end is not a string", day));
		from = Minutes(TextDatumGetCString(BookingGetDatum(i, 3, &isnull)));
		to = Minutes(TextDatumGetCString(BookingGetDatum(i, 4, &isnull)));
		if (from < 0 || to < 0 || from >= 24 * 60)
			Malformed(psprintf("a window of \"%s\" with a time that is not HH:MM from 00:00 to 24:00 (24:00 only as an end)", day));
		if (to <= from)
			Malformed(psprintf("a window of \"%s\" that ends before it starts", day));
	}
}

/*
 * The hours and zone of a resource; false when it has none.  latest: read
 * the latest committed row (the caller holds its lock, and hours committed
 * while it waited for it must apply: a READ COMMITTED statement's own
 * snapshot is older than that).
 */
static bool
ReadHours(int64 resource, int64 home, bool latest, Datum *hours, Datum *zone)
{
	Datum		values[2] = {Int64GetDatum(resource), Int64GetDatum(home)};
	bool		isnull;

	if ((latest ? BookingExecuteLatest(&hours_plan, values, NULL, 1) :
		 BookingExecute(&hours_plan, values, NULL, true, 1)) == 0)
		return false;
	*hours = BookingGetDatum(0, 1, &isnull);
	if (isnull)
		return false;
	*hours = PointerGetDatum(PG_DETOAST_DATUM_COPY(*hours));
	*zone = PointerGetDatum(DatumGetTextPCopy(BookingGetDatum(0, 2, &isnull)));
	return true;
}

/*
 * The open stretches of the resource that meet [lower, upper), or false
 * when it has no opening hours (always open); latest as for ReadHours.
 */
bool
BookingOpenTimeWithin(int64 resource, int64 home, TimestampTz lower, TimestampTz upper,
					  bool latest, BookingOpenTime *open)
{
	Datum		hours;
	Datum		zone;

	if (!ReadHours(resource, home, latest, &hours, &zone))
		return false;
	BookingOpenTimeOf(hours, zone, lower, upper, open);
	return true;
}

/*
 * The open stretches of hours (jsonb) in zone (text) that meet [lower,
 * upper): one statement over the arguments, which on Citus runs where the
 * caller runs.
 */
void
BookingOpenTimeOf(Datum hours, Datum zone, TimestampTz lower, TimestampTz upper,
				  BookingOpenTime *open)
{
	Datum		values[4];
	int			n;

	values[0] = hours;
	values[1] = zone;
	values[2] = TimestampTzGetDatum(lower);
	values[3] = TimestampTzGetDatum(upper);
	n = BookingExecute(&open_plan, values, NULL, true, 0);
	open->n = n;
	open->lower = palloc(sizeof(TimestampTz) * Max(n, 1));
	open->upper = palloc(sizeof(TimestampTz) * Max(n, 1));
	for (int i = 0; i < n; i++)
	{
		bool		isnull;

		open->lower[i] = DatumGetTimestampTz(BookingGetDatum(i, 1, &isnull));
		open->upper[i] = DatumGetTimestampTz(BookingGetDatum(i, 2, &isnull));
	}
}

/*
 * Whether [lower, upper) lies inside one open stretch of r; when not,
 * *closed_at is its first closed instant.  Free for a resource without
 * hours (r->has_hours false: no statement runs).  The caller holds r's
 * row lock; r->has_hours was read with it, the hours are read again as
 * committed.
 */
bool
BookingOpenAllows(const BookingResource *r, TimestampTz lower, TimestampTz upper,
				  TimestampTz *closed_at)
{
	BookingOpenTime open;

	if (!r->has_hours || !BookingOpenTimeWithin(r->id, r->home, lower, upper, true, &open))
		return true;
	for (int i = 0; i < open.n; i++)
	{
		if (open.lower[i] > lower)
			break;
		if (open.upper[i] > lower)
		{
			if (open.upper[i] >= upper)
				return true;
			*closed_at = open.upper[i];
			return false;
		}
	}
	*closed_at = lower;
	return false;
}

void
BookingSetClosed(BookingResult *res, int64 resource, TimestampTz closed_at, const char *what)
{
	BookingSetResult(res, BOOKING_CLOSED, -1,
					 "Resource %lld is closed at %s%s; a booking must lie within its opening hours.",
					 (long long) resource, timestamptz_to_str(closed_at), what);
}
