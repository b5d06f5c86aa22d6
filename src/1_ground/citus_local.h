/*
 * citus_local.h
 *	  Whether this transaction may work on this node's shards in this
 *	  backend, and telling Citus that it did (citus_local.c).  Layer 1, the
 *	  ground.
 */
#ifndef BOOKING_CITUS_LOCAL_H
#define BOOKING_CITUS_LOCAL_H

#include "booking.h"

extern bool BookingCitusLocalKnown(void);
extern bool BookingCitusLocalAllowed(void);
extern void BookingCitusLocalUsed(bool writes);
extern void BookingCitusUseCoordinated(void);

#endif							/* BOOKING_CITUS_LOCAL_H */
