/*
 * hold.c
 *	  The booking lifecycle: booking.confirm, booking.cancel,
 *	  booking.extend_hold, booking.extend_hold_until and booking.hold_expire.
 *
 *	  A hold is a pending booking with expires_at; it blocks until then.  Its
 *	  validity range [created, expires_at) takes part in the exclusion
 *	  constraint, so a lapsed stay hold stops blocking by itself; a lapsed
 *	  seat hold stays in the counter until reclaimed (seat.c) or expired here.
 *
 *	  Locks: each call reads the booking's resource id, locks that resource
 *	  row, then reads and writes the booking row, which nobody else can
 *	  change without the same resource lock.  hold_expire takes resource
 *	  locks with SKIP LOCKED only, so it never waits behind a sale or another
 *	  hold_expire, and re-checks each hold's status under the lock, so no
 *	  hold is expired twice or both confirmed and expired.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"

PG_FUNCTION_INFO_V1(booking_confirm);
PG_FUNCTION_INFO_V1(booking_cancel);
PG_FUNCTION_INFO_V1(booking_extend_hold);
PG_FUNCTION_INFO_V1(booking_extend_hold_until);
PG_FUNCTION_INFO_V1(booking_hold_expire);

/* a booking's home: $2 here, the last parameter below */
static BookingPlan owner_plan = {
	"SELECT resource_id FROM booking.bookings WHERE home OPERATOR(pg_catalog.=) $2 "
	"AND id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, INT8OID}
};
static BookingPlan read_plan = {
	"SELECT CAST(status AS pg_catalog.text), expires_at, quantity, during IS NULL, created_at, "
	"pg_catalog.upper(during) "
	"FROM booking.bookings WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, INT8OID}
};
static BookingPlan set_status_plan = {
	"UPDATE booking.bookings SET status = CAST($2 AS booking.status) "
	"WHERE home OPERATOR(pg_catalog.=) $3 AND id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, TEXTOID, INT8OID}
};
static BookingPlan confirm_plan = {
	"UPDATE booking.bookings SET status = 'confirmed'::booking.status, expires_at = NULL, "
	"validity = pg_catalog.tstzrange(created_at, NULL, '[)') "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, INT8OID}
};
static BookingPlan extend_plan = {
	"UPDATE booking.bookings SET expires_at = $2, "
	"validity = pg_catalog.tstzrange(created_at, $2, '[)') "
	"WHERE home OPERATOR(pg_catalog.=) $3 AND id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, TIMESTAMPTZOID, INT8OID}
};
static BookingPlan lapsed_resources_plan = {
	"SELECT DISTINCT s.resource_id FROM (SELECT resource_id FROM booking.bookings "
	"WHERE home OPERATOR(pg_catalog.=) $3 "
	"AND status OPERATOR(pg_catalog.=) 'pending'::booking.status "
	"AND expires_at OPERATOR(pg_catalog.<=) $1 ORDER BY expires_at LIMIT $2) AS s "
	"ORDER BY 1",
	3, {TIMESTAMPTZOID, INT4OID, INT8OID}
};
static BookingPlan expire_plan = {
	"UPDATE booking.bookings SET status = 'expired'::booking.status "
	"WHERE home OPERATOR(pg_catalog.=) $4 AND id OPERATOR(pg_catalog.=) ANY (ARRAY(SELECT id FROM booking.bookings "
	"WHERE home OPERATOR(pg_catalog.=) $4 AND resource_id OPERATOR(pg_catalog.=) $1 "
	"AND status OPERATOR(pg_catalog.=) 'pending'::booking.status "
	"AND expires_at OPERATOR(pg_catalog.<=) $2 ORDER BY expires_at LIMIT $3)) "
	"RETURNING id, CASE WHEN during IS NULL THEN quantity ELSE 0 END",
	4, {INT8OID, TIMESTAMPTZOID, INT4OID, INT8OID}
};

/*
 * Locks the booking's resource, then reads the booking; false with res set
 * when the booking is unknown or the lock could not be had.
 */
