/*
 * stripes.h
 *	  Hot inventory: the striped counter's fast path and the primitives
 *	  counter.c uses (stripes.c).  Layer 4, inventory.
 */
#ifndef BOOKING_STRIPES_H
#define BOOKING_STRIPES_H

#include "booking.h"

#include "1_ground/tables.h"
#include "2_locks/lock.h"

#define BOOKING_STRIPES_LIMITED (-1)	/* *total: decide under the resource row */

extern void BookingStripesRemember(int64 resource, int32 stripes);
extern int32 BookingStripesHint(int64 resource);
extern BookingLockOutcome BookingStripesTakeFast(const Datum *row, const char *row_nulls,
												 int32 stripes, int timeout_ms,
												 int64 *booking_id);
extern BookingLockOutcome BookingStripesTakeCommitted(const Datum *row, const char *row_nulls,
													  int timeout_ms, int64 *booking_id,
													  int64 *total, int *nstripes);
extern BookingLockOutcome BookingStripesLockOne(int64 resource, int32 stripes, int timeout_ms,
												int32 *stripe);
extern void BookingStripeAdd(int64 resource, int32 stripe, int32 seats);
extern int64 BookingStripesLockAll(int64 resource, int timeout_ms, BookingLockOutcome *outcome);
extern void BookingStripesSpread(int64 resource, int32 stripes, int64 free);
extern void BookingStripesRebuild(const BookingResource *r, int32 stripes, int64 free);
extern void BookingStripesMark(const BookingResource *r, int32 guest_limit, int32 waiting);

#endif							/* BOOKING_STRIPES_H */
