/*
 * hours.h
 *	  A resource's opening hours: the local windows a stay must lie in
 *	  (hours.c).  Layer 4, inventory.
 */
#ifndef BOOKING_HOURS_H
#define BOOKING_HOURS_H

#include "booking.h"

#include "1_ground/result.h"
#include "1_ground/tables.h"
#include "utils/jsonb.h"

typedef struct BookingOpenTime
{
	int			n;
	TimestampTz *lower;			/* in time order, merged: never adjacent */
	TimestampTz *upper;
} BookingOpenTime;

extern void BookingCheckHours(Jsonb *hours);
extern bool BookingOpenAllows(const BookingResource *r, TimestampTz lower, TimestampTz upper,
							  TimestampTz *closed_at);
extern void BookingSetClosed(BookingResult *res, int64 resource, TimestampTz closed_at,
							 const char *what);
extern void BookingOpenTimeOf(Datum hours, Datum zone, TimestampTz lower, TimestampTz upper,
							  BookingOpenTime *open);
extern bool BookingOpenTimeWithin(int64 resource, int64 home, TimestampTz lower, TimestampTz upper,
								  bool latest, BookingOpenTime *open);

#endif							/* BOOKING_HOURS_H */
