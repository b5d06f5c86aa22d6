/*
 * events.h
 *	  Writing the outbox (events.c).  Layer 3, the call frame.
 */
#ifndef BOOKING_EVENTS_H
#define BOOKING_EVENTS_H

#include "booking.h"

#include "1_ground/tables.h"
#include "datatype/timestamp.h"
#include "utils/jsonb.h"

extern void BookingEventsInit(void);
extern bool BookingEventsWanted(void);
extern void BookingEventsInvalidateNow(void);
extern void BookingEmitEvent(const char *kind, int64 home, int64 booking,
							 const char *status_before, const char *code);
extern void BookingEmitReserved(int64 home, int64 booking, int64 resource, text *guest,
								int32 quantity, const Datum *during, const TimestampTz *expires_at,
								Jsonb *metadata);
extern void BookingEmitResourceEvent(const char *kind, const BookingResource *r,
									 const char *payload);


#endif							/* BOOKING_EVENTS_H */
