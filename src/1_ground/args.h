/*
 * args.h
 *	  Argument checks of the API: each error names the argument (args.c).
 *	  Layer 1, the ground.
 */
#ifndef BOOKING_ARGS_H
#define BOOKING_ARGS_H

#include "booking.h"

#include "utils/jsonb.h"
#include "utils/timestamp.h"

extern int64 BookingArgId(FunctionCallInfo fcinfo, int argno, const char *name);
extern text *BookingArgGuest(FunctionCallInfo fcinfo, int argno);
extern int32 BookingArgQuantity(FunctionCallInfo fcinfo, int argno);
extern bool BookingArgHold(FunctionCallInfo fcinfo, int argno, int64 *hold_us);
extern int	BookingArgLockTimeout(FunctionCallInfo fcinfo, int argno);
extern char *BookingArgKey(FunctionCallInfo fcinfo, int argno);
extern Jsonb *BookingArgMetadata(FunctionCallInfo fcinfo, int argno, char **text);
extern void BookingArgDuring(FunctionCallInfo fcinfo, int argno, const char *name,
							 TimestampTz *lower, TimestampTz *upper);
extern int64 BookingIntervalUsecs(const Interval *span, const char *name);
extern const char *BookingDescribeInterval(const Interval *span);
extern Datum BookingMakeRange(TimestampTz lower, TimestampTz upper, bool upper_infinite);
extern TimestampTz BookingArgUntil(FunctionCallInfo fcinfo, int argno);
extern bool BookingArgMemberExpiry(FunctionCallInfo fcinfo, int argno, TimestampTz now,
								   TimestampTz *expires_at);
extern int64 BookingArgGroup(FunctionCallInfo fcinfo, int argno);
extern Datum *BookingArgArray(FunctionCallInfo fcinfo, int argno, const char *name, Oid elemtype,
							  int max, int *n);

#endif							/* BOOKING_ARGS_H */
