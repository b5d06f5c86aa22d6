/*
 * remote.h
 *	  Guards for work that crosses to another node of a Citus cluster
 *	  (remote.c).  Layer 5, scale-out.
 */
#ifndef BOOKING_REMOTE_H
#define BOOKING_REMOTE_H

#include "booking.h"

#include "1_ground/guard.h"

extern BookingGuardOutcome BookingRunGuardedRemote(BookingGuardedFn fn, void *arg,
												   const int64 *homes, int nhomes);
extern BookingGuardOutcome BookingRunGuardedRemoteTry(BookingTryFn fn, void *arg, bool *kept,
													  const int64 *homes, int nhomes);

#endif							/* BOOKING_REMOTE_H */
