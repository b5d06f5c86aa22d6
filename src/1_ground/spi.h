/*
 * spi.h
 *	  Statements prepared once and kept, run through SPI, and their result
 *	  rows (spi.c).  Layer 1, the ground.
 */
#ifndef BOOKING_SPI_H
#define BOOKING_SPI_H

#include "booking.h"

#include "executor/spi.h"
#include "utils/snapshot.h"

typedef struct BookingPlan
{
	const char *sql;
	int			nargs;
	Oid			argtypes[16];
	SPIPlanPtr	plan;
	int			cursor_options; /* e.g. CURSOR_OPT_GENERIC_PLAN; 0 by default */
	bool		by_index;		/* planned with sequential and bitmap scans off */
} BookingPlan;

extern void BookingSpiCustomPlans(bool on);
extern int	BookingExecute(BookingPlan *plan, Datum *values, const char *nulls,
						   bool read_only, long tcount);
extern int	BookingExecuteLatest(BookingPlan *plan, Datum *values, const char *nulls,
								 long tcount);
extern int	BookingExecuteWith(BookingPlan *plan, Datum *values, const char *nulls,
							   Snapshot snapshot, long tcount);
extern int	BookingExecuteCommitted(BookingPlan *plan, Datum *values, const char *nulls,
									long tcount);
extern int64 BookingGetInt64(int row, int col, bool *isnull);
extern int32 BookingGetInt32(int row, int col, bool *isnull);
extern bool BookingGetBool(int row, int col);
extern Datum BookingGetDatum(int row, int col, bool *isnull);

#endif							/* BOOKING_SPI_H */
