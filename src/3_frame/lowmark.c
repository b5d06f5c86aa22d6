/*
 * lowmark.c
 *	  The numbering's low-water mark (one server): every event below it is
 *	  numbered, so a numbering's look for unnumbered rows starts there, and
 *	  a claim's floor of acknowledged deliveries (6_calls/claims.c) may not
 *	  pass it.  Learned by the numbering (numbering.c) and kept per backend.
 *
 *	  Layer 3, the call frame, beside the numbering.  Locks: none.
 */
#include "postgres.h"

#include "access/transam.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_class.h"
#include "catalog/pg_sequence.h"
#include "catalog/pg_type.h"
#include "utils/lsyscache.h"
#include "utils/snapmgr.h"
#include "utils/syscache.h"

#include "booking.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "3_frame/lowmark.h"

/* the highest id a snapshot shows (see LowMark) */
static BookingPlan last_id_plan = {
	"SELECT pg_catalog.max(id) FROM booking.events WHERE home OPERATOR(pg_catalog.=) $1",
	1, {INT8OID}, NULL, 0, true
};

/*
 * The low-water mark, one server only: every event below mark is numbered,
 * so the look for unnumbered rows starts there.  Without it every look
 * walked, from the start of the partial index of unnumbered rows, the
 * entries of every row numbered since the last vacuum (a held snapshot
 * even keeps them from being marked dead): after a drain of 200,000
 * events, 772 index pages on every claim.
 *
 * Why a mark is safe.  Event ids come from a sequence that hands them out
 * in order (cache 1: checked), and an event's transaction has its xid
 * before it takes the id (events.c).  So when a snapshot S shows an event
 * with id m, every lower id was taken before S, by a transaction whose xid
 * is below S's xmax: one that S shows committed, or one that aborts, or
 * one still running at S.  Once no transaction below S's xmax runs any
 * more (a later snapshot's xmin is at or past it), a numbering that reads
 * from the mark it had sees every committed event below m + 1; when it has
 * numbered them all, m + 1 is the mark, from its commit on.  A late commit
 * below a mark is so impossible, not merely unlikely.
 *
 * Each backend keeps its own (a relay's first look walks once); a new mark
 * counts only from its transaction's commit, and none survives an abort of
 * the (sub)transaction that numbered.  On Citus, where ids come from each
 * node's own range, there is none.
 */
typedef struct LowMark
{
	Oid			relid;			/* booking.events it was learned on */
	int64		mark;			/* every id below it is numbered */
	int64		candidate;		/* the next mark, once ripe; 0: none */
	FullTransactionId ripe_at;	/* its snapshot's xmax */
	int64		pending;		/* a mark this transaction earned; 0: none */
	int			pending_level;	/* the nesting level that earned it */
	Oid			relfile;		/* its relfilenode and its sequence's: a */
	Oid			seqfile;		/* TRUNCATE or a RESTART makes new ones */
} LowMark;

static LowMark low_mark;
static bool low_mark_callbacks = false;

static void
LowMarkXact(XactEvent event, void *arg)
{
	if (event == XACT_EVENT_COMMIT && low_mark.pending > low_mark.mark)
		low_mark.mark = low_mark.pending;
	if (event == XACT_EVENT_COMMIT || event == XACT_EVENT_ABORT ||
		event == XACT_EVENT_PREPARE || event == XACT_EVENT_PARALLEL_COMMIT ||
		event == XACT_EVENT_PARALLEL_ABORT)
		low_mark.pending = 0;
}

static void
LowMarkSubXact(SubXactEvent event, SubTransactionId mySubid,
			   SubTransactionId parentSubid, void *arg)
{
	if (event == SUBXACT_EVENT_ABORT_SUB &&
		GetCurrentTransactionNestLevel() <= low_mark.pending_level)
		low_mark.pending = 0;
}

/* a snapshot's xid (not older than 2^31 transactions) with its epoch */
static FullTransactionId
FullXidOf(TransactionId xid)
{
	FullTransactionId next = ReadNextFullTransactionId();
	uint32		epoch = EpochFromFullTransactionId(next);

	if (xid > XidFromFullTransactionId(next))
		epoch--;
	return FullTransactionIdFromEpochAndXid(epoch, xid);
}

/*
 * Sets *top to the highest id of home that s shows, and forgets the mark if
 * ids went backward (a setval() below it; a TRUNCATE or RESTART is caught
 * by LowMarkUsable, also once the new ids have passed the old mark).
 */
