/*
 * tables.h
 *	  The extension's tables as the C code sees them: their OIDs, the rows
 *	  it reads from them, and a hook for the caches of table facts that must
 *	  be dropped when the catalog changes (tables.c).  Layer 1, the ground.
 */
#ifndef BOOKING_TABLES_H
#define BOOKING_TABLES_H

#include "booking.h"

/* the constraint the SQL text and the error matching rely on */
#define BOOKING_OVERLAP_CONSTRAINT "bookings_no_overlap"

typedef enum BookingTable
{
	BOOKING_TABLE_RESOURCES,
	BOOKING_TABLE_BOOKINGS,
	BOOKING_TABLE_STRIPES,
	BOOKING_TABLE_KEYS,
	BOOKING_TABLE_EVENTS,
	BOOKING_NUM_TABLES
} BookingTable;

/* a row of booking.resources, as read under its lock (2_locks) */
typedef struct BookingResource
{
	int64		id;
	int64		home;			/* where its rows live (shard.c) */
	int32		capacity;
	int32		taken;			/* unused (0) when striped */
	int64		version;
	int32		stripes;		/* > 1: free seats live in booking.resource_stripes */
	int32		guest_limit;	/* 0: none */
	int64		buffer_before;	/* microseconds a stay keeps free before it */
	int64		buffer_after;	/* and after it */
	int32		waiting;		/* entries in its waitlist (4_inventory/line.c) */
	bool		has_hours;		/* opening hours set (4_inventory/hours.c) */
	bool		slotted;		/* reserve_slot has booked it (4_inventory/capacity.c) */
	int64		longest_slot;	/* microseconds of its longest slot booking */
} BookingResource;

/* booking.status */
typedef enum BookingStatus
{
	BOOKING_STATUS_PENDING,
	BOOKING_STATUS_CONFIRMED,
	BOOKING_STATUS_CANCELLED,
	BOOKING_STATUS_EXPIRED,
	BOOKING_STATUS_WAITING
} BookingStatus;

/* a cache of table facts to drop: relid, or InvalidOid for all */
typedef void (*BookingTablesForgetFn) (Oid relid);

extern void BookingTablesInit(void);
extern void BookingTablesOnForget(BookingTablesForgetFn fn);
extern Oid	BookingTableOid(BookingTable table);
extern Oid	BookingTableOidIfKnown(BookingTable table);
extern const char *BookingTableName(BookingTable table);
extern const char *BookingStatusName(BookingStatus status);

#endif							/* BOOKING_TABLES_H */
