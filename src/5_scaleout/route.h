/*
 * route.h
 *	  On Citus, a call runs on the node that holds its shard (route.c).
 *	  Layer 5, scale-out.
 */
#ifndef BOOKING_ROUTE_H
#define BOOKING_ROUTE_H

#include "booking.h"

#include "1_ground/result.h"

extern bool BookingForwarding(void);
extern Datum BookingRunOnShard(FunctionCallInfo fcinfo, PGFunction fn);
extern Datum BookingForward(FunctionCallInfo fcinfo, const char *twin, int64 home, int64 resource);
extern void BookingCallTwin(const char *twin, int nargs, const Oid *argtypes, Datum *values,
							const char *nulls, BookingResult *res);
extern void BookingSetUnreachable(BookingResult *res, int64 id);
extern void BookingSetMoved(BookingResult *res, int64 id);

/* booking.shard_<name>: the twin of booking.<name> that runs on the shard's node */
#define BOOKING_SHARD_TWIN(name) \
	PG_FUNCTION_INFO_V1(booking_shard_##name); \
	Datum \
	booking_shard_##name(PG_FUNCTION_ARGS) \
	{ \
		return BookingRunOnShard(fcinfo, booking_##name); \
	}

#endif							/* BOOKING_ROUTE_H */
