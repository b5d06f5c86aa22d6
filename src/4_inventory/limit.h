/*
 * limit.h
 *	  What one guest may hold of a resource (limit.c).  Layer 4, inventory.
 */
#ifndef BOOKING_LIMIT_H
#define BOOKING_LIMIT_H

#include "booking.h"

#include "1_ground/result.h"
#include "1_ground/tables.h"

extern bool BookingGuestLimitAllows(const BookingResource *r, text *guest, int32 quantity,
									bool stays, TimestampTz now, BookingResult *res);
extern bool BookingGuestLimitAllowsMove(const BookingResource *r, int64 booking, int32 quantity,
										TimestampTz now, BookingResult *res);

#endif							/* BOOKING_LIMIT_H */
