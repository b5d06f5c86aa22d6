/*
 * outbox.c
 *	  Reading the outbox: booking.add_consumer, drop_consumer, claim_events
 *	  and ack_events, the numbering of committed events, and the purge of
 *	  old events.
 *
 *	  Event rows are written unnumbered (events.c).  Numbering takes the
 *	  rows that have committed since, home by home: under the home's
 *	  sequencer row lock it gives each resource's new rows the next numbers
 *	  of that resource (event_heads), and one delivery row per registered
 *	  consumer.  A row that commits late, after rows with higher ids were
 *	  delivered, is simply numbered later: nothing is read by position, so
 *	  nothing can be skipped.  Whoever finds the sequencer row locked skips
 *	  numbering (another one is doing it) and never waits.
 *
 *	  Who numbers: a claim made in a transaction of its own (its locks end
 *	  with its statement); and, on one server where the expiry worker serves
 *	  the database, the worker, in transactions of its own, when a commit
 *	  wrote events or a claim found some unnumbered.  A claim made inside a
 *	  larger transaction then numbers nothing, so it holds no numbering lock
 *	  while its transaction stays open, and the other relays of its consumer
 *	  get the other events at once.  Without the worker (or on Citus) every
 *	  claim numbers, in the caller's transaction.
 *
 *	  Then a claim leases up to batch of the consumer's deliveries that are
 *	  not acknowledged and not leased (or whose lease lapsed), FOR UPDATE
 *	  SKIP LOCKED, under a new lease token: concurrent relays get disjoint
 *	  batches.  ack_events acknowledges only deliveries still leased under
 *	  the token given, so a relay whose lease lapsed and was claimed again
 *	  cannot acknowledge what another relay now holds (fencing).  Claims,
 *	  acknowledgements and drop_consumer run at READ COMMITTED only: each of
 *	  their statements must see what other relays committed meanwhile.
 *
 *	  Registration and numbering: drop_consumer takes every home's
 *	  sequencer row (waiting), so no numbering is in progress when it
 *	  deletes the consumer's deliveries, and none can add one after it.
 *	  add_consumer waits, as CREATE INDEX CONCURRENTLY does, only for the
 *	  booking transactions that were running when it registered (events.c).
 *
 *	  On Citus every statement here names one home and so runs on the node
 *	  of that shard; the coordinator visits the homes that have work.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "catalog/namespace.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "booking.h"

PG_FUNCTION_INFO_V1(booking_add_consumer);
PG_FUNCTION_INFO_V1(booking_drop_consumer);
PG_FUNCTION_INFO_V1(booking_claim_events);
PG_FUNCTION_INFO_V1(booking_ack_events);

#define MAX_CONSUMER_BYTES 200
/* advisory lock space (field 4) of a home's first numbering; see idempotency.c */
#define BOOKING_SEQUENCER_LOCK_SPACE 5
#define MAX_BATCH 10000

