/*
 * stay.c
 *	  Range inventory: booking.reserve_stay, booking.reserve_stays (a group,
 *	  all or nothing) and booking.reserve_stay_any (any free unit of a pool).
 *
 *	  The guard is the exclusion constraint bookings_no_overlap: same
 *	  resource, overlapping during, overlapping validity, among pending and
 *	  confirmed rows.  The calls take the resource row lock first and insert
 *	  with ON CONFLICT ON CONSTRAINT bookings_no_overlap DO NOTHING, so two
 *	  racing inserts never wait on each other's index entries (no deadlock),
 *	  only a violation of our own constraint becomes just_taken, and any
 *	  other integrity error surfaces as itself.  A stay is exclusive: the
 *	  resource's capacity is not consulted.
 *
 *	  Locks: resource rows in ascending id order; reserve_stay_any takes a
 *	  pool unit with SKIP LOCKED and waits only when every free unit is
 *	  locked by someone else.  Each unit it tries is tried in a
 *	  subtransaction that is rolled back unless the unit is booked, so a
 *	  refused unit is released at once.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/lsyscache.h"
#include "utils/timestamp.h"

#include "booking.h"

PG_FUNCTION_INFO_V1(booking_reserve_stay);
PG_FUNCTION_INFO_V1(booking_reserve_stays);
PG_FUNCTION_INFO_V1(booking_reserve_stay_any);

/* the rows that block a newcomer whose footprint is fp and validity is $3 */
#define BLOCKING_FOOTPRINT(alias, fp) \
	alias ".blocked OPERATOR(pg_catalog.&&) " fp " " \
	"AND " alias ".validity OPERATOR(pg_catalog.&&) $3 " \
	"AND " alias ".blocked IS NOT NULL " \
	"AND " alias ".status IN ('pending'::booking.status, 'confirmed'::booking.status)"
/* $2 the footprint, computed in C from the resource's buffers */
#define BLOCKING(alias) BLOCKING_FOOTPRINT(alias, "$2")
/* $2 the range, widened in SQL by the buffers of resource r */
#define FOOTPRINT_OF(r) \
	BOOKING_SQL_WIDENED("pg_catalog.lower($2)", "pg_catalog.upper($2)", r ".buffer_before", r ".buffer_after")

/* $4 is the home of the resource(s) in every statement below; $2 the footprint */
static BookingPlan overlap_plan = {
	"SELECT EXISTS (SELECT 1 FROM booking.bookings b WHERE b.home OPERATOR(pg_catalog.=) $4 "
	"AND b.resource_id OPERATOR(pg_catalog.=) $1 AND " BLOCKING("b") ")",
	4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};
/*
 * $7 the home, $8 the booking's id (NULL: the sequence's next; see
 * booking.h), $9 the footprint, $10 whether the resource has a guest limit
 */
