/*
 * stats.c
 *	  booking.stats() and booking.stats_reset(): per API function and result
 *	  code, how many calls, their wall time, the longest, and the time they
 *	  spent waiting for locks; the booking.track_stats GUC.
 *
 *	  The counters live in shared memory, so only when booking is in
 *	  shared_preload_libraries (PG15's shmem_request_hook and
 *	  shmem_startup_hook); otherwise nothing is counted and stats() says why.
 *	  They are cluster-wide, like pg_stat_statements', and start from zero
 *	  at every server start.
 *
 *	  The call frame (3_frame/call.c, and 5_scaleout/route.c's forwarding
 *	  on a Citus coordinator) brackets each call with BookingStatsBegin/End;
 *	  the waiting paths (2_locks/lock.c's guarded waits,
 *	  4_inventory/stripes.c's queue) bracket their waits with
 *	  BookingStatsWaitBegin/End.  The counters are in the ground so that
 *	  every layer can count into them: like PostgreSQL's pgstat, they call
 *	  nothing of the extension but the result codes.  A call is counted once, under the name
 *	  of its public function: a twin booking.shard_<name> counts as <name>,
 *	  a call nested in a counted one (a twin run here by a forwarding call)
 *	  is not counted again, and an internal twin with no public function
 *	  (shard_seat_member, shard_stay_member) is part of a group counted where
 *	  the group was called.
 *
 *	  Layer 1, the ground.  Locks: counting takes none (atomic adds, and a compare-and-swap loop
 *	  for the maximum), so concurrent buyers never queue on a counter.  The
 *	  first call of a function name in the cluster takes the stats LWLock
 *	  once to register the name; each backend remembers a function's slot.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xact.h"
#include "catalog/pg_proc.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "port/atomics.h"
#include "storage/ipc.h"
#include "storage/lwlock.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/catcache.h"
#include "utils/guc.h"
#include "utils/syscache.h"

#include "booking.h"
#include "1_ground/result.h"
#include "1_ground/stats.h"

PG_FUNCTION_INFO_V1(booking_stats);
PG_FUNCTION_INFO_V1(booking_stats_reset);

#define STATS_MAX_FUNCTIONS 64
#define STATS_NUM_CODES BOOKING_NUM_CODES
#define STATS_TRANCHE "booking_stats"

bool		booking_track_stats = true;

typedef struct StatsCounter
{
	pg_atomic_uint64 calls;
	pg_atomic_uint64 total_ns;
	pg_atomic_uint64 max_ns;
	pg_atomic_uint64 lock_wait_ns;
} StatsCounter;

typedef struct StatsShared
{
	LWLock	   *lock;			/* registers names; counting never takes it */
	pg_atomic_uint32 nfunctions;	/* names[0..n) are set and never change */
	char		names[STATS_MAX_FUNCTIONS][NAMEDATALEN];
	StatsCounter counters[STATS_MAX_FUNCTIONS][STATS_NUM_CODES];
} StatsShared;

static StatsShared *stats = NULL;
static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/* this backend's map from a function's OID to its slot; -1: not counted */
#define STATS_MAX_CACHED 128
typedef struct StatsFn
{
	Oid			fn;
	int			slot;
} StatsFn;
static StatsFn cached[STATS_MAX_CACHED];
static int	ncached = 0;

/*
 * The counted call in progress: the transaction nesting level it began at
 * (0: none), and its lock waits so far.  Reset when an error leaves the
 * call (its subtransaction or transaction aborts), so that a call after it
 * is counted again.
 */
static int	call_level = 0;
static uint64 call_wait_ns = 0;
static int	wait_depth = 0;
static instr_time wait_start;

static uint64
ElapsedNs(instr_time start, instr_time end)
{
	INSTR_TIME_SUBTRACT(end, start);
	return (uint64) (INSTR_TIME_GET_DOUBLE(end) * 1e9);
}

static void
StatsShmemRequest(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(MAXALIGN(sizeof(StatsShared)));
	RequestNamedLWLockTranche(STATS_TRANCHE, 1);
}

static void
StatsShmemStartup(void)
{
	bool		found;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	stats = ShmemInitStruct("booking stats", sizeof(StatsShared), &found);
	if (!found)
	{
		stats->lock = &(GetNamedLWLockTranche(STATS_TRANCHE))->lock;
		pg_atomic_init_u32(&stats->nfunctions, 0);
		memset(stats->names, 0, sizeof(stats->names));
		for (int f = 0; f < STATS_MAX_FUNCTIONS; f++)
			for (int c = 0; c < STATS_NUM_CODES; c++)
			{
				StatsCounter *sc = &stats->counters[f][c];

				pg_atomic_init_u64(&sc->calls, 0);
				pg_atomic_init_u64(&sc->total_ns, 0);
				pg_atomic_init_u64(&sc->max_ns, 0);
				pg_atomic_init_u64(&sc->lock_wait_ns, 0);
			}
	}
	LWLockRelease(AddinShmemInitLock);
}

