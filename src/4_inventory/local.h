/*
 * local.h
 *	  A resource's local time: its IANA zone and check times, and the
 *	  instants of its wall clock (local.c).  Layer 4, inventory.
 */
#ifndef BOOKING_LOCAL_H
#define BOOKING_LOCAL_H

#include "booking.h"

#include "datatype/timestamp.h"
#include "utils/date.h"

typedef struct BookingLocal
{
	char	   *zone;			/* an IANA name, as set_time_zone stored it */
	TimeADT		check_in;		/* microseconds after local midnight */
	TimeADT		check_out;
} BookingLocal;

extern bool BookingLocalRead(int64 resource, int64 home, BookingLocal *out);
extern char *BookingLocalZoneName(const char *name);
extern TimestampTz BookingLocalAt(const char *zone, DateADT day, TimeADT time, const char *argname);
extern TimestampTz BookingLocalShift(const char *zone, TimestampTz t, const Interval *every, int k);
extern void BookingLocalCheckEvery(const Interval *every, int count);
extern void BookingLocalCheckLength(const Interval *every, TimestampTz lower, TimestampTz upper);

#endif							/* BOOKING_LOCAL_H */
