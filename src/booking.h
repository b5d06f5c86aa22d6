/*
 * booking.h
 *	  What every file of the booking extension needs: PostgreSQL's own
 *	  headers for a function-manager file, the limits of the API, and the
 *	  lock order.  Everything else is declared by the header of the file that
 *	  offers it, in the folder of its layer (docs/layout.md): a file includes
 *	  only headers of its own layer or of a lower one.
 *
 * Lock order, everywhere: the tables (RowExclusiveLock, 2_locks/tablelock.c),
 * then an idempotency key's advisory lock (held for the call only,
 * 3_frame/idempotency.c), then resource rows in ascending id order, then the
 * stripes of a striped resource in ascending order, then booking rows of
 * those resources.  (A fast-path buyer of a striped resource holds one
 * stripe and waits for nothing else.)  Every write to a booking row is made
 * while holding its resource's row lock, so a caller that holds a resource
 * lock never waits for a booking row.
 */
#ifndef BOOKING_H
#define BOOKING_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "fmgr.h"

#define BOOKING_MAX_GUEST_BYTES 1024
#define BOOKING_MAX_KEY_BYTES 255
#define BOOKING_MAX_GROUP 100
#define BOOKING_MAX_STRIPES 64
#define BOOKING_MAX_METADATA_BYTES 8192
#define BOOKING_MAX_HOLD_USECS ((int64) 3660 * USECS_PER_DAY)	/* ten years */

#endif							/* BOOKING_H */
