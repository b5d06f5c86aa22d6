/*
 * consumers.h
 *	  What the relays' calls share (consumers.c, used by claims.c).
 *	  Layer 6, the calls.
 */
#ifndef BOOKING_CONSUMERS_H
#define BOOKING_CONSUMERS_H

#include "booking.h"

extern void BookingConsumersInit(void);
extern text *BookingArgConsumer(FunctionCallInfo fcinfo, int argno, const char *name);
extern void BookingRequireConsumer(text *consumer);
extern void BookingRequireReadCommitted(const char *fn);

#endif							/* BOOKING_CONSUMERS_H */
