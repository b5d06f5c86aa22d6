/*
 * booking.c
 *	  Module entry point: PG_MODULE_MAGIC and a _PG_init that lets each
 *	  concern define its own GUCs.  No locks are taken here.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "booking.h"

/* 18 names the module and its version (pg_get_loaded_modules()) */
#ifdef PG_MODULE_MAGIC_EXT
PG_MODULE_MAGIC_EXT(.name = "booking", .version = BOOKING_EXTVERSION);
#else
PG_MODULE_MAGIC;
#endif

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
