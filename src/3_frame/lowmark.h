/*
 * lowmark.h
 *	  The numbering's low-water mark (lowmark.c).  Layer 3, the call frame.
 */
#ifndef BOOKING_LOWMARK_H
#define BOOKING_LOWMARK_H

#include "booking.h"

#include "utils/snapshot.h"

extern int64 BookingLowMarkOf(int64 home, Snapshot s, int64 *top);
extern void BookingLowMarkAfter(Snapshot s, int64 mark, int64 top, int n, int32 batch, int64 last);
extern int64 BookingNumberedBelow(int64 home);

#endif							/* BOOKING_LOWMARK_H */
