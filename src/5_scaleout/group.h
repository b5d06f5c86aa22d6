/*
 * group.h
 *	  Members booked all or nothing, here or on their Citus nodes (group.c).
 *	  Layer 5, scale-out.
 */
#ifndef BOOKING_GROUP_H
#define BOOKING_GROUP_H

#include "booking.h"

#include "utils/jsonb.h"

#include "1_ground/result.h"

/* member i of a group; remote: it lives on another node */
typedef void (*BookingMemberFn) (void *arg, int i, bool remote, int64 group_id,
								 BookingResult *res);

extern int64 BookingRunGroup(int n, const int64 *resources, const int64 *homes, int64 home,
							 BookingMemberFn member, void *arg, int timeout_ms,
							 BookingResult *res);
extern void BookingRunMemberTwin(const char *twin, int64 resource, text *guest, Oid what_type,
								 Datum what, bool has_hold, TimestampTz expires_at,
								 int64 group_id, int timeout_ms, Jsonb *metadata,
								 BookingResult *res);

#endif							/* BOOKING_GROUP_H */