static BookingPlan insert_plan = {
	"INSERT INTO booking.bookings "
	"(home, id, resource_id, guest, quantity, during, status, expires_at, created_at, validity, "
	"blocked, limited) "
	"VALUES ($7, COALESCE($8, pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass)), "
	"$1, $2, 1, $3, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6, $9, $10) "
	"ON CONFLICT ON CONSTRAINT bookings_no_overlap DO NOTHING RETURNING id",
	10, {INT8OID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID, INT8OID, INT8OID,
	TSTZRANGEOID, BOOLOID}
};
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
	BLOCKING_FOOTPRINT("b", FOOTPRINT_OF("r")) " ORDER BY b.resource_id LIMIT 1",
	3, {INT8ARRAYOID, TSTZRANGEOID, TSTZRANGEOID}
};
static BookingPlan next_id_plan = {
	"SELECT pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass)", 0, {InvalidOid}
};
/* the members' footprints and limits come from their rows, which we hold */
static BookingPlan group_insert_plan = {
	"INSERT INTO booking.bookings "
	"(home, id, resource_id, guest, quantity, during, status, expires_at, created_at, validity, group_id, "
	"blocked, limited) "
	"SELECT 0, CASE WHEN u.ord OPERATOR(pg_catalog.=) 1 THEN $7 "
	"ELSE pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass) END, "
	"u.id, $2, 1, $3, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6, $7, "
	BOOKING_SQL_WIDENED("pg_catalog.lower($3)", "pg_catalog.upper($3)", "r.buffer_before", "r.buffer_after")
	", r.guest_limit IS NOT NULL "
	"FROM pg_catalog.unnest($1) WITH ORDINALITY AS u(id, ord) JOIN booking.resources r "
	"ON r.home OPERATOR(pg_catalog.=) 0 AND r.id OPERATOR(pg_catalog.=) u.id ORDER BY u.ord "
	"ON CONFLICT ON CONSTRAINT bookings_no_overlap DO NOTHING RETURNING id",
	7, {INT8ARRAYOID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID, INT8OID}
};
/* a member of a group on Citus: $1..$10 as insert_plan, $11 the group (NULL: this one) */
static BookingPlan member_insert_plan = {
	"INSERT INTO booking.bookings "
	"(home, id, resource_id, guest, quantity, during, status, expires_at, created_at, validity, "
	"blocked, limited, group_id) "
	"VALUES ($7, $8, $1, $2, 1, $3, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6, $9, $10, COALESCE($11, $8)) "
	"ON CONFLICT ON CONSTRAINT bookings_no_overlap DO NOTHING RETURNING id",
	11, {INT8OID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID, INT8OID, INT8OID,
	TSTZRANGEOID, BOOLOID, INT8OID}
};
static BookingPlan pool_exists_plan = {
	"SELECT 1 FROM booking.resources WHERE home OPERATOR(pg_catalog.=) $4 "
	"AND id OPERATOR(pg_catalog.=) $1", 4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};

/* a pool's units live in its shard: one home */
static BookingPlan pool_units_plan = {
	"SELECT r.id FROM booking.resources r WHERE r.home OPERATOR(pg_catalog.=) $4 "
	"AND r.pool_id OPERATOR(pg_catalog.=) $1 ORDER BY r.id",
	4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};

/* the units of a pool that were free in the latest committed state ($2: the range) */
static BookingPlan free_units_plan = {
	"SELECT r.id FROM booking.resources r WHERE r.home OPERATOR(pg_catalog.=) $4 "
	"AND r.pool_id OPERATOR(pg_catalog.=) $1 "
	"AND NOT EXISTS (SELECT 1 FROM booking.bookings b WHERE b.home OPERATOR(pg_catalog.=) $4 "
	"AND b.resource_id OPERATOR(pg_catalog.=) r.id AND "
	BLOCKING_FOOTPRINT("b", FOOTPRINT_OF("r")) ") "
	"ORDER BY r.id",
	4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};

typedef struct StayRequest
{
	int64		resource;		/* the resource, or the pool for _any */
	int64		home;			/* its home (shard.c); a group's lowest resource's */
	ArrayType  *resources;		/* reserve_stays: sorted ids */
	int			nresources;
	Datum	   *ids;			/* their elements, on Citus */
	text	   *guest;
	TimestampTz lower;
	TimestampTz upper;
	bool		has_hold;
	int64		hold_us;
	int			timeout_ms;
	TimestampTz now;
	Datum		during;			/* normalized [lower, upper) */
	Datum		validity;		/* the newcomer's [now, expiry) */
	TimestampTz expires_at;
} StayRequest;

static void
PrepareStay(StayRequest *req)
{
	req->expires_at = req->has_hold ? req->now + req->hold_us : 0;
	req->during = BookingMakeRange(req->lower, req->upper, false);
	req->validity = BookingMakeRange(req->now, req->expires_at, !req->has_hold);
}

/*
 * Inserts one stay on r, which the caller holds; returns its id, or -1 when
 * our constraint refused it.
 */
