/*
 * worker.h
 *	  The expiry background worker (worker.c).  Layer 7, the worker.
 */
#ifndef BOOKING_WORKER_H
#define BOOKING_WORKER_H

#include "booking.h"

extern void BookingWorkerInit(void);

#endif							/* BOOKING_WORKER_H */
