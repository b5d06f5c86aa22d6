/*
 * claims.c
 *	  Reading the outbox: booking.claim_events and ack_events.
 *
 *	  Events are numbered once they have committed (3_frame/numbering.c).
 *	  A claim made in a transaction of its own numbers first (its locks end
 *	  with its statement); a claim inside a larger transaction leaves the
 *	  numbering to the expiry worker where the worker serves the database,
 *	  so that it holds no numbering lock while it stays open, and the other
 *	  relays of its consumer get the other events at once.  Without the
 *	  worker (or on Citus) every claim numbers, in the caller's transaction.
 *
 *	  Then a claim leases up to batch of the consumer's deliveries that are
 *	  not acknowledged and not leased (or whose lease lapsed), FOR UPDATE
 *	  SKIP LOCKED, under a new lease token: concurrent relays get disjoint
 *	  batches.  ack_events acknowledges only deliveries still leased under
 *	  the token given, so a relay whose lease lapsed and was claimed again
 *	  cannot acknowledge what another relay now holds (fencing).  Claims and
 *	  acknowledgements run at READ COMMITTED only: each of their statements
 *	  must see what other relays committed meanwhile.
 *
 *	  On Citus every statement here names one home and so runs on the node
 *	  of that shard; the coordinator visits the homes that have work.
 *
 *	  Layer 6, the calls.  Locks: deliveries FOR UPDATE SKIP LOCKED, after
 *	  the numbering's sequencer row when the claim numbers.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/guard.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "3_frame/lowmark.h"
#include "3_frame/news.h"
#include "3_frame/numbering.h"
#include "5_scaleout/remote.h"
#include "6_calls/consumers.h"

PG_FUNCTION_INFO_V1(booking_claim_events);
PG_FUNCTION_INFO_V1(booking_ack_events);

#define MAX_BATCH 10000

/* committed rows that wait for a number (the latest snapshot) */
static BookingPlan unnumbered_plan = {
	"SELECT EXISTS (SELECT 1 FROM booking.events WHERE home OPERATOR(pg_catalog.=) $1 AND seq IS NULL)",
	1, {INT8OID}, NULL, 0, true
};

/*
 * claim_events' columns: the statement's, with the lease token second.
 *
 * The rows leased are found again by the key range they span (lo..hi) as
 * well as by their ids: the planner's estimate for a consumer's open
 * deliveries comes from statistics that lag behind a backlog (an outbox
 * analyzed while nearly empty estimates one row), and with one row
 * expected it joined the picked rows to every delivery of the consumer,
 * so that each claim read the whole backlog.  The bounds are index
 * conditions whatever the estimate, so a claim reads the batch's range.
 */
#define CLAIM_COLUMNS 10
static BookingPlan claim_plan = {
	"WITH picked AS (SELECT event_id FROM booking.deliveries "
	"WHERE home OPERATOR(pg_catalog.=) $1 AND consumer OPERATOR(pg_catalog.=) $2 AND acked_at IS NULL "
	"AND (lease_until IS NULL OR lease_until OPERATOR(pg_catalog.<=) $3) "
	"AND event_id OPERATOR(pg_catalog.>=) $7 ORDER BY event_id LIMIT $4 FOR UPDATE SKIP LOCKED), "
	"bounds AS (SELECT pg_catalog.min(event_id) AS lo, pg_catalog.max(event_id) AS hi, "
	"pg_catalog.array_agg(event_id) AS ids FROM picked), "
	"leased AS (UPDATE booking.deliveries d SET lease_token = $5, lease_until = $6, "
	"attempts = d.attempts OPERATOR(pg_catalog.+) 1 "
	"WHERE d.home OPERATOR(pg_catalog.=) $1 AND d.consumer OPERATOR(pg_catalog.=) $2 "
	"AND d.event_id OPERATOR(pg_catalog.>=) (SELECT lo FROM bounds) "
	"AND d.event_id OPERATOR(pg_catalog.<=) (SELECT hi FROM bounds) "
	"AND d.event_id OPERATOR(pg_catalog.=) ANY (CAST((SELECT ids FROM bounds) AS pg_catalog.int8[])) "
	"RETURNING d.event_id, d.attempts) "
	"SELECT e.id, e.resource_id, e.seq, e.booking_id, e.guest, e.kind, e.payload, e.created_at, l.attempts "
	"FROM leased l JOIN booking.events e ON e.home OPERATOR(pg_catalog.=) $1 "
	"AND e.id OPERATOR(pg_catalog.=) l.event_id "
	"AND e.id OPERATOR(pg_catalog.>=) (SELECT lo FROM bounds) "
	"AND e.id OPERATOR(pg_catalog.<=) (SELECT hi FROM bounds) "
	"ORDER BY e.resource_id, e.seq",
	7, {INT8OID, TEXTOID, TIMESTAMPTZOID, INT4OID, INT8OID, TIMESTAMPTZOID, INT8OID}, NULL, 0, true
};

