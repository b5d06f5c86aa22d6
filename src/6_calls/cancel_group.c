/*
 * cancel_group.c
 *	  booking.cancel_group: every blocking booking of a group (a series, a
 *	  reserve_stays group, a reserve_seats pass) that starts at or after
 *	  from_time, cancelled at once: a term of lessons from next week, a
 *	  family's rooms, a pass.
 *
 *	  Each member is cancelled by booking.cancel itself, so that seats go
 *	  back to their counter and to the line, and each gets its cancelled
 *	  event, exactly as one by one; on Citus each such cancel runs on its
 *	  member's node.  The members are taken in ascending resource id order,
 *	  the order the calls that made the group locked them in, so a
 *	  cancel_group never waits in a cycle with them.  All of it runs in one
 *	  subtransaction: when one member answers busy or retry, none is
 *	  cancelled.
 *
 *	  Layer 6, the calls.  Locks: the members' resource rows in ascending id
 *	  order (through cancel), then their booking rows.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/guard.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "3_frame/idempotency.h"

PG_FUNCTION_INFO_V1(booking_cancel_group);

/*
 * The group's members: every one (for not_found), and whether it blocks now
 * and starts at or after $2 (NULL: all; a seat has no start).  One server
 * keeps every row in home 0 (bookings_group_idx); on Citus the members may
 * live in several shards, and the coordinator asks them all.
 */
#define MEMBERS_QUERY(where_home) \
	"SELECT id, resource_id, " \
	"status IN ('pending'::booking.status, 'confirmed'::booking.status) " \
	"AND (expires_at IS NULL OR expires_at OPERATOR(pg_catalog.>) $3) " \
	"AND ($2 IS NULL OR pg_catalog.lower(during) OPERATOR(pg_catalog.>=) $2) " \
	"FROM booking.bookings WHERE " where_home "group_id OPERATOR(pg_catalog.=) $1 " \
	"ORDER BY resource_id, id"

static BookingPlan members_plan = {
	MEMBERS_QUERY("home OPERATOR(pg_catalog.=) 0 AND "), 3, {INT8OID, TIMESTAMPTZOID, TIMESTAMPTZOID}
};
static BookingPlan members_distributed_plan = {
	MEMBERS_QUERY(""), 3, {INT8OID, TIMESTAMPTZOID, TIMESTAMPTZOID}
};

static BookingPlan cancel_plan = {
	"SELECT code FROM booking.cancel($1)", 1, {INT8OID}
};

typedef struct GroupCancel
{
	int64		group_id;
	bool		has_from;
	TimestampTz from_time;
	TimestampTz now;
	int			nmembers;		/* blocking ones that start in time */
	int64	   *members;
	int			cancelled;
	BookingCode refusal;		/* busy or retry of a member */
} GroupCancel;

/* every chosen member through cancel; false when one could not be had */
static bool
RunCancels(void *arg)
{
	GroupCancel *gc = (GroupCancel *) arg;

	for (int i = 0; i < gc->nmembers; i++)
	{
		Datum		value = Int64GetDatum(gc->members[i]);
		bool		isnull;
		char	   *code;

		(void) BookingExecute(&cancel_plan, &value, NULL, false, 1);
		code = TextDatumGetCString(BookingGetDatum(0, 1, &isnull));
		if (strcmp(code, "ok") == 0)
			gc->cancelled++;
		else if (strcmp(code, "busy") == 0 || strcmp(code, "retry") == 0)
		{
			(void) BookingCodeFromName(code, &gc->refusal);
			return false;
		}
		/* invalid_state: ended meanwhile by someone else; not_found cannot be */
	}
	return true;
}

static void
CancelGroupBody(void *state, BookingResult *res)
{
	GroupCancel *gc = (GroupCancel *) state;
	Datum		values[3];
	char		nulls[3] = {' ', ' ', ' '};
	int			n;
	bool		kept = false;
	BookingGuardOutcome outcome;

	values[0] = Int64GetDatum(gc->group_id);
	values[1] = TimestampTzGetDatum(gc->from_time);
	if (!gc->has_from)
		nulls[1] = 'n';
	values[2] = TimestampTzGetDatum(gc->now);
	n = BookingExecuteLatest(BookingDistributed() ? &members_distributed_plan : &members_plan,
							 values, nulls, 0);
	if (n == 0)
	{
		BookingSetResult(res, BOOKING_NOT_FOUND, -1,
						 "No booking has group id %lld.", (long long) gc->group_id);
		return;
	}
	gc->members = palloc(sizeof(int64) * n);
	for (int i = 0; i < n; i++)
		if (BookingGetBool(i, 3))
			gc->members[gc->nmembers++] = BookingGetInt64(i, 1, NULL);
	if (gc->nmembers == 0)
	{
		BookingSetResult(res, BOOKING_INVALID_STATE, gc->group_id,
						 gc->has_from ?
						 "No booking of group %lld that starts at or after the time given blocks anything; nothing was cancelled." :
						 "No booking of group %lld blocks anything; nothing was cancelled.",
						 (long long) gc->group_id);
		return;
	}

	outcome = BookingRunGuardedTry(RunCancels, gc, &kept);
	if (outcome != BOOKING_GUARD_DONE || !kept)
	{
		BookingSetResult(res, outcome == BOOKING_GUARD_BUSY ||
						 (outcome == BOOKING_GUARD_DONE && gc->refusal == BOOKING_BUSY) ?
						 BOOKING_BUSY : BOOKING_RETRY, -1,
						 "A booking of group %lld could not be cancelled now; nothing was cancelled. Try again.",
						 (long long) gc->group_id);
		return;
	}
	if (gc->cancelled == 0)
	{
		BookingSetResult(res, BOOKING_INVALID_STATE, gc->group_id,
						 "The bookings of group %lld were ended meanwhile; nothing was cancelled.",
						 (long long) gc->group_id);
		return;
	}
	BookingSetResult(res, BOOKING_DONE, gc->group_id,
					 "Cancelled %d %s of group %lld.", gc->cancelled,
					 gc->cancelled == 1 ? "booking" : "bookings", (long long) gc->group_id);
}

/*
 * cancel_group(group_id, from_time, idempotency_key)
 */
Datum
booking_cancel_group(PG_FUNCTION_ARGS)
{
	GroupCancel *gc = palloc0(sizeof(GroupCancel));
	BookingCall call;

	memset(&call, 0, sizeof(call));
	gc->group_id = BookingArgId(fcinfo, 0, "group_id");
	gc->has_from = !PG_ARGISNULL(1);
	if (gc->has_from)
	{
		gc->from_time = PG_GETARG_TIMESTAMPTZ(1);
		if (TIMESTAMP_NOT_FINITE(gc->from_time))
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("from_time must be finite"),
					 errdetail("The from_time given is %s; pass NULL for the whole group.",
							   timestamptz_to_str(gc->from_time))));
	}
	call.key = BookingArgKey(fcinfo, 2);
	gc->now = GetCurrentTimestamp();
	gc->refusal = BOOKING_RETRY;
	if (call.key != NULL)
	{
		const char *fields[2];

		fields[0] = psprintf(INT64_FORMAT, gc->group_id);
		fields[1] = gc->has_from ? psprintf(INT64_FORMAT, (int64) gc->from_time) : NULL;
		call.request = BookingRequestString("cancel_group", 2, fields, NULL);
	}
	call.timeout_ms = BookingLockTimeoutDefault();
	call.home = BookingHome(gc->group_id);
	call.now = gc->now;
	call.body = CancelGroupBody;
	call.state = gc;
	return BookingCallDatum(fcinfo, &call);
}
