/*
 * timeout.h
 *	  How long a call may wait: the booking.lock_timeout setting, the
 *	  lock_timeout of a call's statements, and what is left of a bounded
 *	  wait (timeout.c).  Layer 1, the ground.
 */
#ifndef BOOKING_TIMEOUT_H
#define BOOKING_TIMEOUT_H

#include "booking.h"

#include "utils/timestamp.h"

extern int	booking_lock_timeout_ms;

extern void BookingTimeoutInit(void);
extern int	BookingCapLockTimeout(int timeout_ms);
extern int	BookingLockTimeoutDefault(void);
extern int	BookingPushLockTimeout(int timeout_ms);
extern void BookingPopLockTimeout(int nestlevel);
extern int	BookingTimeLeft(int timeout_ms, TimestampTz *deadline);
extern int	BookingMillisecondsLeft(TimestampTz deadline);

#endif							/* BOOKING_TIMEOUT_H */