/*
 * The consumer's acknowledged floor (one server): every delivery of the
 * consumer below it is acknowledged, and none will ever be added there, so
 * a claim picks from it.  Without it every pick walked, from the start of
 * the index of open deliveries, the entries of every delivery acknowledged
 * since the last vacuum: 1,769 pages (5.5 ms) after a drain of 200,000.
 *
 * Why it is safe.  Below the numbering's mark (BookingNumberedBelow) every
 * event is numbered, and deliveries are only ever written by the numbering
 * of an event, so that part of the index is complete: what a snapshot
 * shows acknowledged there stays so.  The floor is the lowest open
 * delivery at or above the old floor (acknowledged rows only in between),
 * or the mark if that is lower.  It moves only in a claim made in a
 * transaction of its own, whose snapshot shows no acknowledgement of its
 * own that could still roll back.  Kept per backend, for one consumer.
 */
static BookingPlan lowest_open_plan = {
	"SELECT pg_catalog.min(event_id) FROM booking.deliveries WHERE home OPERATOR(pg_catalog.=) $1 "
	"AND consumer OPERATOR(pg_catalog.=) $2 AND acked_at IS NULL AND event_id OPERATOR(pg_catalog.>=) $3",
	3, {INT8OID, TEXTOID, INT8OID}, NULL, 0, true
};

/* a consumer's name is at most 200 bytes (consumers.c) */
static char acked_floor_consumer[256];
static int64 acked_floor = 0;

/* the event id a claim of consumer picks from in home */
static int64
AckedFloor(int64 home, text *consumer)
{
	char	   *name = text_to_cstring(consumer);
	int64		mark;
	int64		lowest;
	bool		isnull;
	Datum		values[3];

	if (BookingDistributed() || home != 0 || strlen(name) >= sizeof(acked_floor_consumer))
		return 0;
	mark = BookingNumberedBelow(home);
	if (strcmp(name, acked_floor_consumer) != 0 || mark < acked_floor)
	{
		/* another consumer, or ids that started again */
		strlcpy(acked_floor_consumer, name, sizeof(acked_floor_consumer));
		acked_floor = 0;
	}
	if (mark <= acked_floor || IsTransactionBlock())
		return acked_floor;
	values[0] = Int64GetDatum(home);
	values[1] = PointerGetDatum(consumer);
	values[2] = Int64GetDatum(acked_floor);
	(void) BookingExecute(&lowest_open_plan, values, NULL, true, 1);
	lowest = BookingGetInt64(0, 1, &isnull);
	acked_floor = isnull ? mark : Min(lowest, mark);
	return acked_floor;
}

