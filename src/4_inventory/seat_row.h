/*
 * seat_row.h
 *	  The booking row a seat sale writes, as SQL text shared by the paths
 *	  that take seats (seat_sale.c, seat_take.c, stripes.c,
 *	  6_calls/passes.c), and the two ways to write it (seat_row.c).
 *	  Layer 4, inventory.
 *
 *	  Every statement that takes seats and writes that row in one go numbers
 *	  its parameters alike: $1 the resource, $2 the quantity, $3 the guest,
 *	  $4 the hold's expiry (NULL: none), $5 the time of the call, $6 the
 *	  validity range, $7 the resource's home, $8 the booking's id (NULL: the
 *	  next of the sequence; on Citus one drawn to land in the home's shard),
 *	  $9 the caller's metadata (NULL: none).
 *	  "from" names a CTE that yields one row when the seats were taken, none
 *	  when they were not (or a one-row subquery, to write the row alone).
 */
#ifndef BOOKING_SEAT_ROW_H
#define BOOKING_SEAT_ROW_H

#include "booking.h"

#include "catalog/pg_type.h"

#define BOOKING_SEAT_ROW_PARAMS 9
#define BOOKING_SEAT_ROW_TYPES \
	INT8OID, INT4OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID, INT8OID, INT8OID, JSONBOID
#define BOOKING_INSERT_SEAT_ROW_AS(limited, from) \
	"INSERT INTO booking.bookings " \
	"(home, id, resource_id, guest, quantity, status, expires_at, created_at, validity, limited, metadata) " \
	"SELECT $7, COALESCE($8, pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass)), " \
	"$1, $3, $2, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status " \
	"ELSE 'pending'::booking.status END, $4, $5, $6, " limited ", $9 FROM " from " RETURNING id"
#define BOOKING_INSERT_SEAT_ROW(from) BOOKING_INSERT_SEAT_ROW_AS("false", from)

/*
 * The same row from VALUES: Citus routes it to the shard as it is.  id is
 * the id's expression: on Citus "$8" alone, since Citus evaluates every
 * nextval() of a statement before it sends it, also one a COALESCE skips.
 */
#define BOOKING_SEAT_ROW_ID "COALESCE($8, pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass))"
#define BOOKING_INSERT_SEAT_ROW_VALUES(limited, id) \
	"INSERT INTO booking.bookings " \
	"(home, id, resource_id, guest, quantity, status, expires_at, created_at, validity, limited, metadata) " \
	"VALUES ($7, " id ", " \
	"$1, $3, $2, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status " \
	"ELSE 'pending'::booking.status END, $4, $5, $6, " limited ", $9) RETURNING id"

struct BookingPlan;

extern int64 BookingSeatRowInsert(const Datum *row, const char *row_nulls, bool limited);
extern bool BookingSeatTakeWithRow(struct BookingPlan *combined, struct BookingPlan *take,
								   const Datum *values, const char *nulls, int64 *booking_id);

#endif							/* BOOKING_SEAT_ROW_H */
