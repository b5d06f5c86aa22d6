/*
 * counter.h
 *	  Counted inventory: a resource's seats, on its row or its stripes,
 *	  under its row lock (counter.c).  Layer 4, inventory.
 */
#ifndef BOOKING_COUNTER_H
#define BOOKING_COUNTER_H

#include "booking.h"

#include "1_ground/result.h"
#include "1_ground/tables.h"
#include "2_locks/lock.h"

typedef enum BookingCounterTake
{
	BOOKING_COUNTER_TAKEN,
	BOOKING_COUNTER_SOLD_OUT,
	BOOKING_COUNTER_BUSY,
	BOOKING_COUNTER_RETRY
} BookingCounterTake;

/* seats on their way back: the resource as read under its lock, the stripe locked */
typedef struct BookingGiveBack
{
	BookingResource resource;
	int32		stripe;
} BookingGiveBack;

extern int32 BookingCounterReclaim(const BookingResource *r, TimestampTz now);
extern int32 BookingCounterExpired(int64 home, int n);
extern int64 BookingCounterFree(const BookingResource *r, int timeout_ms,
								BookingLockOutcome *outcome);
extern bool BookingCounterFreeFor(const BookingResource *r, int timeout_ms, int64 *free,
								  BookingResult *res);
extern void BookingCounterSetTaken(const BookingResource *r, int32 capacity, int32 taken);
extern BookingCounterTake BookingCounterTakeSeats(const BookingResource *r, int32 quantity,
												  int timeout_ms, TimestampTz now,
												  int64 *free_left);
extern BookingLockOutcome BookingCounterOpenGiveBack(const BookingResource *r, int timeout_ms,
													 BookingGiveBack *gb);
extern void BookingCounterGiveBack(BookingGiveBack *gb, int32 seats);
extern void BookingCounterSetLayout(const BookingResource *r, int32 stripes, int64 free);

#endif							/* BOOKING_COUNTER_H */
