/*
 * timeout.c
 *	  How long a call may wait for a lock: the booking.lock_timeout GUC (the
 *	  default of every call's lock_timeout argument), PostgreSQL's
 *	  lock_timeout set for the statements of a wait, and what is left of a
 *	  wait whose clock started earlier.
 *
 *	  The order (0.8.0): the call's lock_timeout argument, else
 *	  booking.lock_timeout, each capped by the session's own lock_timeout
 *	  when that is set and shorter.  A client that sets lock_timeout = 50ms
 *	  (or SET LOCAL in a pooled transaction) gets busy after 50 ms, as it
 *	  would from any statement of its own.
 *
 *	  Layer 1, the ground.  Takes no locks.
 */
#include "postgres.h"

#include <limits.h>

#include "storage/proc.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/timeout.h"

int			booking_lock_timeout_ms = 3000;

void
BookingTimeoutInit(void)
{
	DefineCustomIntVariable("booking.lock_timeout",
							"How long a booking call waits for a resource lock before answering busy.",
							"0 means do not wait at all (NOWAIT); there is no wait-forever setting. "
							"The lock_timeout argument of a call overrides it.  It bounds only the "
							"caller's own waits, so every role may set it.",
							&booking_lock_timeout_ms,
							3000, 0, INT_MAX,
							PGC_USERSET,
							GUC_UNIT_MS,
							NULL, NULL, NULL);
}

/*
 * A call's wait of timeout_ms, capped by the session's lock_timeout when that
 * is set (0 there means no limit) and shorter.  Read when a call begins: a
 * wait of the call sets lock_timeout itself, to what is left of this.
 */
int
BookingCapLockTimeout(int timeout_ms)
{
	if (LockTimeout > 0 && LockTimeout < timeout_ms)
		return LockTimeout;
	return timeout_ms;
}

/* The wait of a call that takes no lock_timeout argument: booking.lock_timeout, capped. */
int
BookingLockTimeoutDefault(void)
{
	return BookingCapLockTimeout(booking_lock_timeout_ms);
}

/*
 * Sets lock_timeout for the rest of the call.  PostgreSQL's 0 means "wait
 * forever": callers use NOWAIT or SKIP LOCKED for 0, and anything below 1
 * that still arrives here becomes 1 ms, never an unbounded wait.
 */
int
BookingPushLockTimeout(int timeout_ms)
{
	int			nestlevel = NewGUCNestLevel();
	char		buf[32];

	snprintf(buf, sizeof(buf), "%d", Max(timeout_ms, 1));
	(void) set_config_option("lock_timeout", buf, PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

void
BookingPopLockTimeout(int nestlevel)
{
	AtEOXact_GUC(true, nestlevel);
}

/*
 * What is left of a wait of timeout_ms whose clock starts at the first call
 * (*deadline 0 until then); 0 when nothing is left or no wait is allowed.
 */
int
BookingTimeLeft(int timeout_ms, TimestampTz *deadline)
{
	if (timeout_ms <= 0)
		return 0;
	if (*deadline == 0)
		*deadline = TimestampTzPlusMilliseconds(GetCurrentTimestamp(), timeout_ms);
	return BookingMillisecondsLeft(*deadline);
}

/* Milliseconds until deadline, rounded up; 0 or less once it has passed. */
int
BookingMillisecondsLeft(TimestampTz deadline)
{
	TimestampTz now = GetCurrentTimestamp();
	int64		left_us;

	if (now >= deadline)
		return 0;
	left_us = deadline - now;
	if (left_us / 1000 >= INT_MAX)
		return INT_MAX;
	return (int) ((left_us + 999) / 1000);
}