static int64
InsertStay(StayRequest *req, const BookingResource *r)
{
	Datum		values[10];
	char		nulls[10];
	int64		home = r->home;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(r->id);
	values[1] = PointerGetDatum(req->guest);
	values[2] = req->during;
	values[3] = TimestampTzGetDatum(req->expires_at);
	if (!req->has_hold)
		nulls[3] = 'n';
	values[4] = TimestampTzGetDatum(req->now);
	values[5] = req->validity;
	values[6] = Int64GetDatum(home);
	/* on Citus the booking's id is drawn to land in the resource's shard */
	if (BookingDistributed())
		values[7] = Int64GetDatum(BookingNewId("bookings_id_seq", home));
	else
		nulls[7] = 'n';
	values[8] = BookingStayFootprint(req->lower, req->upper, r);
	values[9] = BoolGetDatum(r->guest_limit > 0);
	if (BookingExecute(&insert_plan, values, nulls, false, 1) == 0)
		return -1;
	{
		int64		id = BookingGetInt64(0, 1, NULL);

		BookingEmitEvent("reserved", home, id, NULL, "ok");
		return id;
	}
}

static void
SetStayRefusal(BookingResult *res, BookingCode code, int64 resource, StayRequest *req)
{
	char		next[BOOKING_MESSAGE_LEN / 2];

	BookingDescribeNextSlot(next, sizeof(next), resource, req->lower, req->upper, req->now);
	BookingSetResult(res, code, -1,
					 code == BOOKING_UNAVAILABLE ?
					 "Resource %lld is already booked for part of that range.%s" :
					 "Resource %lld was just booked for an overlapping range by a concurrent request.%s",
					 (long long) resource, next);
}

static void
SetStayCreated(BookingResult *res, int64 booking_id, const char *what, StayRequest *req)
{
	char	   *from = pstrdup(timestamptz_to_str(req->lower));
	char	   *to = pstrdup(timestamptz_to_str(req->upper));

	if (req->has_hold)
		BookingSetResult(res, BOOKING_CREATED, booking_id,
						 "Held %s from %s to %s until %s; confirm before then.",
						 what, from, to, timestamptz_to_str(req->expires_at));
	else
		BookingSetResult(res, BOOKING_CREATED, booking_id,
						 "Booked %s from %s to %s.", what, from, to);
}

/*
 * The friendly pre-check: a resource that does not exist, or whose range is
 * taken in the latest committed state.  False with res set.  *r and *tid:
 * the row read, its buffers giving the footprint checked.
 */
static bool
PrecheckStay(StayRequest *req, int64 resource, BookingResource *r, ItemPointer tid,
			 BookingResult *res)
{
	Datum		values[4];

	if (!BookingRowPeekResource(resource, BookingHome(resource), r, tid))
	{
		BookingSetLockOutcome(res, BOOKING_LOCK_NOT_FOUND, resource, req->timeout_ms);
		return false;
	}
	r->id = resource;
	values[0] = Int64GetDatum(resource);
	values[1] = BookingStayFootprint(req->lower, req->upper, r);
	values[2] = req->validity;
	values[3] = Int64GetDatum(r->home);
	(void) BookingExecuteLatest(&overlap_plan, values, NULL, 1);
	if (BookingGetBool(0, 1))
	{
		SetStayRefusal(res, BOOKING_UNAVAILABLE, resource, req);
		return false;
	}
	return true;
}

