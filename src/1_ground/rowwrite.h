/*
 * rowwrite.h
 *	  Writing one row without a statement (rowwrite.c).  Layer 1, the ground.
 */
#ifndef BOOKING_ROWWRITE_H
#define BOOKING_ROWWRITE_H

#include "booking.h"

#include "utils/rel.h"

extern bool BookingRowWritable(Relation rel, const char *own_check);
extern void BookingRowInsert(Relation rel, Datum *values, bool *nulls);

#endif							/* BOOKING_ROWWRITE_H */
