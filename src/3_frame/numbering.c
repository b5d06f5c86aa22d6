/*
 * numbering.c
 *	  The outbox's numbering of committed events, and the purge of old ones.
 *
 *	  Event rows are written unnumbered (events.c).  Numbering takes the
 *	  rows that have committed since, home by home: under the home's
 *	  sequencer row lock it gives each resource's new rows the next numbers
 *	  of that resource (after its highest numbered row, or the last number
 *	  the purge removed, kept in event_heads), and one delivery row per
 *	  registered consumer.  A row that commits late, after rows with higher
 *	  ids were delivered, is simply numbered later: nothing is read by
 *	  position, so nothing can be skipped.  Whoever finds the sequencer row locked skips
 *	  numbering (another one is doing it) and never waits.
 *
 *	  Who numbers: a claim (6_calls/claims.c) made in a transaction of its
 *	  own, and, on one server where the expiry worker serves the database,
 *	  the worker (7_worker/worker.c), in transactions of its own, when a
 *	  commit wrote events or a claim found some unnumbered.
 *	  drop_consumer (6_calls/consumers.c) holds every home's sequencer, so
 *	  that no numbering is in progress when it deletes the consumer's
 *	  deliveries, and none can add one after it.
 *
 *	  Layer 3, the call frame, beside the events it numbers.  Locks: a
 *	  home's sequencer row (FOR UPDATE SKIP LOCKED, or waiting for a drop),
 *	  and the advisory lock under which a home's first numbering makes it.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "miscadmin.h"
#include "storage/lmgr.h"
#include "storage/lock.h"
#include "utils/array.h"
#include "utils/guc.h"
#include "utils/snapmgr.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "3_frame/lowmark.h"
#include "3_frame/numbering.h"

/* advisory lock space (field 4) of a home's first numbering; see idempotency.c */
#define BOOKING_SEQUENCER_LOCK_SPACE 5

int			booking_event_retention_s = 86400;

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

static BookingPlan lock_sequencer_plan = {
	"SELECT 1 FROM booking.event_heads WHERE home OPERATOR(pg_catalog.=) $1 "
	"AND resource_id OPERATOR(pg_catalog.=) 0 FOR UPDATE SKIP LOCKED",
	1, {INT8OID}
};

/*
 * The numbering reads the committed unnumbered rows, the heads of their
 * resources, and writes each row's number by its key: three statements of
 * one table each, whose plans cannot go wrong with the estimates.  The
 * statistics of a backlog lag (taken while every event was numbered, they
 * estimate one unnumbered row where thousands wait), and one statement
 * joining the batch with the events and the heads was planned as nested
 * loops over them: 5 million comparisons for a batch of 10,000 over 1,000
 * resources, and with no statistics at all, the whole batch recomputed for
 * every event of the table.
 */
static BookingPlan fresh_plan = {
	"SELECT id, resource_id FROM booking.events WHERE home OPERATOR(pg_catalog.=) $1 AND seq IS NULL "
	"AND id OPERATOR(pg_catalog.>=) $3 ORDER BY id LIMIT $2",
	3, {INT8OID, INT4OID, INT8OID}, NULL, 0, true
};

/*
 * A resource's head, the last number it gave: the highest seq of its events
 * (one step down the numbered rows' unique index from the resource's end),
 * or the last one the purge removed (event_heads), whichever is higher.
 * The numbering writes no head: an upsert of a head row per resource and
 * batch left about a version per event, and behind a long snapshot, where
 * no version is removed, each upsert and each read walked every version of
 * its row (375 a row after 3 minutes of a busy day's mix): 6% of the
 * server's CPU in that run's third minute.  One row per resource, in the
 * order given.
 */
