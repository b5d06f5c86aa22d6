/*
 * shard.c
 *	  Where a row lives: its "home".  On one server every home is 0.  Once
 *	  booking.distribute() has distributed the tables on Citus by their home
 *	  column, a row's home is the representative of its shard: the smallest
 *	  non-negative bigint whose hash falls in that shard's range.  Any id the
 *	  API takes (a resource, a pool, a booking) hashes into the shard that
 *	  holds it, so home = representative(shard(hash(id))) is computed from
 *	  the id alone, every statement filters on it, and Citus routes the
 *	  statement (and the call) to that one shard.
 *
 *	  For that to hold, ids are drawn to land where they belong: a unit's in
 *	  its pool's shard, a booking's in its resource's.  Each node draws from
 *	  its own copy of the extension's sequences (Citus gives extension
 *	  sequences no per-node ranges), so an id is built from the node's group
 *	  id and its sequence value, then a small counter that searches for the
 *	  shard wanted.
 *
 *	  The shard map is read from Citus's catalogs (pg_dist_partition,
 *	  pg_dist_shard) once per backend and dropped on a relcache invalidation
 *	  of booking.resources, which Citus sends when it changes the metadata.
 *
 *	  Layer 1, the ground: every statement of every layer filters on the
 *	  home of the rows it touches, on one server as on Citus.  Routing a
 *	  call to the node of its home is 5_scaleout's.  Takes no locks of its
 *	  own beyond catalog reads, the share lock of BookingAwaitShardMove, and
 *	  the same lock held to the end of the transaction by BookingHoldShard.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/stratnum.h"
#include "access/table.h"
#include "access/xact.h"
#include "catalog/namespace.h"
#include "catalog/pg_namespace.h"
#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "miscadmin.h"
#include "storage/lock.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "booking.h"
#include "1_ground/citus_local.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/tables.h"

/* an id is ((block << GROUP_BITS | group) << SEARCH_BITS) | j */
#define GROUP_BITS 8
#define SEARCH_BITS 8

typedef struct ShardMap
{
	bool		loaded;
	bool		distributed;
	int			nshards;
	int32	   *minvalue;		/* sorted by minvalue */
	int32	   *maxvalue;
	int64	   *rep;			/* each shard's home */
	int64	   *shardid[BOOKING_NUM_TABLES];
	Oid		   *localrel[BOOKING_NUM_TABLES];	/* 0: not looked up; Invalid: not here */
	int32		group;			/* this node's group id */
	uint32		colocation;		/* the tables' co-location group */
} ShardMap;

static ShardMap shard_map;
static MemoryContext shard_context = NULL;

/* the shard the running twin holds the metadata lock of, placed here (BookingHoldShard) */
static int	held_shard = -1;

/* counts the changes of Citus's metadata seen here (a shard move among them) */
static uint64 shard_map_generation = 0;

/*
 * booking.resources, as the map last saw it: tables.c's callback calls ours
 * before it forgets its OIDs, and a later one may find them gone
 */
static Oid	watched_relid = InvalidOid;

static void
ForgetShardMap(Oid relid)
{
	if (!OidIsValid(relid) || relid == watched_relid)
	{
		shard_map_generation++;
		if (!shard_map.loaded)
			return;
		shard_map.loaded = false;
		if (shard_context != NULL)
			MemoryContextReset(shard_context);
	}
}

/*
 * A number that changes whenever Citus's metadata for the tables may have
 * changed: a call that fails while it changes was caught by a shard move.
 */
uint64
BookingShardMapGeneration(void)
{
	AcceptInvalidationMessages();
	return shard_map_generation;
}

void
BookingShardInit(void)
{
	BookingTablesOnForget(ForgetShardMap);
}

static int32
HashInt8(int64 value)
{
	return DatumGetInt32(DirectFunctionCall1(hashint8, Int64GetDatum(value)));
}

/* The index of the shard whose range holds hash; -1 if none does. */
static int
ShardOfHash(int32 hash)
{
	int			lo = 0;
	int			hi = shard_map.nshards - 1;

	while (lo <= hi)
	{
		int			mid = (lo + hi) / 2;

		if (hash < shard_map.minvalue[mid])
			hi = mid - 1;
		else if (hash > shard_map.maxvalue[mid])
			lo = mid + 1;
		else
			return mid;
	}
	return -1;
}

