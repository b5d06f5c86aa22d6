/*
 * range.c
 *	  Range inventory: a stay of one exclusive resource, guarded by the
 *	  exclusion constraint bookings_no_overlap (same resource, overlapping
 *	  footprint, overlapping validity, among pending and confirmed rows).
 *	  The insert runs ON CONFLICT ON CONSTRAINT bookings_no_overlap DO
 *	  NOTHING under the resource row lock, so two racing inserts never wait
 *	  on each other's index entries (no deadlock), only a violation of our
 *	  own constraint becomes just_taken, and any other integrity error
 *	  surfaces as itself.  A stay is exclusive: the resource's capacity is
 *	  not consulted.  The friendly pre-check gives the message; the
 *	  constraint is the guard.  The calls are 6_calls/stay.c, stays.c and
 *	  stay_any.c.
 *
 *	  Layer 4, inventory.  Locks: none of its own; the caller holds the
 *	  resource row of the stay it inserts.
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
#include "2_locks/lock.h"
#include "2_locks/rowlock.h"
#include "3_frame/events.h"
#include "4_inventory/range.h"
#include "4_inventory/slots.h"

/* $4 is the home of the resource in the statement below; $2 the footprint */
static BookingPlan overlap_plan = {
	"SELECT EXISTS (SELECT 1 FROM booking.bookings b WHERE b.home OPERATOR(pg_catalog.=) $4 "
	"AND b.resource_id OPERATOR(pg_catalog.=) $1 AND " BOOKING_BLOCKING("b") ")",
	4, {INT8OID, TSTZRANGEOID, TSTZRANGEOID, INT8OID}
};

/*
 * $7 the home, $8 the booking's id (NULL: the sequence's next; see
 * seat_row.h), $9 the footprint, $10 whether the resource has a guest
 * limit, $11 the caller's metadata (NULL: none)
 */
static BookingPlan insert_plan = {
	"INSERT INTO booking.bookings "
	"(home, id, resource_id, guest, quantity, during, status, expires_at, created_at, validity, "
	"blocked, limited, metadata) "
	"VALUES ($7, COALESCE($8, pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass)), "
	"$1, $2, 1, $3, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status "
	"ELSE 'pending'::booking.status END, $4, $5, $6, $9, $10, $11) "
	"ON CONFLICT ON CONSTRAINT bookings_no_overlap DO NOTHING RETURNING id",
	11, {INT8OID, TEXTOID, TSTZRANGEOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID, INT8OID, INT8OID,
	TSTZRANGEOID, BOOLOID, JSONBOID}
};

void
BookingStayPrepare(BookingStayRequest *req)
{
	req->expires_at = req->has_hold ? req->now + req->hold_us : 0;
	req->during = BookingMakeRange(req->lower, req->upper, false);
	req->validity = BookingMakeRange(req->now, req->expires_at, !req->has_hold);
}

/*
 * $2..$6 of a stay's booking row, as every insert of a stay numbers them
 * (here and in 6_calls/stays.c): the guest, during, the hold's expiry
 * (NULL: none), the time of the call and the validity.
 */
void
BookingStayRowValues(const BookingStayRequest *req, Datum *values, char *nulls)
{
	values[1] = PointerGetDatum(req->guest);
	values[2] = req->during;
	values[3] = TimestampTzGetDatum(req->expires_at);
	nulls[3] = req->has_hold ? ' ' : 'n';
	values[4] = TimestampTzGetDatum(req->now);
	values[5] = req->validity;
}

/*
 * Inserts one stay on r, which the caller holds; returns its id, or -1 when
 * our constraint refused it.
 */
int64
BookingStayInsert(BookingStayRequest *req, const BookingResource *r)
{
	Datum		values[11];
	char		nulls[11];
	int64		home = r->home;

	memset(nulls, ' ', sizeof(nulls));
	values[0] = Int64GetDatum(r->id);
	BookingStayRowValues(req, values, nulls);
	values[6] = Int64GetDatum(home);
	/* on Citus the booking's id is drawn to land in the resource's shard */
	if (BookingDistributed())
		values[7] = Int64GetDatum(BookingNewId("bookings_id_seq", home));
	else
		nulls[7] = 'n';
	values[8] = BookingStayFootprint(req->lower, req->upper, r);
	values[9] = BoolGetDatum(r->guest_limit > 0);
	values[10] = PointerGetDatum(req->metadata);
	if (req->metadata == NULL)
		nulls[10] = 'n';
	if (BookingExecute(&insert_plan, values, nulls, false, 1) == 0)
		return -1;
	{
		int64		id = BookingGetInt64(0, 1, NULL);

		BookingEmitReserved(home, id, r->id, req->guest, 1, &req->during,
							req->has_hold ? &req->expires_at : NULL, req->metadata);
		return id;
	}
}

void
BookingStaySetRefusal(BookingResult *res, BookingCode code, int64 resource,
					  BookingStayRequest *req)
{
	char		next[BOOKING_MESSAGE_LEN / 2];

	BookingDescribeNextSlot(next, sizeof(next), resource, req->lower, req->upper, req->now);
	BookingSetResult(res, code, -1,
					 code == BOOKING_UNAVAILABLE ?
					 "Resource %lld is already booked for part of that range.%s" :
					 "Resource %lld was just booked for an overlapping range by a concurrent request.%s",
					 (long long) resource, next);
}

void
BookingStaySetCreated(BookingResult *res, int64 booking_id, const char *what,
					  BookingStayRequest *req)
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
bool
BookingStayPrecheck(BookingStayRequest *req, int64 resource, BookingResource *r, ItemPointer tid,
					BookingResult *res)
{
	Datum		values[4];

	if (!BookingRowPeekResource(resource, BookingHome(resource), r, tid, false))
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
		BookingStaySetRefusal(res, BOOKING_UNAVAILABLE, resource, req);
		return false;
	}
	return true;
}