int			booking_event_retention_s = 86400;

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
static BookingPlan consumer_names_plan = {
	"SELECT pg_catalog.array_agg(name ORDER BY name) FROM booking.consumers", 0, {0}
};
static BookingPlan make_sequencer_plan = {
	"INSERT INTO booking.event_heads (home, resource_id, last_seq) VALUES ($1, 0, 0) "
	"ON CONFLICT (home, resource_id) DO NOTHING",
	1, {INT8OID}
};
/* drop_consumer waits for the numbering in progress */
static BookingPlan wait_sequencer_plan = {
	"SELECT 1 FROM booking.event_heads WHERE home OPERATOR(pg_catalog.=) $1 "
	"AND resource_id OPERATOR(pg_catalog.=) 0 FOR UPDATE",
	1, {INT8OID}
};
/* committed rows that wait for a number (the latest snapshot) */
static BookingPlan unnumbered_plan = {
	"SELECT EXISTS (SELECT 1 FROM booking.events WHERE home OPERATOR(pg_catalog.=) $1 AND seq IS NULL)",
	1, {INT8OID}
};
static BookingPlan lock_sequencer_plan = {
	"SELECT 1 FROM booking.event_heads WHERE home OPERATOR(pg_catalog.=) $1 "
	"AND resource_id OPERATOR(pg_catalog.=) 0 FOR UPDATE SKIP LOCKED",
	1, {INT8OID}
};
/* the committed unnumbered rows, numbered per resource after its head */
static BookingPlan number_plan = {
	"WITH fresh AS (SELECT id, resource_id, pg_catalog.row_number() OVER "
	"(PARTITION BY resource_id ORDER BY id) AS n FROM (SELECT id, resource_id FROM booking.events "
	"WHERE home OPERATOR(pg_catalog.=) $1 AND seq IS NULL ORDER BY id LIMIT $2) AS f), "
	"heads AS (SELECT r.resource_id, COALESCE(h.last_seq, 0) AS last_seq "
	"FROM (SELECT DISTINCT resource_id FROM fresh) AS r LEFT JOIN booking.event_heads h "
	"ON h.home OPERATOR(pg_catalog.=) $1 AND h.resource_id OPERATOR(pg_catalog.=) r.resource_id) "
	"UPDATE booking.events e SET seq = h.last_seq OPERATOR(pg_catalog.+) f.n "
	"FROM fresh f JOIN heads h ON h.resource_id OPERATOR(pg_catalog.=) f.resource_id "
	"WHERE e.home OPERATOR(pg_catalog.=) $1 AND e.id OPERATOR(pg_catalog.=) f.id "
	"RETURNING e.id, e.resource_id, e.seq",
	2, {INT8OID, INT4OID}
};
static BookingPlan set_heads_plan = {
	"INSERT INTO booking.event_heads (home, resource_id, last_seq) "
	"SELECT $1, h.r, h.s FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3)) AS h(r, s) "
	"ON CONFLICT (home, resource_id) DO UPDATE SET last_seq = EXCLUDED.last_seq",
	3, {INT8OID, INT8ARRAYOID, INT8ARRAYOID}
};
static BookingPlan deliver_plan = {
	"INSERT INTO booking.deliveries (home, consumer, event_id) "
	"SELECT $1, c.name, e.id FROM pg_catalog.unnest($2) AS c(name), pg_catalog.unnest($3) AS e(id) "
	"ON CONFLICT DO NOTHING",
	3, {INT8OID, TEXTARRAYOID, INT8ARRAYOID}
};
/* claim_events' columns: the statement's, with the lease token second */
#define CLAIM_COLUMNS 10
static BookingPlan claim_plan = {
	"WITH picked AS (SELECT event_id FROM booking.deliveries "
	"WHERE home OPERATOR(pg_catalog.=) $1 AND consumer OPERATOR(pg_catalog.=) $2 AND acked_at IS NULL "
	"AND (lease_until IS NULL OR lease_until OPERATOR(pg_catalog.<=) $3) "
	"ORDER BY event_id LIMIT $4 FOR UPDATE SKIP LOCKED), "
	"leased AS (UPDATE booking.deliveries d SET lease_token = $5, lease_until = $6, "
	"attempts = d.attempts OPERATOR(pg_catalog.+) 1 FROM picked p "
	"WHERE d.home OPERATOR(pg_catalog.=) $1 AND d.consumer OPERATOR(pg_catalog.=) $2 "
	"AND d.event_id OPERATOR(pg_catalog.=) p.event_id RETURNING d.event_id, d.attempts) "
	"SELECT e.id, e.resource_id, e.seq, e.booking_id, e.guest, e.kind, e.payload, e.created_at, l.attempts "
	"FROM leased l JOIN booking.events e ON e.home OPERATOR(pg_catalog.=) $1 "
	"AND e.id OPERATOR(pg_catalog.=) l.event_id ORDER BY e.resource_id, e.seq",
	6, {INT8OID, TEXTOID, TIMESTAMPTZOID, INT4OID, INT8OID, TIMESTAMPTZOID}
};
static BookingPlan ack_plan = {
	"UPDATE booking.deliveries SET acked_at = $4, lease_until = NULL "
	"WHERE home OPERATOR(pg_catalog.=) $1 AND consumer OPERATOR(pg_catalog.=) $2 "
	"AND event_id OPERATOR(pg_catalog.=) ANY ($5) AND acked_at IS NULL "
	"AND lease_token OPERATOR(pg_catalog.=) $3",
	5, {INT8OID, TEXTOID, INT8OID, TIMESTAMPTZOID, INT8ARRAYOID}
};
static BookingPlan token_plan = {
	"SELECT pg_catalog.nextval('booking.lease_token_seq'::pg_catalog.regclass)", 0, {0}
};
/* Citus: the homes with rows to number or deliveries of the consumer open */
static BookingPlan busy_homes_plan = {
	"SELECT DISTINCT home FROM booking.events WHERE seq IS NULL", 0, {0}
};
static BookingPlan open_homes_plan = {
	"SELECT DISTINCT home FROM booking.deliveries WHERE consumer OPERATOR(pg_catalog.=) $1 "
	"AND acked_at IS NULL",
	1, {TEXTOID}
};
/*
 * Old events no one still needs: every delivery of a registered consumer
 * acknowledged, and numbered (or unnumbered while no consumer exists, so
 * none will ever be).  A delivery of a consumer that is gone (0.6.0 could
 * leave some behind) keeps nothing.
 */