static bool
CitusCatalogPresent(void)
{
	return OidIsValid(get_relname_relid("pg_dist_shard", PG_CATALOG_NAMESPACE)) &&
		OidIsValid(get_relname_relid("pg_dist_partition", PG_CATALOG_NAMESPACE)) &&
		OidIsValid(get_relname_relid("pg_dist_local_group", PG_CATALOG_NAMESPACE));
}

static void
LoadShardMap(void)
{
	MemoryContext old;
	int			n;
	int			found = 0;

	if (shard_map.loaded)
		return;
	if (shard_context == NULL)
		shard_context = AllocSetContextCreate(TopMemoryContext, "booking shard map",
											  ALLOCSET_SMALL_SIZES);
	MemoryContextReset(shard_context);
	memset(&shard_map, 0, sizeof(shard_map));
	watched_relid = BookingTableOid(BOOKING_TABLE_RESOURCES);

	if (!CitusCatalogPresent())
	{
		shard_map.loaded = true;
		return;
	}

	SPI_connect();
	n = SPI_execute("SELECT s.shardminvalue::pg_catalog.int4, s.shardmaxvalue::pg_catalog.int4, s.shardid, "
					"p.colocationid::pg_catalog.int8 "
					"FROM pg_catalog.pg_dist_shard s JOIN pg_catalog.pg_dist_partition p "
					"ON p.logicalrelid OPERATOR(pg_catalog.=) s.logicalrelid "
					"WHERE s.logicalrelid OPERATOR(pg_catalog.=) 'booking.resources'::pg_catalog.regclass "
					"AND p.partmethod OPERATOR(pg_catalog.=) 'h' "
					"ORDER BY 1", true, 0) == SPI_OK_SELECT ? (int) SPI_processed : 0;
	old = MemoryContextSwitchTo(shard_context);
	if (n > 0)
	{
		shard_map.nshards = n;
		shard_map.minvalue = palloc(sizeof(int32) * n);
		shard_map.maxvalue = palloc(sizeof(int32) * n);
		shard_map.rep = palloc(sizeof(int64) * n);
		for (int t = 0; t < BOOKING_NUM_TABLES; t++)
		{
			shard_map.shardid[t] = palloc0(sizeof(int64) * n);
			shard_map.localrel[t] = palloc0(sizeof(Oid) * n);
		}
		for (int i = 0; i < n; i++)
		{
			shard_map.minvalue[i] = BookingGetInt32(i, 1, NULL);
			shard_map.maxvalue[i] = BookingGetInt32(i, 2, NULL);
			shard_map.shardid[BOOKING_TABLE_RESOURCES][i] = BookingGetInt64(i, 3, NULL);
			shard_map.rep[i] = -1;
		}
		shard_map.colocation = (uint32) BookingGetInt64(0, 4, NULL);
	}
	MemoryContextSwitchTo(old);

	if (n > 0)
	{
		/* the co-located tables' shards, in the same order of ranges */
		for (int t = 0; t < BOOKING_NUM_TABLES; t++)
		{
			char		sql[512];
			int			m;

			if (t == BOOKING_TABLE_RESOURCES)
				continue;
			snprintf(sql, sizeof(sql),
					 "SELECT s.shardid FROM pg_catalog.pg_dist_shard s "
					 "WHERE s.logicalrelid OPERATOR(pg_catalog.=) 'booking.%s'::pg_catalog.regclass "
					 "ORDER BY s.shardminvalue::pg_catalog.int4", BookingTableName(t));
			m = SPI_execute(sql, true, 0) == SPI_OK_SELECT ? (int) SPI_processed : 0;
			if (m != n)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("booking.%s is not co-located with booking.resources", BookingTableName(t)),
						 errhint("Run SELECT booking.distribute() on the coordinator.")));
			for (int i = 0; i < n; i++)
				shard_map.shardid[t][i] = BookingGetInt64(i, 1, NULL);
		}
		if (SPI_execute("SELECT groupid FROM pg_catalog.pg_dist_local_group", true, 1) == SPI_OK_SELECT &&
			SPI_processed == 1)
			shard_map.group = BookingGetInt32(0, 1, NULL);
	}
	SPI_finish();

	/* each shard's representative: the smallest home that hashes into it */
	for (int64 h = 0; found < n; h++)
	{
		int			k = ShardOfHash(HashInt8(h));

		if (k >= 0 && shard_map.rep[k] < 0)
		{
			shard_map.rep[k] = h;
			found++;
		}
	}
	shard_map.distributed = n > 0;
	shard_map.loaded = true;
	BookingSpiCustomPlans(shard_map.distributed);
}