static void
LowMarkCheckTop(int64 home, Snapshot s, int64 *top)
{
	Datum		values[1] = {Int64GetDatum(home)};
	bool		isnull;

	(void) BookingExecuteWith(&last_id_plan, values, NULL, s, 1);
	*top = BookingGetInt64(0, 1, &isnull);
	if (isnull)
		*top = 0;
	if (*top + 1 < low_mark.mark || *top + 1 < low_mark.candidate || *top + 1 < low_mark.pending)
	{
		Oid			relid = low_mark.relid;

		memset(&low_mark, 0, sizeof(low_mark));
		low_mark.relid = relid;
	}
}

/* a relation's relfilenode, InvalidOid if it is gone */
static Oid
RelfileOf(Oid relid)
{
	HeapTuple	tuple = SearchSysCache1(RELOID, ObjectIdGetDatum(relid));
	Oid			relfile = InvalidOid;

	if (HeapTupleIsValid(tuple))
	{
		relfile = ((Form_pg_class) GETSTRUCT(tuple))->relfilenode;
		ReleaseSysCache(tuple);
	}
	return relfile;
}

/*
 * Whether home can have a mark: one server, and ids handed out in order
 * (a sequence with a cache hands out ranges).  Forgets a mark learned on
 * another events table, or before a TRUNCATE of it or a RESTART of its
 * sequence (each gives the relation a new relfilenode).
 */
static bool
LowMarkUsable(int64 home)
{
	Oid			nsp;
	Oid			relid;
	Oid			seqid;
	HeapTuple	tuple;
	bool		in_order = false;
	Oid			relfile;
	Oid			seqfile;

	if (BookingDistributed() || home != 0)
		return false;
	nsp = get_namespace_oid("booking", false);
	relid = get_relname_relid("events", nsp);
	seqid = get_relname_relid("events_id_seq", nsp);
	tuple = SearchSysCache1(SEQRELID, ObjectIdGetDatum(seqid));
	if (HeapTupleIsValid(tuple))
	{
		in_order = ((Form_pg_sequence) GETSTRUCT(tuple))->seqcache == 1 &&
			!((Form_pg_sequence) GETSTRUCT(tuple))->seqcycle;
		ReleaseSysCache(tuple);
	}
	if (!in_order || !OidIsValid(relid))
	{
		memset(&low_mark, 0, sizeof(low_mark));
		return false;
	}
	relfile = RelfileOf(relid);
	seqfile = RelfileOf(seqid);
	if (low_mark.relid != relid || low_mark.relfile != relfile || low_mark.seqfile != seqfile)
	{
		memset(&low_mark, 0, sizeof(low_mark));
		low_mark.relid = relid;
		low_mark.relfile = relfile;
		low_mark.seqfile = seqfile;
	}
	return true;
}

/*
 * The mark of home this backend's committed numberings earned, or 0: every
 * event below it is numbered, and so has every delivery it will ever have.
 */
int64
BookingNumberedBelow(int64 home)
{
	return LowMarkUsable(home) ? low_mark.mark : 0;
}

/*
 * The mark this backend may start from in home with snapshot s, or 0
 * (start at the beginning; see LowMarkUsable).  Sets *top to the highest id
 * s shows.
 */
int64
BookingLowMarkOf(int64 home, Snapshot s, int64 *top)
{
	if (!LowMarkUsable(home))
		return 0;
	if (!low_mark_callbacks)
	{
		RegisterXactCallback(LowMarkXact, NULL);
		RegisterSubXactCallback(LowMarkSubXact, NULL);
		low_mark_callbacks = true;
	}
	LowMarkCheckTop(home, s, top);
	return Max(low_mark.mark, 1);
}

/*
 * After a numbering from mark with snapshot s (showing ids up to top) that
 * read n rows, a batch of batch, the last with id last: the mark it earned,
 * and the next candidate.
 */
void
BookingLowMarkAfter(Snapshot s, int64 mark, int64 top, int n, int32 batch, int64 last)
{
	if (low_mark.candidate > 0 &&
		FullTransactionIdFollowsOrEquals(FullXidOf(s->xmin), low_mark.ripe_at))
	{
		/* everything below the candidate that s shows, this look read */
		int64		earned = n < batch ? low_mark.candidate : Min(low_mark.candidate, last + 1);

		if (earned > mark && earned > low_mark.pending)
		{
			low_mark.pending = earned;
			low_mark.pending_level = GetCurrentTransactionNestLevel();
		}
		if (earned == low_mark.candidate)
			low_mark.candidate = 0;
	}
	if (low_mark.candidate == 0 && top + 1 > Max(mark, low_mark.pending))
	{
		low_mark.candidate = top + 1;
		low_mark.ripe_at = FullXidOf(s->xmax);
	}
}
