/*
 * rowlock.h
 *	  Counter rows read and locked in C, the queue of a hot row's buyers,
 *	  and a booking row read back as this transaction wrote it (rowlock.c).
 *	  Layer 2, locks.
 */
#ifndef BOOKING_ROWLOCK_H
#define BOOKING_ROWLOCK_H

#include "booking.h"

#include "storage/itemptr.h"

#include "1_ground/tables.h"

typedef enum BookingRowOutcome
{
	BOOKING_ROW_LOCKED,
	BOOKING_ROW_HELD,			/* by another transaction, or changed since read */
	BOOKING_ROW_MISSING
} BookingRowOutcome;

typedef struct BookingStripeRow
{
	int32		stripe;
	int32		free;			/* -1: its resource has a guest limit */
	ItemPointerData tid;		/* the version read */
} BookingStripeRow;

extern bool BookingRowPeekResource(int64 id, int64 home, BookingResource *res, ItemPointer tid,
								   bool remember);
extern BookingRowOutcome BookingRowTryLock(BookingTable table, int64 home, ItemPointer tid);
extern BookingRowOutcome BookingRowWaitResource(int64 id, int64 home, ItemPointer tid,
												TimestampTz deadline, BookingResource *res);
extern int	BookingRowPeekStripes(int64 resource, int64 home, BookingStripeRow *rows, int max);
extern BookingRowOutcome BookingRowWaitStripe(int64 resource, int32 stripe, int64 home,
											  ItemPointer tid, TimestampTz deadline, int32 *free);

#endif							/* BOOKING_ROWLOCK_H */