static BookingPlan purge_plan = {
	"WITH old AS (SELECT e.id FROM booking.events e WHERE e.home OPERATOR(pg_catalog.=) $1 "
	"AND e.created_at OPERATOR(pg_catalog.<) $2 "
	"AND (e.seq IS NOT NULL OR NOT EXISTS (SELECT 1 FROM booking.consumers)) "
	"AND NOT EXISTS (SELECT 1 FROM booking.deliveries d WHERE d.home OPERATOR(pg_catalog.=) $1 "
	"AND d.event_id OPERATOR(pg_catalog.=) e.id AND d.acked_at IS NULL "
	"AND d.consumer IN (SELECT c.name FROM booking.consumers c)) LIMIT $3), "
	"gone AS (DELETE FROM booking.deliveries d USING old "
	"WHERE d.home OPERATOR(pg_catalog.=) $1 AND d.event_id OPERATOR(pg_catalog.=) old.id) "
	"DELETE FROM booking.events e USING old WHERE e.home OPERATOR(pg_catalog.=) $1 "
	"AND e.id OPERATOR(pg_catalog.=) old.id",
	3, {INT8OID, TIMESTAMPTZOID, INT4OID}
};

static bool MakeSequencer(int64 home);
static void HoldSequencer(int64 home);
static void RegistrationXactCallback(XactEvent event, void *arg);
static void RegistrationSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
										SubTransactionId parentSubid, void *arg);

void
BookingOutboxInit(void)
{
	DefineCustomIntVariable("booking.event_retention",
							"How long an event every consumer acknowledged is kept before hold_expire purges it.",
							"Only superusers can change it.",
							&booking_event_retention_s,
							86400, 1, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);
	RegisterXactCallback(RegistrationXactCallback, NULL);
	RegisterSubXactCallback(RegistrationSubXactCallback, NULL);
}

static text *
ArgConsumer(FunctionCallInfo fcinfo, int argno, const char *name)
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

static void
RequireConsumer(text *consumer)
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
static void
RequireReadCommitted(const char *fn)
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
	text	   *name = ArgConsumer(fcinfo, 0, "name");
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
	text	   *name = ArgConsumer(fcinfo, 0, "name");
	Datum		values[1] = {PointerGetDatum(name)};
	bool		dropped;
	int64	   *homes;
	int			nhomes;

	RequireReadCommitted("drop_consumer");
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
			HoldSequencer(homes[i]);
		DropDeliveries(name);
	}
	SPI_finish();
	PG_RETURN_BOOL(dropped);
}

/*
 * The advisory lock under which a home's sequencer row is made (see
 * MakeSequencer): false when wait is false and another transaction holds it.
 */
static bool
LockSequencerMaking(int64 home, bool wait)
{
	LOCKTAG		tag;

	SET_LOCKTAG_ADVISORY(tag, MyDatabaseId, (uint32) ((uint64) home >> 32), (uint32) home,
						 BOOKING_SEQUENCER_LOCK_SPACE);
	return LockAcquire(&tag, ExclusiveLock, false, !wait) != LOCKACQUIRE_NOT_AVAIL;
}

/*
 * Makes the home's sequencer row if it is missing.  An insert would wait
 * for another transaction's uncommitted insert of the same row, so the row
 * is made only under an advisory lock of its own: false when another
 * transaction holds it (a first claim, or a drop_consumer in progress).
 */
static bool
MakeSequencer(int64 home)
{
	Datum		values[1] = {Int64GetDatum(home)};

	if (!LockSequencerMaking(home, false))
		return false;
	(void) BookingExecute(&make_sequencer_plan, values, NULL, false, 0);
	return true;
}

/*
 * Keeps every numbering of home out until this transaction ends, after
 * waiting for the one in progress: the sequencer row if there is one, and
 * the lock under which a first claim makes it (so no claim makes it
 * meanwhile).
 */
static void
HoldSequencer(int64 home)
{
	Datum		values[1] = {Int64GetDatum(home)};

	(void) LockSequencerMaking(home, true);
	(void) BookingExecute(&wait_sequencer_plan, values, NULL, false, 1);
}

