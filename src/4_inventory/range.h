/*
 * range.h
 *	  Range inventory: a stay of one exclusive resource, its pre-check and
 *	  its insert under the exclusion constraint (range.c).  Layer 4,
 *	  inventory.
 */
#ifndef BOOKING_RANGE_H
#define BOOKING_RANGE_H

#include "booking.h"

#include "storage/itemptr.h"
#include "utils/array.h"
#include "utils/jsonb.h"

#include "1_ground/result.h"
#include "1_ground/tables.h"
#include "4_inventory/slots.h"

/* the rows that block a newcomer whose footprint is fp and validity is $3 */
#define BOOKING_BLOCKING_FOOTPRINT(alias, fp) \
	alias ".blocked OPERATOR(pg_catalog.&&) " fp " " \
	"AND " alias ".validity OPERATOR(pg_catalog.&&) $3 " \
	"AND " alias ".blocked IS NOT NULL " \
	"AND " alias ".status IN ('pending'::booking.status, 'confirmed'::booking.status)"
/* $2 the footprint, computed in C from the resource's buffers */
#define BOOKING_BLOCKING(alias) BOOKING_BLOCKING_FOOTPRINT(alias, "$2")
/* $2 the range, widened in SQL by the buffers of resource r */
#define BOOKING_FOOTPRINT_OF(r) \
	BOOKING_SQL_WIDENED("pg_catalog.lower($2)", "pg_catalog.upper($2)", r ".buffer_before", r ".buffer_after")

typedef struct BookingStayRequest
{
	int64		resource;		/* the resource, or the pool for _any */
	int64		home;			/* its home (1_ground/shard.c); a group's lowest resource's */
	ArrayType  *resources;		/* reserve_stays: sorted ids */
	int			nresources;
	Datum	   *ids;			/* their elements, on Citus */
	text	   *guest;
	TimestampTz lower;
	TimestampTz upper;
	bool		has_hold;
	int64		hold_us;
	int			timeout_ms;
	TimestampTz now;
	Datum		during;			/* normalized [lower, upper) */
	Datum		validity;		/* the newcomer's [now, expiry) */
	TimestampTz expires_at;
	Jsonb	   *metadata;		/* the caller's; NULL: none */
	char	   *metadata_text;	/* its text, for a key's fingerprint */
} BookingStayRequest;

extern void BookingStayPrepare(BookingStayRequest *req);
extern void BookingStayRowValues(const BookingStayRequest *req, Datum *values, char *nulls);
extern int64 BookingStayInsert(BookingStayRequest *req, const BookingResource *r);
extern void BookingStaySetRefusal(BookingResult *res, BookingCode code, int64 resource,
								  BookingStayRequest *req);
extern void BookingStaySetCreated(BookingResult *res, int64 booking_id, const char *what,
								  BookingStayRequest *req);
extern bool BookingStayPrecheck(BookingStayRequest *req, int64 resource, BookingResource *r,
								ItemPointer tid, BookingResult *res);

#endif							/* BOOKING_RANGE_H */
