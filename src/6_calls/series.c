/*
 * series.c
 *	  booking.reserve_series: count stays of one resource, the first given,
 *	  each next one moved by every on the resource's wall clock
 *	  (4_inventory/local.c), booked all or nothing: a term of weekly
 *	  lessons, a standing table.  Every occurrence is a stay guarded by the
 *	  exclusion constraint, so a series races a single stay, another series
 *	  or a move exactly as two stays do; group_id, the first occurrence's
 *	  id, ties them together (cancel one by one, or all in one call later).
 *
 *	  One resource, so one lock and, on Citus, one node: the call is routed
 *	  whole to the node that holds the resource.  Under the lock, the
 *	  friendly check names the first occurrence already taken; then every
 *	  occurrence is inserted in one subtransaction that is kept only when
 *	  all went in (the constraint decides, just_taken).
 *
 *	  Layer 6, the calls.  Locks: the resource row, then the occurrences'
 *	  booking rows (their inserts).
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/guard.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "3_frame/events.h"
#include "3_frame/idempotency.h"
#include "4_inventory/capacity.h"
#include "4_inventory/hours.h"
#include "4_inventory/limit.h"
#include "4_inventory/local.h"
#include "4_inventory/range.h"
#include "4_inventory/slots.h"
#include "5_scaleout/route.h"
#include "6_calls/stay.h"

PG_FUNCTION_INFO_V1(booking_reserve_series);

#define BOOKING_MAX_SERIES 520	/* ten years of weeks */

/* the first occurrence whose footprint ($1[k]) a blocking stay overlaps */
static BookingPlan series_conflict_plan = {
	"SELECT o.k::integer FROM pg_catalog.unnest($1) WITH ORDINALITY AS o(fp, k) "
	"WHERE EXISTS (SELECT 1 FROM booking.bookings b WHERE b.home OPERATOR(pg_catalog.=) $4 "
	"AND b.resource_id OPERATOR(pg_catalog.=) $2 AND "
	BOOKING_BLOCKING_FOOTPRINT("b", "o.fp") ") ORDER BY o.k LIMIT 1",
	4, {TSTZRANGEARRAYOID, INT8OID, TSTZRANGEOID, INT8OID}
};

/*
 * one occurrence: $1 resource, $2 guest, $3 during, $4 expiry (NULL: none),
 * $5 the time of the call, $6 validity, $7 home, $8 id (NULL: the
 * sequence's next), $9 footprint, $10 limited, $11 group, $12 metadata
 */
static BookingPlan occurrence_insert_plan = {
	"INSERT INTO booking.bookings "
	"(home, id, resource_id, guest, quantity, during, status, expires_at, created_at, validity, "
	"blocked, limited, group_id, metadata) "
	"VALUES ($7, COALESCE($8, pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass)), "
	"$1, $2, 1, $3, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6, $9, $10, $11, $12) "
	"ON CONFLICT ON CONSTRAINT bookings_no_overlap DO NOTHING RETURNING id",
	12, {INT8OID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID, INT8OID, INT8OID,
	TSTZRANGEOID, BOOLOID, INT8OID, JSONBOID}
};

typedef struct SeriesRequest
{
	BookingStayRequest stay;	/* lower and upper: the first occurrence's */
	Interval   *every;
	int			count;
	/* set by the body */
	TimestampTz *lowers;
	TimestampTz *uppers;
	Datum	   *footprints;
	BookingResource r;
	int64		group_id;
} SeriesRequest;

static char *
Instant(TimestampTz t)
{
	return pstrdup(timestamptz_to_str(t));
}

static char *
EveryString(const Interval *every)
{
	return DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(every)));
}

/* occurrence k (0-based) is taken: a refusal that names it */
static void
SetTakenOccurrence(BookingResult *res, BookingCode code, SeriesRequest *sr, int k)
{
	BookingSetResult(res, code, -1,
					 code == BOOKING_UNAVAILABLE ?
					 "Occurrence %d of the series (from %s to %s) is already booked on resource %lld; nothing was booked." :
					 "Occurrence %d of the series (from %s to %s) was just booked on resource %lld by a concurrent request; nothing was booked.",
					 k + 1, Instant(sr->lowers[k]), Instant(sr->uppers[k]),
					 (long long) sr->stay.resource);
}

/* the first occurrence a blocking stay overlaps (0-based), or -1 */
static int
FirstTaken(SeriesRequest *sr, bool hint_only)
{
	Datum		values[4];
	int			n;

	values[0] = PointerGetDatum(construct_array(sr->footprints, sr->count, TSTZRANGEOID, -1, false,
												TYPALIGN_DOUBLE));
	values[1] = Int64GetDatum(sr->stay.resource);
	values[2] = sr->stay.validity;
	values[3] = Int64GetDatum(sr->r.home);
	n = hint_only ? BookingExecuteCommitted(&series_conflict_plan, values, NULL, 1) :
		BookingExecuteLatest(&series_conflict_plan, values, NULL, 1);
	return n == 0 ? -1 : BookingGetInt32(0, 1, NULL) - 1;
}

