/*
 * line.c
 *	  The line of a sold-out resource: the offers that turn the head of the
 *	  line into a hold when seats free up, and the rule that keeps a
 *	  newcomer out while anyone waits (joining is 6_calls/waitlist.c).
 *
 *	  An entry is a booking in status waiting: it takes no seat and blocks
 *	  nothing.  resources.waiting counts the entries, so every sale reads on
 *	  the row it already reads whether anyone waits; while someone does, a
 *	  newcomer is refused (sold_out) and the seats that cancel, expiry,
 *	  reduce or a larger capacity free go to the line in the same
 *	  transaction.  Strict FIFO in join order: a head that needs more seats
 *	  than are free keeps its place, and the entries behind it wait too.
 *	  A striped resource with a line marks its stripes limited, so that the
 *	  stripes' fast path steps aside as it does for a guest limit.
 *
 *	  Layer 4, inventory.  Locks: every function here runs under the
 *	  resource row lock (the caller's, or taken here), then the stripes
 *	  through counter.c, then the entries' booking rows.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/result.h"
#include "1_ground/spi.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "3_frame/events.h"
#include "4_inventory/counter.h"
#include "4_inventory/line.h"
#include "4_inventory/stripes.h"

int			booking_waitlist_offer_s = 900;

static BookingPlan head_plan = {
	"SELECT id, quantity FROM booking.bookings WHERE home OPERATOR(pg_catalog.=) $2 "
	"AND resource_id OPERATOR(pg_catalog.=) $1 AND " WAITING_ENTRY " "
	"ORDER BY created_at, id LIMIT 1",
	2, {INT8OID, INT8OID}
};
static BookingPlan offer_plan = {
	"UPDATE booking.bookings SET status = 'pending'::booking.status, expires_at = $3, "
	"validity = pg_catalog.tstzrange($4, $3, '[)'), limited = $5 "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	5, {INT8OID, INT8OID, TIMESTAMPTZOID, TIMESTAMPTZOID, BOOLOID}
};
static BookingPlan set_waiting_plan = {
	"UPDATE booking.resources SET waiting = $3 "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND id OPERATOR(pg_catalog.=) $1",
	3, {INT8OID, INT8OID, INT4OID}
};
/* the entries that ask for more than capacity $3 */
static BookingPlan trim_plan = {
	"UPDATE booking.bookings SET status = 'cancelled'::booking.status "
	"WHERE home OPERATOR(pg_catalog.=) $2 AND resource_id OPERATOR(pg_catalog.=) $1 "
	"AND " WAITING_ENTRY " AND quantity OPERATOR(pg_catalog.>) $3 RETURNING id",
	3, {INT8OID, INT8OID, INT4OID}
};
static BookingPlan lines_plan = {
	"SELECT id FROM booking.resources WHERE home OPERATOR(pg_catalog.=) $1 "
	"AND waiting OPERATOR(pg_catalog.>) 0 ORDER BY id LIMIT $2",
	2, {INT8OID, INT4OID}
};

void
BookingLineInit(void)
{
	DefineCustomIntVariable("booking.waitlist_offer",
							"How long the hold lasts that the head of a waitlist is offered when seats free up.",
							"Only superusers can change it.",
							&booking_waitlist_offer_s,
							900, 1, (int) (BOOKING_MAX_HOLD_USECS / USECS_PER_SEC),
							PGC_SUSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);
}

/* Sets the count of entries; the stripes step aside while there are any. */
void
BookingWaitlistSetWaiting(const BookingResource *r, int32 waiting)
{
	Datum		values[3] = {Int64GetDatum(r->id), Int64GetDatum(r->home), Int32GetDatum(waiting)};

	(void) BookingExecute(&set_waiting_plan, values, NULL, false, 0);
	BookingStripesMark(r, r->guest_limit, waiting);
}

/*
 * Whether a newcomer may take seats of r: not while anyone is in line
 * (freed seats go to the line first); res says so when not.
 */
bool
BookingWaitlistLetsIn(const BookingResource *r, BookingResult *res)
{
	if (r->waiting <= 0)
		return true;
	BookingSetResult(res, BOOKING_SOLD_OUT, -1,
					 "Sold out: %d %s in line for resource %lld, and seats that free up go to the line first; join it with booking.join_waitlist.",
					 r->waiting, r->waiting == 1 ? "guest is" : "guests are", (long long) r->id);
	return false;
}

