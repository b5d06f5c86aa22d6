/*
 * guard.h
 *	  The one internal subtransaction that turns an expected error into an
 *	  outcome (guard.c).  Layer 1, the ground.
 */
#ifndef BOOKING_GUARD_H
#define BOOKING_GUARD_H

#include "booking.h"

typedef enum BookingGuardOutcome
{
	BOOKING_GUARD_DONE,
	BOOKING_GUARD_BUSY,			/* 55P03: lock_timeout or NOWAIT */
	BOOKING_GUARD_RETRY,		/* 40001 or 40P01 */
	BOOKING_GUARD_OVERLAP,		/* 23P01 of bookings_no_overlap */
	BOOKING_GUARD_UNREACHABLE,	/* class 08 (Citus: a node is down); remote guards only */
	BOOKING_GUARD_MOVED			/* Citus's XX000 while a shard moved; remote guards only */
} BookingGuardOutcome;

typedef void (*BookingGuardedFn) (void *arg);
typedef bool (*BookingTryFn) (void *arg);

/*
 * A guard's judge of the errors the guard itself does not know: true with
 * *outcome set when the error is one it expects, false to re-throw it.  The
 * remote guards of 5_scaleout/remote.c pass one; it runs after the
 * subtransaction rolled back.
 */
typedef bool (*BookingGuardClassifyFn) (ErrorData *edata, void *arg,
										BookingGuardOutcome *outcome);

extern void BookingGuardInit(void);
extern BookingGuardOutcome BookingRunGuarded(BookingGuardedFn fn, void *arg);
extern BookingGuardOutcome BookingRunGuardedTry(BookingTryFn fn, void *arg, bool *kept);
extern BookingGuardOutcome BookingRunGuardedClassified(BookingGuardedFn fn, void *arg,
													   BookingGuardClassifyFn classify,
													   void *classify_arg);
extern BookingGuardOutcome BookingRunGuardedTryClassified(BookingTryFn fn, void *arg, bool *kept,
														  BookingGuardClassifyFn classify,
														  void *classify_arg);
extern void BookingNoteSerializableRetry(void);

#endif							/* BOOKING_GUARD_H */
