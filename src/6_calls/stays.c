/*
 * stays.c
 *	  Range inventory: booking.reserve_stays, a group of stays booked all
 *	  or nothing.
 *
 *	  On one server the group is one statement: the members' rows, locked in
 *	  ascending id order, then one insert that is kept only when every member
 *	  went in.  On Citus a group whose members live in one shard runs there;
 *	  otherwise member by member on their nodes (5_scaleout/group.c),
 *	  through the twin shard_stay_member.
 *
 *	  Layer 6, the calls.  Locks: resource rows in ascending id order, then
 *	  the members' booking rows.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "lib/stringinfo.h"
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
#include "4_inventory/capacity.h"
#include "4_inventory/hours.h"
#include "4_inventory/limit.h"
#include "4_inventory/range.h"
#include "4_inventory/slots.h"
#include "5_scaleout/group.h"
#include "5_scaleout/route.h"
#include "6_calls/stay.h"

PG_FUNCTION_INFO_V1(booking_reserve_stays);

/* the one-statement group of one server, whose every home is 0 */
static BookingPlan group_missing_plan = {
	"SELECT u.id FROM pg_catalog.unnest($1) AS u(id) WHERE NOT EXISTS ("
	"SELECT 1 FROM booking.resources r WHERE r.home OPERATOR(pg_catalog.=) 0 "
	"AND r.id OPERATOR(pg_catalog.=) u.id) "
	"ORDER BY u.id LIMIT 1",
	1, {INT8ARRAYOID}
};

static BookingPlan group_conflict_plan = {
	"SELECT b.resource_id FROM booking.resources r JOIN booking.bookings b "
	"ON b.home OPERATOR(pg_catalog.=) 0 AND b.resource_id OPERATOR(pg_catalog.=) r.id "
	"WHERE r.home OPERATOR(pg_catalog.=) 0 AND r.id OPERATOR(pg_catalog.=) ANY ($1) AND "
	BOOKING_BLOCKING_FOOTPRINT("b", BOOKING_FOOTPRINT_OF("r")) " ORDER BY b.resource_id LIMIT 1",
	3, {INT8ARRAYOID, TSTZRANGEOID, TSTZRANGEOID}
};

static BookingPlan next_id_plan = {
	"SELECT pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass)", 0, {InvalidOid}
};

/* the members' footprints and limits come from their rows, which we hold */
static BookingPlan group_insert_plan = {
	"INSERT INTO booking.bookings "
	"(home, id, resource_id, guest, quantity, during, status, expires_at, created_at, validity, group_id, "
	"blocked, limited, metadata) "
	"SELECT 0, CASE WHEN u.ord OPERATOR(pg_catalog.=) 1 THEN $7 "
	"ELSE pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass) END, "
	"u.id, $2, 1, $3, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6, $7, "
	BOOKING_SQL_WIDENED("pg_catalog.lower($3)", "pg_catalog.upper($3)", "r.buffer_before", "r.buffer_after")
	", r.guest_limit IS NOT NULL, $8 "
	"FROM pg_catalog.unnest($1) WITH ORDINALITY AS u(id, ord) JOIN booking.resources r "
	"ON r.home OPERATOR(pg_catalog.=) 0 AND r.id OPERATOR(pg_catalog.=) u.id ORDER BY u.ord "
	"ON CONFLICT ON CONSTRAINT bookings_no_overlap DO NOTHING RETURNING id",
	8, {INT8ARRAYOID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID, INT8OID,
	JSONBOID}
};

/*
 * a member of a group on Citus: $1..$10 as range.c's insert, $11 the group
 * (NULL: this one), $12 the caller's metadata (NULL: none)
 */
static BookingPlan member_insert_plan = {
	"INSERT INTO booking.bookings "
	"(home, id, resource_id, guest, quantity, during, status, expires_at, created_at, validity, "
	"blocked, limited, group_id, metadata) "
	"VALUES ($7, $8, $1, $2, 1, $3, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6, $9, $10, COALESCE($11, $8), $12) "
	"ON CONFLICT ON CONSTRAINT bookings_no_overlap DO NOTHING RETURNING id",
	12, {INT8OID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID, INT8OID, INT8OID,
	TSTZRANGEOID, BOOLOID, INT8OID, JSONBOID}
};

