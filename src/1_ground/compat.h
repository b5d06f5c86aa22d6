/*
 * compat.h
 *	  What differs between the PostgreSQL majors booking builds on (15, 16,
 *	  17 and 18), in one place, in the manner of Citus's
 *	  pg_version_compat.h: the code is written against the newest form of
 *	  each API, and for an older major a macro of that name maps it to the
 *	  form that major has.  No other file tests PG_VERSION_NUM.
 *
 *	  Layer 1, the ground.
 */
#ifndef BOOKING_COMPAT_H
#define BOOKING_COMPAT_H

#include "postgres.h"

#include "access/genam.h"
#include "executor/executor.h"
#include "storage/lmgr.h"
#include "storage/proc.h"
#include "utils/rangetypes.h"
#include "utils/relcache.h"

/* 16 gave make_range a soft-error context (NULL: raise) */
#if PG_VERSION_NUM < 160000
#define make_range(typcache, lower, upper, empty, escontext) \
	make_range((typcache), (lower), (upper), (empty))
#endif

/* 16 gave ExecInsertIndexTuples onlySummarizing (its HOT updates) */
#if PG_VERSION_NUM < 160000
#define ExecInsertIndexTuples(rri, slot, estate, update, noDupErr, specConflict, arbiterIndexes, onlySummarizing) \
	ExecInsertIndexTuples((rri), (slot), (estate), (update), (noDupErr), (specConflict), (arbiterIndexes))
#endif

/* 17 dropped PGPROC.pgprocno for GetNumberFromPGProc() */
#if PG_VERSION_NUM < 170000
#define GetNumberFromPGProc(proc) ((proc)->pgprocno)
#endif

/*
 * 18: RelationGetPrimaryKeyIndex() says whether a deferrable primary key
 * will do (ours is not deferrable), index_beginscan() takes the scan's
 * instrumentation (NULL: none), and ConditionalXactLockTableWait() whether
 * to log a failure to get the lock (log_lock_failure).
 */
#if PG_VERSION_NUM < 180000
#define RelationGetPrimaryKeyIndex(relation, deferrable_ok) \
	RelationGetPrimaryKeyIndex(relation)
#define index_beginscan(heap, index, snapshot, instrument, nkeys, norderbys) \
	index_beginscan((heap), (index), (snapshot), (nkeys), (norderbys))
#define ConditionalXactLockTableWait(xid, logLockFailure) \
	ConditionalXactLockTableWait(xid)
#endif

#endif							/* BOOKING_COMPAT_H */
