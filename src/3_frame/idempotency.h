/*
 * idempotency.h
 *	  Idempotency keys: claim, replay, store and purge (idempotency.c).
 *	  Layer 3, the call frame.
 */
#ifndef BOOKING_IDEMPOTENCY_H
#define BOOKING_IDEMPOTENCY_H

#include "booking.h"

#include "storage/lock.h"

#include "1_ground/result.h"

typedef enum BookingKeyClaim
{
	BOOKING_KEY_OWNED,			/* we hold the key's lock; do the work */
	BOOKING_KEY_REPLAYED,		/* res holds the stored result or a mismatch */
	BOOKING_KEY_BUSY,
	BOOKING_KEY_RETRY
} BookingKeyClaim;

typedef struct BookingKey
{
	int64		home;			/* where the key is stored */
	const char *key;
	const char *request;
	LOCKTAG		tag;			/* the key's advisory lock, held while we own it */
	bool		remote;			/* Citus coordinator: the key's shard is elsewhere */
} BookingKey;

extern int	booking_idempotency_retention_s;
extern void BookingIdempotencyInit(void);
extern BookingKeyClaim BookingClaimKey(BookingKey *key, int timeout_ms, TimestampTz now,
									   BookingResult *res);
extern void BookingFinishKey(BookingKey *key, const BookingResult *res, TimestampTz now);
extern int64 BookingPurgeKeys(int64 home, TimestampTz now, int32 batch);
extern char *BookingRequestString(const char *fn, int nfields, const char *const *fields,
								  const char *metadata);

#endif							/* BOOKING_IDEMPOTENCY_H */
