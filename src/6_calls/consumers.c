/*
 * consumers.c
 *	  The outbox's consumers: booking.add_consumer and drop_consumer, and
 *	  the argument checks the relays' calls share (claims.c).
 *
 *	  Registration and numbering: drop_consumer takes every home's
 *	  sequencer row (waiting, 3_frame/numbering.c), so no numbering is in
 *	  progress when it deletes the consumer's deliveries, and none can add
 *	  one after it.  add_consumer waits, as CREATE INDEX CONCURRENTLY does,
 *	  only for the booking transactions that were running when it
 *	  registered (3_frame/events.c reads the registration with a dirty
 *	  snapshot).
 *
 *	  drop_consumer runs at READ COMMITTED only, as the relays' calls do
 *	  (claims.c): each of its statements must see what the others committed.
 *
 *	  Layer 6, the calls.  Locks: add_consumer waits for the lockers of the
 *	  booking tables that were there when it registered; drop_consumer holds
 *	  every home's sequencer to its commit.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"

#include "booking.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/tables.h"
#include "3_frame/events.h"
#include "3_frame/numbering.h"
#include "6_calls/consumers.h"

PG_FUNCTION_INFO_V1(booking_add_consumer);
PG_FUNCTION_INFO_V1(booking_drop_consumer);

#define MAX_CONSUMER_BYTES 200

static BookingPlan add_plan = {
	"INSERT INTO booking.consumers (name, registered_at) VALUES ($1, pg_catalog.clock_timestamp()) "
	"ON CONFLICT (name) DO NOTHING RETURNING 1",
	1, {TEXTOID}
};

static BookingPlan drop_plan = {
	"DELETE FROM booking.consumers WHERE name OPERATOR(pg_catalog.=) $1 RETURNING 1",
	1, {TEXTOID}
};

static BookingPlan drop_deliveries_plan = {
	"DELETE FROM booking.deliveries WHERE home OPERATOR(pg_catalog.=) $2 "
	"AND consumer OPERATOR(pg_catalog.=) $1",
	2, {TEXTOID, INT8OID}
};

static BookingPlan consumer_exists_plan = {
	"SELECT 1 FROM booking.consumers WHERE name OPERATOR(pg_catalog.=) $1",
	1, {TEXTOID}
};

static void RegistrationXactCallback(XactEvent event, void *arg);
static void RegistrationSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
										SubTransactionId parentSubid, void *arg);

void
BookingConsumersInit(void)
{
	RegisterXactCallback(RegistrationXactCallback, NULL);
	RegisterSubXactCallback(RegistrationSubXactCallback, NULL);
}

text *
BookingArgConsumer(FunctionCallInfo fcinfo, int argno, const char *name)
{
	text	   *t;
	int			len;

	if (PG_ARGISNULL(argno))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("%s must not be null", name)));
	t = PG_GETARG_TEXT_PP(argno);
	len = VARSIZE_ANY_EXHDR(t);
	if (len < 1 || len > MAX_CONSUMER_BYTES)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("%s must be 1 to %d bytes long", name, MAX_CONSUMER_BYTES),
				 errdetail("The %s given is %d bytes long.", name, len)));
	return t;
}

void
BookingRequireConsumer(text *consumer)
{
	Datum		values[1] = {PointerGetDatum(consumer)};

	if (BookingExecute(&consumer_exists_plan, values, NULL, true, 1) == 0)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("consumer \"%s\" is not registered", text_to_cstring(consumer)),
				 errhint("Register it with booking.add_consumer first.")));
}

/*
 * A claim, an acknowledgement or a drop must see what other relays
 * committed meanwhile, in every statement; under a snapshot isolation level
 * it would number and lease on a stale snapshot and fail with a raw
 * serialization error for another relay's work.
 */
void
BookingRequireReadCommitted(const char *fn)
{
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("booking.%s runs at READ COMMITTED only", fn),
				 errdetail("This transaction is at %s.",
						   IsolationIsSerializable() ? "SERIALIZABLE" : "REPEATABLE READ"),
				 errhint("Call it in a transaction of its own, or begin it with BEGIN ISOLATION LEVEL READ COMMITTED.")));
}

/* The consumers' relcache entry: every backend reads the list again. */
static void
InvalidateConsumers(void)
{
	CacheInvalidateRelcacheByRelid(get_relname_relid("consumers", get_namespace_oid("booking", false)));
}

