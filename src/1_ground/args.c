/*
 * args.c
 *	  Argument checks shared by the API functions.  A programmer error raises
 *	  22004 (NULL where a value is required) or 22023 (a value out of range)
 *	  and names the argument; it is raised before anything is read or written.
 *	  An explicit NULL for an argument that has a default means the default.
 *
 *	  Layer 1, the ground.  Takes no locks.
 */
#include "postgres.h"

#include "common/int.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/jsonb.h"
#include "utils/lsyscache.h"
#include "utils/rangetypes.h"
#include "utils/timestamp.h"
#include "catalog/pg_type.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/compat.h"
#include "1_ground/timeout.h"

/*
 * An interval as an error's detail shows what arrived: PostgreSQL's text,
 * and the seconds it makes when that reads differently (a driver that sends
 * a duration in the wrong unit shows at once: 900000000000 seconds is a
 * 15-minute Go time.Duration read as seconds).
 */
const char *
BookingDescribeInterval(const Interval *span)
{
	char	   *text = DatumGetCString(DirectFunctionCall1(interval_out, IntervalPGetDatum(span)));
	int64		days;
	int64		usecs;

	if (pg_mul_s64_overflow((int64) span->month, DAYS_PER_MONTH, &days) ||
		pg_add_s64_overflow(days, (int64) span->day, &days) ||
		pg_mul_s64_overflow(days, USECS_PER_DAY, &usecs) ||
		pg_add_s64_overflow(usecs, span->time, &usecs))
		return text;
	if (usecs % USECS_PER_SEC == 0)
		return psprintf("%s (" INT64_FORMAT " seconds)", text, usecs / USECS_PER_SEC);
	return psprintf("%s (%.6f seconds)", text, (double) usecs / USECS_PER_SEC);
}

/* A range as an error's detail shows what arrived. */
static const char *
DescribeRange(RangeType *range)
{
	return DatumGetCString(OidFunctionCall1(F_RANGE_OUT, RangeTypePGetDatum(range)));
}

static void
RequireNotNull(FunctionCallInfo fcinfo, int argno, const char *name)
{
	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
}

int64
BookingArgId(FunctionCallInfo fcinfo, int argno, const char *name)
{
	RequireNotNull(fcinfo, argno, name);
	return PG_GETARG_INT64(argno);
}

text *
BookingArgGuest(FunctionCallInfo fcinfo, int argno)
{
	text	   *guest;
	int			len;

	RequireNotNull(fcinfo, argno, "guest");
	guest = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(guest);
	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("guest must not be empty"),
				 errdetail("The guest given is an empty string.")));
	if (len > BOOKING_MAX_GUEST_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("guest must be at most %d bytes long", BOOKING_MAX_GUEST_BYTES),
				 errdetail("The guest given is %d bytes long.", len)));
	return guest;
}

int32
BookingArgQuantity(FunctionCallInfo fcinfo, int argno)
{
	int32		quantity;

	RequireNotNull(fcinfo, argno, "quantity");
	quantity = PG_GETARG_INT32(argno);
	if (quantity <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("quantity must be greater than zero"),
				 errdetail("The quantity given is %d.", quantity)));
	return quantity;
}

/*
 * An interval as microseconds, with months counted as 30 days, as
 * PostgreSQL's own interval comparison does.  Overflow is an argument error.
 */
int64
BookingIntervalUsecs(const Interval *span, const char *name)
{
	int64		days;
	int64		usecs;

	if (pg_mul_s64_overflow((int64) span->month, DAYS_PER_MONTH, &days) ||
		pg_add_s64_overflow(days, (int64) span->day, &days) ||
		pg_mul_s64_overflow(days, USECS_PER_DAY, &usecs) ||
		pg_add_s64_overflow(usecs, span->time, &usecs))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s is out of range", name),
				 errdetail("The %s given is %s.", name,
						   DatumGetCString(DirectFunctionCall1(interval_out,
															   IntervalPGetDatum(span))))));
	return usecs;
}

/* Returns false when no hold was asked for (NULL means "confirm now"). */
bool
BookingArgHold(FunctionCallInfo fcinfo, int argno, int64 *hold_us)
{
	int64		usecs;

	if (PG_ARGISNULL(argno))
		return false;
	usecs = BookingIntervalUsecs(PG_GETARG_INTERVAL_P(argno), "hold");
	if (usecs <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("hold must be a positive interval"),
				 errdetail("The hold given is %s.",
						   BookingDescribeInterval(PG_GETARG_INTERVAL_P(argno))),
				 errhint("Pass NULL to book without a hold.")));
	if (usecs > BOOKING_MAX_HOLD_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("hold must be at most 3660 days"),
				 errdetail("The hold given is %s.",
						   BookingDescribeInterval(PG_GETARG_INTERVAL_P(argno)))));
	*hold_us = usecs;
	return true;
}

