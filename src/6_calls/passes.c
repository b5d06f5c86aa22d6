/*
 * passes.c
 *	  Seats in several resources at once: booking.reserve_seats (a festival
 *	  pass, a pass that counts against a day session and a venue quota), all
 *	  or nothing.
 *
 *	  Each member is the locked half of a seat sale: its resource row, the
 *	  guest limit, the seats through 4_inventory/counter.c (either layout,
 *	  lapsed holds reclaimed), its booking row.  The members run in
 *	  ascending resource id order, all or nothing (5_scaleout/group.c), and
 *	  share group_id, the first member's booking id, as reserve_stays' do.
 *
 *	  On Citus a pass whose resources live in one shard runs on its node;
 *	  otherwise the coordinator runs each member on its node through its
 *	  twin, inside one distributed transaction (two-phase commit).
 *
 *	  Layer 6, the calls.  Locks: the members' resource rows in ascending id
 *	  order, each with its stripes when striped, then their booking rows.
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
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "3_frame/events.h"
#include "3_frame/idempotency.h"
#include "4_inventory/counter.h"
#include "4_inventory/limit.h"
#include "4_inventory/line.h"
#include "4_inventory/seat_row.h"
#include "5_scaleout/group.h"
#include "5_scaleout/route.h"

PG_FUNCTION_INFO_V1(booking_reserve_seats);

/*
 * $1..$9 as in seat_row.h ($8 NULL: the sequence's next); $10 limited, $11
 * the group (NULL: this one)
 */
static BookingPlan member_insert_plan = {
	"INSERT INTO booking.bookings "
	"(home, id, resource_id, guest, quantity, status, expires_at, created_at, validity, limited, group_id, "
	"metadata) "
	"SELECT $7, m.id, $1, $3, $2, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6, $10, COALESCE($11, m.id), $9 "
	"FROM (SELECT COALESCE($8, pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass)) AS id) AS m "
	"RETURNING id",
	BOOKING_SEAT_ROW_PARAMS + 2, {BOOKING_SEAT_ROW_TYPES, BOOLOID, INT8OID}
};

/* on Citus, where $8 is always drawn: from VALUES, which Citus routes as it is */
static BookingPlan member_values_plan = {
	"INSERT INTO booking.bookings "
	"(home, id, resource_id, guest, quantity, status, expires_at, created_at, validity, limited, group_id, "
	"metadata) "
	"VALUES ($7, $8, $1, $3, $2, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6, $10, COALESCE($11, $8), $9) "
	"RETURNING id",
	BOOKING_SEAT_ROW_PARAMS + 2, {BOOKING_SEAT_ROW_TYPES, BOOLOID, INT8OID}
};

typedef struct PassRequest
{
	int64	   *resources;		/* ascending */
	int32	   *quantities;		/* in the same order */
	int			n;
	int64		home;			/* the lowest resource's */
	text	   *guest;
	bool		has_hold;
	int64		hold_us;
	int			timeout_ms;
	TimestampTz now;
	TimestampTz expires_at;
	Jsonb	   *metadata;		/* NULL: none */
} PassRequest;

/*
 * One member, on the node that holds its resource: lock, limit, seats,
 * booking row.  group_id < 0: this member is the first, and its id names
 * the group.  res: created with the booking id, or the refusal.
 */
static void
SeatMember(PassRequest *req, int64 resource, int32 quantity, int64 group_id, BookingResult *res)
{
	BookingResource r;
	int64		free_left;
	Datum		values[BOOKING_SEAT_ROW_PARAMS + 2];
	char		nulls[BOOKING_SEAT_ROW_PARAMS + 2];
	int64		home = BookingHome(resource);

	if (!BookingLockResourceFor(resource, req->timeout_ms, &r, res))
		return;
	if (!BookingWaitlistLetsIn(&r, res) ||
		!BookingGuestLimitAllows(&r, req->guest, quantity, BOOKING_LIMIT_SEATS, req->now, res))
		return;
	switch (BookingCounterTakeSeats(&r, quantity, req->timeout_ms, req->now, &free_left))
	{
		case BOOKING_COUNTER_TAKEN:
			break;
		case BOOKING_COUNTER_SOLD_OUT:
			BookingSetResult(res, BOOKING_SOLD_OUT, -1,
							 "Sold out: %d %s requested of resource %lld, which has %lld of %d left; nothing was booked.",
							 quantity, quantity == 1 ? "seat was" : "seats were", (long long) resource,
							 (long long) free_left, r.capacity);
			return;
		case BOOKING_COUNTER_BUSY:
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, resource, req->timeout_ms);
			return;
		case BOOKING_COUNTER_RETRY:
			BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, resource, req->timeout_ms);
			return;
	}

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(resource);
	values[1] = Int32GetDatum(quantity);
	values[2] = PointerGetDatum(req->guest);
	values[3] = TimestampTzGetDatum(req->expires_at);
	if (!req->has_hold)
		nulls[3] = 'n';
	values[4] = TimestampTzGetDatum(req->now);
	/* a member on another node may run after the hold it is given lapsed */
	values[5] = BookingMakeRange(req->now, Max(req->expires_at, req->now), !req->has_hold);
	values[6] = Int64GetDatum(home);
	/* on Citus the booking's id is drawn to land in the resource's shard */
	if (BookingDistributed())
		values[7] = Int64GetDatum(BookingNewId("bookings_id_seq", home));
	else
		nulls[7] = 'n';
	values[8] = PointerGetDatum(req->metadata);
	if (req->metadata == NULL)
		nulls[8] = 'n';
	values[9] = BoolGetDatum(r.guest_limit > 0);
	values[10] = Int64GetDatum(group_id);
	if (group_id < 0)
		nulls[10] = 'n';
	(void) BookingExecute(BookingDistributed() ? &member_values_plan : &member_insert_plan,
						  values, nulls, false, 1);
	BookingSetResult(res, BOOKING_CREATED, BookingGetInt64(0, 1, NULL), "member booked");
	BookingEmitEvent("reserved", home, res->booking_id, NULL, "ok");
}