static BookingPlan heads_plan = {
	"SELECT h.r, GREATEST(COALESCE(x.last_seq, 0), COALESCE((SELECT e.seq FROM booking.events e "
	"WHERE e.home OPERATOR(pg_catalog.=) $1 AND e.resource_id OPERATOR(pg_catalog.=) h.r "
	"AND e.seq IS NOT NULL ORDER BY e.seq DESC LIMIT 1), 0)) "
	"FROM pg_catalog.unnest($2) WITH ORDINALITY AS h(r, o) "
	"LEFT JOIN booking.event_heads x ON x.home OPERATOR(pg_catalog.=) $1 "
	"AND x.resource_id OPERATOR(pg_catalog.=) h.r ORDER BY h.o",
	2, {INT8OID, INT8ARRAYOID}, NULL, 0, true
};

/*
 * The numbers of a batch go in one statement: one executor for the batch,
 * where one statement per row started one per event and built the table's
 * CHECK constraint again from its text for each (235 ms for a claim that
 * numbers 10,000; 135 now).  Its plan looks each row up by its key in the
 * partial index of unnumbered rows; on one server the generic plan, so that
 * a batch of 10,000 ids is not planned each time.  On Citus the worker
 * plans it with its own statistics.
 */
#define NUMBER_ROWS \
	"UPDATE booking.events e SET seq = v.seq " \
	"FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3)) AS v(id, seq) " \
	"WHERE e.home OPERATOR(pg_catalog.=) $1 AND e.id OPERATOR(pg_catalog.=) v.id AND e.seq IS NULL"

/* [on Citus] */
static BookingPlan number_rows_plans[2] = {
	{NUMBER_ROWS, 3, {INT8OID, INT8ARRAYOID, INT8ARRAYOID}, NULL, CURSOR_OPT_GENERIC_PLAN},
	{NUMBER_ROWS, 3, {INT8OID, INT8ARRAYOID, INT8ARRAYOID}}
};

/* the purge keeps the last number of what it removes (see heads_plan) */
static BookingPlan raise_heads_plan = {
	"INSERT INTO booking.event_heads AS x (home, resource_id, last_seq) "
	"SELECT $1, h.r, h.s FROM ROWS FROM (pg_catalog.unnest($2), pg_catalog.unnest($3)) AS h(r, s) "
	"ON CONFLICT (home, resource_id) DO UPDATE SET last_seq = GREATEST(x.last_seq, EXCLUDED.last_seq)",
	3, {INT8OID, INT8ARRAYOID, INT8ARRAYOID}
};

/*
 * A plain INSERT: an event is numbered once, under the sequencer, and only
 * its numbering writes its deliveries, so none can exist already.  ON
 * CONFLICT DO NOTHING cost a third of this statement (a speculative
 * insertion per row), and would have hidden a broken outbox (one emptied
 * of its events but not of their deliveries, its ids started again) by
 * leaving new events undelivered; now such a claim fails with the
 * unique violation.
 */
static BookingPlan deliver_plan = {
	"INSERT INTO booking.deliveries (home, consumer, event_id) "
	"SELECT $1, c.name, e.id FROM pg_catalog.unnest($2) AS c(name), pg_catalog.unnest($3) AS e(id)",
	3, {INT8OID, TEXTARRAYOID, INT8ARRAYOID}
};

static BookingPlan consumer_names_plan = {
	"SELECT pg_catalog.array_agg(name ORDER BY name) FROM booking.consumers", 0, {0}
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
	"AND e.id OPERATOR(pg_catalog.=) old.id RETURNING e.resource_id, e.seq",
	3, {INT8OID, TIMESTAMPTZOID, INT4OID}
};

