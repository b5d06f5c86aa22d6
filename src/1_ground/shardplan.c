/*
 * shardplan.c
 *	  A twin's statement run on its shard's own tables on this node, not
 *	  through Citus.
 *
 *	  Every statement a twin makes on a distributed table goes through
 *	  Citus's planner, which finds the shard, writes the shard's query out
 *	  as text, and parses, analyzes and plans that text again to run it
 *	  here: on a worker serving sales that was about as much CPU as the
 *	  sale itself (perf, bench/scaleout.sh engine).  While the running twin
 *	  holds its shard (shard.c, BookingHoldShard: no move can switch the
 *	  shard over before the transaction ends), the few statements of the
 *	  sale's path that ask for it here run instead on the shard's tables by
 *	  name, from a plan kept per statement and shard, as on one server.
 *
 *	  Citus is told what its own local execution would have told it
 *	  (citus_local.c).  When the transaction already reached this node's
 *	  shards through a connection, BookingHeldShardTable names no table and
 *	  the statement goes through Citus.
 *
 *	  Layer 1, the ground.  Takes no locks of its own beyond the
 *	  statement's.
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/builtins.h"
#include "utils/hsearch.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "booking.h"
#include "1_ground/citus_local.h"
#include "1_ground/shard.h"
#include "1_ground/shardplan.h"
#include "1_ground/spi.h"
#include "1_ground/tables.h"

/* a statement on one shard's tables: bounded, a few statements times this node's shards */
#define MAX_SHARD_PLANS 128

typedef struct ShardPlanKey
{
	BookingPlan *plan;
	int64		home;
} ShardPlanKey;

typedef struct ShardPlan
{
	ShardPlanKey key;
	bool		used[BOOKING_NUM_TABLES];	/* the tables the statement names */
	Oid			relids[BOOKING_NUM_TABLES]; /* the shard tables it was planned on */
	SPIPlanPtr	plan;
} ShardPlan;

static HTAB *shard_plans = NULL;

/* the table of booking.<name> (name of len bytes), or -1 */
static int
TableNamed(const char *name, size_t len)
{
	for (int t = 0; t < BOOKING_NUM_TABLES; t++)
	{
		const char *table = BookingTableName((BookingTable) t);

		if (strlen(table) == len && strncmp(table, name, len) == 0)
			return t;
	}
	return -1;
}

/*
 * Walks the statement's "booking.<name>"s: with buf NULL marks the tables
 * it names in used; with buf, writes the statement with each table's name
 * replaced by its shard's (relids).
 */
static void
WalkTables(const char *sql, bool *used, const Oid *relids, StringInfo buf)
{
	const char *p = sql;
	const char *q;

	while ((q = strstr(p, "booking.")) != NULL)
	{
		const char *name = q + strlen("booking.");
		size_t		len = strspn(name, "abcdefghijklmnopqrstuvwxyz_0123456789");
		int			t = TableNamed(name, len);

		if (buf != NULL)
		{
			appendBinaryStringInfo(buf, p, name - p);
			if (t >= 0)
				appendStringInfoString(buf, quote_identifier(get_rel_name(relids[t])));
			else
				appendBinaryStringInfo(buf, name, len);
		}
		else if (t >= 0)
			used[t] = true;
		p = name + len;
	}
	if (buf != NULL)
		appendStringInfoString(buf, p);
}

/* the kept plans; all dropped when they reach MAX_SHARD_PLANS and one more is wanted */
static HTAB *
ShardPlans(bool adding)
{
	HASHCTL		ctl;

	if (shard_plans != NULL && adding && hash_get_num_entries(shard_plans) >= MAX_SHARD_PLANS)
	{
		HASH_SEQ_STATUS seq;
		ShardPlan  *entry;

		hash_seq_init(&seq, shard_plans);
		while ((entry = hash_seq_search(&seq)) != NULL)
			if (entry->plan != NULL)
				SPI_freeplan(entry->plan);
		hash_destroy(shard_plans);
		shard_plans = NULL;
	}
	if (shard_plans == NULL)
	{
		ctl.keysize = sizeof(ShardPlanKey);
		ctl.entrysize = sizeof(ShardPlan);
		ctl.hcxt = TopMemoryContext;
		shard_plans = hash_create("booking shard plans", 64, &ctl,
								  HASH_ELEM | HASH_BLOBS | HASH_CONTEXT);
	}
	return shard_plans;
}

