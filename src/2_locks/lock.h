/*
 * lock.h
 *	  The resource row lock, the guarded wait every lock wait runs in, and
 *	  the answers of a lock that was not granted (lock.c).  Layer 2, locks.
 */
#ifndef BOOKING_LOCK_H
#define BOOKING_LOCK_H

#include "booking.h"

#include "storage/itemptr.h"

#include "1_ground/guard.h"
#include "1_ground/result.h"
#include "1_ground/tables.h"

typedef enum BookingLockOutcome
{
	BOOKING_LOCKED,
	BOOKING_LOCK_BUSY,
	BOOKING_LOCK_RETRY,
	BOOKING_LOCK_NOT_FOUND
} BookingLockOutcome;

extern BookingLockOutcome BookingLockResource(int64 id, int timeout_ms, BookingResource *res);
extern BookingLockOutcome BookingLockPeeked(BookingResource *res, ItemPointer tid, int timeout_ms);
extern bool BookingTryLockResource(int64 id, BookingResource *res);
extern BookingLockOutcome BookingLockResourceByStatement(int64 id, int timeout_ms,
														 BookingResource *res);
extern BookingLockOutcome BookingWaitGuarded(BookingGuardedFn fn, void *arg, int timeout_ms);
extern BookingLockOutcome BookingWaitGuardedTry(BookingTryFn fn, void *arg, int timeout_ms,
												bool *kept);
extern bool BookingLockResourceFor(int64 id, int timeout_ms, BookingResource *r,
								   BookingResult *res);
extern void BookingSetLockOutcome(BookingResult *res, BookingLockOutcome outcome, int64 resource,
								  int timeout_ms);

#endif							/* BOOKING_LOCK_H */