bool
BookingLockBooking(BookingLifecycle *req, BookingLocked *b, BookingResult *res)
{
	Datum		values[2] = {Int64GetDatum(req->booking), Int64GetDatum(req->home)};
	BookingLockOutcome outcome;
	char	   *status;
	bool		isnull;
	int64		resource;

	if (BookingExecuteLatest(&owner_plan, values, NULL, 1) == 0)
	{
		BookingSetResult(res, BOOKING_NOT_FOUND, -1,
						 "Booking %lld does not exist.", (long long) req->booking);
		return false;
	}
	resource = BookingGetInt64(0, 1, NULL);
	outcome = BookingLockResource(resource, req->timeout_ms, &b->resource);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, resource, req->timeout_ms);
		return false;
	}

	/*
	 * Whether a hold has lapsed is decided on the clock after the lock: a
	 * newcomer may have taken the dates of a hold that lapsed while we waited.
	 */
	req->now = GetCurrentTimestamp();

	if (BookingExecute(&read_plan, values, NULL, false, 1) == 0)
	{
		/* a snapshot older than the booking: only a new transaction can see it */
		BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, resource, req->timeout_ms);
		return false;
	}
	status = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
	if (strcmp(status, "pending") == 0)
		b->status = BOOKING_STATUS_PENDING;
	else if (strcmp(status, "confirmed") == 0)
		b->status = BOOKING_STATUS_CONFIRMED;
	else if (strcmp(status, "cancelled") == 0)
		b->status = BOOKING_STATUS_CANCELLED;
	else if (strcmp(status, "waiting") == 0)
		b->status = BOOKING_STATUS_WAITING;
	else
		b->status = BOOKING_STATUS_EXPIRED;
	b->expires_at = DatumGetTimestampTz(BookingGetDatum(0, 2, &isnull));
	b->quantity = BookingGetInt32(0, 3, NULL);
	b->is_seat = BookingGetBool(0, 4);
	b->created_at = DatumGetTimestampTz(BookingGetDatum(0, 5, &isnull));
	b->ends_at = b->is_seat ? 0 : DatumGetTimestampTz(BookingGetDatum(0, 6, &isnull));
	return true;
}

static void
SetStatus(int64 booking, const char *status)
{
	Datum		values[3] = {Int64GetDatum(booking), CStringGetTextDatum(status),
	Int64GetDatum(BookingHome(booking))};

	(void) BookingExecute(&set_status_plan, values, NULL, false, 0);
}

/*
 * Ends a blocking booking and gives its seats back to the counter (for a
 * striped resource, to a stripe locked before anything is written).  False
 * with res set when that stripe could not be had.
 */
bool
BookingEndBooking(BookingLifecycle *req, BookingLocked *b, const char *status, BookingResult *res)
{
	BookingGiveBack gb;

	if (b->is_seat)
	{
		BookingLockOutcome outcome = BookingCounterOpenGiveBack(&b->resource, req->timeout_ms, &gb);

		if (outcome != BOOKING_LOCKED)
		{
			BookingSetLockOutcome(res, outcome, b->resource.id, req->timeout_ms);
			return false;
		}
	}
	SetStatus(req->booking, status);
	BookingEmitEvent(status, req->home, req->booking, BookingStatusName(b->status),
					 strcmp(status, "expired") == 0 ? "hold_expired" : "ok");
	if (b->is_seat)
	{
		BookingCounterGiveBack(&gb, b->quantity);
		/* the freed seats go to the line first, in this transaction */
		if (b->resource.waiting > 0)
			BookingWaitlistServe(b->resource.id, req->timeout_ms, req->now);
	}
	return true;
}

void
BookingSetHoldExpired(BookingResult *res, BookingLifecycle *req, BookingLocked *b)
{
	BookingSetResult(res, BOOKING_HOLD_EXPIRED, req->booking,
					 "The hold on booking %lld expired at %s; reserve again.",
					 (long long) req->booking, timestamptz_to_str(b->expires_at));
}

