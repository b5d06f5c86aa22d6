/*
 * tablelock.h
 *	  The table locks a mutating call takes first (tablelock.c).  Layer 2,
 *	  locks.
 */
#ifndef BOOKING_TABLELOCK_H
#define BOOKING_TABLELOCK_H

#include "booking.h"

#include "2_locks/lock.h"

extern BookingLockOutcome BookingLockTables(int timeout_ms, bool with_keys);

#endif							/* BOOKING_TABLELOCK_H */