/* every occurrence, each with its reserved event; false when one was refused */
static bool
RunSeriesInsert(void *arg)
{
	SeriesRequest *sr = (SeriesRequest *) arg;
	BookingStayRequest *req = &sr->stay;
	int64	   *ids = palloc(sizeof(int64) * sr->count);
	Datum		values[12];
	char		nulls[12];

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(req->resource);
	values[1] = PointerGetDatum(req->guest);
	values[3] = TimestampTzGetDatum(req->expires_at);
	nulls[3] = req->has_hold ? ' ' : 'n';
	values[4] = TimestampTzGetDatum(req->now);
	values[5] = req->validity;
	values[6] = Int64GetDatum(sr->r.home);
	values[9] = BoolGetDatum(sr->r.guest_limit > 0);
	values[10] = Int64GetDatum(sr->group_id);
	values[11] = PointerGetDatum(req->metadata);
	if (req->metadata == NULL)
		nulls[11] = 'n';
	for (int k = 0; k < sr->count; k++)
	{
		values[2] = BookingMakeRange(sr->lowers[k], sr->uppers[k], false);
		/* on Citus every id is drawn to land in the resource's shard */
		if (k == 0)
			values[7] = Int64GetDatum(sr->group_id);
		else if (BookingDistributed())
			values[7] = Int64GetDatum(BookingNewId("bookings_id_seq", sr->r.home));
		nulls[7] = (k == 0 || BookingDistributed()) ? ' ' : 'n';
		values[8] = sr->footprints[k];
		if (BookingExecute(&occurrence_insert_plan, values, nulls, false, 1) == 0)
			return false;
		ids[k] = BookingGetInt64(0, 1, NULL);
	}
	for (int k = 0; k < sr->count; k++)
		BookingEmitEvent("reserved", sr->r.home, ids[k], NULL, "ok");
	return true;
}

/*
 * The occurrences on the resource's wall clock; consecutive ones must not
 * overlap there (every barely longer than first, on a day the clocks
 * change).
 */
static void
PlaceOccurrences(SeriesRequest *sr, const char *zone)
{
	BookingStayRequest *req = &sr->stay;

	sr->lowers = palloc(sizeof(TimestampTz) * sr->count);
	sr->uppers = palloc(sizeof(TimestampTz) * sr->count);
	for (int k = 0; k < sr->count; k++)
	{
		sr->lowers[k] = BookingLocalShift(zone, req->lower, sr->every, k);
		sr->uppers[k] = BookingLocalShift(zone, req->upper, sr->every, k);
		/*
		 * Both ends in the hour the clocks skip (02:00-03:00 on a spring
		 * night): PostgreSQL reads each an hour later, and nothing is left.
		 * The occurrence keeps first's length from its start.
		 */
		if (sr->uppers[k] <= sr->lowers[k])
			sr->uppers[k] = sr->lowers[k] + (req->upper - req->lower);
		if (k > 0 && sr->lowers[k] < sr->uppers[k - 1])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("every makes occurrences %d and %d overlap in %s", k, k + 1, zone),
					 errdetail("The every given is %s; occurrence %d runs from %s to %s, local time of the resource.",
							   EveryString(sr->every), k + 1, Instant(sr->lowers[k]),
							   Instant(sr->uppers[k]))));
	}
}