/* Deletes the deliveries of consumer name in every home, on the latest state. */
static void
DropDeliveries(text *name)
{
	Datum		values[2] = {PointerGetDatum(name), (Datum) 0};
	int64	   *homes;
	int			nhomes = BookingAllHomes(&homes);

	for (int i = 0; i < nhomes; i++)
	{
		values[1] = Int64GetDatum(homes[i]);
		(void) BookingExecute(&drop_deliveries_plan, values, NULL, false, 0);
	}
}

/* add_consumer's registration is in progress in this transaction */
static bool registration_open = false;

/*
 * A registration that rolls back: the other backends believe, from their
 * dirty read, that a consumer exists; the invalidation sent at once makes
 * them read again (a commit sends the transactional one).
 */
static void
RegistrationXactCallback(XactEvent event, void *arg)
{
	if (!registration_open)
		return;
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT)
		BookingEventsInvalidateNow();
	if (event == XACT_EVENT_ABORT || event == XACT_EVENT_PARALLEL_ABORT ||
		event == XACT_EVENT_COMMIT || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PREPARE)
		registration_open = false;
}

static void
RegistrationSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
							SubTransactionId parentSubid, void *arg)
{
	if (registration_open && event == SUBXACT_EVENT_ABORT_SUB)
		BookingEventsInvalidateNow();
}

/*
 * Waits for the booking transactions that were running when this
 * registration became visible to them (they hold their table locks from
 * their first call): they may have decided that no one listens.  New ones
 * are not held back, as CREATE INDEX CONCURRENTLY does not hold back new
 * writers: they read the dirty registration at their table locks.
 */
static void
WaitForRunningBookings(void)
{
	LOCKTAG    *bookings = palloc(sizeof(LOCKTAG));
	LOCKTAG    *resources = palloc(sizeof(LOCKTAG));

	SET_LOCKTAG_RELATION(*bookings, MyDatabaseId, BookingTableOid(BOOKING_TABLE_BOOKINGS));
	SET_LOCKTAG_RELATION(*resources, MyDatabaseId, BookingTableOid(BOOKING_TABLE_RESOURCES));
	WaitForLockersMultiple(list_make2(bookings, resources), ShareLock, false);
}

/*
 * add_consumer(name): true when added, false when it existed.  It gets every
 * event numbered from now on, which includes every event that commits
 * after this call does.
 */
Datum
booking_add_consumer(PG_FUNCTION_ARGS)
{
	text	   *name = BookingArgConsumer(fcinfo, 0, "name");
	Datum		values[1] = {PointerGetDatum(name)};
	bool		added;

	SPI_connect();
	added = BookingExecute(&add_plan, values, NULL, false, 1) == 1;
	if (added)
	{
		/* deliveries a consumer of this name left behind are not this one's */
		DropDeliveries(name);
		/*
		 * Events are written only while a consumer exists (events.c): the
		 * row is there for dirty reads; make every backend read again now,
		 * then wait for the transactions that decided before.
		 */
		if (!BookingDistributed())
		{
			registration_open = true;
			BookingEventsInvalidateNow();
			WaitForRunningBookings();
		}
	}
	InvalidateConsumers();
	SPI_finish();
	PG_RETURN_BOOL(added);
}

/* drop_consumer(name): true when it existed; its deliveries go with it. */
Datum
booking_drop_consumer(PG_FUNCTION_ARGS)
{
	text	   *name = BookingArgConsumer(fcinfo, 0, "name");
	Datum		values[1] = {PointerGetDatum(name)};
	bool		dropped;
	int64	   *homes;
	int			nhomes;

	BookingRequireReadCommitted("drop_consumer");
	SPI_connect();
	dropped = BookingExecute(&drop_plan, values, NULL, false, 1) == 1;
	InvalidateConsumers();
	/*
	 * A numbering in progress read the consumers before this delete and may
	 * still give the consumer deliveries: wait for it, and keep every other
	 * one out until this commits (they skip numbering meanwhile), then
	 * delete what the consumer had.  Each statement here sees what the
	 * numbering we waited for committed.
	 */
	if (dropped)
	{
		nhomes = BookingAllHomes(&homes);
		for (int i = 0; i < nhomes; i++)
			BookingHoldSequencer(homes[i]);
		DropDeliveries(name);
	}
	SPI_finish();
	PG_RETURN_BOOL(dropped);
}
