/*
 * launcher.h
 *	  The launcher of the expiry workers of every database, and the commands
 *	  that need a database to themselves (launcher.c).  Layer 7, the worker.
 */
#ifndef BOOKING_LAUNCHER_H
#define BOOKING_LAUNCHER_H

#include "booking.h"

/* how long a worker that stopped stays stopped: the postmaster's restart
 * time of the single worker, the launcher's for its workers */
#define BOOKING_WORKER_RESTART_S 5

extern void BookingLauncherRegister(void);
extern void BookingLauncherHookUtility(void);

#endif							/* BOOKING_LAUNCHER_H */