typedef struct GroupInsertArgs
{
	Datum	   *values;
	const char *nulls;
	int			expected;
} GroupInsertArgs;

/*
 * Inserts every member; kept only when all went in.  A conflict the skipped
 * pre-checks did not see (SERIALIZABLE), or a writer that bypassed the API,
 * rolls the subtransaction back: nothing is left behind, and no read (which
 * SSI would track) is needed to clean up.
 */
static bool
RunGroupInsert(void *arg)
{
	GroupInsertArgs *ga = (GroupInsertArgs *) arg;

	int64	   *ids;

	if (BookingExecute(&group_insert_plan, ga->values, ga->nulls, false, 0) != ga->expected)
		return false;
	ids = palloc(sizeof(int64) * ga->expected);
	for (int i = 0; i < ga->expected; i++)
		ids[i] = BookingGetInt64(i, 1, NULL);
	for (int i = 0; i < ga->expected; i++)
		BookingEmitEvent("reserved", 0, ids[i], NULL, "ok");
	return true;
}

/*
 * One member of a group on a Citus cluster, on the node that holds it: the
 * friendly check, the lock, the insert.  group_id < 0: this member is the
 * first, and its id names the group.
 */
static void
StayMember(BookingStayRequest *req, int64 resource, int64 group_id, BookingResult *res)
{
	int64		home = BookingHome(resource);
	Datum		values[12];
	char		nulls[12];
	BookingResource r;
	ItemPointerData tid;
	TimestampTz closed_at;

	memset(nulls, ' ', sizeof(nulls));
	if (!IsolationIsSerializable() && !BookingStayPrecheck(req, resource, &r, &tid, res))
		return;
	if (!BookingLockResourceFor(resource, req->timeout_ms, &r, res))
		return;
	if (!BookingOpenAllows(&r, req->lower, req->upper, &closed_at))
	{
		BookingSetClosed(res, resource, closed_at, "");
		return;
	}
	if (!BookingStayLeavesSlots(&r, req->lower, req->upper, req->validity, -1, res))
		return;
	if (!BookingGuestLimitAllows(&r, req->guest, 1, BOOKING_LIMIT_STAYS, req->now, res))
		return;
	values[0] = Int64GetDatum(resource);
	BookingStayRowValues(req, values, nulls);
	values[6] = Int64GetDatum(home);
	values[7] = Int64GetDatum(BookingNewId("bookings_id_seq", home));
	values[8] = BookingStayFootprint(req->lower, req->upper, &r);
	values[9] = BoolGetDatum(r.guest_limit > 0);
	values[10] = Int64GetDatum(group_id);
	if (group_id < 0)
		nulls[10] = 'n';
	values[11] = PointerGetDatum(req->metadata);
	if (req->metadata == NULL)
		nulls[11] = 'n';
	if (BookingExecute(&member_insert_plan, values, nulls, false, 1) == 0)
	{
		BookingStaySetRefusal(res, BOOKING_JUST_TAKEN, resource, req);
		return;
	}
	BookingSetResult(res, BOOKING_CREATED, BookingGetInt64(0, 1, NULL), "member booked");
	BookingEmitEvent("reserved", home, res->booking_id, NULL, "ok");
}

/* A member on the node that holds it, through its twin (route.c). */
static void
ForwardMember(BookingStayRequest *req, int64 resource, int64 group_id, BookingResult *res)
{
	BookingRunMemberTwin("shard_stay_member", resource, req->guest, TSTZRANGEOID,
						 req->during, req->has_hold, req->expires_at, group_id,
						 req->timeout_ms, req->metadata, res);
}

/* member i of a group, here or through its twin */
static void
GroupMember(void *arg, int i, bool remote, int64 group_id, BookingResult *res)
{
	BookingStayRequest *req = (BookingStayRequest *) arg;
	int64		resource = DatumGetInt64(req->ids[i]);

	if (remote)
		ForwardMember(req, resource, group_id, res);
	else
		StayMember(req, resource, group_id, res);
}

/*
 * reserve_stays on Citus: member by member, in ascending id order, all or
 * nothing (group.c).  When the members live on several nodes this runs on
 * the coordinator and each member runs on its node through its twin.
 */