/* the events given, also as the key range they span: see claim_plan */
static BookingPlan ack_plan = {
	"UPDATE booking.deliveries SET acked_at = $4, lease_until = NULL "
	"WHERE home OPERATOR(pg_catalog.=) $1 AND consumer OPERATOR(pg_catalog.=) $2 "
	"AND event_id OPERATOR(pg_catalog.>=) $6 AND event_id OPERATOR(pg_catalog.<=) $7 "
	"AND event_id OPERATOR(pg_catalog.=) ANY ($5) AND acked_at IS NULL "
	"AND lease_token OPERATOR(pg_catalog.=) $3",
	7, {INT8OID, TEXTOID, INT8OID, TIMESTAMPTZOID, INT8ARRAYOID, INT8OID, INT8OID}, NULL, 0, true
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
 * Whether a claim numbers: made in a transaction of its own (its locks end
 * with its statement), or with nobody else to do it.  A claim inside a
 * larger transaction leaves it to the expiry worker, when the worker serves
 * this database, so that it holds no numbering lock while it stays open.
 */
static bool
ClaimNumbers(void)
{
	return BookingDistributed() || !IsTransactionBlock() || !BookingNewsWorkerNumbers();
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
	Datum		values[7];

	if (ca->number)
		(void) BookingNumberEvents(ca->home, MAX_BATCH);
	else
	{
		/* committed events the worker has not numbered yet: tell it */
		values[0] = Int64GetDatum(ca->home);
		(void) BookingExecuteLatest(&unnumbered_plan, values, NULL, 1);
		if (BookingGetBool(0, 1))
			BookingNewsWakeWorker();
	}
	values[0] = Int64GetDatum(ca->home);
	values[1] = PointerGetDatum(ca->consumer);
	values[2] = TimestampTzGetDatum(ca->now);
	values[3] = Int32GetDatum(ca->left);
	values[4] = Int64GetDatum(ca->token);
	values[5] = TimestampTzGetDatum(ca->until);
	values[6] = Int64GetDatum(AckedFloor(ca->home, ca->consumer));
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
	text	   *consumer = BookingArgConsumer(fcinfo, 0, "consumer");
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
				 errmsg("lease must be greater than zero and at most 3660 days"),
				 errdetail("The lease given is %s.", BookingDescribeInterval(PG_GETARG_INTERVAL_P(2)))));

	BookingRequireReadCommitted("claim_events");
	number = ClaimNumbers();
	InitMaterializedSRF(fcinfo, 0);
	SPI_connect();
	BookingRequireConsumer(consumer);
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
	Datum		values[7];
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
	text	   *consumer = BookingArgConsumer(fcinfo, 0, "consumer");
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
	BookingRequireReadCommitted("ack_events");

	SPI_connect();
	BookingRequireConsumer(consumer);
	nhomes = BookingAllHomes(&homes);
	for (int h = 0; h < nhomes; h++)
	{
		Datum	   *mine = palloc(sizeof(Datum) * Max(n, 1));
		int			m = 0;
		int64		lo = PG_INT64_MAX;
		int64		hi = PG_INT64_MIN;
		AckArgs		aa;

		/* on Citus an event id tells its home, as a booking id does */
		for (int i = 0; i < n; i++)
			if (!BookingDistributed() || BookingHome(DatumGetInt64(events[i])) == homes[h])
			{
				lo = Min(lo, DatumGetInt64(events[i]));
				hi = Max(hi, DatumGetInt64(events[i]));
				mine[m++] = events[i];
			}
		if (m == 0)
			continue;
		aa.values[0] = Int64GetDatum(homes[h]);
		aa.values[1] = PointerGetDatum(consumer);
		aa.values[2] = Int64GetDatum(token);
		aa.values[3] = TimestampTzGetDatum(now);
		aa.values[4] = PointerGetDatum(construct_array(mine, m, INT8OID, 8, FLOAT8PASSBYVAL,
													   TYPALIGN_DOUBLE));
		aa.values[5] = Int64GetDatum(lo);
		aa.values[6] = Int64GetDatum(hi);
		aa.acked = 0;
		if (RunHome(AckHome, &aa, homes[h], &skipped))
			acked += aa.acked;
	}
	SPI_finish();
	WarnSkipped("ack_events", skipped, nhomes);
	PG_RETURN_INT32((int32) acked);
}