static void
ReserveStayBody(void *state, BookingResult *res)
{
	StayRequest *req = (StayRequest *) state;
	BookingResource r;
	BookingLockOutcome outcome;
	ItemPointerData tid;
	int64		booking_id;

	/*
	 * A friendly answer for what was taken before this request arrived, then
	 * the room's lock; at READ COMMITTED the room is locked in C at the
	 * version read (rowlock.c).  At SERIALIZABLE the pre-check is skipped:
	 * its read of the GiST pages that every concurrent stay writes would
	 * make SSI abort callers at commit, so there a taken range is refused by
	 * the constraint alone (just_taken).
	 */
	if (!IsolationIsSerializable() && !PrecheckStay(req, req->resource, &r, &tid, res))
		return;
	if (!IsolationUsesXactSnapshot())
		outcome = BookingLockPeeked(&r, &tid, req->timeout_ms);
	else
		outcome = BookingLockResource(req->resource, req->timeout_ms, &r);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, req->resource, req->timeout_ms);
		return;
	}
	if (!BookingGuestLimitAllows(&r, req->guest, 1, true, req->now, res))
		return;

	booking_id = InsertStay(req, &r);
	if (booking_id < 0)
	{
		SetStayRefusal(res, BOOKING_JUST_TAKEN, req->resource, req);
		return;
	}
	SetStayCreated(res, booking_id, psprintf("resource %lld", (long long) req->resource), req);
}

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
StayMember(StayRequest *req, int64 resource, int64 group_id, BookingResult *res)
{
	int64		home = BookingHome(resource);
	Datum		values[11];
	char		nulls[11];
	BookingResource r;
	BookingLockOutcome outcome;
	ItemPointerData tid;

	memset(nulls, ' ', sizeof(nulls));
	if (!IsolationIsSerializable() && !PrecheckStay(req, resource, &r, &tid, res))
		return;
	outcome = BookingLockResource(resource, req->timeout_ms, &r);
	if (outcome != BOOKING_LOCKED)
	{
		BookingSetLockOutcome(res, outcome, resource, req->timeout_ms);
		return;
	}
	if (!BookingGuestLimitAllows(&r, req->guest, 1, true, req->now, res))
		return;
	values[0] = Int64GetDatum(resource);
	values[1] = PointerGetDatum(req->guest);
	values[2] = req->during;
	values[3] = TimestampTzGetDatum(req->expires_at);
	if (!req->has_hold)
		nulls[3] = 'n';
	values[4] = TimestampTzGetDatum(req->now);
	values[5] = req->validity;
	values[6] = Int64GetDatum(home);
	values[7] = Int64GetDatum(BookingNewId("bookings_id_seq", home));
	values[8] = BookingStayFootprint(req->lower, req->upper, &r);
	values[9] = BoolGetDatum(r.guest_limit > 0);
	values[10] = Int64GetDatum(group_id);
	if (group_id < 0)
		nulls[10] = 'n';
	if (BookingExecute(&member_insert_plan, values, nulls, false, 1) == 0)
	{
		SetStayRefusal(res, BOOKING_JUST_TAKEN, resource, req);
		return;
	}
	BookingSetResult(res, BOOKING_CREATED, BookingGetInt64(0, 1, NULL), "member booked");
	BookingEmitEvent("reserved", home, res->booking_id, NULL, "ok");
}

/* A member on the node that holds it, through its twin (route.c). */
static void
ForwardMember(StayRequest *req, int64 resource, int64 group_id, BookingResult *res)
{
	Oid			types[7] = {INT8OID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID, INT8OID, INTERVALOID, INT8OID};
	Datum		values[7];
	char		nulls[7];
	Interval   *wait = palloc0(sizeof(Interval));

	memset(nulls, ' ', sizeof(nulls));
	wait->time = (int64) req->timeout_ms * 1000;
	values[0] = Int64GetDatum(resource);
	values[1] = PointerGetDatum(req->guest);
	values[2] = req->during;
	/* the expiry computed here: every member of a hold lapses at once */
	values[3] = TimestampTzGetDatum(req->expires_at);
	if (!req->has_hold)
		nulls[3] = 'n';
	values[4] = Int64GetDatum(group_id);
	if (group_id < 0)
		nulls[4] = 'n';
	values[5] = IntervalPGetDatum(wait);
	values[6] = Int64GetDatum(BookingHome(resource));
	BookingCallTwin("shard_stay_member", 7, types, values, nulls, res);
}

/* member i of a group, here or through its twin */
static void
GroupMember(void *arg, int i, bool remote, int64 group_id, BookingResult *res)
{
	StayRequest *req = (StayRequest *) arg;
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
ReserveStaysDistributed(StayRequest *req, BookingResult *res)
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
	SetStayCreated(res, first,
				   psprintf("%d %s as group %lld", n, n == 1 ? "resource" : "resources",
							(long long) first), req);
}