static void
ConfirmBody(void *state, BookingResult *res)
{
	BookingLifecycle *req = (BookingLifecycle *) state;
	BookingLocked b;

	if (!BookingLockBooking(req, &b, res))
		return;
	switch (b.status)
	{
		case BOOKING_STATUS_CONFIRMED:
			BookingSetResult(res, BOOKING_DONE, req->booking,
							 "Booking %lld is confirmed.", (long long) req->booking);
			return;
		case BOOKING_STATUS_CANCELLED:
			BookingSetResult(res, BOOKING_INVALID_STATE, req->booking,
							 "Booking %lld is cancelled and cannot be confirmed.",
							 (long long) req->booking);
			return;
		case BOOKING_STATUS_EXPIRED:
			BookingSetHoldExpired(res, req, &b);
			return;
		case BOOKING_STATUS_WAITING:
			BookingSetResult(res, BOOKING_INVALID_STATE, req->booking,
							 "Booking %lld is waiting in line; it becomes a hold to confirm when seats free up.",
							 (long long) req->booking);
			return;
		case BOOKING_STATUS_PENDING:
			break;
	}
	if (b.expires_at <= req->now)
	{
		if (BookingEndBooking(req, &b, "expired", res))
			BookingSetHoldExpired(res, req, &b);
		return;
	}
	{
		Datum		values[2] = {Int64GetDatum(req->booking), Int64GetDatum(req->home)};

		(void) BookingExecute(&confirm_plan, values, NULL, false, 0);
	}
	BookingEmitEvent("confirmed", req->home, req->booking, "pending", "ok");
	BookingSetResult(res, BOOKING_DONE, req->booking,
					 "Booking %lld is confirmed.", (long long) req->booking);
}

static void
CancelBody(void *state, BookingResult *res)
{
	BookingLifecycle *req = (BookingLifecycle *) state;
	BookingLocked b;

	if (!BookingLockBooking(req, &b, res))
		return;
	if (b.status == BOOKING_STATUS_CANCELLED || b.status == BOOKING_STATUS_EXPIRED)
	{
		BookingSetResult(res, BOOKING_INVALID_STATE, req->booking,
						 "Booking %lld is already %s.", (long long) req->booking,
						 b.status == BOOKING_STATUS_CANCELLED ? "cancelled" : "expired");
		return;
	}
	if (b.status == BOOKING_STATUS_WAITING)
	{
		SetStatus(req->booking, "cancelled");
		BookingEmitEvent("cancelled", req->home, req->booking, "waiting", "ok");
		BookingWaitlistLeft(&b.resource, req->now);
		BookingSetResult(res, BOOKING_DONE, req->booking,
						 "Booking %lld has left the waitlist of resource %lld.",
						 (long long) req->booking, (long long) b.resource.id);
		return;
	}
	if (!BookingEndBooking(req, &b, "cancelled", res))
		return;
	/* not "free": a newcomer may already hold the dates of a lapsed hold */
	BookingSetResult(res, BOOKING_DONE, req->booking,
					 "Booking %lld is cancelled and no longer holds its %s.", (long long) req->booking,
					 b.is_seat ? "seats" : "dates");
}

/*
 * The common part of extend_hold and extend_hold_until: false with res set
 * unless the booking is a live hold, now locked in b.
 */
static bool
LockLiveHold(BookingLifecycle *req, BookingLocked *b, BookingResult *res)
{
	if (!BookingLockBooking(req, b, res))
		return false;
	if (b->status == BOOKING_STATUS_CONFIRMED || b->status == BOOKING_STATUS_CANCELLED ||
		b->status == BOOKING_STATUS_WAITING)
	{
		BookingSetResult(res, BOOKING_INVALID_STATE, req->booking,
						 "Booking %lld is %s, not a hold.", (long long) req->booking,
						 b->status == BOOKING_STATUS_WAITING ? "waiting in line" :
						 BookingStatusName(b->status));
		return false;
	}
	if (b->status == BOOKING_STATUS_EXPIRED)
	{
		BookingSetHoldExpired(res, req, b);
		return false;
	}
	if (b->expires_at <= req->now)
	{
		if (BookingEndBooking(req, b, "expired", res))
			BookingSetHoldExpired(res, req, b);
		return false;
	}
	return true;
}

