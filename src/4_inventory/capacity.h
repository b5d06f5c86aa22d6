/*
 * capacity.h
 *	  Capacity over time: slot bookings, which hold units of their
 *	  resource's capacity over a range, and the sweep that decides them
 *	  (capacity.c).  Layer 4, inventory.
 */
#ifndef BOOKING_CAPACITY_H
#define BOOKING_CAPACITY_H

#include "booking.h"

#include "utils/timestamp.h"

#include "1_ground/result.h"
#include "1_ground/tables.h"
#include "4_inventory/range.h"

/* the use of a resource's units over a window, as a list of changes */
typedef struct BookingSlotUse
{
	TimestampTz lower;			/* the window */
	TimestampTz upper;
	int			n;				/* changes, in time order, ends before starts */
	TimestampTz *at;
	int64	   *delta;
} BookingSlotUse;

/* a stay counts as every unit of its resource */
#define BOOKING_SLOT_WHOLE ((int64) PG_INT32_MAX)

extern void BookingSlotReadUse(const BookingResource *r, TimestampTz lower, TimestampTz upper,
							   Datum validity, int64 except, bool latest, BookingSlotUse *use);
extern bool BookingSlotFits(const BookingSlotUse *use, int32 capacity, int32 quantity,
							TimestampTz *short_at, int64 *free_at);
extern int64 BookingSlotPeak(const BookingSlotUse *use, TimestampTz *at);
extern int64 BookingSlotInsert(BookingStayRequest *req, const BookingResource *r, int32 quantity);
extern void BookingSlotMark(const BookingResource *r);
extern void BookingSlotSetShort(BookingResult *res, int64 resource, int32 quantity,
								TimestampTz short_at, int64 free_at);
extern bool BookingStayLeavesSlots(const BookingResource *r, TimestampTz lower, TimestampTz upper,
								   Datum validity, int64 except, BookingResult *res);

#endif							/* BOOKING_CAPACITY_H */