/*
 * The expiry a group member's twin is given (shard_seat_member,
 * shard_stay_member): the coordinator's now + hold.  It must be one that a
 * hold of the API can have: finite, at most 3660 days ahead, and not long
 * past (a member may run a little after a short hold lapsed: lock waits,
 * clocks a little apart; a day covers both).  False: NULL, no hold.
 */
bool
BookingArgMemberExpiry(FunctionCallInfo fcinfo, int argno, TimestampTz now,
					   TimestampTz *expires_at)
{
	TimestampTz at;

	if (PG_ARGISNULL(argno))
		return false;
	at = PG_GETARG_TIMESTAMPTZ(argno);
	if (TIMESTAMP_NOT_FINITE(at))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("expires_at must be finite"),
				 errdetail("The expires_at given is %s.", timestamptz_to_str(at))));
	if (at > now + BOOKING_MAX_HOLD_USECS + USECS_PER_DAY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("expires_at must be at most 3660 days after the time of the call"),
				 errdetail("expires_at is %s.", timestamptz_to_str(at))));
	if (at < now - USECS_PER_DAY)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("expires_at must not lie more than a day before the time of the call"),
				 errdetail("expires_at is %s: no hold made by this call's coordinator lapsed that long ago.",
						   timestamptz_to_str(at))));
	*expires_at = at;
	return true;
}

/* A group member's group: NULL (-1), the member is the first; else a booking id. */
int64
BookingArgGroup(FunctionCallInfo fcinfo, int argno)
{
	int64		group_id;

	if (PG_ARGISNULL(argno))
		return -1;
	group_id = PG_GETARG_INT64(argno);
	if (group_id <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("group_id must be a booking id"),
				 errdetail("The group_id given is %lld.", (long long) group_id)));
	return group_id;
}

/*
 * NULL means booking.lock_timeout; 0 means do not wait (NOWAIT).  Either is
 * capped by the session's own lock_timeout when that is shorter (timeout.c).
 */
int
BookingArgLockTimeout(FunctionCallInfo fcinfo, int argno)
{
	int64		usecs;

	if (PG_ARGISNULL(argno))
		return BookingLockTimeoutDefault();
	usecs = BookingIntervalUsecs(PG_GETARG_INTERVAL_P(argno), "lock_timeout");
	if (usecs < 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lock_timeout must not be negative"),
				 errdetail("The lock_timeout given is %s.",
						   BookingDescribeInterval(PG_GETARG_INTERVAL_P(argno))),
				 errhint("Use 0 to fail at once when the resource is locked.")));
	/*
	 * Round a positive sub-millisecond wait up, so it never means NOWAIT;
	 * check the range after rounding, so that it cannot wrap around.
	 */
	if (usecs > (int64) INT_MAX * 1000)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lock_timeout must be at most %d milliseconds", INT_MAX),
				 errdetail("The lock_timeout given is %s.",
						   BookingDescribeInterval(PG_GETARG_INTERVAL_P(argno)))));
	return BookingCapLockTimeout((int) ((usecs + 999) / 1000));
}

/* Returns NULL when no key was given. */
char *
BookingArgKey(FunctionCallInfo fcinfo, int argno)
{
	text	   *key;
	int			len;

	if (PG_ARGISNULL(argno))
		return NULL;
	key = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(key);
	if (len == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idempotency_key must not be empty"),
				 errdetail("The idempotency_key given is an empty string."),
				 errhint("Pass NULL to call without an idempotency key.")));
	if (len > BOOKING_MAX_KEY_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("idempotency_key must be at most %d bytes long", BOOKING_MAX_KEY_BYTES),
				 errdetail("The idempotency_key given is %d bytes long.", len)));
	return text_to_cstring(key);
}

/*
 * (0.8.0) The caller's metadata: NULL (none), or a JSON object of at most
 * BOOKING_MAX_METADATA_BYTES as text.  *text is its canonical text (jsonb's
 * own output: keys sorted, one space after each comma and colon), the form
 * an idempotency key's fingerprint holds.
 */
Jsonb *
BookingArgMetadata(FunctionCallInfo fcinfo, int argno, char **text)
{
	Jsonb	   *metadata;
	size_t		len;

	*text = NULL;
	if (PG_ARGISNULL(argno))
		return NULL;
	metadata = PG_GETARG_JSONB_P(argno);
	if (!JB_ROOT_IS_OBJECT(metadata) || JB_ROOT_IS_SCALAR(metadata))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metadata must be a JSON object"),
				 errdetail("The metadata given is a JSON %s.",
						   JB_ROOT_IS_SCALAR(metadata) ? "scalar" : "array"),
				 errhint("Pass NULL for none, or an object such as {\"order_id\": \"A-1001\"}.")));
	*text = JsonbToCString(NULL, &metadata->root, VARSIZE(metadata));
	len = strlen(*text);
	if (len > BOOKING_MAX_METADATA_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("metadata must be at most %d bytes as text", BOOKING_MAX_METADATA_BYTES),
				 errdetail("The metadata given is %zu bytes as text.", len),
				 errhint("Store a reference (an order id) rather than the order itself.")));
	return metadata;
}