static void
ReserveSeriesBody(void *state, BookingResult *res)
{
	SeriesRequest *sr = (SeriesRequest *) state;
	BookingStayRequest *req = &sr->stay;
	BookingLocal local;
	bool		serializable = IsolationIsSerializable();
	BookingGuardOutcome outcome;
	bool		kept = false;
	int			taken;

	if (!BookingLocalRead(req->resource, req->home, &local))
	{
		BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, req->resource, req->timeout_ms);
		return;
	}
	PlaceOccurrences(sr, local.zone);
	if (!BookingLockResourceFor(req->resource, req->timeout_ms, &sr->r, res))
		return;
	sr->footprints = palloc(sizeof(Datum) * sr->count);
	for (int k = 0; k < sr->count; k++)
		sr->footprints[k] = BookingStayFootprint(sr->lowers[k], sr->uppers[k], &sr->r);

	/*
	 * Under the lock, what is taken was committed before we got it.  At
	 * SERIALIZABLE the check is skipped (as in reserve_stay: its reads of
	 * the GiST pages would make SSI abort callers), and the constraint alone
	 * refuses.
	 */
	if (!serializable && (taken = FirstTaken(sr, false)) >= 0)
	{
		SetTakenOccurrence(res, BOOKING_UNAVAILABLE, sr, taken);
		return;
	}
	for (int k = 0; k < sr->count; k++)
	{
		TimestampTz closed_at;

		if (!BookingOpenAllows(&sr->r, sr->lowers[k], sr->uppers[k], &closed_at))
		{
			BookingSetClosed(res, req->resource, closed_at,
							 psprintf(" (occurrence %d of the series, from %s to %s)", k + 1,
									  Instant(sr->lowers[k]), Instant(sr->uppers[k])));
			return;
		}
		if (!BookingStayLeavesSlots(&sr->r, sr->lowers[k], sr->uppers[k], req->validity, -1, res))
		{
			SetTakenOccurrence(res, BOOKING_UNAVAILABLE, sr, k);
			return;
		}
	}
	if (!BookingGuestLimitAllows(&sr->r, req->guest, sr->count, BOOKING_LIMIT_STAYS, req->now, res))
		return;

	sr->group_id = BookingNewId("bookings_id_seq", sr->r.home);
	outcome = BookingRunGuardedTry(RunSeriesInsert, sr, &kept);
	if (outcome != BOOKING_GUARD_DONE)
	{
		BookingSetLockOutcome(res, outcome == BOOKING_GUARD_BUSY ? BOOKING_LOCK_BUSY : BOOKING_LOCK_RETRY,
							  req->resource, req->timeout_ms);
		return;
	}
	if (!kept)
	{
		/* a hint only: which one, read without SSI's predicate locks */
		taken = FirstTaken(sr, true);
		if (taken >= 0)
			SetTakenOccurrence(res, BOOKING_JUST_TAKEN, sr, taken);
		else
			BookingSetResult(res, BOOKING_JUST_TAKEN, -1,
							 "An occurrence of the series was just booked on resource %lld by a concurrent request; nothing was booked.",
							 (long long) req->resource);
		return;
	}
	if (req->has_hold)
		BookingSetResult(res, BOOKING_CREATED, sr->group_id,
						 "Held %d occurrences of resource %lld as group %lld, the first from %s to %s, the last from %s to %s, until %s; confirm each before then.",
						 sr->count, (long long) req->resource, (long long) sr->group_id,
						 Instant(sr->lowers[0]), Instant(sr->uppers[0]),
						 Instant(sr->lowers[sr->count - 1]), Instant(sr->uppers[sr->count - 1]),
						 Instant(req->expires_at));
	else
		BookingSetResult(res, BOOKING_CREATED, sr->group_id,
						 "Booked %d occurrences of resource %lld as group %lld, the first from %s to %s, the last from %s to %s.",
						 sr->count, (long long) req->resource, (long long) sr->group_id,
						 Instant(sr->lowers[0]), Instant(sr->uppers[0]),
						 Instant(sr->lowers[sr->count - 1]), Instant(sr->uppers[sr->count - 1]));
}

static int
CountArg(FunctionCallInfo fcinfo, int argno)
{
	int32		count;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("count must not be null")));
	count = PG_GETARG_INT32(argno);
	if (count < 1 || count > BOOKING_MAX_SERIES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("count must be between 1 and %d", BOOKING_MAX_SERIES),
				 errdetail("The count given is %d.", count)));
	return count;
}

/* every: positive, and at least as long as first (local.c) */
static Interval *
EveryArg(FunctionCallInfo fcinfo, int argno, SeriesRequest *sr)
{
	Interval   *every;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("every must not be null")));
	every = PG_GETARG_INTERVAL_P(argno);
	BookingLocalCheckEvery(every, sr->count);
	BookingLocalCheckLength(every, sr->stay.lower, sr->stay.upper);
	return every;
}

/*
 * reserve_series(resource, guest, first, every, count, hold, idempotency_key,
 * lock_timeout, metadata)
 */
Datum
booking_reserve_series(PG_FUNCTION_ARGS)
{
	SeriesRequest *sr = palloc0(sizeof(SeriesRequest));
	BookingStayRequest *req = &sr->stay;
	const char *key;
	const char *request = NULL;

	req->resource = BookingArgId(fcinfo, 0, "resource");
	req->home = BookingHome(req->resource);
	req->guest = BookingArgGuest(fcinfo, 1);
	BookingArgDuring(fcinfo, 2, "first", &req->lower, &req->upper);
	sr->count = CountArg(fcinfo, 4);
	sr->every = EveryArg(fcinfo, 3, sr);
	req->has_hold = BookingArgHold(fcinfo, 5, &req->hold_us);
	key = BookingArgKey(fcinfo, 6);
	req->timeout_ms = BookingArgLockTimeout(fcinfo, 7);
	req->metadata = BookingArgMetadata(fcinfo, 8, &req->metadata_text);
	req->now = GetCurrentTimestamp();
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_reserve_series", req->home, req->resource);

	if (key != NULL)
	{
		const char *fields[7];

		fields[0] = psprintf(INT64_FORMAT, req->resource);
		fields[1] = text_to_cstring(req->guest);
		fields[2] = psprintf(INT64_FORMAT, (int64) req->lower);
		fields[3] = psprintf(INT64_FORMAT, (int64) req->upper);
		fields[4] = psprintf("%d/%d/" INT64_FORMAT, sr->every->month, sr->every->day, sr->every->time);
		fields[5] = psprintf("%d", sr->count);
		fields[6] = req->has_hold ? psprintf(INT64_FORMAT, req->hold_us) : NULL;
		request = BookingRequestString("reserve_series", 7, fields, req->metadata_text);
	}
	BookingStayPrepare(req);
	return BookingStayFrame(fcinfo, req, key, request, ReserveSeriesBody, sr);
}

BOOKING_SHARD_TWIN(reserve_series)
