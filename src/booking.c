/*
 * booking.c
 *	  Module entry point: PG_MODULE_MAGIC and a _PG_init that lets each
 *	  concern define its own GUCs.  No locks are taken here.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "booking.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

void
_PG_init(void)
{
	BookingLockInit();
	BookingTablesInit();
	BookingShardInit();
	BookingCallInit();
	BookingOnceInit();
	BookingIdempotencyInit();
	BookingEventsInit();
	BookingOutboxInit();
	BookingWaitlistInit();
	BookingWorkerInit();
	BookingStatsInit();
	MarkGUCPrefixReserved("booking");
}