/* Moves a live hold's expiry to until (checked against the clock after the lock). */
static void
SetHoldUntil(BookingLifecycle *req, TimestampTz until, BookingResult *res)
{
	Datum		values[3];

	if (until <= req->now)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("until must be later than the time of the call"),
				 errdetail("until is %s; the hold would end at once.", timestamptz_to_str(until)),
				 errhint("Use booking.cancel to end a hold.")));
	if (until - req->now > BOOKING_MAX_HOLD_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("until must be at most 3660 days after the time of the call")));
	values[0] = Int64GetDatum(req->booking);
	values[1] = TimestampTzGetDatum(until);
	values[2] = Int64GetDatum(req->home);
	(void) BookingExecute(&extend_plan, values, NULL, false, 0);
	BookingEmitEvent("hold_extended", req->home, req->booking, "pending", "ok");
	BookingSetResult(res, BOOKING_DONE, req->booking,
					 "The hold on booking %lld now lasts until %s.",
					 (long long) req->booking, timestamptz_to_str(until));
}

static void
ExtendHoldBody(void *state, BookingResult *res)
{
	BookingLifecycle *req = (BookingLifecycle *) state;
	BookingLocked b;
	TimestampTz until;

	if (!LockLiveHold(req, &b, res))
		return;
	until = b.expires_at + req->by_us;
	if (until - req->now > BOOKING_MAX_HOLD_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("by would make the hold last more than 3660 days")));
	SetHoldUntil(req, until, res);
}

static void
ExtendHoldUntilBody(void *state, BookingResult *res)
{
	BookingLifecycle *req = (BookingLifecycle *) state;
	BookingLocked b;

	if (!LockLiveHold(req, &b, res))
		return;
	SetHoldUntil(req, req->until, res);
}

static Datum
RunLifecycleCall(FunctionCallInfo fcinfo, BookingLifecycle *req, const char *fn,
				 const char *key, BookingBodyFn body)
{
	BookingCall call;

	if (BookingForwarding())
		return BookingForward(fcinfo, psprintf("shard_%s", fn), req->home, req->booking);

	memset(&call, 0, sizeof(call));
	call.key = key;
	if (key != NULL)
	{
		const char *fields[1] = {psprintf(INT64_FORMAT, req->booking)};

		call.request = BookingRequestString(fn, 1, fields);
	}
	call.timeout_ms = req->timeout_ms;
	call.home = req->home;
	call.now = req->now;
	call.body = body;
	call.state = req;

	return BookingCallDatum(fcinfo, &call);
}

static void
ReadLifecycleArgs(FunctionCallInfo fcinfo, BookingLifecycle *req)
{
	memset(req, 0, sizeof(*req));
	req->booking = BookingArgId(fcinfo, 0, "booking");
	req->home = BookingHome(req->booking);
	req->timeout_ms = booking_lock_timeout_ms;
	req->now = GetCurrentTimestamp();
}

/*
 * confirm(booking, idempotency_key)
 */
Datum
booking_confirm(PG_FUNCTION_ARGS)
{
	BookingLifecycle req;

	ReadLifecycleArgs(fcinfo, &req);
	return RunLifecycleCall(fcinfo, &req, "confirm", BookingArgKey(fcinfo, 1), ConfirmBody);
}

/*
 * cancel(booking, idempotency_key)
 */
Datum
booking_cancel(PG_FUNCTION_ARGS)
{
	BookingLifecycle req;

	ReadLifecycleArgs(fcinfo, &req);
	return RunLifecycleCall(fcinfo, &req, "cancel", BookingArgKey(fcinfo, 1), CancelBody);
}

/*
 * extend_hold(booking, by)
 */
Datum
booking_extend_hold(PG_FUNCTION_ARGS)
{
	BookingLifecycle req;

	ReadLifecycleArgs(fcinfo, &req);
	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("by must not be null")));
	req.by_us = BookingIntervalUsecs(PG_GETARG_INTERVAL_P(1), "by");
	if (req.by_us <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("by must be a positive interval")));
	if (req.by_us > BOOKING_MAX_HOLD_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("by must be at most 3660 days")));
	return RunLifecycleCall(fcinfo, &req, "extend_hold", NULL, ExtendHoldBody);
}

BOOKING_SHARD_TWIN(confirm)
BOOKING_SHARD_TWIN(cancel)
BOOKING_SHARD_TWIN(extend_hold)

