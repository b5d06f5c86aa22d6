/*
 * call.h
 *	  The frame every mutating call runs in (call.c).  Layer 3, the call
 *	  frame.
 */
#ifndef BOOKING_CALL_H
#define BOOKING_CALL_H

#include "booking.h"

#include "1_ground/result.h"

typedef void (*BookingBodyFn) (void *state, BookingResult *res);

typedef struct BookingCall
{
	const char *key;			/* idempotency key or NULL */
	const char *request;		/* canonical form of the request, for keys */
	int			timeout_ms;
	int64		resource;		/* for messages only */
	int64		home;			/* where the key is stored (1_ground/shard.c) */
	TimestampTz now;			/* the time of the call */
	BookingBodyFn body;
	void	   *state;
} BookingCall;

extern void BookingRunCall(BookingCall *call, BookingResult *res);
extern Datum BookingCallDatum(FunctionCallInfo fcinfo, BookingCall *call);
extern Datum BookingCallOnResource(FunctionCallInfo fcinfo, int64 resource, BookingBodyFn body,
								   void *state);

#endif							/* BOOKING_CALL_H */
