/*
 * rowwrite.c
 *	  Writing one row without a statement, for a hot path's insert into a
 *	  table only this library writes: the heap tuple, then its index entries
 *	  as the executor's INSERT makes them (unique checks, partial indexes'
 *	  predicates, BRIN).  A prepared INSERT of one row costs more to start
 *	  and end than the row costs to write: the plan's nodes, the result
 *	  relation's indexes and, on every run, its CHECK constraints built again
 *	  from their stored text.
 *
 *	  NOT NULL is checked as the executor checks it.  The caller vouches for
 *	  the rest: its own CHECK constraint is not evaluated and no column
 *	  default is applied, so the caller fills every column it knows, and
 *	  writes through a statement when the table has a column it does not
 *	  know, or a trigger, rule, row security or CHECK constraint someone
 *	  added (BookingRowWritable).  Not for a table Citus distributes: its
 *	  rows live in its shards.
 *
 *	  Layer 1, the ground.  Locks: the table's and its indexes'
 *	  RowExclusiveLock, as an INSERT takes them.
 */
#include "postgres.h"

#include "access/tableam.h"
#include "access/xact.h"
#include "catalog/pg_class.h"
#include "executor/executor.h"
#include "executor/tuptable.h"
#include "nodes/execnodes.h"
#include "utils/memutils.h"
#include "utils/rel.h"

#include "booking.h"
#include "1_ground/compat.h"
#include "1_ground/rowwrite.h"

/*
 * Whether a row of rel may be written without a statement: a plain table
 * with no trigger (a foreign key's included), rule or row security that a
 * statement would apply, and no CHECK constraint but own_check (the
 * caller's, which its rows meet by construction; NULL: none).
 */
bool
BookingRowWritable(Relation rel, const char *own_check)
{
	TupleConstr *constr = RelationGetDescr(rel)->constr;

	if (rel->rd_rel->relkind != RELKIND_RELATION || rel->trigdesc != NULL ||
		rel->rd_rules != NULL || rel->rd_rel->relrowsecurity)
		return false;
	if (constr != NULL)
		for (int i = 0; i < constr->num_check; i++)
			if (own_check == NULL || strcmp(constr->check[i].ccname, own_check) != 0)
				return false;
	return true;
}

/*
 * Inserts one row of rel (locked RowExclusiveLock by the caller, and
 * BookingRowWritable) with values and nulls in the table's column order,
 * and makes it visible to the transaction's next command, as a statement
 * would.  An index's unique violation raises 23505 as an INSERT does.
 */
void
BookingRowInsert(Relation rel, Datum *values, bool *nulls)
{
	TupleDesc	desc = RelationGetDescr(rel);
	EState	   *estate = CreateExecutorState();
	MemoryContext old = MemoryContextSwitchTo(estate->es_query_cxt);
	ResultRelInfo *rri = makeNode(ResultRelInfo);
	TupleTableSlot *slot;
	List	   *recheck;

	/* the NOT NULL constraints, as the executor checks them (23502) */
	for (int i = 0; i < desc->natts; i++)
		if (nulls[i] && TupleDescAttr(desc, i)->attnotnull)
			ereport(ERROR,
					(errcode(ERRCODE_NOT_NULL_VIOLATION),
					 errmsg("null value in column \"%s\" of relation \"%s\" violates not-null constraint",
							NameStr(TupleDescAttr(desc, i)->attname), RelationGetRelationName(rel)),
					 errtablecol(rel, i + 1)));
	InitResultRelInfo(rri, rel, 1, NULL, 0);
	ExecOpenIndices(rri, false);
	slot = table_slot_create(rel, NULL);
	ExecClearTuple(slot);
	memcpy(slot->tts_values, values, sizeof(Datum) * desc->natts);
	memcpy(slot->tts_isnull, nulls, sizeof(bool) * desc->natts);
	ExecStoreVirtualTuple(slot);
	table_tuple_insert(rel, slot, GetCurrentCommandId(true), 0, NULL);
	recheck = ExecInsertIndexTuples(rri, slot, estate, false, false, NULL, NIL, false);
	/* only a deferrable unique index asks for a recheck: none of ours */
	if (recheck != NIL)
		elog(ERROR, "relation \"%s\" has a deferrable index; write it with a statement",
			 RelationGetRelationName(rel));
	ExecCloseIndices(rri);
	ExecDropSingleTupleTableSlot(slot);
	MemoryContextSwitchTo(old);
	FreeExecutorState(estate);
	CommandCounterIncrement();
}