/*
 * extend_hold_until(booking, until): an absolute expiry, so that a retried
 * request sets the same expiry again (a retried extend_hold extends twice)
 */
Datum
booking_extend_hold_until(PG_FUNCTION_ARGS)
{
	BookingLifecycle req;

	ReadLifecycleArgs(fcinfo, &req);
	req.until = BookingArgUntil(fcinfo, 1);
	return RunLifecycleCall(fcinfo, &req, "extend_hold_until", NULL, ExtendHoldUntilBody);
}

BOOKING_SHARD_TWIN(extend_hold_until)

typedef struct ExpireArgs
{
	int64		resource;
	TimestampTz now;
	int32		limit;
	int64		expired;
} ExpireArgs;

/* Expires up to limit lapsed holds of one resource, unless it is locked. */
static void
ExpireResource(void *arg)
{
	ExpireArgs *ea = (ExpireArgs *) arg;
	BookingResource r;
	Datum		values[4];
	BookingGiveBack gb;

	/* a busy resource is skipped: its bookers reclaim lapsed holds themselves */
	if (!BookingTryLockResource(ea->resource, &r) ||
		BookingCounterOpenGiveBack(&r, 0, &gb) != BOOKING_LOCKED)
		return;
	values[0] = Int64GetDatum(ea->resource);
	values[1] = TimestampTzGetDatum(ea->now);
	values[2] = Int32GetDatum(ea->limit);
	values[3] = Int64GetDatum(r.home);
	ea->expired = BookingExecute(&expire_plan, values, NULL, false, 0);
	BookingCounterGiveBack(&gb, BookingCounterExpired(r.home, ea->expired));
	if (r.waiting > 0)
		BookingWaitlistServe(r.id, 0, ea->now);
}

typedef struct PurgeArgs
{
	int64		home;
	TimestampTz now;
	int32		batch;
	int64		purged;
} PurgeArgs;

static void
PurgeKeys(void *arg)
{
	PurgeArgs  *pa = (PurgeArgs *) arg;

	pa->purged = BookingPurgeKeys(pa->home, pa->now, pa->batch);
}

/*
 * The outbox's old events, and the lines of resources whose seats were
 * freed by a call that could not wait for their stripes (a safety net: the
 * calls that free seats serve the line themselves).
 */
static void
TendHome(void *arg)
{
	PurgeArgs  *pa = (PurgeArgs *) arg;

	(void) BookingWaitlistServeHome(pa->home, pa->now, pa->batch);
	(void) BookingPurgeEvents(pa->home, pa->now, pa->batch);
}

/* the work of hold_expire in one home (shard.c): on one server, all of it */
typedef struct HomeArgs
{
	int64		home;
	TimestampTz now;
	int32		batch;			/* holds left to expire */
	int32		keys;			/* keys left to purge */
	int32		tend;			/* events to purge, lines to serve: the batch */
	int64		expired;
	int64		purged;
} HomeArgs;

static void
ExpireHome(void *arg)
{
	HomeArgs   *ha = (HomeArgs *) arg;
	Datum		values[3];
	int			nres;
	int64	   *resources;

	values[0] = TimestampTzGetDatum(ha->now);
	values[1] = Int32GetDatum(ha->batch);
	values[2] = Int64GetDatum(ha->home);
	nres = BookingExecute(&lapsed_resources_plan, values, NULL, false, 0);
	resources = palloc(sizeof(int64) * Max(nres, 1));
	for (int i = 0; i < nres; i++)
		resources[i] = BookingGetInt64(i, 1, NULL);

	for (int i = 0; i < nres && ha->expired < ha->batch; i++)
	{
		ExpireArgs	ea = {resources[i], ha->now, (int32) (ha->batch - ha->expired), 0};

		/*
		 * Under a snapshot isolation level a resource changed after the
		 * snapshot fails with a serialization error: skip it, as if locked.
		 */
		if (IsolationUsesXactSnapshot())
		{
			if (BookingRunGuarded(ExpireResource, &ea) != BOOKING_GUARD_DONE)
				continue;
		}
		else
			ExpireResource(&ea);
		ha->expired += ea.expired;
	}

	if (ha->keys > 0)
	{
		PurgeArgs	pa = {ha->home, ha->now, ha->keys, 0};

		if (IsolationUsesXactSnapshot())
			(void) BookingRunGuarded(PurgeKeys, &pa);
		else
			PurgeKeys(&pa);
		ha->purged = pa.purged;
	}
	{
		PurgeArgs	pa = {ha->home, ha->now, ha->tend, 0};

		if (IsolationUsesXactSnapshot())
			(void) BookingRunGuarded(TendHome, &pa);
		else
			TendHome(&pa);
	}
}

