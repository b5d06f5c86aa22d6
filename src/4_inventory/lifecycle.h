/*
 * lifecycle.h
 *	  A booking read under its resource's row lock, and its end
 *	  (lifecycle.c).  Layer 4, inventory.
 */
#ifndef BOOKING_LIFECYCLE_H
#define BOOKING_LIFECYCLE_H

#include "booking.h"

#include "1_ground/result.h"
#include "1_ground/tables.h"

typedef struct BookingLifecycle
{
	int64		booking;
	int64		home;			/* the booking's, its resource's (1_ground/shard.c) */
	int64		by_us;			/* extend_hold */
	TimestampTz until;			/* extend_hold_until */
	int			timeout_ms;
	TimestampTz now;			/* set again once the lock is held */
} BookingLifecycle;

typedef struct BookingLocked
{
	BookingResource resource;
	BookingStatus status;
	TimestampTz expires_at;
	int32		quantity;
	bool		is_seat;
	bool		is_slot;		/* reserve_slot's: a range, no footprint */
	TimestampTz created_at;
	TimestampTz ends_at;		/* a stay's end (upper(during)); 0 for seats */
} BookingLocked;

extern bool BookingLockBooking(BookingLifecycle *req, BookingLocked *b, BookingResult *res);
extern void BookingSetStatus(int64 booking, const char *status);
extern bool BookingEndBooking(BookingLifecycle *req, BookingLocked *b, const char *status,
							  BookingResult *res);
extern void BookingSetHoldExpired(BookingResult *res, BookingLifecycle *req, BookingLocked *b);

#endif							/* BOOKING_LIFECYCLE_H */
