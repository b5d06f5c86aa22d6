/*
 * expire.h
 *	  What a caller of booking.hold_expire in this backend learns beyond its
 *	  result (expire.c; the expiry worker, 7_worker/worker.c, asks).  Layer
 *	  6, the calls.
 */
#ifndef BOOKING_EXPIRE_H
#define BOOKING_EXPIRE_H

#include "booking.h"

extern bool BookingExpireFilledTake(void);

#endif							/* BOOKING_EXPIRE_H */