/*
 * Offers freed seats to the line of resource, whose row the caller holds:
 * while the head's seats are free, the head becomes a hold.  Stops, leaving
 * the line as it is, when the stripes cannot be had within timeout_ms.
 */
void
BookingWaitlistServe(int64 resource, int timeout_ms, TimestampTz now)
{
	for (;;)
	{
		BookingResource r;
		Datum		values[5];
		int64		entry;
		int32		quantity;
		int64		free_left;
		TimestampTz offered_at;

		/*
		 * The caller holds the row: this re-reads it as the last offer left
		 * it, through a statement, which on Citus also runs on the
		 * coordinator (hold_expire) and not only on the shard's node.
		 */
		if (!BookingTryLockResource(resource, &r) || r.waiting <= 0)
			return;
		values[0] = Int64GetDatum(r.id);
		values[1] = Int64GetDatum(r.home);
		if (BookingExecute(&head_plan, values, NULL, false, 1) == 0)
		{
			BookingWaitlistSetWaiting(&r, 0);
			return;
		}
		entry = BookingGetInt64(0, 1, NULL);
		quantity = BookingGetInt32(0, 2, NULL);
		if (BookingCounterTakeSeats(&r, quantity, timeout_ms, now, &free_left) != BOOKING_COUNTER_TAKEN)
			return;

		offered_at = GetCurrentTimestamp();
		values[0] = Int64GetDatum(entry);
		values[1] = Int64GetDatum(r.home);
		values[2] = TimestampTzGetDatum(offered_at + (int64) booking_waitlist_offer_s * USECS_PER_SEC);
		values[3] = TimestampTzGetDatum(offered_at);
		values[4] = BoolGetDatum(r.guest_limit > 0);
		(void) BookingExecute(&offer_plan, values, NULL, false, 0);
		BookingEmitEvent("waitlist_offered", r.home, entry, "waiting", "ok");
		BookingWaitlistSetWaiting(&r, r.waiting - 1);
	}
}

/*
 * r (read under its lock) is to have capacity seats in all: the entries that
 * ask for more could never be served, and the head among them would stall
 * the line for good, so they leave it (cancelled; each one's event has code
 * sold_out, join_waitlist's answer for such a quantity).  Returns how many.
 * The caller offers the seats to the rest afterwards.
 */
int32
BookingWaitlistTrim(const BookingResource *r, int32 capacity)
{
	Datum		values[3] = {Int64GetDatum(r->id), Int64GetDatum(r->home), Int32GetDatum(capacity)};
	int			n;
	int64	   *ids;

	if (r->waiting <= 0)
		return 0;
	n = BookingExecute(&trim_plan, values, NULL, false, 0);
	if (n == 0)
		return 0;
	ids = palloc(sizeof(int64) * n);
	for (int i = 0; i < n; i++)
		ids[i] = BookingGetInt64(i, 1, NULL);
	for (int i = 0; i < n; i++)
		BookingEmitEvent("cancelled", r->home, ids[i], "waiting", "sold_out");
	BookingWaitlistSetWaiting(r, Max(r->waiting - n, 0));
	return n;
}

/* An entry of r (read under its lock) left the line: the next may fit now. */
void
BookingWaitlistLeft(const BookingResource *r, TimestampTz now)
{
	BookingWaitlistSetWaiting(r, Max(r->waiting - 1, 0));
	if (r->waiting > 1)
		BookingWaitlistServe(r->id, BookingLockTimeoutDefault(), now);
}

/*
 * hold_expire's pass over the lines of one home: serves each resource whose
 * row is free now, so seats freed by a call that could not wait for the
 * stripes are offered too.  Returns the lines looked at.
 */
int64
BookingWaitlistServeHome(int64 home, TimestampTz now, int32 batch)
{
	Datum		values[2] = {Int64GetDatum(home), Int32GetDatum(batch)};
	int			n = BookingExecute(&lines_plan, values, NULL, false, 0);
	int64	   *ids = palloc(sizeof(int64) * Max(n, 1));
	int64		served = 0;

	for (int i = 0; i < n; i++)
		ids[i] = BookingGetInt64(i, 1, NULL);
	for (int i = 0; i < n; i++)
	{
		BookingResource r;

		if (!BookingTryLockResource(ids[i], &r))
			continue;
		BookingWaitlistServe(ids[i], 0, now);
		served++;
	}
	return served;
}
