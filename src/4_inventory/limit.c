/*
 * limit.c
 *	  Per-guest limits: the check every call that takes seats or books a
 *	  stay makes under the resource row lock (set_guest_limit, which sets
 *	  the limit, is 6_calls/guest_limit.c).
 *
 *	  A guest's holding is the sum of its pending (unexpired) and confirmed
 *	  bookings of the resource; a stay counts as one while it has not ended.
 *	  The check reads the latest committed rows after the resource row lock,
 *	  so two calls of one guest decide one after the other, at every
 *	  isolation level.  On a resource with a limit every sale therefore takes
 *	  the resource row, also on a striped resource: its stripes are marked
 *	  (resource_stripes.limited) and the striped fast path leaves them alone.
 *
 *	  Only bookings made while the resource had a limit carry
 *	  bookings.limited and sit in bookings_guest_idx, so a resource without
 *	  a limit pays nothing on its sales; set_guest_limit marks the bookings
 *	  that block when it sets a limit.
 *
 *	  Layer 4, inventory.  Reads only, under the caller's resource row lock.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/spi.h"
#include "4_inventory/limit.h"

static BookingPlan holding_plan = {
	"SELECT CAST(COALESCE(pg_catalog.sum(quantity), 0) AS pg_catalog.int8) FROM booking.bookings "
	"WHERE home OPERATOR(pg_catalog.=) $1 AND resource_id OPERATOR(pg_catalog.=) $2 "
	"AND guest OPERATOR(pg_catalog.=) $3 AND limited "
	"AND status IN ('pending'::booking.status, 'confirmed'::booking.status) "
	"AND (expires_at IS NULL OR expires_at OPERATOR(pg_catalog.>) $4) "
	"AND (during IS NULL OR pg_catalog.upper(during) OPERATOR(pg_catalog.>) $4)",
	4, {INT8OID, INT8OID, TEXTOID, TIMESTAMPTZOID}
};
/* the same for the guest of booking $3, without that booking (move_stay) */
static BookingPlan others_plan = {
	"SELECT CAST(COALESCE(pg_catalog.sum(o.quantity), 0) AS pg_catalog.int8) FROM booking.bookings o "
	"WHERE o.home OPERATOR(pg_catalog.=) $1 AND o.resource_id OPERATOR(pg_catalog.=) $2 "
	"AND o.guest OPERATOR(pg_catalog.=) (SELECT b.guest FROM booking.bookings b "
	"WHERE b.home OPERATOR(pg_catalog.=) $1 AND b.id OPERATOR(pg_catalog.=) $3) "
	"AND o.limited AND o.id OPERATOR(pg_catalog.<>) $3 "
	"AND o.status IN ('pending'::booking.status, 'confirmed'::booking.status) "
	"AND (o.expires_at IS NULL OR o.expires_at OPERATOR(pg_catalog.>) $4) "
	"AND (o.during IS NULL OR pg_catalog.upper(o.during) OPERATOR(pg_catalog.>) $4)",
	4, {INT8OID, INT8OID, INT8OID, TIMESTAMPTZOID}
};

/*
 * Whether guest may take quantity more of r, whose row the caller holds
 * (read under that lock); false with res set to guest_limit otherwise.
 */
bool
BookingGuestLimitAllows(const BookingResource *r, text *guest, int32 quantity,
						BookingLimitKind kind, TimestampTz now, BookingResult *res)
{
	Datum		values[4] = {Int64GetDatum(r->home), Int64GetDatum(r->id),
	PointerGetDatum(guest), TimestampTzGetDatum(now)};
	int64		holding;

	if (r->guest_limit <= 0)
		return true;
	(void) BookingExecuteLatest(&holding_plan, values, NULL, 1);
	holding = BookingGetInt64(0, 1, NULL);
	if (holding + quantity <= r->guest_limit)
		return true;
	if (kind == BOOKING_LIMIT_STAYS)
		BookingSetResult(res, BOOKING_GUEST_LIMIT, -1,
						 "Guest limit: this guest already has %lld of the %d stays allowed per guest on resource %lld.",
						 (long long) holding, r->guest_limit, (long long) r->id);
	else
		BookingSetResult(res, BOOKING_GUEST_LIMIT, -1,
						 "Guest limit: this guest holds %lld of the %d %s allowed per guest on resource %lld; %d more %s requested.",
						 (long long) holding, r->guest_limit,
						 kind == BOOKING_LIMIT_UNITS ? "units" : "seats", (long long) r->id, quantity,
						 quantity == 1 ? "was" : "were");
	return false;
}

/*
 * Whether a stay or slot booking of r (row held by the caller) holding
 * quantity units may move to a range that has not ended: checked as if it
 * were booked anew, so the guest's others plus this one must be within the
 * limit; false with res set otherwise.
 */
bool
BookingGuestLimitAllowsMove(const BookingResource *r, int64 booking, int32 quantity,
							BookingLimitKind kind, TimestampTz now, BookingResult *res)
{
	Datum		values[4] = {Int64GetDatum(r->home), Int64GetDatum(r->id),
	Int64GetDatum(booking), TimestampTzGetDatum(now)};
	int64		others;

	if (r->guest_limit <= 0)
		return true;
	(void) BookingExecuteLatest(&others_plan, values, NULL, 1);
	others = BookingGetInt64(0, 1, NULL);
	if (others + quantity <= r->guest_limit)
		return true;
	if (kind == BOOKING_LIMIT_UNITS)
		BookingSetResult(res, BOOKING_GUEST_LIMIT, -1,
						 "Guest limit: this guest already holds %lld other %s of the %d allowed per guest on resource %lld; booking %lld keeps its range.",
						 (long long) others, others == 1 ? "unit" : "units", r->guest_limit,
						 (long long) r->id, (long long) booking);
	else
		BookingSetResult(res, BOOKING_GUEST_LIMIT, -1,
						 "Guest limit: this guest already has %lld other %s of the %d allowed per guest on resource %lld; booking %lld keeps its range.",
						 (long long) others, others == 1 ? "stay" : "stays", r->guest_limit,
						 (long long) r->id, (long long) booking);
	return false;
}