static void
ReserveStaysBody(void *state, BookingResult *res)
{
	StayRequest *req = (StayRequest *) state;
	Datum		ids = PointerGetDatum(req->resources);
	Datum		values[7];
	char		nulls[7];
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
			SetStayRefusal(res, BOOKING_UNAVAILABLE, BookingGetInt64(0, 1, NULL), req);
			return;
		}
	}

	/* ascending id order: two groups can never wait on each other in a cycle */
	deconstruct_array(req->resources, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE,
					  &elems, NULL, &nelems);
	for (int i = 0; i < nelems; i++)
	{
		BookingResource r;
		BookingLockOutcome outcome;

		outcome = BookingLockResource(DatumGetInt64(elems[i]), req->timeout_ms, &r);
		if (outcome != BOOKING_LOCKED)
		{
			BookingSetLockOutcome(res, outcome, DatumGetInt64(elems[i]), req->timeout_ms);
			return;
		}
		if (!BookingGuestLimitAllows(&r, req->guest, 1, true, req->now, res))
			return;
	}

	/* under the locks, a conflict now was made while we waited */
	if (!serializable &&
		BookingExecuteLatest(&group_conflict_plan, values, NULL, 1) == 1)
	{
		SetStayRefusal(res, BOOKING_JUST_TAKEN, BookingGetInt64(0, 1, NULL), req);
		return;
	}

	(void) BookingExecute(&next_id_plan, NULL, NULL, false, 1);
	first_id = BookingGetInt64(0, 1, NULL);

	values[0] = ids;
	values[1] = PointerGetDatum(req->guest);
	values[2] = req->during;
	values[3] = TimestampTzGetDatum(req->expires_at);
	if (!req->has_hold)
		nulls[3] = 'n';
	values[4] = TimestampTzGetDatum(req->now);
	values[5] = req->validity;
	values[6] = Int64GetDatum(first_id);
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
	SetStayCreated(res, first_id,
				   psprintf("%d %s as group %lld", nelems,
							nelems == 1 ? "resource" : "resources", (long long) first_id), req);
}

/* one attempt at one unit of a pool, in a subtransaction of its own */
typedef struct UnitTry
{
	StayRequest *req;
	int64		unit;
	bool		wait;			/* false: SKIP LOCKED only */
	int			timeout_ms;
	BookingLockOutcome lock;
	int64		booking_id;
	bool		over_limit;		/* refused: the guest's limit on this unit */
} UnitTry;

static bool
RunUnitTry(void *arg)
{
	UnitTry    *ut = (UnitTry *) arg;
	BookingResource r;
	BookingResult limit_res;

	if (!ut->wait)
		ut->lock = BookingTryLockResource(ut->unit, &r) ? BOOKING_LOCKED : BOOKING_LOCK_BUSY;
	else
		ut->lock = BookingLockResource(ut->unit, ut->timeout_ms, &r);
	if (ut->lock != BOOKING_LOCKED)
		return false;
	if (!BookingGuestLimitAllows(&r, ut->req->guest, 1, true, ut->req->now, &limit_res))
	{
		ut->over_limit = true;
		return false;
	}
	ut->booking_id = InsertStay(ut->req, &r);
	return ut->booking_id >= 0;
}

/*
 * Tries one unit: true when it is booked.  The attempt's subtransaction is
 * kept only then, so a unit that is refused (taken since the pre-check) or
 * that could not be locked leaves no lock behind: a caller never holds a
 * refused unit while it waits for another, in any order.
 */
static bool
TryUnit(UnitTry *ut)
{
	bool		kept = false;
	int			nestlevel = -1;
	BookingGuardOutcome outcome;

	/* under a snapshot isolation level the statements wait by lock_timeout */
	if (ut->wait && IsolationUsesXactSnapshot() && ut->timeout_ms > 0)
		nestlevel = BookingPushLockTimeout(ut->timeout_ms);
	outcome = BookingRunGuardedTry(RunUnitTry, ut, &kept);
	if (nestlevel >= 0)
		BookingPopLockTimeout(nestlevel);
	if (outcome == BOOKING_GUARD_BUSY)
		ut->lock = BOOKING_LOCK_BUSY;
	else if (outcome != BOOKING_GUARD_DONE)
		ut->lock = BOOKING_LOCK_RETRY;
	return kept;
}

