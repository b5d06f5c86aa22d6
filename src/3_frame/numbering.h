/*
 * numbering.h
 *	  The outbox's numbering of committed events, and the purge of old ones
 *	  (numbering.c).  Layer 3, the call frame.
 */
#ifndef BOOKING_NUMBERING_H
#define BOOKING_NUMBERING_H

#include "booking.h"

#include "utils/timestamp.h"

extern int	booking_event_retention_s;
extern void BookingNumberingInit(void);
extern int	BookingNumberEvents(int64 home, int32 batch);
extern int64 BookingNumberAll(int32 batch);
extern void BookingHoldSequencer(int64 home);
extern int64 BookingPurgeEvents(int64 home, TimestampTz now, int32 batch);

#endif							/* BOOKING_NUMBERING_H */