/* An error that leaves a counted call ends it uncounted. */
static void
StatsXactCallback(XactEvent event, void *arg)
{
	call_level = 0;
	wait_depth = 0;
}

static void
StatsSubXactCallback(SubXactEvent event, SubTransactionId mySubid,
					 SubTransactionId parentSubid, void *arg)
{
	/* a call's own guarded subtransactions run deeper than it began */
	if (event == SUBXACT_EVENT_ABORT_SUB && call_level >= GetCurrentTransactionNestLevel())
	{
		call_level = 0;
		wait_depth = 0;
	}
}

void
BookingStatsInit(void)
{
	DefineCustomBoolVariable("booking.track_stats",
							 "Counts the calls of the booking API for booking.stats().",
							 "Needs booking in shared_preload_libraries.  Off: nothing is counted.",
							 &booking_track_stats,
							 true,
							 PGC_SUSET,
							 0,
							 NULL, NULL, NULL);
	RegisterXactCallback(StatsXactCallback, NULL);
	RegisterSubXactCallback(StatsSubXactCallback, NULL);

	/* shared memory can only be asked for while preloading */
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = StatsShmemRequest;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = StatsShmemStartup;
}

/* The slot of a public function name, registered on its first call; -1: full. */
static int
RegisterName(const char *name)
{
	uint32		n = pg_atomic_read_u32(&stats->nfunctions);
	int			slot = -1;

	pg_read_barrier();
	for (uint32 i = 0; i < n; i++)
		if (strcmp(stats->names[i], name) == 0)
			return (int) i;

	LWLockAcquire(stats->lock, LW_EXCLUSIVE);
	n = pg_atomic_read_u32(&stats->nfunctions);
	for (uint32 i = 0; i < n; i++)
		if (strcmp(stats->names[i], name) == 0)
			slot = (int) i;
	if (slot < 0 && n < STATS_MAX_FUNCTIONS)
	{
		strlcpy(stats->names[n], name, NAMEDATALEN);
		/* readers see the name before the count that includes it */
		pg_write_barrier();
		pg_atomic_write_u32(&stats->nfunctions, n + 1);
		slot = (int) n;
	}
	LWLockRelease(stats->lock);
	return slot;
}

/*
 * The slot a function counts under: its public name (booking.shard_<name>
 * counts as <name>), or -1 for a twin with no public function.  One catalog
 * lookup per function and backend.
 */
static int
SlotOf(Oid fn)
{
	HeapTuple	tp;
	Form_pg_proc proc;
	const char *name;
	bool		is_public = true;
	int			slot = -1;

	for (int i = 0; i < ncached; i++)
		if (cached[i].fn == fn)
			return cached[i].slot;

	tp = SearchSysCache1(PROCOID, ObjectIdGetDatum(fn));
	if (!HeapTupleIsValid(tp))
		return -1;
	proc = (Form_pg_proc) GETSTRUCT(tp);
	name = NameStr(proc->proname);
	if (strncmp(name, "shard_", 6) == 0)
	{
		CatCList   *list;

		name += 6;
		is_public = false;
		list = SearchSysCacheList1(PROCNAMEARGSNSP, CStringGetDatum(name));
		for (int i = 0; i < list->n_members; i++)
			if (((Form_pg_proc) GETSTRUCT(&list->members[i]->tuple))->pronamespace ==
				proc->pronamespace)
				is_public = true;
		ReleaseSysCacheList(list);
	}
	if (is_public)
		slot = RegisterName(name);
	ReleaseSysCache(tp);

	/* OIDs change only when the extension is created again: start over */
	if (ncached == STATS_MAX_CACHED)
		ncached = 0;
	cached[ncached].fn = fn;
	cached[ncached].slot = slot;
	ncached++;
	return slot;
}

/* Starts timing a call, unless it is not counted (slot -1). */
void
BookingStatsBegin(FunctionCallInfo fcinfo, BookingStatsCall *sc)
{
	sc->slot = -1;
	if (stats == NULL || !booking_track_stats || call_level != 0 ||
		fcinfo->flinfo == NULL)
		return;
	sc->slot = SlotOf(fcinfo->flinfo->fn_oid);
	if (sc->slot < 0)
		return;
	call_level = GetCurrentTransactionNestLevel();
	call_wait_ns = 0;
	wait_depth = 0;
	INSTR_TIME_SET_CURRENT(sc->start);
}