typedef struct TablesArgs
{
	BookingLockOutcome outcome;
} TablesArgs;

static void
RunLockTables(void *arg)
{
	((TablesArgs *) arg)->outcome = BookingLockTables(booking_lock_timeout_ms, true);
}

/*
 * The table locks of hold_expire, bounded by booking.lock_timeout: false
 * when DDL or LOCK TABLE holds a table longer.  Under a snapshot isolation
 * level no call frame has set lock_timeout, so the wait gets a guard of its
 * own here.
 */
static bool
LockTablesForExpiry(void)
{
	TablesArgs	ta = {BOOKING_LOCK_BUSY};
	int			nestlevel = -1;
	BookingGuardOutcome outcome;

	if (!IsolationUsesXactSnapshot())
		return BookingLockTables(booking_lock_timeout_ms, true) == BOOKING_LOCKED;
	if (booking_lock_timeout_ms > 0)
		nestlevel = BookingPushLockTimeout(booking_lock_timeout_ms);
	outcome = BookingRunGuarded(RunLockTables, &ta);
	if (nestlevel >= 0)
		BookingPopLockTimeout(nestlevel);
	return outcome == BOOKING_GUARD_DONE && ta.outcome == BOOKING_LOCKED;
}

/*
 * hold_expire(batch) returns the number of holds moved to expired
 */
Datum
booking_hold_expire(PG_FUNCTION_ARGS)
{
	int32		batch = PG_ARGISNULL(0) ? 1000 : PG_GETARG_INT32(0);
	TimestampTz now = GetCurrentTimestamp();
	int64		expired = 0;
	int64		purged = 0;
	int			unreachable = 0;
	int			moving = 0;
	int			nhomes;
	int64	   *homes;

	if (batch <= 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch must be greater than zero"),
				 errdetail("The batch given is %d.", batch)));

	SPI_connect();
	/* a maintenance call: no booking.result to say busy with, so an error */
	if (!LockTablesForExpiry())
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not lock the booking tables within booking.lock_timeout (%d ms)",
						booking_lock_timeout_ms),
				 errdetail("Another transaction holds a conflicting lock on one of them (a schema change, VACUUM FULL or LOCK TABLE)."),
				 errhint("Run booking.hold_expire() again later; the expiry worker does so by itself.")));
	nhomes = BookingAllHomes(&homes);
	for (int i = 0; i < nhomes && expired < batch; i++)
	{
		HomeArgs	ha = {homes[i], now, (int32) (batch - expired), (int32) (batch - purged), batch, 0, 0};

		/* on Citus a shard on a node that is down is skipped, and said */
		if (BookingDistributed())
		{
			BookingGuardOutcome outcome = BookingRunGuardedRemote(ExpireHome, &ha, &homes[i], 1);

			if (outcome == BOOKING_GUARD_UNREACHABLE)
			{
				unreachable++;
				continue;
			}
			if (outcome == BOOKING_GUARD_MOVED)
			{
				moving++;
				continue;
			}
		}
		else
			ExpireHome(&ha);
		expired += ha.expired;
		purged += ha.purged;
	}
	SPI_finish();
	if (unreachable > 0)
		ereport(WARNING,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("hold_expire skipped %d of %d shards: their node cannot be reached", unreachable, nhomes),
				 errdetail("Lapsed holds there still block no one; they are expired once the node is back.")));
	if (moving > 0)
		ereport(WARNING,
				(errmsg("hold_expire skipped %d of %d shards: they moved to another node during the pass", moving, nhomes),
				 errdetail("Lapsed holds there still block no one; the next pass expires them.")));

	PG_RETURN_INT64(expired);
}