/* Whether the booking tables are distributed on a Citus cluster. */
bool
BookingDistributed(void)
{
	LoadShardMap();
	return shard_map.distributed;
}

/* The home of the rows an id (of a resource, a pool or a booking) belongs with. */
int64
BookingHome(int64 id)
{
	int			k;

	LoadShardMap();
	if (!shard_map.distributed)
		return 0;
	k = ShardOfHash(HashInt8(id));
	if (k < 0)
		ereport(ERROR,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("no shard of booking.resources covers the hash of %lld", (long long) id)));
	return shard_map.rep[k];
}

/* Every home: {0}, or one per shard. */
int
BookingAllHomes(int64 **homes)
{
	LoadShardMap();
	if (!shard_map.distributed)
	{
		*homes = palloc(sizeof(int64));
		(*homes)[0] = 0;
		return 1;
	}
	*homes = palloc(sizeof(int64) * shard_map.nshards);
	memcpy(*homes, shard_map.rep, sizeof(int64) * shard_map.nshards);
	return shard_map.nshards;
}

/*
 * A new id drawn from seq that lands in home's shard (home < 0: in any
 * shard).  On one server, plain nextval().  Runs inside the caller's SPI
 * connection.
 */
int64
BookingNewId(const char *seq, int64 home)
{
	char		sql[128];
	int			k;

	snprintf(sql, sizeof(sql),
			 "SELECT pg_catalog.nextval('booking.%s'::pg_catalog.regclass)", seq);
	LoadShardMap();
	if (!shard_map.distributed)
	{
		if (SPI_execute(sql, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "could not draw from booking.%s", seq);
		return BookingGetInt64(0, 1, NULL);
	}
	if (shard_map.group < 0 || shard_map.group >= (1 << GROUP_BITS))
		ereport(ERROR,
				(errcode(ERRCODE_PROGRAM_LIMIT_EXCEEDED),
				 errmsg("node group %d is beyond the %d nodes booking can number ids for",
						shard_map.group, (1 << GROUP_BITS) - 1)));
	k = home < 0 ? -1 : ShardOfHash(HashInt8(home));
	for (;;)
	{
		int64		block;
		int64		base;

		if (SPI_execute(sql, false, 1) != SPI_OK_SELECT || SPI_processed != 1)
			elog(ERROR, "could not draw from booking.%s", seq);
		block = BookingGetInt64(0, 1, NULL);
		if (block > (PG_INT64_MAX >> (GROUP_BITS + SEARCH_BITS)))
			ereport(ERROR,
					(errcode(ERRCODE_SEQUENCE_GENERATOR_LIMIT_EXCEEDED),
					 errmsg("booking.%s has run out of ids for a distributed cluster", seq)));
		base = ((block << GROUP_BITS) | shard_map.group) << SEARCH_BITS;
		if (home < 0)
			return base;
		for (int64 j = 0; j < (1 << SEARCH_BITS); j++)
		{
			if (ShardOfHash(HashInt8(base | j)) == k)
				return base | j;
		}
	}
}

/*
 * Takes the share lock on the metadata of home's co-located shards that
 * Citus's own writes take, and sets *tag and *k (the shard's index); false,
 * taking nothing, when nothing is distributed.  While Citus switches a
 * shard over to its new node it holds an exclusive lock on that metadata to
 * the end of the move: for hash-distributed tables an advisory lock of
 * class 8 on (shard index, co-location id), Citus's
 * SET_LOCKTAG_COLOCATED_SHARDS_METADATA_RESOURCE (class 4 on the shard id
 * is only for tables that are not co-located).  So the share lock waits
 * for a move, and keeps one from switching over while it is held.
 */
static bool
ShareShardMetadata(int64 home, LOCKTAG *tag, int *k)
{
	LoadShardMap();
	if (!shard_map.distributed)
		return false;
	*k = ShardOfHash(HashInt8(home));
	if (*k < 0)
		return false;
	/* shard_map is sorted by range: k is Citus's shard index */
	SET_LOCKTAG_ADVISORY(*tag, MyDatabaseId, (uint32) *k, shard_map.colocation, 8);
	(void) LockAcquire(tag, ShareLock, false, false);
	return true;
}

/*
 * Waits until no shard move holds the shard of home, so that what the move
 * changed in the metadata is visible here.
 */
void
BookingAwaitShardMove(int64 home)
{
	LOCKTAG		tag;
	int			k;

	if (ShareShardMetadata(home, &tag, &k))
		LockRelease(&tag, ShareLock, false);
}

/*
 * The group of the node that holds shardid, as committed now (a catalog
 * snapshot, not the statement's), or -1.  Citus keeps one placement of each
 * of our shards; a move replaces it at its switch over.
 */
static int32
PlacementGroup(int64 shardid)
{
	Oid			relid = get_relname_relid("pg_dist_placement", PG_CATALOG_NAMESPACE);
	Oid			indexid = get_relname_relid("pg_dist_placement_shardid_index", PG_CATALOG_NAMESPACE);
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	AttrNumber	shard_att;
	AttrNumber	group_att;
	int32		group = -1;

	if (!OidIsValid(relid))
		return -1;
	rel = table_open(relid, AccessShareLock);
	shard_att = get_attnum(relid, "shardid");
	group_att = get_attnum(relid, "groupid");
	if (shard_att == InvalidAttrNumber || group_att == InvalidAttrNumber)
		elog(ERROR, "pg_catalog.pg_dist_placement has no shardid or groupid");
	ScanKeyInit(&key, shard_att, BTEqualStrategyNumber, F_INT8EQ, Int64GetDatum(shardid));
	scan = systable_beginscan(rel, indexid, OidIsValid(indexid), NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
	{
		bool		isnull;
		Datum		d = heap_getattr(tuple, group_att, RelationGetDescr(rel), &isnull);

		if (!isnull)
			group = DatumGetInt32(d);
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return group;
}

/*
 * The host name and port of the node that holds home's shards, as
 * committed now; false when nothing is distributed, the shards are on this
 * node, or Citus's catalogs name no node for them.
 */
bool
BookingShardNode(int64 home, char **nodename, int32 *nodeport)
{
	Oid			relid;
	Relation	rel;
	SysScanDesc scan;
	HeapTuple	tuple;
	AttrNumber	group_att;
	AttrNumber	name_att;
	AttrNumber	port_att;
	int32		group;
	int			k;
	bool		found = false;

	LoadShardMap();
	if (!shard_map.distributed)
		return false;
	k = ShardOfHash(HashInt8(home));
	if (k < 0)
		return false;
	group = PlacementGroup(shard_map.shardid[BOOKING_TABLE_RESOURCES][k]);
	if (group < 0 || group == shard_map.group)
		return false;
	relid = get_relname_relid("pg_dist_node", PG_CATALOG_NAMESPACE);
	if (!OidIsValid(relid))
		return false;
	group_att = get_attnum(relid, "groupid");
	name_att = get_attnum(relid, "nodename");
	port_att = get_attnum(relid, "nodeport");
	if (group_att == InvalidAttrNumber || name_att == InvalidAttrNumber || port_att == InvalidAttrNumber)
		elog(ERROR, "pg_catalog.pg_dist_node has no groupid, nodename or nodeport");
	/* a handful of rows, one per node: no index needed */
	rel = table_open(relid, AccessShareLock);
	scan = systable_beginscan(rel, InvalidOid, false, NULL, 0, NULL);
	while (!found && HeapTupleIsValid(tuple = systable_getnext(scan)))
	{
		TupleDesc	desc = RelationGetDescr(rel);
		bool		null_group,
					null_name,
					null_port;
		Datum		g = heap_getattr(tuple, group_att, desc, &null_group);
		Datum		n = heap_getattr(tuple, name_att, desc, &null_name);
		Datum		p = heap_getattr(tuple, port_att, desc, &null_port);

		if (null_group || null_name || null_port || DatumGetInt32(g) != group)
			continue;
		*nodename = TextDatumGetCString(n);
		*nodeport = DatumGetInt32(p);
		found = true;
	}
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return found;
}

/* this node's table of shard k of table, or InvalidOid */
static Oid
ShardTableHere(BookingTable table, int k)
{
	char		name[NAMEDATALEN];

	snprintf(name, sizeof(name), "%s_" INT64_FORMAT, BookingTableName(table),
			 shard_map.shardid[table][k]);
	return get_relname_relid(name, get_namespace_oid("booking", false));
}

/*
 * Before a call's twin works on home's shards on this node: holds, to the
 * end of the transaction, the share lock Citus's own writes take on the
 * metadata of those co-located shards, so that no move switches them over
 * while the call runs; then tells whether the call may run here.  It may
 * not when a table of the shard is here but the shard is held by another
 * node: the shard moved away (its old table waits for Citus's cleanup) or
 * is being copied here.  A node with no table of the shard (a call Citus
 * did not send on) may: Citus routes its statements.
 */
bool
BookingHoldShard(int64 home)
{
	LOCKTAG		tag;
	int			k;

	held_shard = -1;
	if (!ShareShardMetadata(home, &tag, &k))
		return true;
	/* held to the end of the transaction; a move that ended while we waited changed the metadata */
	AcceptInvalidationMessages();
	LoadShardMap();
	if (!shard_map.distributed || k >= shard_map.nshards)
		return true;
	if (PlacementGroup(shard_map.shardid[BOOKING_TABLE_RESOURCES][k]) == shard_map.group)
	{
		held_shard = k;
		return true;
	}
	return !OidIsValid(ShardTableHere(BOOKING_TABLE_RESOURCES, k));
}

/*
 * The shard whose metadata lock BookingHoldShard took and found placed
 * here, or -1; the twin that took it restores the one before when it ends.
 */
int
BookingHeldShard(void)
{
	return held_shard;
}

void
BookingSetHeldShard(int k)
{
	held_shard = k;
}

/* table's shard k here (the map loaded and distributed), or InvalidOid: BookingLocalShard */
static Oid
LocalShardAt(BookingTable table, int k)
{
	if (k < 0 || !BookingCitusLocalAllowed())
		return InvalidOid;
	if (shard_map.localrel[table][k] == 0)
	{
		Oid			relid = ShardTableHere(table, k);

		/* do not cache a miss: a shard may move here */
		if (!OidIsValid(relid) ||
			PlacementGroup(shard_map.shardid[table][k]) != shard_map.group)
			return InvalidOid;
		shard_map.localrel[table][k] = relid;
	}
	BookingCitusLocalUsed(false);
	return shard_map.localrel[table][k];
}

/*
 * home's shard of table on this node while the running twin holds that
 * shard (BookingHoldShard), or InvalidOid: statements may then go to the
 * shard's table itself, since no move can switch it over before the
 * transaction ends.
 */
Oid
BookingHeldShardTable(BookingTable table, int64 home)
{
	int			k;

	LoadShardMap();
	if (held_shard < 0 || !shard_map.distributed)
		return InvalidOid;
	k = ShardOfHash(HashInt8(home));
	return k == held_shard ? LocalShardAt(table, k) : InvalidOid;
}

/*
 * The local shard of one of the tables for home, or InvalidOid when this
 * node does not hold it (or nothing is distributed, or this transaction
 * reached this node's shards through a connection: citus_local.c).  A table
 * of a shard that moved away, kept until Citus's cleanup, is not held.
 * Tells Citus the transaction works on a shard here.
 */
Oid
BookingLocalShard(BookingTable table, int64 home)
{
	LoadShardMap();
	if (!shard_map.distributed)
		return InvalidOid;
	return LocalShardAt(table, ShardOfHash(HashInt8(home)));
}