/* Counts a call under its result code. */
void
BookingStatsEnd(BookingStatsCall *sc, BookingCode code)
{
	instr_time	now;
	uint64		ns;
	uint64		max;
	StatsCounter *c;

	if (sc->slot < 0)
		return;
	INSTR_TIME_SET_CURRENT(now);
	/* a wait that an error ended, caught by the frame's guard */
	if (wait_depth > 0)
		call_wait_ns += ElapsedNs(wait_start, now);
	wait_depth = 0;
	call_level = 0;
	if ((int) code < 0 || (int) code >= STATS_NUM_CODES)
		return;

	ns = ElapsedNs(sc->start, now);
	c = &stats->counters[sc->slot][code];
	pg_atomic_fetch_add_u64(&c->calls, 1);
	pg_atomic_fetch_add_u64(&c->total_ns, ns);
	if (call_wait_ns > 0)
		pg_atomic_fetch_add_u64(&c->lock_wait_ns, call_wait_ns);
	max = pg_atomic_read_u64(&c->max_ns);
	while (ns > max && !pg_atomic_compare_exchange_u64(&c->max_ns, &max, ns))
		;
}

/* Brackets a wait for a lock; nested brackets count once. */
void
BookingStatsWaitBegin(void)
{
	if (call_level == 0)
		return;
	if (wait_depth++ == 0)
		INSTR_TIME_SET_CURRENT(wait_start);
}

void
BookingStatsWaitEnd(void)
{
	instr_time	now;

	if (call_level == 0 || wait_depth == 0)
		return;
	if (--wait_depth > 0)
		return;
	INSTR_TIME_SET_CURRENT(now);
	call_wait_ns += ElapsedNs(wait_start, now);
}

static void
NoticeNotPreloaded(void)
{
	ereport(NOTICE,
			(errmsg("booking statistics are not collected: booking is not in shared_preload_libraries"),
			 errdetail("The counters live in shared memory, which a library can only reserve when the server loads it at start."),
			 errhint("Add booking to shared_preload_libraries and restart the server.")));
}

/*
 * booking.stats(): one row per function and result code that has calls.
 * Codes that share a name (ok with 201 and with 200) are one row.
 */
Datum
booking_stats(PG_FUNCTION_ARGS)
{
	ReturnSetInfo *rsinfo;
	uint32		n;

	InitMaterializedSRF(fcinfo, 0);
	rsinfo = (ReturnSetInfo *) fcinfo->resultinfo;
	if (stats == NULL)
	{
		NoticeNotPreloaded();
		return (Datum) 0;
	}

	n = pg_atomic_read_u32(&stats->nfunctions);
	pg_read_barrier();
	for (uint32 f = 0; f < n; f++)
	{
		for (int c = 0; c < STATS_NUM_CODES; c++)
		{
			const char *code = BookingCodeName((BookingCode) c);
			uint64		calls = 0;
			uint64		total = 0;
			uint64		max = 0;
			uint64		wait = 0;
			bool		merged = false;
			Datum		values[6];
			bool		nulls[6] = {false};

			for (int d = 0; d < c; d++)
				if (strcmp(BookingCodeName((BookingCode) d), code) == 0)
					merged = true;
			if (merged)
				continue;
			for (int d = c; d < STATS_NUM_CODES; d++)
			{
				StatsCounter *sc = &stats->counters[f][d];

				if (strcmp(BookingCodeName((BookingCode) d), code) != 0)
					continue;
				calls += pg_atomic_read_u64(&sc->calls);
				total += pg_atomic_read_u64(&sc->total_ns);
				max = Max(max, pg_atomic_read_u64(&sc->max_ns));
				wait += pg_atomic_read_u64(&sc->lock_wait_ns);
			}
			if (calls == 0)
				continue;
			values[0] = CStringGetTextDatum(stats->names[f]);
			values[1] = CStringGetTextDatum(code);
			values[2] = Int64GetDatum((int64) calls);
			values[3] = Float8GetDatum(total / 1e6);
			values[4] = Float8GetDatum(max / 1e6);
			values[5] = Float8GetDatum(wait / 1e6);
			tuplestore_putvalues(rsinfo->setResult, rsinfo->setDesc, values, nulls);
		}
	}
	return (Datum) 0;
}

/*
 * booking.stats_reset(): every counter to zero.  Calls that end meanwhile
 * may land on either side of it.
 */
Datum
booking_stats_reset(PG_FUNCTION_ARGS)
{
	uint32		n;

	/* EXECUTE is the gate: not PUBLIC's, granted by grant_admin */
	if (stats == NULL)
	{
		NoticeNotPreloaded();
		PG_RETURN_VOID();
	}
	n = pg_atomic_read_u32(&stats->nfunctions);
	for (uint32 f = 0; f < n; f++)
		for (int c = 0; c < STATS_NUM_CODES; c++)
		{
			StatsCounter *sc = &stats->counters[f][c];

			pg_atomic_write_u64(&sc->calls, 0);
			pg_atomic_write_u64(&sc->total_ns, 0);
			pg_atomic_write_u64(&sc->max_ns, 0);
			pg_atomic_write_u64(&sc->lock_wait_ns, 0);
		}
	PG_RETURN_VOID();
}
