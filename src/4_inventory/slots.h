/*
 * slots.h
 *	  A stay's footprint and the next free slot of a resource (slots.c).
 *	  Layer 4, inventory.
 */
#ifndef BOOKING_SLOTS_H
#define BOOKING_SLOTS_H

#include "booking.h"

#include "utils/timestamp.h"

#include "1_ground/tables.h"

/*
 * SQL for a range [lower, upper) widened by the intervals before and after
 * (buffers, at most 366 days: 6_calls/buffer.c), kept within the timestamps
 * PostgreSQL can represent, as BookingStayFootprint does in C.
 */
#define BOOKING_SQL_WIDENED(lower, upper, before, after) \
	"pg_catalog.tstzrange(CASE WHEN " lower " OPERATOR(pg_catalog.>=) " \
	"'4713-11-25 00:00:00+00 BC'::pg_catalog.timestamptz " \
	"THEN " lower " OPERATOR(pg_catalog.-) " before " " \
	"ELSE '4714-11-24 00:00:00+00 BC'::pg_catalog.timestamptz END, " \
	"CASE WHEN " upper " OPERATOR(pg_catalog.<=) '294275-12-31 00:00:00+00'::pg_catalog.timestamptz " \
	"THEN " upper " OPERATOR(pg_catalog.+) " after " " \
	"ELSE '294276-12-31 23:59:59.999999+00'::pg_catalog.timestamptz END, '[)')"

extern Datum BookingStayFootprint(TimestampTz lower, TimestampTz upper, const BookingResource *r);
extern bool BookingNextFreeSlot(int64 resource, TimestampTz from, int64 length_us,
								TimestampTz now, TimestampTz *start);
extern void BookingDescribeNextSlot(char *buf, size_t len, int64 resource,
									TimestampTz lower, TimestampTz upper, TimestampTz now);

#endif							/* BOOKING_SLOTS_H */