static void
ReserveStayAnyBody(void *state, BookingResult *res)
{
	StayRequest *req = (StayRequest *) state;
	Datum		values[4] = {Int64GetDatum(req->resource), req->during, req->validity,
	Int64GetDatum(req->home)};
	int64	   *units;
	bool	   *tried;
	int			nunits;
	TimestampTz deadline = 0;
	int64		busy_unit = 0;
	bool		retry = false;
	bool		over_limit = false;

	if (BookingExecuteLatest(&pool_exists_plan, values, NULL, 1) == 0)
	{
		BookingSetResult(res, BOOKING_NOT_FOUND, -1,
						 "Pool %lld does not exist.", (long long) req->resource);
		return;
	}

	/* at SERIALIZABLE, skip the read of the GiST pages: try every unit */
	if (IsolationIsSerializable())
		nunits = BookingExecuteLatest(&pool_units_plan, values, NULL, 0);
	else
		nunits = BookingExecuteLatest(&free_units_plan, values, NULL, 0);
	units = palloc(sizeof(int64) * Max(nunits, 1));
	tried = palloc0(sizeof(bool) * Max(nunits, 1));
	for (int i = 0; i < nunits; i++)
		units[i] = BookingGetInt64(i, 1, NULL);

	/*
	 * First pass: units nobody holds, without waiting, so concurrent callers
	 * spread over the pool instead of queueing on one unit.  Second pass:
	 * wait for the units others hold, since their bookers may still fail, in
	 * ascending order and at most lock_timeout in all.
	 */
	for (int pass = 0; pass < 2; pass++)
	{
		for (int i = 0; i < nunits; i++)
		{
			UnitTry		ut = {req, units[i], pass == 1, 0, BOOKING_LOCK_BUSY, -1, false};

			if (tried[i])
				continue;
			if (pass == 1 && req->timeout_ms > 0)
			{
				if (deadline == 0)
					deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), req->timeout_ms);
				ut.timeout_ms = BookingMillisecondsLeft(deadline);
			}
			if (TryUnit(&ut))
			{
				SetStayCreated(res, ut.booking_id,
							   psprintf("unit %lld of pool %lld", (long long) units[i],
										(long long) req->resource), req);
				return;
			}
			switch (ut.lock)
			{
				case BOOKING_LOCKED:
				case BOOKING_LOCK_NOT_FOUND:
					tried[i] = true;	/* refused, or gone */
					over_limit |= ut.over_limit;
					break;
				case BOOKING_LOCK_BUSY:
					if (pass == 1)
						busy_unit = units[i];
					break;
				case BOOKING_LOCK_RETRY:
					/* at SERIALIZABLE the transaction cannot commit: stop here */
					if (IsolationIsSerializable())
					{
						BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, req->resource, req->timeout_ms);
						return;
					}
					tried[i] = true;	/* changed since the snapshot: try the next */
					retry = true;
					break;
			}
		}
	}

	if (retry)
		BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, req->resource, req->timeout_ms);
	else if (busy_unit > 0)
		BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, busy_unit, req->timeout_ms);
	else if (over_limit)
		BookingSetResult(res, BOOKING_GUEST_LIMIT, -1,
						 "Guest limit: every free unit of pool %lld limits the stays one guest may have, and this guest is at that limit.",
						 (long long) req->resource);
	else
		BookingSetResult(res, BOOKING_SOLD_OUT, -1,
						 "Sold out: no unit of pool %lld is free for that range.",
						 (long long) req->resource);
}

