/*
 * shardplan.h
 *	  A twin's statement run on its shard's own tables on this node
 *	  (shardplan.c).  Layer 1, the ground.
 */
#ifndef BOOKING_SHARDPLAN_H
#define BOOKING_SHARDPLAN_H

#include "booking.h"

#include "1_ground/spi.h"

extern bool BookingTryOnShard(BookingPlan *plan, int64 home, Datum *values,
							  const char *nulls, bool read_only, long tcount, int *processed);
extern int	BookingExecuteOnShard(BookingPlan *plan, int64 home, Datum *values,
								  const char *nulls, bool read_only, long tcount);

#endif							/* BOOKING_SHARDPLAN_H */
