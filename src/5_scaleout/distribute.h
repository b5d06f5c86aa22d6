/*
 * distribute.h
 *	  The admin calls that register booking with Citus: distribute.c's
 *	  statements, shared with delegate.c.  Layer 5, scale-out.
 */
#ifndef BOOKING_DISTRIBUTE_H
#define BOOKING_DISTRIBUTE_H

#include "booking.h"

extern char *BookingAdminRun(const char *sql);
extern bool BookingAdminRunBool(const char *sql);
extern bool BookingIsDistributed(const char *table);

#endif							/* BOOKING_DISTRIBUTE_H */
