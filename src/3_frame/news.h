/*
 * news.h
 *	  The news a commit leaves for the expiry worker of its database, and
 *	  the worker's side of it (news.c).  Layer 3, the call frame.
 */
#ifndef BOOKING_NEWS_H
#define BOOKING_NEWS_H

#include "booking.h"

/* the databases whose workers may run at once */
#define BOOKING_NEWS_SLOTS 64

/* the shortest time between two of the worker's NOTIFYs: a busy worker is a busy core */
#define BOOKING_NOTIFY_INTERVAL_MS 50

extern bool booking_notify;
extern void BookingNewsInit(void);
extern void BookingNewsMark(void);
extern bool BookingNewsWorkerNumbers(void);
extern void BookingNewsWakeWorker(void);
extern int	BookingNewsWorkerPid(Oid database);
extern void BookingNewsArrivalAtCommit(void);

/* the launcher's side */
extern void BookingNewsLauncherStarted(void);
extern uint32 BookingNewsArrivals(void);

/* the expiry worker's side */
extern bool BookingNewsWorkerStarted(void);
extern void BookingNewsWorkerStopped(int code, Datum arg);
extern void BookingNewsWorkerNumbering(bool numbering);
extern bool BookingNewsTake(void);
extern bool BookingNewsPending(void);
extern void BookingNewsAnnounce(void);

#endif							/* BOOKING_NEWS_H */
