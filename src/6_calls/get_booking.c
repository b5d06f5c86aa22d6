/*
 * get_booking.c
 *	  booking.get_booking(booking): one booking as a screen shows it (its
 *	  resource, guest, seats or range, status, expiry, creation, metadata and
 *	  group), for a role that has no SELECT on the tables: the function runs
 *	  as the extension's owner.  No row for an unknown id.
 *
 *	  A booking's id tells its home (1_ground/shard.c), so the read is one
 *	  primary-key probe, and on a Citus coordinator one routed query.  It
 *	  reads the statement's snapshot, as a SELECT of the table would.
 *
 *	  Layer 6, the calls.  Takes no locks beyond the read's.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "funcapi.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"

PG_FUNCTION_INFO_V1(booking_get_booking);

#define GET_BOOKING_COLUMNS 10

/* the columns of get_booking's result, in its order */
static BookingPlan get_plan = {
	"SELECT id, resource_id, guest, quantity, during, status, expires_at, created_at, metadata, "
	"group_id FROM booking.bookings WHERE home OPERATOR(pg_catalog.=) $2 "
	"AND id OPERATOR(pg_catalog.=) $1",
	2, {INT8OID, INT8OID}
};

/*
 * get_booking(booking) returns table (id, resource_id, guest, quantity,
 * during, status, expires_at, created_at, metadata, group_id)
 */
Datum
booking_get_booking(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	int64		booking = BookingArgId(fcinfo, 0, "booking");
	Datum		values[2];

	InitMaterializedSRF(fcinfo, 0);
	values[0] = Int64GetDatum(booking);
	values[1] = Int64GetDatum(BookingHome(booking));
	SPI_connect();
	if (BookingExecute(&get_plan, values, NULL, true, 1) == 1)
	{
		Datum		out[GET_BOOKING_COLUMNS];
		bool		nulls[GET_BOOKING_COLUMNS];

		for (int c = 0; c < GET_BOOKING_COLUMNS; c++)
			out[c] = BookingGetDatum(0, c + 1, &nulls[c]);
		/* copies the values into the tuplestore's context */
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
	}
	SPI_finish();
	return (Datum) 0;
}