/*
 * A bounded, non-empty time range, normalized to half-open [lower, upper):
 * the instants given are kept and the bounds made inclusive-exclusive.
 */
void
BookingArgDuring(FunctionCallInfo fcinfo, int argno, const char *name,
				 TimestampTz *lower, TimestampTz *upper)
{
	RangeType  *range;
	TypeCacheEntry *typcache;
	RangeBound	lo;
	RangeBound	hi;
	bool		empty;

	RequireNotNull(fcinfo, argno, name);
	range = PG_GETARG_RANGE_P(argno);
	if (RangeTypeGetOid(range) != TSTZRANGEOID)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a tstzrange", name),
				 errdetail("The %s given is a range of type %s.", name,
						   format_type_be(RangeTypeGetOid(range)))));
	typcache = lookup_type_cache(TSTZRANGEOID, TYPECACHE_RANGE_INFO);
	range_deserialize(typcache, range, &lo, &hi, &empty);
	if (empty)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", name),
				 errdetail("The %s given is %s.", name, DescribeRange(range))));
	if (lo.infinite || hi.infinite ||
		TIMESTAMP_NOT_FINITE(DatumGetTimestampTz(lo.val)) ||
		TIMESTAMP_NOT_FINITE(DatumGetTimestampTz(hi.val)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must have finite lower and upper bounds", name),
				 errdetail("The %s given is %s.", name, DescribeRange(range))));
	*lower = DatumGetTimestampTz(lo.val);
	*upper = DatumGetTimestampTz(hi.val);
	if (*lower >= *upper)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must not be empty", name),
				 errdetail("The %s given is %s; a range is stored half-open, as [lower, upper).",
						   name, DescribeRange(range))));
}

/* A finite timestamptz argument named "until". */
TimestampTz
BookingArgUntil(FunctionCallInfo fcinfo, int argno)
{
	TimestampTz until;

	RequireNotNull(fcinfo, argno, "until");
	until = PG_GETARG_TIMESTAMPTZ(argno);
	if (TIMESTAMP_NOT_FINITE(until))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("until must be finite"),
				 errdetail("The until given is %s.", timestamptz_to_str(until))));
	return until;
}

/* [lower, upper) or [lower, infinity) as a tstzrange datum */
Datum
BookingMakeRange(TimestampTz lower, TimestampTz upper, bool upper_infinite)
{
	TypeCacheEntry *typcache = lookup_type_cache(TSTZRANGEOID, TYPECACHE_RANGE_INFO);
	RangeBound	lo;
	RangeBound	hi;

	lo.val = TimestampTzGetDatum(lower);
	lo.infinite = false;
	lo.inclusive = true;
	lo.lower = true;
	hi.val = TimestampTzGetDatum(upper);
	hi.infinite = upper_infinite;
	hi.inclusive = false;
	hi.lower = false;
	return RangeTypePGetDatum(make_range(typcache, &lo, &hi, false, NULL));
}

/*
 * A one-dimensional array argument of at most max elements, none NULL, as
 * its elements; errors name the argument.
 */
Datum *
BookingArgArray(FunctionCallInfo fcinfo, int argno, const char *name, Oid elemtype, int max,
				int *n)
{
	ArrayType  *arr;
	Datum	   *elems;
	bool	   *nulls;
	int16		typlen;
	bool		typbyval;
	char		typalign;

	RequireNotNull(fcinfo, argno, name);
	arr = PG_GETARG_ARRAYTYPE_P(argno);
	if (ARR_NDIM(arr) > 1)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be a one-dimensional array", name),
				 errdetail("The array given has %d dimensions.", ARR_NDIM(arr))));
	if (ARR_ELEMTYPE(arr) != elemtype)
		elog(ERROR, "%s has an unexpected element type", name);
	if (ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr)) > max)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must have at most %d elements", name, max),
				 errdetail("The array given has %d elements.",
						   ArrayGetNItems(ARR_NDIM(arr), ARR_DIMS(arr)))));
	get_typlenbyvalalign(elemtype, &typlen, &typbyval, &typalign);
	deconstruct_array(arr, elemtype, typlen, typbyval, typalign, &elems, &nulls, n);
	for (int i = 0; i < *n; i++)
		if (nulls[i])
			ereport(ERROR,
					(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
					 errmsg("%s must not contain nulls", name)));
	return elems;
}
