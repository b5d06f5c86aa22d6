/*
 * shard.h
 *	  Where rows live: the home of an id, 0 on one server and a shard's
 *	  representative on Citus (shard.c).  Layer 1, the ground.
 */
#ifndef BOOKING_SHARD_H
#define BOOKING_SHARD_H

#include "booking.h"

#include "1_ground/tables.h"

extern void BookingShardInit(void);
extern uint64 BookingShardMapGeneration(void);
extern void BookingAwaitShardMove(int64 home);
extern bool BookingHoldShard(int64 home);
extern int	BookingHeldShard(void);
extern void BookingSetHeldShard(int k);
extern Oid	BookingHeldShardTable(BookingTable table, int64 home);
extern bool BookingShardNode(int64 home, char **nodename, int32 *nodeport);
extern bool BookingDistributed(void);
extern int64 BookingHome(int64 id);
extern int	BookingAllHomes(int64 **homes);
extern int64 BookingNewId(const char *seq, int64 home);
extern Oid	BookingLocalShard(BookingTable table, int64 home);

#endif							/* BOOKING_SHARD_H */