/*
 * A member on the node that holds it, through its twin (route.c).  It gets
 * the expiry computed here, so every member of a hold lapses at once.
 */
static void
ForwardMember(PassRequest *req, int64 resource, int32 quantity, int64 group_id, BookingResult *res)
{
	BookingRunMemberTwin("shard_seat_member", resource, req->guest, INT4OID,
						 Int32GetDatum(quantity), req->has_hold, req->expires_at, group_id,
						 req->timeout_ms, req->metadata, res);
}

/* member i of the pass, here or through its twin */
static void
PassMember(void *arg, int i, bool remote, int64 group_id, BookingResult *res)
{
	PassRequest *req = (PassRequest *) arg;

	if (remote)
		ForwardMember(req, req->resources[i], req->quantities[i], group_id, res);
	else
		SeatMember(req, req->resources[i], req->quantities[i], group_id, res);
}

static void
ReserveSeatsBody(void *state, BookingResult *res)
{
	PassRequest *req = (PassRequest *) state;
	int64	   *homes = palloc(sizeof(int64) * req->n);
	int			seats = 0;
	int64		first;

	req->expires_at = req->has_hold ? req->now + req->hold_us : 0;
	for (int i = 0; i < req->n; i++)
	{
		homes[i] = BookingHome(req->resources[i]);
		seats += req->quantities[i];
	}
	first = BookingRunGroup(req->n, req->resources, homes, req->home, PassMember, req,
							req->timeout_ms, res);
	if (first < 0)
		return;					/* res holds the refusal */
	if (req->has_hold)
		BookingSetResult(res, BOOKING_CREATED, first,
						 "Held %d %s on %d %s as group %lld until %s; confirm each booking before then.",
						 seats, seats == 1 ? "seat" : "seats", req->n,
						 req->n == 1 ? "resource" : "resources", (long long) first,
						 timestamptz_to_str(req->expires_at));
	else
		BookingSetResult(res, BOOKING_CREATED, first,
						 "Reserved %d %s on %d %s as group %lld.",
						 seats, seats == 1 ? "seat" : "seats", req->n,
						 req->n == 1 ? "resource" : "resources", (long long) first);
}

typedef struct Member
{
	int64		resource;
	int32		quantity;
} Member;

static int
CompareMembers(const void *a, const void *b)
{
	int64		x = ((const Member *) a)->resource;
	int64		y = ((const Member *) b)->resource;

	return (x > y) - (x < y);
}

/*
 * reserve_seats(resources, guest, quantities, hold, idempotency_key,
 * lock_timeout, metadata)
 */
