/*
 * rowread.c
 *	  Reading one row without a statement: a table's columns found by name
 *	  (the C code never assumes their order, so a column added by an update
 *	  or a restore does not shift what it reads), and a booking row read back
 *	  as this transaction wrote it, for its outbox event (3_frame/events.c),
 *	  at every isolation level.
 *
 *	  Layer 1, the ground.  Locks: none of its own; the call frame holds the
 *	  table locks (2_locks/tablelock.c).
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/relscan.h"
#include "access/skey.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/tableam.h"
#include "executor/tuptable.h"
#include "utils/datum.h"
#include "utils/fmgroids.h"
#include "utils/rel.h"
#include "utils/snapmgr.h"

#include "booking.h"
#include "1_ground/compat.h"
#include "1_ground/rowread.h"
#include "1_ground/shard.h"
#include "1_ground/tables.h"

/* The attribute number of column name; an error if the table has none. */
AttrNumber
BookingColumnOf(Relation rel, const char *name)
{
	TupleDesc	desc = RelationGetDescr(rel);

	for (int i = 0; i < desc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(desc, i);

		if (!att->attisdropped && strcmp(NameStr(att->attname), name) == 0)
			return att->attnum;
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("relation \"%s\" has no column \"%s\"", RelationGetRelationName(rel), name),
			 errhint("Reinstall or update the extension (ALTER EXTENSION booking UPDATE).")));
	return InvalidAttrNumber;	/* keep compiler quiet */
}

/* The position in index of table column attnum. */
AttrNumber
BookingIndexColumnOf(Relation index, AttrNumber attnum)
{
	for (int i = 0; i < index->rd_index->indnkeyatts; i++)
		if (index->rd_index->indkey.values[i] == attnum)
			return (AttrNumber) (i + 1);
	elog(ERROR, "column %d is not a key of index \"%s\"", attnum, RelationGetRelationName(index));
	return InvalidAttrNumber;	/* keep compiler quiet */
}

/* Copies column name of slot's row, or reports it NULL. */
static Datum
CopyColumn(Relation rel, TupleTableSlot *slot, const char *name, bool *isnull)
{
	AttrNumber	attnum = BookingColumnOf(rel, name);
	Form_pg_attribute att = TupleDescAttr(RelationGetDescr(rel), attnum - 1);
	Datum		d = slot_getattr(slot, attnum, isnull);

	return *isnull ? (Datum) 0 : datumCopy(d, att->attbyval, att->attlen);
}

/*
 * Reads booking id as this transaction last wrote it, through the primary
 * key with SnapshotSelf: no SSI predicate lock is taken, so at SERIALIZABLE
 * the read adds no conflict with the buyers who insert next to it.  False
 * when its rows are on another node (a Citus coordinator).
 */
bool
BookingRowReadOwnBooking(int64 home, int64 id, BookingOwnBooking *b)
{
	Relation	rel;
	Relation	pkey;
	Oid			relid;
	ScanKeyData skey[2];
	IndexScanDesc scan;
	TupleTableSlot *slot;
	bool		found;
	bool		isnull;

	if (BookingDistributed())
	{
		relid = BookingLocalShard(BOOKING_TABLE_BOOKINGS, home);
		if (!OidIsValid(relid))
			return false;
	}
	else
		relid = BookingTableOid(BOOKING_TABLE_BOOKINGS);
	rel = table_open(relid, RowExclusiveLock);
	pkey = index_open(RelationGetPrimaryKeyIndex(rel, false), AccessShareLock);
	ScanKeyInit(&skey[0], BookingIndexColumnOf(pkey, BookingColumnOf(rel, "home")),
				BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(home));
	ScanKeyInit(&skey[1], BookingIndexColumnOf(pkey, BookingColumnOf(rel, "id")),
				BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(id));
	slot = table_slot_create(rel, NULL);
	scan = index_beginscan(rel, pkey, SnapshotSelf, NULL, 2, 0);
	index_rescan(scan, skey, 2, NULL, 0);
	found = index_getnext_slot(scan, ForwardScanDirection, slot);
	if (!found)
		elog(ERROR, "booking %lld is not there to write its event", (long long) id);
	b->resource = DatumGetInt64(slot_getattr(slot, BookingColumnOf(rel, "resource_id"), &isnull));
	b->guest = CopyColumn(rel, slot, "guest", &isnull);
	b->quantity = DatumGetInt32(slot_getattr(slot, BookingColumnOf(rel, "quantity"), &isnull));
	b->during = CopyColumn(rel, slot, "during", &b->during_null);
	b->expires_at = CopyColumn(rel, slot, "expires_at", &b->expires_null);
	b->group_id = CopyColumn(rel, slot, "group_id", &b->group_null);
	b->status = CopyColumn(rel, slot, "status", &isnull);
	b->metadata = CopyColumn(rel, slot, "metadata", &b->metadata_null);
	index_endscan(scan);
	ExecDropSingleTupleTableSlot(slot);
	index_close(pkey, NoLock);
	table_close(rel, NoLock);
	return true;
}