static void
ReserveStaysDistributed(BookingStayRequest *req, BookingResult *res)
{
	int			n;
	int64	   *ids;
	int64	   *homes;
	int64		first;

	deconstruct_array(req->resources, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &req->ids, NULL, &n);
	ids = palloc(sizeof(int64) * n);
	homes = palloc(sizeof(int64) * n);
	for (int i = 0; i < n; i++)
	{
		ids[i] = DatumGetInt64(req->ids[i]);
		homes[i] = BookingHome(ids[i]);
	}
	first = BookingRunGroup(n, ids, homes, req->home, GroupMember, req, req->timeout_ms, res);
	if (first < 0)
		return;					/* res holds the refusal */
	BookingStaySetCreated(res, first,
				   psprintf("%d %s as group %lld", n, n == 1 ? "resource" : "resources",
							(long long) first), req);
}

static void
ReserveStaysBody(void *state, BookingResult *res)
{
	BookingStayRequest *req = (BookingStayRequest *) state;
	Datum		ids = PointerGetDatum(req->resources);
	Datum		values[8];
	char		nulls[8];
	Datum	   *elems;
	int			nelems;
	int64		first_id;
	bool		serializable = IsolationIsSerializable();
	GroupInsertArgs ga;
	BookingGuardOutcome outcome;
	bool		kept = false;

	memset(nulls, ' ', sizeof(nulls));
	if (BookingDistributed())
	{
		ReserveStaysDistributed(req, res);
		return;
	}

	values[0] = ids;
	values[1] = req->during;
	values[2] = req->validity;
	/* the friendly checks are skipped at SERIALIZABLE, as in reserve_stay */
	if (!serializable)
	{
		if (BookingExecuteLatest(&group_missing_plan, &ids, NULL, 1) == 1)
		{
			BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, BookingGetInt64(0, 1, NULL),
								  req->timeout_ms);
			return;
		}
		if (BookingExecuteLatest(&group_conflict_plan, values, NULL, 1) == 1)
		{
			BookingStaySetRefusal(res, BOOKING_UNAVAILABLE, BookingGetInt64(0, 1, NULL), req);
			return;
		}
	}

	/* ascending id order: two groups can never wait on each other in a cycle */
	deconstruct_array(req->resources, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, NULL, &nelems);
	for (int i = 0; i < nelems; i++)
	{
		BookingResource r;
		TimestampTz closed_at;

		if (!BookingLockResourceFor(DatumGetInt64(elems[i]), req->timeout_ms, &r, res))
			return;
		if (!BookingOpenAllows(&r, req->lower, req->upper, &closed_at))
		{
			BookingSetClosed(res, r.id, closed_at, "");
			return;
		}
		if (!BookingStayLeavesSlots(&r, req->lower, req->upper, req->validity, -1, res))
			return;
		if (!BookingGuestLimitAllows(&r, req->guest, 1, BOOKING_LIMIT_STAYS, req->now, res))
			return;
	}

	/* under the locks, a conflict now was made while we waited */
	if (!serializable &&
		BookingExecuteLatest(&group_conflict_plan, values, NULL, 1) == 1)
	{
		BookingStaySetRefusal(res, BOOKING_JUST_TAKEN, BookingGetInt64(0, 1, NULL), req);
		return;
	}

	(void) BookingExecute(&next_id_plan, NULL, NULL, false, 1);
	first_id = BookingGetInt64(0, 1, NULL);

	values[0] = ids;
	BookingStayRowValues(req, values, nulls);
	values[6] = Int64GetDatum(first_id);
	values[7] = PointerGetDatum(req->metadata);
	if (req->metadata == NULL)
		nulls[7] = 'n';
	ga.values = values;
	ga.nulls = nulls;
	ga.expected = nelems;
	outcome = BookingRunGuardedTry(RunGroupInsert, &ga, &kept);
	if (outcome != BOOKING_GUARD_DONE)
	{
		BookingSetLockOutcome(res, outcome == BOOKING_GUARD_BUSY ? BOOKING_LOCK_BUSY : BOOKING_LOCK_RETRY,
							  req->resource, req->timeout_ms);
		return;
	}
	if (!kept)
	{
		BookingSetResult(res, BOOKING_JUST_TAKEN, -1,
						 "One of the resources was just booked for an overlapping range; nothing was booked.");
		return;
	}
	BookingStaySetCreated(res, first_id,
				   psprintf("%d %s as group %lld", nelems,
							nelems == 1 ? "resource" : "resources", (long long) first_id), req);
}

