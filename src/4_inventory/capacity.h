/*
 * capacity.h
 *	  Capacity over time: slot bookings, which hold units of their
 *	  resource's capacity over a range, and the sweep that decides them
 *	  (capacity.c).  Layer 4, inventory.
 */
#ifndef BOOKING_CAPACITY_H
#define BOOKING_CAPACITY_H

#include "booking.h"

#include "utils/timestamp.h"

#include "1_ground/result.h"
#include "1_ground/tables.h"
#include "4_inventory/range.h"

/* the use of a resource's units over a window, as a list of changes */
typedef struct BookingSlotUse
{
	TimestampTz lower;			/* the window */
	TimestampTz upper;
	int			n;				/* changes, in time order, ends before starts */
	TimestampTz *at;
	int64	   *delta;
} BookingSlotUse;

/* a stay counts as every unit of its resource */
#define BOOKING_SLOT_WHOLE ((int64) PG_INT32_MAX)

/*
 * What blocks units of resource $1 (home $4) over window $2 for a newcomer
 * of validity $3, but booking $5: slot bookings with their quantity, and
 * stays by their footprint with a NULL quantity (all of it).  The slot
 * bookings are read through bookings_slots_idx, a B-tree on where they
 * start, from "from" on: an instant no later than the window's lower bound
 * less the resource's longest_slot, before which no slot booking that
 * reaches into the window can start.  A B-tree, not a GiST on during:
 * its descent is a binary search per page, the GiST's a test of every entry
 * on each page it visits, 2.4x slower at a million slots (docs/slots.md).
 */
#define BOOKING_SLOT_USE_SQL(from) \
	"SELECT pg_catalog.lower(b.during) AS lo, pg_catalog.upper(b.during) AS hi, b.quantity AS q " \
	"FROM booking.bookings b WHERE b.home OPERATOR(pg_catalog.=) $4 " \
	"AND b.resource_id OPERATOR(pg_catalog.=) $1 " \
	"AND pg_catalog.lower(b.during) OPERATOR(pg_catalog.>=) " from " " \
	"AND pg_catalog.lower(b.during) OPERATOR(pg_catalog.<) pg_catalog.upper($2) " \
	"AND b.during OPERATOR(pg_catalog.&&) $2 " \
	"AND b.blocked IS NULL AND b.during IS NOT NULL " \
	"AND b.status IN ('pending'::booking.status, 'confirmed'::booking.status) " \
	"AND b.validity OPERATOR(pg_catalog.&&) $3 AND b.id OPERATOR(pg_catalog.<>) $5 " \
	"UNION ALL " \
	"SELECT pg_catalog.lower(b.blocked), pg_catalog.upper(b.blocked), NULL " \
	"FROM booking.bookings b WHERE b.home OPERATOR(pg_catalog.=) $4 " \
	"AND b.resource_id OPERATOR(pg_catalog.=) $1 AND " BOOKING_BLOCKING("b") " " \
	"AND b.id OPERATOR(pg_catalog.<>) $5"

extern void BookingSlotUseOfRows(int n, int col, TimestampTz lower, TimestampTz upper,
								 BookingSlotUse *use);
extern void BookingSlotReadUse(const BookingResource *r, TimestampTz lower, TimestampTz upper,
							   Datum validity, int64 except, BookingSlotUse *use);
extern bool BookingSlotFits(const BookingSlotUse *use, int32 capacity, int32 quantity,
							TimestampTz *short_at, int64 *free_at);
extern int64 BookingSlotPeak(const BookingSlotUse *use, TimestampTz *at);
extern int64 BookingSlotInsert(BookingStayRequest *req, const BookingResource *r, int32 quantity);
extern void BookingSlotMark(const BookingResource *r, TimestampTz lower, TimestampTz upper);
extern void BookingSlotSetShort(BookingResult *res, int64 resource, int32 quantity,
								TimestampTz short_at, int64 free_at);
extern bool BookingStayLeavesSlots(const BookingResource *r, TimestampTz lower, TimestampTz upper,
								   Datum validity, int64 except, BookingResult *res);

#endif							/* BOOKING_CAPACITY_H */
