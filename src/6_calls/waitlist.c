/*
 * waitlist.c
 *	  booking.join_waitlist: a place in the line of a sold-out resource (the
 *	  line itself, and its offers, are 4_inventory/line.c).
 *
 *	  An entry is a booking in status waiting: it takes no seat and blocks
 *	  nothing.  With nobody in line, a guest whose seats are there is told to
 *	  reserve instead (seats_available).
 *
 *	  Layer 6, the calls.  Locks: the resource row, then its stripes (to
 *	  count the free seats), then the booking rows of lapsed holds it
 *	  reclaims.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "3_frame/call.h"
#include "3_frame/events.h"
#include "3_frame/idempotency.h"
#include "4_inventory/counter.h"
#include "4_inventory/limit.h"
#include "4_inventory/line.h"
#include "5_scaleout/route.h"

PG_FUNCTION_INFO_V1(booking_join_waitlist);

static BookingPlan guest_entry_plan = {
	"SELECT id FROM booking.bookings WHERE home OPERATOR(pg_catalog.=) $2 "
	"AND resource_id OPERATOR(pg_catalog.=) $1 AND " WAITING_ENTRY " "
	"AND guest OPERATOR(pg_catalog.=) $3 LIMIT 1",
	3, {INT8OID, INT8OID, TEXTOID}
};
/* join order is the order of the resource lock: the clock is read under it */
static BookingPlan join_plan = {
	"INSERT INTO booking.bookings (home, id, resource_id, guest, quantity, status, created_at, validity, "
	"metadata) "
	"VALUES ($2, COALESCE($5, pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass)), "
	"$1, $3, $4, 'waiting'::booking.status, pg_catalog.clock_timestamp(), 'empty', $6) RETURNING id",
	6, {INT8OID, INT8OID, TEXTOID, INT4OID, INT8OID, JSONBOID}
};

typedef struct JoinRequest
{
	int64		resource;
	int64		home;
	text	   *guest;
	int32		quantity;
	TimestampTz now;
	Jsonb	   *metadata;		/* the caller's; NULL: none */
} JoinRequest;

static void
JoinBody(void *state, BookingResult *res)
{
	JoinRequest *req = (JoinRequest *) state;
	BookingResource r;
	Datum		values[6];
	char		nulls[6];
	int64		free;
	int64		entry;

	memset(nulls, ' ', sizeof(nulls));
	if (!BookingLockResourceFor(req->resource, BookingLockTimeoutDefault(), &r, res))
		return;
	if (req->quantity > r.capacity)
	{
		BookingSetResult(res, BOOKING_SOLD_OUT, -1,
						 "Resource %lld has %d %s in all; a place in line for %d could never be served.",
						 (long long) r.id, r.capacity, r.capacity == 1 ? "seat" : "seats",
						 req->quantity);
		return;
	}

	values[0] = Int64GetDatum(r.id);
	values[1] = Int64GetDatum(r.home);
	values[2] = PointerGetDatum(req->guest);
	if (BookingExecute(&guest_entry_plan, values, NULL, false, 1) > 0)
	{
		entry = BookingGetInt64(0, 1, NULL);
		BookingSetResult(res, BOOKING_ALREADY_WAITING, entry,
						 "This guest already waits for resource %lld (booking %lld).",
						 (long long) r.id, (long long) entry);
		return;
	}

	/*
	 * More than the guest may hold could never be offered.  Checked here
	 * only: while the guest waits, nothing else of this resource can come
	 * its way, so what it holds does not grow.
	 */
	if (!BookingGuestLimitAllows(&r, req->guest, req->quantity, BOOKING_LIMIT_SEATS, req->now, res))
		return;

	/* with nobody in line, seats that are there should be reserved */
	if (r.waiting == 0)
	{
		if (!BookingCounterFreeFor(&r, BookingLockTimeoutDefault(), &free, res))
			return;
		if (free < req->quantity)
		{
			int32		reclaimed = BookingCounterReclaim(&r, req->now);

			if (reclaimed > 0)
			{
				free += reclaimed;
				BookingCounterSetTaken(&r, r.capacity, (int32) (r.capacity - free));
			}
		}
		if (free >= req->quantity)
		{
			BookingSetResult(res, BOOKING_SEATS_AVAILABLE, -1,
							 "Resource %lld has %lld %s free; reserve instead of joining the line.",
							 (long long) r.id, (long long) free, free == 1 ? "seat" : "seats");
			return;
		}
	}

	values[3] = Int32GetDatum(req->quantity);
	if (BookingDistributed())
		values[4] = Int64GetDatum(BookingNewId("bookings_id_seq", r.home));
	else
		nulls[4] = 'n';
	values[5] = PointerGetDatum(req->metadata);
	if (req->metadata == NULL)
		nulls[5] = 'n';
	(void) BookingExecute(&join_plan, values, nulls, false, 1);
	entry = BookingGetInt64(0, 1, NULL);
	BookingWaitlistSetWaiting(&r, r.waiting + 1);
	BookingEmitEvent("waitlist_joined", r.home, entry, NULL, "waitlisted");
	BookingSetResult(res, BOOKING_WAITLISTED, entry,
					 "In line for %d %s of resource %lld, number %d; the seats are offered as a hold when they free up.",
					 req->quantity, req->quantity == 1 ? "seat" : "seats", (long long) r.id,
					 r.waiting + 1);
}

/*
 * join_waitlist(resource, guest, quantity, idempotency_key, metadata)
 */
Datum
booking_join_waitlist(PG_FUNCTION_ARGS)
{
	JoinRequest req;
	BookingCall call;
	char	   *key;
	char	   *metadata;

	req.resource = BookingArgId(fcinfo, 0, "resource");
	req.home = BookingHome(req.resource);
	req.guest = BookingArgGuest(fcinfo, 1);
	req.quantity = BookingArgQuantity(fcinfo, 2);
	key = BookingArgKey(fcinfo, 3);
	req.metadata = BookingArgMetadata(fcinfo, 4, &metadata);
	req.now = GetCurrentTimestamp();
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_join_waitlist", req.home, req.resource);

	memset(&call, 0, sizeof(call));
	call.key = key;
	if (key != NULL)
	{
		const char *fields[3];

		fields[0] = psprintf(INT64_FORMAT, req.resource);
		fields[1] = text_to_cstring(req.guest);
		fields[2] = psprintf("%d", req.quantity);
		call.request = BookingRequestString("join_waitlist", 3, fields, metadata);
	}
	call.timeout_ms = BookingLockTimeoutDefault();
	call.resource = req.resource;
	call.home = req.home;
	call.now = req.now;
	call.body = JoinBody;
	call.state = &req;

	PG_RETURN_DATUM(BookingCallDatum(fcinfo, &call));
}

BOOKING_SHARD_TWIN(join_waitlist)
