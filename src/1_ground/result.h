/*
 * result.h
 *	  The stable result codes of the API and the booking.result a call
 *	  returns (result.c).  Layer 1, the ground.
 */
#ifndef BOOKING_RESULT_H
#define BOOKING_RESULT_H

#include "booking.h"

#define BOOKING_MESSAGE_LEN 512

typedef enum BookingCode
{
	BOOKING_CREATED,			/* ok, 201 */
	BOOKING_DONE,				/* ok, 200 */
	BOOKING_SOLD_OUT,
	BOOKING_BUSY,
	BOOKING_NOT_FOUND,
	BOOKING_INVALID_STATE,
	BOOKING_VERSION_CONFLICT,
	BOOKING_RETRY,
	BOOKING_CAPACITY_BELOW_TAKEN,
	BOOKING_UNAVAILABLE,
	BOOKING_JUST_TAKEN,
	BOOKING_HOLD_EXPIRED,
	BOOKING_IDEMPOTENCY_MISMATCH,
	BOOKING_GUEST_LIMIT,
	BOOKING_WAITLISTED,			/* ok, 202 */
	BOOKING_SEATS_AVAILABLE,
	BOOKING_ALREADY_WAITING,
	BOOKING_CLOSED				/* 0.9.0: outside opening hours, 409 */
} BookingCode;

/* how many codes there are: the last one above, plus one (result.c checks it) */
#define BOOKING_NUM_CODES ((int) BOOKING_CLOSED + 1)

typedef struct BookingResult
{
	BookingCode code;
	bool		has_booking_id;
	int64		booking_id;
	bool		replayed;
	char		message[BOOKING_MESSAGE_LEN];
} BookingResult;

extern const char *BookingCodeName(BookingCode code);
extern int	BookingCodeHttpStatus(BookingCode code);
extern bool BookingCodeIsOk(BookingCode code);
extern bool BookingCodeFromName(const char *name, BookingCode *code);
extern void BookingSetResult(BookingResult *res, BookingCode code, int64 booking_id,
							 const char *fmt,...) pg_attribute_printf(4, 5);
extern Datum BookingResultDatum(FunctionCallInfo fcinfo, const BookingResult *res);

#endif							/* BOOKING_RESULT_H */
