/*
 * direct.h
 *	  A routed call sent to its node as a statement of its own, with no
 *	  transaction block there (direct.c).  Layer 5, scale-out.
 */
#ifndef BOOKING_DIRECT_H
#define BOOKING_DIRECT_H

#include "booking.h"

#include "fmgr.h"

extern void BookingDirectInit(void);
extern bool BookingDirectRoute(FunctionCallInfo fcinfo);
extern bool BookingNodeAnswers(int64 home);
extern void BookingJoinDistributedTransaction(void);
extern int	BookingPushDirect(void);
extern void BookingPopDirect(int nestlevel);

#endif							/* BOOKING_DIRECT_H */
