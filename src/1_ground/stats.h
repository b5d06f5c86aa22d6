/*
 * stats.h
 *	  Calls, times and lock waits per function and code, in shared memory
 *	  (stats.c).  Layer 1, the ground: every layer counts into it.
 */
#ifndef BOOKING_STATS_H
#define BOOKING_STATS_H

#include "booking.h"

#include "portability/instr_time.h"

#include "1_ground/result.h"

typedef struct BookingStatsCall
{
	int			slot;			/* -1: not counted */
	instr_time	start;
} BookingStatsCall;

extern bool booking_track_stats;
extern void BookingStatsInit(void);
extern void BookingStatsBegin(FunctionCallInfo fcinfo, BookingStatsCall *sc);
extern void BookingStatsEnd(BookingStatsCall *sc, BookingCode code);
extern void BookingStatsWaitBegin(void);
extern void BookingStatsWaitEnd(void);

#endif							/* BOOKING_STATS_H */
