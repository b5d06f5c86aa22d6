/*
 * seat.c
 *	  Counted inventory: booking.reserve_seat.  The seats are taken, and the
 *	  booking row written, by 4_inventory/seat_take.c; here are the call's
 *	  arguments, its frame, its event and its answer.
 *
 *	  Layer 6, the calls.  Locks: the resource row, or one stripe, then the
 *	  lapsed booking rows it expires (4_inventory/seat_sale.c).
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "3_frame/call.h"
#include "3_frame/events.h"
#include "3_frame/idempotency.h"
#include "4_inventory/seat_sale.h"
#include "4_inventory/seat_take.h"
#include "5_scaleout/route.h"

PG_FUNCTION_INFO_V1(booking_reserve_seat);

static void
ReserveSeatBody(void *state, BookingResult *res)
{
	BookingSeatRequest *req = (BookingSeatRequest *) state;

	BookingSeatPrepare(req);
	if (!BookingSeatTake(req, res))
		return;
	BookingEmitReserved(req->home, req->booking_id, req->resource, req->guest, req->quantity,
						NULL, req->has_hold ? &req->expires_at : NULL, req->metadata);

	if (req->has_hold)
		BookingSetResult(res, BOOKING_CREATED, req->booking_id,
						 "Held %d %s on resource %lld until %s; confirm before then.",
						 req->quantity, req->quantity == 1 ? "seat" : "seats",
						 (long long) req->resource,
						 timestamptz_to_str(req->expires_at));
	else
		BookingSetResult(res, BOOKING_CREATED, req->booking_id,
						 "Reserved %d %s on resource %lld.",
						 req->quantity, req->quantity == 1 ? "seat" : "seats",
						 (long long) req->resource);
}

/*
 * reserve_seat(resource, guest, quantity, hold, idempotency_key, lock_timeout,
 * metadata)
 */
Datum
booking_reserve_seat(PG_FUNCTION_ARGS)
{
	BookingSeatRequest req;
	BookingCall call;
	char	   *key;
	char	   *metadata;

	req.resource = BookingArgId(fcinfo, 0, "resource");
	req.home = BookingHome(req.resource);
	req.guest = BookingArgGuest(fcinfo, 1);
	req.quantity = BookingArgQuantity(fcinfo, 2);
	req.has_hold = BookingArgHold(fcinfo, 3, &req.hold_us);
	key = BookingArgKey(fcinfo, 4);
	req.timeout_ms = BookingArgLockTimeout(fcinfo, 5);
	req.metadata = BookingArgMetadata(fcinfo, 6, &metadata);
	req.now = GetCurrentTimestamp();
	if (BookingForwarding())
		return BookingForward(fcinfo, "shard_reserve_seat", req.home, req.resource);

	memset(&call, 0, sizeof(call));
	call.key = key;
	if (key != NULL)
	{
		const char *fields[4];

		fields[0] = psprintf(INT64_FORMAT, req.resource);
		fields[1] = text_to_cstring(req.guest);
		fields[2] = psprintf("%d", req.quantity);
		fields[3] = req.has_hold ? psprintf(INT64_FORMAT, req.hold_us) : NULL;
		call.request = BookingRequestString("reserve_seat", 4, fields, metadata);
	}
	call.timeout_ms = req.timeout_ms;
	call.resource = req.resource;
	call.home = req.home;
	call.now = req.now;
	call.body = ReserveSeatBody;
	call.state = &req;

	PG_RETURN_DATUM(BookingCallDatum(fcinfo, &call));
}

BOOKING_SHARD_TWIN(reserve_seat)