static int
CompareInt64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/*
 * reserve_stays(resources, guest, during, hold, idempotency_key, lock_timeout,
 * metadata)
 */
Datum
booking_reserve_stays(PG_FUNCTION_ARGS)
{
	BookingStayRequest req;
	Datum	   *elems;
	int			n;
	int64	   *ids;
	Datum	   *sorted;
	StringInfoData target;
	bool		single_home = true;

	memset(&req, 0, sizeof(req));
	elems = BookingArgArray(fcinfo, 0, "resources", INT8OID, BOOKING_MAX_GROUP, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resources must not be empty"),
				 errdetail("The resources given are an empty array.")));
	ids = palloc(sizeof(int64) * n);
	for (int i = 0; i < n; i++)
		ids[i] = DatumGetInt64(elems[i]);
	qsort(ids, n, sizeof(int64), CompareInt64);
	sorted = palloc(sizeof(Datum) * n);
	initStringInfo(&target);
	for (int i = 0; i < n; i++)
	{
		if (i > 0 && ids[i] == ids[i - 1])
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("resources must not contain duplicates"),
					 errdetail("Resource %lld appears more than once.", (long long) ids[i])));
		sorted[i] = Int64GetDatum(ids[i]);
		appendStringInfo(&target, "%s" INT64_FORMAT, i > 0 ? " " : "", ids[i]);
	}
	req.resources = construct_array(sorted, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE);
	req.nresources = n;
	req.resource = ids[0];
	req.home = BookingHome(req.resource);
	BookingStayReadArgs(fcinfo, &req);

	/*
	 * On Citus a group whose members all live in one shard runs there;
	 * otherwise here, member by member on their nodes (the key, if any, is
	 * kept in the lowest member's shard).
	 */
	for (int i = 1; i < n && single_home; i++)
		single_home = BookingHome(ids[i]) == req.home;
	return BookingStayRunCall(fcinfo, &req, "reserve_stays", target.data, ReserveStaysBody, single_home);
}

BOOKING_SHARD_TWIN(reserve_stays)

typedef struct MemberRequest
{
	BookingStayRequest req;
	int64		group_id;
} MemberRequest;

static void
StayMemberBody(void *state, BookingResult *res)
{
	MemberRequest *mr = (MemberRequest *) state;

	StayMember(&mr->req, mr->req.resource, mr->group_id, res);
}

/*
 * The work of one group member on its node, for shard_stay_member:
 * (resource, guest, during, expires_at, group_id, lock_timeout, metadata,
 * home).
 */
static Datum
booking_stay_member(PG_FUNCTION_ARGS)
{
	MemberRequest mr;
	BookingCall call;

	memset(&mr, 0, sizeof(mr));
	mr.req.resource = BookingArgId(fcinfo, 0, "resource");
	mr.req.home = BookingHome(mr.req.resource);
	mr.req.guest = BookingArgGuest(fcinfo, 1);
	BookingArgDuring(fcinfo, 2, "during", &mr.req.lower, &mr.req.upper);
	mr.req.now = GetCurrentTimestamp();
	mr.req.has_hold = BookingArgMemberExpiry(fcinfo, 3, mr.req.now, &mr.req.expires_at);
	mr.group_id = BookingArgGroup(fcinfo, 4);
	mr.req.timeout_ms = BookingArgLockTimeout(fcinfo, 5);
	mr.req.metadata = BookingArgMetadata(fcinfo, 6, &mr.req.metadata_text);
	/* a member may run after the hold it is given lapsed: it blocks no one */
	mr.req.during = BookingMakeRange(mr.req.lower, mr.req.upper, false);
	mr.req.validity = BookingMakeRange(mr.req.now, Max(mr.req.expires_at, mr.req.now),
									   !mr.req.has_hold);

	memset(&call, 0, sizeof(call));
	call.timeout_ms = mr.req.timeout_ms;
	call.resource = mr.req.resource;
	call.home = mr.req.home;
	call.now = mr.req.now;
	call.body = StayMemberBody;
	call.state = &mr;
	return BookingCallDatum(fcinfo, &call);
}

BOOKING_SHARD_TWIN(stay_member)