/*
 * Numbers the committed unnumbered events of home, unless another relay is;
 * returns how many.
 */
static int
NumberEvents(int64 home, int32 batch)
{
	Datum		values[3];
	Datum		consumers;
	bool		isnull;
	int			n;
	int64	   *ids;
	Datum	   *resources;
	Datum	   *seqs;
	int			nheads = 0;

	values[0] = Int64GetDatum(home);
	if (BookingExecute(&lock_sequencer_plan, values, NULL, false, 1) == 0)
	{
		/* locked by another numbering, or not made yet: this claim makes it */
		if (!MakeSequencer(home) ||
			BookingExecute(&lock_sequencer_plan, values, NULL, false, 1) == 0)
			return 0;
	}
	values[1] = Int32GetDatum(batch);
	n = BookingExecute(&number_plan, values, NULL, false, 0);
	if (n == 0)
		return 0;
	ids = palloc(sizeof(int64) * n);
	resources = palloc(sizeof(Datum) * n);
	seqs = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
	{
		int64		resource = BookingGetInt64(i, 2, NULL);
		int64		seq = BookingGetInt64(i, 3, NULL);
		int			j;

		ids[i] = BookingGetInt64(i, 1, NULL);
		for (j = 0; j < nheads; j++)
			if (DatumGetInt64(resources[j]) == resource)
				break;
		if (j == nheads)
		{
			resources[nheads] = Int64GetDatum(resource);
			seqs[nheads++] = Int64GetDatum(seq);
		}
		else if (seq > DatumGetInt64(seqs[j]))
			seqs[j] = Int64GetDatum(seq);
	}
	values[1] = PointerGetDatum(construct_array(resources, nheads, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[2] = PointerGetDatum(construct_array(seqs, nheads, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	(void) BookingExecute(&set_heads_plan, values, NULL, false, 0);

	/*
	 * The consumers, read after the rows were numbered: a consumer whose
	 * registration committed before one of these rows did is seen here.
	 */
	(void) BookingExecute(&consumer_names_plan, NULL, NULL, false, 1);
	consumers = BookingGetDatum(0, 1, &isnull);
	if (isnull)
		return n;
	for (int i = 0; i < n; i++)
		resources[i] = Int64GetDatum(ids[i]);
	values[1] = consumers;
	values[2] = PointerGetDatum(construct_array(resources, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	(void) BookingExecute(&deliver_plan, values, NULL, false, 0);
	return n;
}

/*
 * The expiry worker's numbering, in its own transaction (one server):
 * every committed event, batch at a time; returns how many it numbered.
 */
int64
BookingNumberAll(int32 batch)
{
	int64		total = 0;
	int			n;

	if (BookingDistributed())
		return 0;
	SPI_connect();
	do
	{
		n = NumberEvents(0, batch);
		total += n;
		CHECK_FOR_INTERRUPTS();
	} while (n == batch);
	SPI_finish();
	return total;
}

/*
 * Whether a claim numbers: made in a transaction of its own (its locks end
 * with its statement), or with nobody else to do it.  A claim inside a
 * larger transaction leaves it to the expiry worker, when the worker serves
 * this database, so that it holds no numbering lock while it stays open.
 */
static bool
ClaimNumbers(void)
{
	return BookingDistributed() || !IsTransactionBlock() || !BookingEventsWorkerNumbers();
}

/* The homes a claim visits: on one server home 0; on Citus those with work. */
static int
ClaimHomes(text *consumer, int64 **homes)
{
	Datum		values[1] = {PointerGetDatum(consumer)};
	int			n1;
	int			n2;
	int			n = 0;

	if (!BookingDistributed())
		return BookingAllHomes(homes);
	n1 = BookingExecute(&busy_homes_plan, NULL, NULL, true, 0);
	*homes = palloc(sizeof(int64) * (n1 + 1));
	for (int i = 0; i < n1; i++)
		(*homes)[n++] = BookingGetInt64(i, 1, NULL);
	n2 = BookingExecute(&open_homes_plan, values, NULL, true, 0);
	*homes = repalloc(*homes, sizeof(int64) * (n1 + n2 + 1));
	for (int i = 0; i < n2; i++)
	{
		int64		home = BookingGetInt64(i, 1, NULL);
		bool		seen = false;

		for (int j = 0; j < n1; j++)
			seen |= (*homes)[j] == home;
		if (!seen)
			(*homes)[n++] = home;
	}
	return n;
}

/* one home's part of a claim */
typedef struct ClaimArgs
{
	int64		home;
	text	   *consumer;
	TimestampTz now;
	int32		left;
	int64		token;
	TimestampTz until;
	bool		number;			/* number first (ClaimNumbers) */
	int			n;				/* rows leased; SPI_tuptable holds them */
} ClaimArgs;

static void
ClaimHome(void *arg)
{
	ClaimArgs  *ca = (ClaimArgs *) arg;
	Datum		values[6];

	if (ca->number)
		(void) NumberEvents(ca->home, MAX_BATCH);
	else
	{
		/* committed events the worker has not numbered yet: tell it */
		values[0] = Int64GetDatum(ca->home);
		(void) BookingExecuteLatest(&unnumbered_plan, values, NULL, 1);
		if (BookingGetBool(0, 1))
			BookingEventsWakeWorker();
	}
	values[0] = Int64GetDatum(ca->home);
	values[1] = PointerGetDatum(ca->consumer);
	values[2] = TimestampTzGetDatum(ca->now);
	values[3] = Int32GetDatum(ca->left);
	values[4] = Int64GetDatum(ca->token);
	values[5] = TimestampTzGetDatum(ca->until);
	ca->n = BookingExecute(&claim_plan, values, NULL, false, 0);
}

/* a leased row, kept until every home was visited */
typedef struct ClaimedRow
{
	HeapTuple	tuple;
	int64		resource;
	int64		seq;
} ClaimedRow;

static int
CompareClaimed(const void *a, const void *b)
{
	const ClaimedRow *x = (const ClaimedRow *) a;
	const ClaimedRow *y = (const ClaimedRow *) b;

	if (x->resource != y->resource)
		return x->resource < y->resource ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return 0;
}

/*
 * Runs one home's part; on Citus a shard whose node cannot be reached (or
 * that is moving) is skipped and counted, as hold_expire does.
 */
static bool
RunHome(BookingGuardedFn fn, void *arg, int64 home, int *skipped)
{
	BookingGuardOutcome outcome;

	if (!BookingDistributed())
	{
		fn(arg);
		return true;
	}
	outcome = BookingRunGuardedRemote(fn, arg, &home, 1);
	if (outcome == BOOKING_GUARD_DONE)
		return true;
	if (outcome != BOOKING_GUARD_UNREACHABLE && outcome != BOOKING_GUARD_MOVED)
		elog(ERROR, "unexpected outcome %d of a claim or an acknowledgement", (int) outcome);
	(*skipped)++;
	return false;
}

static void
WarnSkipped(const char *fn, int skipped, int nhomes)
{
	if (skipped > 0)
		ereport(WARNING,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("%s skipped %d of %d shards: their node cannot be reached or they are moving",
						fn, skipped, nhomes),
				 errdetail("Their events stay where they are; a later call gets them.")));
}

/*
 * claim_events(consumer, batch, lease): up to batch events, leased to the
 * caller until now + lease under one new lease token.
 */
Datum
booking_claim_events(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	text	   *consumer = ArgConsumer(fcinfo, 0, "consumer");
	int32		batch;
	int64		lease_us;
	TimestampTz now;
	int64		token;
	int64	   *homes;
	int			nhomes;
	int			start;
	int32		left;
	int			skipped = 0;
	ClaimedRow *rows = NULL;
	int			nrows = 0;
	TupleDesc	desc = NULL;
	bool		number;

	/* NULL means the default, as everywhere in the API */
	batch = PG_ARGISNULL(1) ? 100 : PG_GETARG_INT32(1);
	if (batch < 1 || batch > MAX_BATCH)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("batch must be between 1 and %d", MAX_BATCH),
				 errdetail("The batch given is %d.", batch)));
	lease_us = PG_ARGISNULL(2) ? 30 * USECS_PER_SEC :
		BookingIntervalUsecs(PG_GETARG_INTERVAL_P(2), "lease");
	if (lease_us <= 0 || lease_us > BOOKING_MAX_HOLD_USECS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("lease must be greater than zero and at most 3660 days")));

	RequireReadCommitted("claim_events");
	number = ClaimNumbers();
	InitMaterializedSRF(fcinfo, 0);
	SPI_connect();
	RequireConsumer(consumer);
	now = GetCurrentTimestamp();
	(void) BookingExecute(&token_plan, NULL, NULL, false, 1);
	token = BookingGetInt64(0, 1, NULL);

	nhomes = ClaimHomes(consumer, &homes);
	/* relays of one consumer start at different homes */
	start = nhomes > 1 ? (int) (token % nhomes) : 0;
	left = batch;
	for (int k = 0; k < nhomes && left > 0; k++)
	{
		ClaimArgs	ca = {homes[(start + k) % nhomes], consumer, now, left, token, now + lease_us,
		number, 0};

		if (!RunHome(ClaimHome, &ca, ca.home, &skipped))
			continue;
		if (rows == NULL)
			rows = palloc(sizeof(ClaimedRow) * batch);
		for (int i = 0; i < ca.n; i++)
		{
			ClaimedRow *row = &rows[nrows++];

			row->tuple = SPI_copytuple(SPI_tuptable->vals[i]);
			row->resource = BookingGetInt64(i, 2, NULL);
			row->seq = BookingGetInt64(i, 3, NULL);
		}
		desc = SPI_tuptable->tupdesc;
		left -= ca.n;
	}

	/* the homes' parts, each in order, merged into one order */
	if (nrows > 1)
		qsort(rows, nrows, sizeof(ClaimedRow), CompareClaimed);
	for (int i = 0; i < nrows; i++)
	{
		Datum		out[CLAIM_COLUMNS];
		bool		nulls[CLAIM_COLUMNS];

		/* event_id, lease_token, then the statement's other columns */
		for (int c = 0; c < CLAIM_COLUMNS; c++)
		{
			if (c == 1)
			{
				out[1] = Int64GetDatum(token);
				nulls[1] = false;
				continue;
			}
			out[c] = SPI_getbinval(rows[i].tuple, desc, c == 0 ? 1 : c, &nulls[c]);
		}
		tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, out, nulls);
	}
	SPI_finish();
	WarnSkipped("claim_events", skipped, nhomes);
	return (Datum) 0;
}

/* one home's part of an acknowledgement */
typedef struct AckArgs
{
	Datum		values[5];
	int64		acked;
} AckArgs;

static void
AckHome(void *arg)
{
	AckArgs    *aa = (AckArgs *) arg;

	aa->acked = BookingExecute(&ack_plan, aa->values, NULL, false, 0);
}

/*
 * ack_events(consumer, lease_token, events): acknowledges the listed events
 * still leased under lease_token; returns how many.
 */
Datum
booking_ack_events(PG_FUNCTION_ARGS)
{
	text	   *consumer = ArgConsumer(fcinfo, 0, "consumer");
	int64		token;
	Datum	   *events;
	int			n;
	int64	   *homes;
	int			nhomes;
	int64		acked = 0;
	int			skipped = 0;
	TimestampTz now = GetCurrentTimestamp();

	if (PG_ARGISNULL(1))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("lease_token must not be null")));
	token = PG_GETARG_INT64(1);
	events = BookingArgArray(fcinfo, 2, "events", INT8OID, MAX_BATCH, &n);
	RequireReadCommitted("ack_events");

	SPI_connect();
	RequireConsumer(consumer);
	nhomes = BookingAllHomes(&homes);
	for (int h = 0; h < nhomes; h++)
	{
		Datum	   *mine = palloc(sizeof(Datum) * Max(n, 1));
		int			m = 0;
		AckArgs		aa;

		/* on Citus an event id tells its home, as a booking id does */
		for (int i = 0; i < n; i++)
			if (!BookingDistributed() || BookingHome(DatumGetInt64(events[i])) == homes[h])
				mine[m++] = events[i];
		if (m == 0)
			continue;
		aa.values[0] = Int64GetDatum(homes[h]);
		aa.values[1] = PointerGetDatum(consumer);
		aa.values[2] = Int64GetDatum(token);
		aa.values[3] = TimestampTzGetDatum(now);
		aa.values[4] = PointerGetDatum(construct_array(mine, m, INT8OID, 8, FLOAT8PASSBYVAL,
													   TYPALIGN_DOUBLE));
		aa.acked = 0;
		if (RunHome(AckHome, &aa, homes[h], &skipped))
			acked += aa.acked;
	}
	SPI_finish();
	WarnSkipped("ack_events", skipped, nhomes);
	PG_RETURN_INT32((int32) acked);
}

/* hold_expire's purge of one home's old events; returns how many went. */
int64
BookingPurgeEvents(int64 home, TimestampTz now, int32 batch)
{
	Datum		values[3] = {Int64GetDatum(home),
		TimestampTzGetDatum(now - (int64) booking_event_retention_s * USECS_PER_SEC),
	Int32GetDatum(batch)};

	return BookingExecute(&purge_plan, values, NULL, false, 0);
}
