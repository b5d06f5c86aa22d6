/*
 * events.h
 *	  Writing the outbox, and the news the expiry worker passes on
 *	  (events.c).  Layer 3, the call frame.
 */
#ifndef BOOKING_EVENTS_H
#define BOOKING_EVENTS_H

#include "booking.h"

#include "1_ground/tables.h"

/* the shortest time between two of the worker's NOTIFYs: a busy worker is a busy core */
#define BOOKING_NOTIFY_INTERVAL_MS 50

extern bool booking_notify;
extern void BookingEventsInit(void);
extern bool BookingEventsWanted(void);
extern void BookingEventsInvalidateNow(void);
extern void BookingEmitEvent(const char *kind, int64 home, int64 booking,
							 const char *status_before, const char *code);
extern void BookingEmitResourceEvent(const char *kind, const BookingResource *r,
									 const char *payload);

/* the expiry worker's side of the news */
extern void BookingEventsWorkerStarted(void);
extern void BookingEventsWorkerStopped(int code, Datum arg);
extern void BookingEventsWorkerNumbering(bool numbering);
extern bool BookingEventsTakeNews(void);
extern bool BookingEventsPending(void);
extern void BookingEventsAnnounce(void);
extern bool BookingEventsWorkerNumbers(void);
extern void BookingEventsWakeWorker(void);

#endif							/* BOOKING_EVENTS_H */
