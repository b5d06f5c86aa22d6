/*
 * once.h
 *	  The copies of one call that (f(...)).* makes answer its result
 *	  (once.c).  Layer 3, the call frame.
 */
#ifndef BOOKING_ONCE_H
#define BOOKING_ONCE_H

#include "booking.h"

#include "1_ground/result.h"

extern void BookingOnceInit(void);
extern bool BookingOnceRepeat(FunctionCallInfo fcinfo, BookingResult *res);
extern void BookingOnceRemember(FunctionCallInfo fcinfo, const BookingResult *res);

#endif							/* BOOKING_ONCE_H */