/* plan's statement on home's shard tables here, or NULL: go through Citus */
static SPIPlanPtr
PlanOnShard(BookingPlan *plan, int64 home)
{
	ShardPlanKey key;
	ShardPlan  *entry;
	Oid			relids[BOOKING_NUM_TABLES] = {InvalidOid};
	bool		found;

	if (BookingHeldShard() < 0)
		return NULL;
	memset(&key, 0, sizeof(key));
	key.plan = plan;
	key.home = home;
	entry = hash_search(ShardPlans(false), &key, HASH_FIND, NULL);
	if (entry == NULL)
	{
		entry = hash_search(ShardPlans(true), &key, HASH_ENTER, &found);
		entry->plan = NULL;
		memset(entry->used, 0, sizeof(entry->used));
		WalkTables(plan->sql, entry->used, NULL, NULL);
	}
	for (int t = 0; t < BOOKING_NUM_TABLES; t++)
		if (entry->used[t] && !OidIsValid(relids[t] = BookingHeldShardTable((BookingTable) t, home)))
			return NULL;
	/* the shard moved away and back, or a table was dropped: plan again */
	if (entry->plan != NULL &&
		(memcmp(entry->relids, relids, sizeof(relids)) != 0 || !SPI_plan_is_valid(entry->plan)))
	{
		SPI_freeplan(entry->plan);
		entry->plan = NULL;
	}
	if (entry->plan == NULL)
	{
		StringInfoData sql;
		SPIPlanPtr	fresh;

		for (int t = 0; t < BOOKING_NUM_TABLES; t++)
			if (entry->used[t] && get_rel_name(relids[t]) == NULL)
				return NULL;
		initStringInfo(&sql);
		WalkTables(plan->sql, NULL, relids, &sql);
		fresh = SPI_prepare_cursor(sql.data, plan->nargs, plan->argtypes, plan->cursor_options);
		if (fresh == NULL)
			elog(ERROR, "SPI_prepare failed for \"%s\": %s",
				 sql.data, SPI_result_code_string(SPI_result));
		if (SPI_keepplan(fresh) != 0)
			elog(ERROR, "SPI_keepplan failed");
		pfree(sql.data);
		entry->plan = fresh;
		memcpy(entry->relids, relids, sizeof(relids));
	}
	return entry->plan;
}

/*
 * Runs plan, whose rows all have home (every table it names is one of
 * booking's distributed tables, filtered on or written with that home), on
 * home's shard tables when the running twin holds that shard here: true,
 * with the number of rows processed.  False, having run nothing, when it
 * does not.
 */
bool
BookingTryOnShard(BookingPlan *plan, int64 home, Datum *values, const char *nulls,
				  bool read_only, long tcount, int *processed)
{
	SPIPlanPtr	shard_plan;
	int			rc;

	/* Citus must be told of the work here, as its local execution tells it */
	if (!BookingDistributed() || !BookingCitusLocalKnown() ||
		(shard_plan = PlanOnShard(plan, home)) == NULL)
		return false;
	BookingCitusLocalUsed(!read_only);
	rc = SPI_execute_plan(shard_plan, values, nulls, read_only, tcount);
	if (rc < 0)
		elog(ERROR, "SPI_execute_plan failed for \"%s\" on a shard: %s",
			 plan->sql, SPI_result_code_string(rc));
	*processed = (int) SPI_processed;
	return true;
}

/* BookingTryOnShard, or else through Citus (BookingExecute) */
int
BookingExecuteOnShard(BookingPlan *plan, int64 home, Datum *values, const char *nulls,
					  bool read_only, long tcount)
{
	int			processed;

	if (BookingTryOnShard(plan, home, values, nulls, read_only, tcount, &processed))
		return processed;
	return BookingExecute(plan, values, nulls, read_only, tcount);
}
