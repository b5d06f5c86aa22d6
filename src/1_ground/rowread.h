/*
 * rowread.h
 *	  Reading one row without a statement (rowread.c).  Layer 1, the ground.
 */
#ifndef BOOKING_ROWREAD_H
#define BOOKING_ROWREAD_H

#include "booking.h"

#include "utils/rel.h"

/* a booking row as this transaction wrote it, for its event */
typedef struct BookingOwnBooking
{
	int64		resource;
	Datum		guest;
	int32		quantity;
	Datum		during;
	bool		during_null;
	Datum		expires_at;
	bool		expires_null;
	Datum		group_id;
	bool		group_null;
	Datum		status;			/* booking.status */
	Datum		metadata;		/* jsonb (0.8.0) */
	bool		metadata_null;
} BookingOwnBooking;

extern AttrNumber BookingColumnOf(Relation rel, const char *name);
extern AttrNumber BookingIndexColumnOf(Relation index, AttrNumber attnum);
extern bool BookingRowReadOwnBooking(int64 home, int64 id, BookingOwnBooking *b);

#endif							/* BOOKING_ROWREAD_H */