static void
ReadStayArgs(FunctionCallInfo fcinfo, StayRequest *req)
{
	req->guest = BookingArgGuest(fcinfo, 1);
	BookingArgDuring(fcinfo, 2, "during", &req->lower, &req->upper);
	req->has_hold = BookingArgHold(fcinfo, 3, &req->hold_us);
	req->timeout_ms = BookingArgLockTimeout(fcinfo, 5);
	req->now = GetCurrentTimestamp();
}

static char *
StayRequestString(const char *fn, const char *target, StayRequest *req)
{
	const char *fields[5];

	fields[0] = target;
	fields[1] = text_to_cstring(req->guest);
	fields[2] = psprintf(INT64_FORMAT, (int64) req->lower);
	fields[3] = psprintf(INT64_FORMAT, (int64) req->upper);
	fields[4] = req->has_hold ? psprintf(INT64_FORMAT, req->hold_us) : NULL;
	return BookingRequestString(fn, 5, fields);
}

static Datum
RunStayCall(FunctionCallInfo fcinfo, StayRequest *req, const char *fn,
			const char *target, BookingBodyFn body, bool route)
{
	BookingCall call;

	memset(&call, 0, sizeof(call));
	call.key = BookingArgKey(fcinfo, 4);
	if (route && BookingForwarding())
		return BookingForward(fcinfo, psprintf("shard_%s", fn), req->home, req->resource);
	if (call.key != NULL)
		call.request = StayRequestString(fn, target, req);
	call.timeout_ms = req->timeout_ms;
	call.resource = req->resource;
	call.home = req->home;
	call.now = req->now;
	call.body = body;
	call.state = req;

	PrepareStay(req);
	return BookingCallDatum(fcinfo, &call);
}

/*
 * reserve_stay(resource, guest, during, hold, idempotency_key, lock_timeout)
 */
Datum
booking_reserve_stay(PG_FUNCTION_ARGS)
{
	StayRequest req;

	memset(&req, 0, sizeof(req));
	req.resource = BookingArgId(fcinfo, 0, "resource");
	req.home = BookingHome(req.resource);
	ReadStayArgs(fcinfo, &req);
	return RunStayCall(fcinfo, &req, "reserve_stay",
					   psprintf(INT64_FORMAT, req.resource), ReserveStayBody, true);
}

BOOKING_SHARD_TWIN(reserve_stay)

static int
CompareInt64(const void *a, const void *b)
{
	int64		x = *(const int64 *) a;
	int64		y = *(const int64 *) b;

	return (x > y) - (x < y);
}

/*
 * reserve_stays(resources, guest, during, hold, idempotency_key, lock_timeout)
 */
Datum
booking_reserve_stays(PG_FUNCTION_ARGS)
{
	StayRequest req;
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
				 errmsg("resources must not be empty")));
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
	ReadStayArgs(fcinfo, &req);

	/*
	 * On Citus a group whose members all live in one shard runs there;
	 * otherwise here, member by member on their nodes (the key, if any, is
	 * kept in the lowest member's shard).
	 */
	for (int i = 1; i < n && single_home; i++)
		single_home = BookingHome(ids[i]) == req.home;
	return RunStayCall(fcinfo, &req, "reserve_stays", target.data, ReserveStaysBody, single_home);
}

BOOKING_SHARD_TWIN(reserve_stays)

/*
 * reserve_stay_any(pool, guest, during, hold, idempotency_key, lock_timeout)
 */
Datum
booking_reserve_stay_any(PG_FUNCTION_ARGS)
{
	StayRequest req;

	memset(&req, 0, sizeof(req));
	req.resource = BookingArgId(fcinfo, 0, "pool");
	req.home = BookingHome(req.resource);
	ReadStayArgs(fcinfo, &req);
	return RunStayCall(fcinfo, &req, "reserve_stay_any",
					   psprintf(INT64_FORMAT, req.resource), ReserveStayAnyBody, true);
}

BOOKING_SHARD_TWIN(reserve_stay_any)

typedef struct MemberRequest
{
	StayRequest req;
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
 * (resource, guest, during, expires_at, group_id, lock_timeout, home).
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
