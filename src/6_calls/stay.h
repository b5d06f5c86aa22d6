/*
 * stay.h
 *	  What the calls that book stays share: their arguments and their frame
 *	  (stay.c, used by stays.c and stay_any.c).  Layer 6, the calls.
 */
#ifndef BOOKING_STAY_H
#define BOOKING_STAY_H

#include "booking.h"

#include "3_frame/call.h"
#include "4_inventory/range.h"

extern void BookingReserveStayBody(void *state, BookingResult *res);
extern void BookingStayReadArgs(FunctionCallInfo fcinfo, BookingStayRequest *req);
extern Datum BookingStayFrame(FunctionCallInfo fcinfo, BookingStayRequest *req, const char *key,
							  const char *request, BookingBodyFn body, void *state);
extern Datum BookingStayRunCall(FunctionCallInfo fcinfo, BookingStayRequest *req, const char *fn,
								const char *target, BookingBodyFn body, bool route);
extern Datum BookingStayCallOn(FunctionCallInfo fcinfo, const char *argname, const char *fn,
							   BookingBodyFn body);

#endif							/* BOOKING_STAY_H */
