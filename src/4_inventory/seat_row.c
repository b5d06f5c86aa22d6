/*
 * seat_row.c
 *	  Writing the booking row of a seat sale (seat_row.h), once the seats are
 *	  taken or together with taking them.
 *
 *	  On one server the row goes in the same statement that takes the seats
 *	  (a data-modifying CTE feeding an INSERT ... SELECT), so a sale that
 *	  waited for the counter row makes one round of the executor under its
 *	  lock.  Citus cannot route such an INSERT ... SELECT: it runs the SELECT,
 *	  writes its rows to an intermediate result file in a directory it makes
 *	  and removes for the transaction, and inserts from that file; on a
 *	  worker that is file system work on every sale.  So on Citus the seats
 *	  are taken by a statement of their own and the row is inserted from
 *	  VALUES, two statements Citus routes to the shard as they are, unless
 *	  the running twin holds the shard here: then the one statement runs on
 *	  the shard's own tables (1_ground/shardplan.c).
 *
 *	  Layer 4, inventory.  Locks: none of its own; the take statement locks
 *	  what its caller's statement locks.
 */
#include "postgres.h"

#include "booking.h"
#include "1_ground/shard.h"
#include "1_ground/shardplan.h"
#include "1_ground/spi.h"
#include "4_inventory/seat_row.h"

/* [limited][on Citus]: a row on a resource with a guest limit is counted (limit.c) */
static BookingPlan insert_plans[2][2] = {
	{
		{BOOKING_INSERT_SEAT_ROW_VALUES("false", BOOKING_SEAT_ROW_ID),
		BOOKING_SEAT_ROW_PARAMS, {BOOKING_SEAT_ROW_TYPES}},
		{BOOKING_INSERT_SEAT_ROW_VALUES("false", "$8"),
		BOOKING_SEAT_ROW_PARAMS, {BOOKING_SEAT_ROW_TYPES}}
	},
	{
		{BOOKING_INSERT_SEAT_ROW_VALUES("true", BOOKING_SEAT_ROW_ID),
		BOOKING_SEAT_ROW_PARAMS, {BOOKING_SEAT_ROW_TYPES}},
		{BOOKING_INSERT_SEAT_ROW_VALUES("true", "$8"),
		BOOKING_SEAT_ROW_PARAMS, {BOOKING_SEAT_ROW_TYPES}}
	}
};

/* The booking row alone (row: the parameters of seat_row.h); its id. */
int64
BookingSeatRowInsert(const Datum *row, const char *row_nulls, bool limited)
{
	if (BookingExecuteOnShard(&insert_plans[limited ? 1 : 0][BookingDistributed() ? 1 : 0],
							  DatumGetInt64(row[6]), (Datum *) row, row_nulls, false, 1) != 1)
		elog(ERROR, "the booking row was not written");
	return BookingGetInt64(0, 1, NULL);
}

/*
 * Takes seats and writes the row: with combined (which returns the row's id
 * when the seats were taken) on one server and on the shard's own tables;
 * through Citus with take (the same decision, returning a row when the
 * seats were taken), then the row from VALUES.  Both plans take the same parameters, the row's first.  False
 * when the seats were not taken.
 */
bool
BookingSeatTakeWithRow(BookingPlan *combined, BookingPlan *take,
					   const Datum *values, const char *nulls, int64 *booking_id)
{
	int			n;

	/* on one server, or on the shard's own tables here: the one statement ($8, the id, given) */
	if (!BookingDistributed())
		n = BookingExecute(combined, (Datum *) values, nulls, false, 1);
	else if (!BookingTryOnShard(combined, DatumGetInt64(values[6]), (Datum *) values, nulls,
								false, 1, &n))
	{
		/* through Citus: the decision, then the row from VALUES */
		if (BookingExecute(take, (Datum *) values, nulls, false, 1) != 1)
			return false;
		*booking_id = BookingSeatRowInsert(values, nulls, false);
		return true;
	}
	if (n != 1)
		return false;
	*booking_id = BookingGetInt64(0, 1, NULL);
	return true;
}
