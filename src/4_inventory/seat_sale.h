/*
 * seat_sale.h
 *	  What every path of reserve_seat shares (seat_sale.c).  Layer 4,
 *	  inventory.
 */
#ifndef BOOKING_SEAT_SALE_H
#define BOOKING_SEAT_SALE_H

#include "booking.h"

#include "utils/jsonb.h"

#include "1_ground/result.h"
#include "2_locks/lock.h"
#include "4_inventory/seat_row.h"

/* how an attempt at the seats ended */
typedef enum BookingSeatOutcome
{
	BOOKING_SEATS_TAKEN,
	BOOKING_SEATS_SHORT,		/* we hold the lock, the seats are not there */
	BOOKING_SEATS_ELSEWHERE,	/* held by another, short, striped or unknown */
	BOOKING_SEATS_BUSY,
	BOOKING_SEATS_RETRY
} BookingSeatOutcome;

typedef struct BookingSeatRequest
{
	int64		resource;
	int64		home;			/* the resource's (1_ground/shard.c) */
	text	   *guest;
	int32		quantity;
	bool		has_hold;
	int64		hold_us;
	int			timeout_ms;
	TimestampTz now;
	TimestampTz expires_at;		/* of the hold */
	Jsonb	   *metadata;		/* the caller's; NULL: none */
	Datum		row[BOOKING_SEAT_ROW_PARAMS];	/* $1..$8 of seat_row.h */
	char		row_nulls[BOOKING_SEAT_ROW_PARAMS];
	int64		booking_id;		/* -1 until a statement wrote the row */
	bool		limited;		/* the resource has a guest limit */
} BookingSeatRequest;

extern void BookingSeatPrepare(BookingSeatRequest *req);
extern bool BookingSeatTakeWaitStatement(void *arg);
extern BookingSeatOutcome BookingSeatOutcomeOf(BookingLockOutcome outcome, bool taken);
extern void BookingSeatSoldOut(BookingResult *res, BookingSeatRequest *req, int32 capacity,
							   int64 taken);
extern bool BookingSeatReclaimAndTake(BookingSeatRequest *req, BookingResult *res);
extern bool BookingSeatAfterTake(BookingSeatRequest *req, BookingSeatOutcome outcome,
								 BookingResult *res);
extern bool BookingSeatLapsedExist(BookingSeatRequest *req);
extern bool BookingSeatTakeByStatements(BookingSeatRequest *req, BookingResult *res);

#endif							/* BOOKING_SEAT_SALE_H */