Datum
booking_reserve_seats(PG_FUNCTION_ARGS)
{
	PassRequest req;
	Datum	   *ids;
	Member	   *members;
	int			n;
	BookingCall call;
	StringInfoData target;
	bool		single_home = true;
	char	   *metadata;

	memset(&req, 0, sizeof(req));
	ids = BookingArgArray(fcinfo, 0, "resources", INT8OID, BOOKING_MAX_GROUP, &n);
	if (n == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("resources must not be empty"),
				 errdetail("The resources given are an empty array.")));
	members = palloc(sizeof(Member) * n);
	for (int i = 0; i < n; i++)
	{
		members[i].resource = DatumGetInt64(ids[i]);
		members[i].quantity = 1;
	}
	req.guest = BookingArgGuest(fcinfo, 1);
	if (!PG_ARGISNULL(2))
	{
		int			nq;
		Datum	   *qs = BookingArgArray(fcinfo, 2, "quantities", INT4OID, BOOKING_MAX_GROUP, &nq);

		if (nq != n)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("quantities must have as many elements as resources"),
					 errdetail("resources has %d elements and quantities %d.", n, nq)));
		for (int i = 0; i < n; i++)
		{
			members[i].quantity = DatumGetInt32(qs[i]);
			if (members[i].quantity <= 0)
				ereport(ERROR,
						(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
						 errmsg("quantities must be greater than zero"),
						 errdetail("Element %d is %d.", i + 1, members[i].quantity)));
		}
	}
	qsort(members, n, sizeof(Member), CompareMembers);
	req.resources = palloc(sizeof(int64) * n);
	req.quantities = palloc(sizeof(int32) * n);
	initStringInfo(&target);
	for (int i = 0; i < n; i++)
	{
		if (members[i].resource <= 0)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("resources must hold positive ids"),
					 errdetail("The array holds %lld.", (long long) members[i].resource)));
		if (i > 0 && members[i].resource == members[i - 1].resource)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("resources must not contain duplicates"),
					 errdetail("Resource %lld appears more than once.", (long long) members[i].resource),
					 errhint("Ask for more seats of it in quantities instead.")));
		req.resources[i] = members[i].resource;
		req.quantities[i] = members[i].quantity;
		appendStringInfo(&target, "%s" INT64_FORMAT ":%d", i > 0 ? " " : "",
						 members[i].resource, members[i].quantity);
	}
	req.n = n;
	req.home = BookingHome(req.resources[0]);
	req.has_hold = BookingArgHold(fcinfo, 3, &req.hold_us);
	req.timeout_ms = BookingArgLockTimeout(fcinfo, 5);
	req.metadata = BookingArgMetadata(fcinfo, 6, &metadata);
	req.now = GetCurrentTimestamp();

	/*
	 * On Citus a pass whose members all live in one shard runs there;
	 * otherwise here, member by member on their nodes (the key, if any, is
	 * kept in the lowest member's shard).
	 */
	for (int i = 1; i < n && single_home; i++)
		single_home = BookingHome(req.resources[i]) == req.home;
	memset(&call, 0, sizeof(call));
	call.key = BookingArgKey(fcinfo, 4);
	if (single_home && BookingForwarding())
		return BookingForward(fcinfo, "shard_reserve_seats", req.home, req.resources[0]);
	if (call.key != NULL)
	{
		const char *fields[3];

		fields[0] = target.data;
		fields[1] = text_to_cstring(req.guest);
		fields[2] = req.has_hold ? psprintf(INT64_FORMAT, req.hold_us) : NULL;
		call.request = BookingRequestString("reserve_seats", 3, fields, metadata);
	}
	call.timeout_ms = req.timeout_ms;
	call.resource = req.resources[0];
	call.home = req.home;
	call.now = req.now;
	call.body = ReserveSeatsBody;
	call.state = &req;
	PG_RETURN_DATUM(BookingCallDatum(fcinfo, &call));
}

BOOKING_SHARD_TWIN(reserve_seats)

typedef struct MemberRequest
{
	PassRequest req;
	int64		resource;
	int32		quantity;
	int64		group_id;
} MemberRequest;

static void
SeatMemberBody(void *state, BookingResult *res)
{
	MemberRequest *mr = (MemberRequest *) state;

	SeatMember(&mr->req, mr->resource, mr->quantity, mr->group_id, res);
}

/*
 * The work of one pass member on its node, for shard_seat_member:
 * (resource, guest, quantity, expires_at, group_id, lock_timeout, metadata,
 * home).
 */
static Datum
booking_seat_member(PG_FUNCTION_ARGS)
{
	MemberRequest mr;
	BookingCall call;
	char	   *metadata;

	memset(&mr, 0, sizeof(mr));
	mr.resource = BookingArgId(fcinfo, 0, "resource");
	mr.req.guest = BookingArgGuest(fcinfo, 1);
	mr.quantity = BookingArgQuantity(fcinfo, 2);
	mr.req.now = GetCurrentTimestamp();
	mr.req.has_hold = BookingArgMemberExpiry(fcinfo, 3, mr.req.now, &mr.req.expires_at);
	mr.group_id = BookingArgGroup(fcinfo, 4);
	mr.req.timeout_ms = BookingArgLockTimeout(fcinfo, 5);
	mr.req.metadata = BookingArgMetadata(fcinfo, 6, &metadata);
	mr.req.home = BookingHome(mr.resource);

	memset(&call, 0, sizeof(call));
	call.timeout_ms = mr.req.timeout_ms;
	call.resource = mr.resource;
	call.home = mr.req.home;
	call.now = mr.req.now;
	call.body = SeatMemberBody;
	call.state = &mr;
	return BookingCallDatum(fcinfo, &call);
}

BOOKING_SHARD_TWIN(seat_member)
