/*
 * line.h
 *	  The line of a sold-out resource and its offers (line.c).  Layer 4,
 *	  inventory.
 */
#ifndef BOOKING_LINE_H
#define BOOKING_LINE_H

#include "booking.h"

#include "utils/timestamp.h"

#include "1_ground/result.h"
#include "1_ground/tables.h"

/* "> expired" is "waiting": see booking.status and bookings_waiting_idx */
#define WAITING_ENTRY "status OPERATOR(pg_catalog.>) 'expired'::booking.status"

extern int	booking_waitlist_offer_s;
extern void BookingLineInit(void);
extern void BookingWaitlistSetWaiting(const BookingResource *r, int32 waiting);
extern void BookingWaitlistServe(int64 resource, int timeout_ms, TimestampTz now);
extern int64 BookingWaitlistServeHome(int64 home, TimestampTz now, int32 batch);
extern void BookingWaitlistLeft(const BookingResource *r, TimestampTz now);
extern int32 BookingWaitlistTrim(const BookingResource *r, int32 capacity);
extern bool BookingWaitlistLetsIn(const BookingResource *r, BookingResult *res);

#endif							/* BOOKING_LINE_H */
