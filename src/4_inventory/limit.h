/*
 * limit.h
 *	  What one guest may hold of a resource (limit.c).  Layer 4, inventory.
 */
#ifndef BOOKING_LIMIT_H
#define BOOKING_LIMIT_H

#include "booking.h"

#include "1_ground/result.h"
#include "1_ground/tables.h"

/* what the guest limit counts, for its message */
typedef enum BookingLimitKind
{
	BOOKING_LIMIT_SEATS,		/* seats, by quantity */
	BOOKING_LIMIT_STAYS,		/* stays, one each */
	BOOKING_LIMIT_UNITS			/* units of slot bookings, by quantity */
} BookingLimitKind;

extern bool BookingGuestLimitAllows(const BookingResource *r, text *guest, int32 quantity,
									BookingLimitKind kind, TimestampTz now, BookingResult *res);
extern bool BookingGuestLimitAllowsMove(const BookingResource *r, int64 booking, int32 quantity,
										BookingLimitKind kind, TimestampTz now,
										BookingResult *res);

#endif							/* BOOKING_LIMIT_H */