void
BookingNumberingInit(void)
{
	DefineCustomIntVariable("booking.event_retention",
							"How long an event every consumer acknowledged is kept before hold_expire purges it.",
							"Only superusers can change it.",
							&booking_event_retention_s,
							86400, 1, INT_MAX,
							PGC_SUSET,
							GUC_UNIT_S,
							NULL, NULL, NULL);
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
void
BookingHoldSequencer(int64 home)
{
	Datum		values[1] = {Int64GetDatum(home)};

	(void) LockSequencerMaking(home, true);
	(void) BookingExecute(&wait_sequencer_plan, values, NULL, false, 1);
}

/*
 * The committed unnumbered rows of home from this backend's mark (lowmark.c),
 * up to batch, in SPI_tuptable; returns how many.  With number the caller
 * numbers them all, and the mark may pass the last.  Without, it is a look
 * while another relay numbers, so that this one's mark still moves: it
 * earns what is below the first row found (a row that a numbering in
 * progress writes counts as unnumbered until it commits).  Without looks a
 * relay that seldom got the sequencer kept its mark, and so its claims'
 * floor (claims.c), at the start.
 */
static int
FreshRows(int64 home, int32 batch, bool number)
{
	Datum		values[3] = {Int64GetDatum(home), Int32GetDatum(batch), Int64GetDatum(0)};
	Snapshot	snapshot;
	int64		mark;
	int64		top = 0;
	int64		last = 0;
	int			n = 0;

	if (BookingDistributed())
		return number ? BookingExecute(&fresh_plan, values, NULL, false, 0) : 0;
	/* one snapshot for the look and the mark */
	snapshot = RegisterSnapshot(GetTransactionSnapshot());
	mark = BookingLowMarkOf(home, snapshot, &top);
	if (number || mark > 0)
	{
		values[2] = Int64GetDatum(mark);
		n = BookingExecuteWith(&fresh_plan, values, NULL, snapshot, 0);
	}
	if (mark > 0)
	{
		if (n > 0)
			last = number ? BookingGetInt64(n - 1, 1, NULL) : BookingGetInt64(0, 1, NULL) - 1;
		BookingLowMarkAfter(snapshot, mark, top, n, batch, last);
	}
	UnregisterSnapshot(snapshot);
	return n;
}

/*
 * An event of a batch by its resource: an unnumbered row (key: its id), or
 * a purged one (key: its seq).  Sorted by resource, then key.
 */
typedef struct ResourceRow
{
	int64		resource;
	int64		key;
} ResourceRow;

static int
CompareResourceRows(const void *a, const void *b)
{
	const ResourceRow *x = (const ResourceRow *) a;
	const ResourceRow *y = (const ResourceRow *) b;

	if (x->resource != y->resource)
		return x->resource < y->resource ? -1 : 1;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return 0;
}

/*
 * Numbers the committed unnumbered events of home, unless another relay is;
 * returns how many.
 */
int
BookingNumberEvents(int64 home, int32 batch)
{
	Datum		values[3];
	Datum		consumers;
	bool		isnull;
	int			n;
	int			nheads = 0;
	int			k;
	ResourceRow *rows;
	Datum	   *resources;
	Datum	   *seqs;
	Datum	   *ids;
	Datum	   *rowseqs;

	values[0] = Int64GetDatum(home);
	if (BookingExecute(&lock_sequencer_plan, values, NULL, false, 1) == 0)
	{
		/* locked by another numbering, or not made yet: this claim makes it */
		if (!MakeSequencer(home) ||
			BookingExecute(&lock_sequencer_plan, values, NULL, false, 1) == 0)
		{
			(void) FreshRows(home, 1, false);
			return 0;
		}
	}
	n = FreshRows(home, batch, true);
	if (n == 0)
		return 0;
	rows = palloc(sizeof(ResourceRow) * n);
	for (int i = 0; i < n; i++)
	{
		rows[i].key = BookingGetInt64(i, 1, NULL);
		rows[i].resource = BookingGetInt64(i, 2, NULL);
	}

	/* by resource, in commit-visible id order within each */
	qsort(rows, n, sizeof(ResourceRow), CompareResourceRows);
	ids = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
		ids[i] = Int64GetDatum(rows[i].key);
	resources = palloc(sizeof(Datum) * n);
	seqs = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
		if (i == 0 || rows[i].resource != rows[i - 1].resource)
		{
			resources[nheads] = Int64GetDatum(rows[i].resource);
			seqs[nheads++] = Int64GetDatum(0);
		}
	values[1] = PointerGetDatum(construct_array(resources, nheads, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	if (BookingExecute(&heads_plan, values, NULL, false, 0) != nheads)
		elog(ERROR, "booking: the numbering read %d heads for %d resources", (int) SPI_processed, nheads);
	for (int i = 0; i < nheads; i++)
		seqs[i] = Int64GetDatum(BookingGetInt64(i, 2, NULL));

	/* the next numbers of each resource */
	k = -1;
	rowseqs = palloc(sizeof(Datum) * n);
	for (int i = 0; i < n; i++)
	{
		if (i == 0 || rows[i].resource != rows[i - 1].resource)
			k++;
		seqs[k] = Int64GetDatum(DatumGetInt64(seqs[k]) + 1);
		rowseqs[i] = seqs[k];
	}
	values[1] = PointerGetDatum(construct_array(ids, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	values[2] = PointerGetDatum(construct_array(rowseqs, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
	(void) BookingExecute(&number_rows_plans[BookingDistributed() ? 1 : 0], values, NULL, false, 0);

	/*
	 * The consumers, read after the rows were numbered: a consumer whose
	 * registration committed before one of these rows did is seen here.
	 */
	(void) BookingExecute(&consumer_names_plan, NULL, NULL, false, 1);
	consumers = BookingGetDatum(0, 1, &isnull);
	if (isnull)
		return n;
	values[1] = consumers;
	values[2] = PointerGetDatum(construct_array(ids, n, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
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
		n = BookingNumberEvents(0, batch);
		total += n;
		CHECK_FOR_INTERRUPTS();
	} while (n == batch);
	SPI_finish();
	return total;
}

/*
 * hold_expire's purge of one home's old events; returns how many went.  The
 * last number of each resource it removes goes to event_heads in the same
 * transaction, so that a numbering sees either the events or their head.
 */
int64
BookingPurgeEvents(int64 home, TimestampTz now, int32 batch)
{
	Datum		values[3] = {Int64GetDatum(home),
		TimestampTzGetDatum(now - (int64) booking_event_retention_s * USECS_PER_SEC),
	Int32GetDatum(batch)};
	int			n = BookingExecute(&purge_plan, values, NULL, false, 0);
	ResourceRow *rows;
	Datum	   *resources;
	Datum	   *seqs;
	int			numbered = 0;
	int			nheads = 0;

	if (n == 0)
		return 0;
	rows = palloc(sizeof(ResourceRow) * n);
	for (int i = 0; i < n; i++)
	{
		bool		isnull;
		int64		seq = BookingGetInt64(i, 2, &isnull);

		if (isnull)
			continue;			/* unnumbered: no consumer ever needed it */
		rows[numbered].resource = BookingGetInt64(i, 1, NULL);
		rows[numbered++].key = seq;
	}
	if (numbered > 0)
	{
		qsort(rows, numbered, sizeof(ResourceRow), CompareResourceRows);
		resources = palloc(sizeof(Datum) * numbered);
		seqs = palloc(sizeof(Datum) * numbered);
		/* sorted: each resource's last row has its highest number */
		for (int i = 0; i < numbered; i++)
			if (i == numbered - 1 || rows[i].resource != rows[i + 1].resource)
			{
				resources[nheads] = Int64GetDatum(rows[i].resource);
				seqs[nheads++] = Int64GetDatum(rows[i].key);
			}
		values[1] = PointerGetDatum(construct_array(resources, nheads, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		values[2] = PointerGetDatum(construct_array(seqs, nheads, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE));
		(void) BookingExecute(&raise_heads_plan, values, NULL, false, 0);
	}
	return n;
}
