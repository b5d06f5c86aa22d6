/*
 * tables.c
 *	  The extension's tables as the C code sees them: their OIDs, cached
 *	  until a relcache invalidation says the catalog changed, and the one
 *	  relcache callback of the extension, which drops every cache of table
 *	  facts: its own, and those of the files that register with
 *	  BookingTablesOnForget (the shard map, the key columns, whether a
 *	  consumer exists).  With Citus loaded, PostgreSQL's ten callback slots
 *	  run out fast, and a lower layer calls up only through such a hook.
 *
 *	  Layer 1, the ground.  Takes no locks beyond catalog reads.
 */
#include "postgres.h"

#include "catalog/namespace.h"
#include "utils/inval.h"
#include "utils/lsyscache.h"

#include "booking.h"
#include "1_ground/tables.h"

static const char *const table_names[BOOKING_NUM_TABLES] = {
	[BOOKING_TABLE_RESOURCES] = "resources",
	[BOOKING_TABLE_BOOKINGS] = "bookings",
	[BOOKING_TABLE_STRIPES] = "resource_stripes",
	[BOOKING_TABLE_KEYS] = "idempotency_keys",
	[BOOKING_TABLE_EVENTS] = "events",
};

static Oid	table_oids[BOOKING_NUM_TABLES];
static bool table_oids_valid = false;

/* the caches registered to be dropped with ours (the few the extension has) */
#define MAX_FORGET_HOOKS 4
static BookingTablesForgetFn forget_hooks[MAX_FORGET_HOOKS];
static int	n_forget_hooks = 0;

static void
ForgetTables(Datum arg, Oid relid)
{
	for (int i = 0; i < n_forget_hooks; i++)
		forget_hooks[i] (relid);
	if (!OidIsValid(relid))
	{
		table_oids_valid = false;
		return;
	}
	for (int i = 0; i < BOOKING_NUM_TABLES; i++)
		if (table_oids[i] == relid)
			table_oids_valid = false;
}

void
BookingTablesInit(void)
{
	CacheRegisterRelcacheCallback(ForgetTables, (Datum) 0);
}

/* Drops fn's cache with ours, at every relcache invalidation; from _PG_init. */
void
BookingTablesOnForget(BookingTablesForgetFn fn)
{
	if (n_forget_hooks >= MAX_FORGET_HOOKS)
		elog(ERROR, "too many caches of booking table facts");
	forget_hooks[n_forget_hooks++] = fn;
}

/* The name of a table in schema booking. */
const char *
BookingTableName(BookingTable table)
{
	return table_names[table];
}

/* The cached OID of a table, or InvalidOid; no catalog access (callbacks use it). */
Oid
BookingTableOidIfKnown(BookingTable table)
{
	return table_oids_valid ? table_oids[table] : InvalidOid;
}

/* The OID of one of the extension's tables; an error if it is missing. */
Oid
BookingTableOid(BookingTable table)
{
	if (!table_oids_valid)
	{
		Oid			nsp = get_namespace_oid("booking", false);

		for (int i = 0; i < BOOKING_NUM_TABLES; i++)
		{
			table_oids[i] = get_relname_relid(table_names[i], nsp);
			if (!OidIsValid(table_oids[i]))
				ereport(ERROR,
						(errcode(ERRCODE_UNDEFINED_TABLE),
						 errmsg("relation \"booking.%s\" does not exist", table_names[i]),
						 errhint("The installed library expects the newest schema: run ALTER EXTENSION booking UPDATE.")));
		}
		table_oids_valid = true;
	}
	return table_oids[table];
}

const char *
BookingStatusName(BookingStatus status)
{
	switch (status)
	{
		case BOOKING_STATUS_PENDING:
			return "pending";
		case BOOKING_STATUS_CONFIRMED:
			return "confirmed";
		case BOOKING_STATUS_CANCELLED:
			return "cancelled";
		case BOOKING_STATUS_EXPIRED:
			return "expired";
		case BOOKING_STATUS_WAITING:
			return "waiting";
	}
	return "unknown";
}
