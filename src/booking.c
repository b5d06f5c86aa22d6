/*
 * booking.c
 *	  Module entry point: PG_MODULE_MAGIC and a _PG_init that lets each
 *	  concern define its own GUCs, hooks and callbacks.  It sits above every
 *	  layer (docs/layout.md), the one file that may include any of them.
 *	  No locks are taken here.
 */
#include "postgres.h"

#include "utils/guc.h"

#include "booking.h"
#include "1_ground/guard.h"
#include "1_ground/shard.h"
#include "1_ground/stats.h"
#include "1_ground/tables.h"
#include "1_ground/timeout.h"
#include "3_frame/events.h"
#include "3_frame/idempotency.h"
#include "3_frame/news.h"
#include "3_frame/numbering.h"
#include "3_frame/once.h"
#include "4_inventory/line.h"
#include "5_scaleout/direct.h"
#include "6_calls/consumers.h"
#include "7_worker/worker.h"

/* 18 names the module and its version (pg_get_loaded_modules()) */
#ifdef PG_MODULE_MAGIC_EXT
PG_MODULE_MAGIC_EXT(.name = "booking", .version = BOOKING_EXTVERSION);
#else
PG_MODULE_MAGIC;
#endif

void		_PG_init(void);

/*
 * The order of the callbacks registered here is the order of 0.7.0's:
 * PostgreSQL runs transaction callbacks newest first.
 */
void
_PG_init(void)
{
	BookingTimeoutInit();
	BookingTablesInit();
	BookingShardInit();
	BookingGuardInit();
	BookingOnceInit();
	BookingIdempotencyInit();
	BookingEventsInit();
	BookingNewsInit();
	BookingNumberingInit();
	BookingConsumersInit();
	BookingLineInit();
	BookingWorkerInit();
	BookingStatsInit();
	BookingDirectInit();
	MarkGUCPrefixReserved("booking");
}
