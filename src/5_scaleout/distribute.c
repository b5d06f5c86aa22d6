/*
 * distribute.c
 *	  booking.distribute(shard_count): puts the booking tables on a Citus
 *	  cluster.  Run on the coordinator, after CREATE EXTENSION citus and
 *	  CREATE EXTENSION booking (Citus creates the extension on every node).
 *
 *	  It distributes the tables by home, co-located, over shard_count shards
 *	  (booking.consumers, small and read everywhere, becomes a reference
 *	  table), and registers each call's twin (route.c) as a distributed
 *	  function by home with force_delegation, so that Citus runs it on the
 *	  node that holds the shard.  It refuses tables that already hold rows:
 *	  their ids were not drawn to land in their shards (1_ground/shard.c).  Running it
 *	  again only registers what is missing.
 *
 *	  The AFTER TRUNCATE trigger of booking.resources is dropped on every
 *	  node: on a shard it would query the distributed bookings table, which a
 *	  shard's trigger may not.  The statement trigger that refuses DELETE and
 *	  UPDATE OF id is kept (Citus copies it to each shard; that needs
 *	  citus.enable_unsafe_triggers while the tables are distributed).
 *
 *	  Layer 5, scale-out; an admin call that sits with the routing it sets
 *	  up.  Locks: what CREATE and Citus's distribution functions take.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "booking.h"
#include "5_scaleout/distribute.h"

PG_FUNCTION_INFO_V1(booking_distribute);

#define BOOKING_MAX_SHARDS 4096

static const char *const twins[] = {
	"shard_reserve_seat(bigint, text, integer, interval, text, interval, jsonb, bigint)",
	"shard_reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb, bigint)",
	"shard_reserve_stays(bigint[], text, tstzrange, interval, text, interval, jsonb, bigint)",
	"shard_reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb, bigint)",
	"shard_confirm(bigint, text, bigint)",
	"shard_cancel(bigint, text, bigint)",
	"shard_extend_hold(bigint, interval, bigint)",
	"shard_extend_hold_until(bigint, timestamptz, bigint)",
	"shard_set_capacity(bigint, integer, bigint, bigint)",
	"shard_set_stripes(bigint, integer, bigint)",
	"shard_stay_member(bigint, text, tstzrange, timestamptz, bigint, interval, jsonb, bigint)",
	"shard_set_guest_limit(bigint, integer, bigint)",
	"shard_set_buffer(bigint, interval, interval, bigint)",
	"shard_reserve_seats(bigint[], text, integer[], interval, text, interval, jsonb, bigint)",
	"shard_seat_member(bigint, text, integer, timestamptz, bigint, interval, jsonb, bigint)",
	"shard_reduce(bigint, integer, text, bigint)",
	"shard_move_stay(bigint, tstzrange, text, interval, bigint)",
	"shard_join_waitlist(bigint, text, integer, text, jsonb, bigint)",
	"shard_set_time_zone(bigint, text, bigint)",
	"shard_set_check_times(bigint, time, time, bigint)",
	"shard_set_opening_hours(bigint, jsonb, bigint)",
	"shard_reserve_nights(bigint, text, date, date, interval, text, interval, jsonb, bigint)",
	"shard_reserve_series(bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb, bigint)",
	"shard_reserve_slot(bigint, text, tstzrange, integer, interval, text, interval, jsonb, bigint)",
};

/* distributed by home, co-located with the first */
static const char *const tables[] = {
	"booking.resources", "booking.bookings", "booking.resource_stripes", "booking.idempotency_keys",
	"booking.events", "booking.event_heads", "booking.deliveries"
};

/* small, read on every node: a copy on each */
static const char *const reference_tables[] = {
	"booking.consumers"
};

/*
 * Runs an admin call's statement (distribute, delegate_calls); returns the
 * first column of its first row, or NULL.
 */
char *
BookingAdminRun(const char *sql)
{
	int			rc = SPI_execute(sql, false, 0);

	if (rc < 0)
		elog(ERROR, "could not run \"%s\": %s", sql, SPI_result_code_string(rc));
	if (SPI_tuptable == NULL || SPI_processed == 0)
		return NULL;
	return SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 1);
}

bool
BookingAdminRunBool(const char *sql)
{
	char	   *v = BookingAdminRun(sql);

	return v != NULL && strcmp(v, "t") == 0;
}

/* table is distributed on Citus (which must be installed) */
bool
BookingIsDistributed(const char *table)
{
	return BookingAdminRunBool(psprintf("SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_partition "
							"WHERE logicalrelid OPERATOR(pg_catalog.=) '%s'::pg_catalog.regclass)",
							table));
}

/*
 * Distributes every table Citus does not know yet (all of them the first
 * time; after an update, the tables the new version added).
 */
static int
DistributeTables(int32 shard_count)
{
	int			distributed = 0;

	for (int i = 0; i < (int) lengthof(tables); i++)
	{
		char	   *sql;

		if (BookingIsDistributed(tables[i]))
			continue;
		if (i == 0)
			sql = psprintf("SELECT pg_catalog.create_distributed_table('%s', 'home', "
						   "shard_count => %d, colocate_with => 'none')", tables[i], shard_count);
		else
			sql = psprintf("SELECT pg_catalog.create_distributed_table('%s', 'home', "
						   "colocate_with => 'booking.resources')", tables[i]);
		(void) BookingAdminRun(sql);
		distributed++;
	}
	for (int i = 0; i < (int) lengthof(reference_tables); i++)
	{
		if (BookingIsDistributed(reference_tables[i]))
			continue;
		(void) BookingAdminRun(psprintf("SELECT pg_catalog.create_reference_table('%s')", reference_tables[i]));
		distributed++;
	}
	return distributed;
}

/* Registers every twin that Citus does not know as distributed yet. */
static int
RegisterTwins(void)
{
	int			registered = 0;

	for (int i = 0; i < (int) lengthof(twins); i++)
	{
		StringInfoData sql;

		initStringInfo(&sql);
		appendStringInfo(&sql,
						 "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_dist_object o "
						 "WHERE o.classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass "
						 "AND o.objid OPERATOR(pg_catalog.=) 'booking.%s'::pg_catalog.regprocedure "
						 "AND o.distribution_argument_index IS NOT NULL)", twins[i]);
		if (BookingAdminRunBool(sql.data))
			continue;
		resetStringInfo(&sql);
		appendStringInfo(&sql,
						 "SELECT pg_catalog.create_distributed_function('booking.%s'::pg_catalog.regprocedure, "
						 "'home', colocate_with => 'booking.resources', force_delegation => true)",
						 twins[i]);
		(void) BookingAdminRun(sql.data);
		registered++;
	}
	return registered;
}

/*
 * distribute(shard_count) returns a sentence that says what it did
 */
Datum
booking_distribute(PG_FUNCTION_ARGS)
{
	int32		shard_count = PG_ARGISNULL(0) ? 32 : PG_GETARG_INT32(0);
	char	   *workers;
	char	   *shards;
	char	   *message;
	int			registered;

	if (shard_count < 1 || shard_count > BOOKING_MAX_SHARDS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("shard_count must be between 1 and %d", BOOKING_MAX_SHARDS),
				 errdetail("The shard_count given is %d.", shard_count)));

	SPI_connect();
	if (!BookingAdminRunBool("SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension "
				 "WHERE extname OPERATOR(pg_catalog.=) 'citus')"))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("booking.distribute() needs the citus extension"),
				 errhint("Install Citus, add citus to shared_preload_libraries, run CREATE EXTENSION citus on every node, add the workers, then run booking.distribute() on the coordinator.")));
	if (!BookingAdminRunBool("SELECT pg_catalog.citus_is_coordinator()"))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("booking.distribute() runs on the coordinator"),
				 errhint("Call it on the node where citus_set_coordinator_host() was run.")));
	workers = BookingAdminRun("SELECT pg_catalog.count(*) FROM pg_catalog.citus_get_active_worker_nodes()");
	if (workers == NULL || strcmp(workers, "0") == 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("the Citus cluster has no active worker"),
				 errhint("Add one with SELECT citus_add_node(host, port), then run booking.distribute() again.")));

	if (BookingIsDistributed("booking.resources"))
	{
		int			added = DistributeTables(shard_count);

		registered = RegisterTwins();
		shards = BookingAdminRun("SELECT pg_catalog.count(*) FROM pg_catalog.pg_dist_shard "
					 "WHERE logicalrelid OPERATOR(pg_catalog.=) 'booking.resources'::pg_catalog.regclass");
		message = psprintf("booking is already distributed over %s shards on %s workers%s%s.",
						   shards, workers,
						   added > 0 ? psprintf("; %d new tables were distributed", added) : "",
						   registered > 0 ? psprintf("; %d calls were registered again", registered) : "");
		SPI_finish();
		PG_RETURN_TEXT_P(cstring_to_text(message));
	}

	if (BookingAdminRunBool("SELECT EXISTS (SELECT 1 FROM booking.resources) OR EXISTS (SELECT 1 FROM booking.bookings) "
				"OR EXISTS (SELECT 1 FROM booking.resource_stripes) "
				"OR EXISTS (SELECT 1 FROM booking.idempotency_keys)"))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("booking.distribute() needs empty booking tables"),
				 errdetail("On Citus every id is drawn to land in its shard (a unit in its pool's, a booking in its resource's); rows made on one server were not."),
				 errhint("Distribute a new database, then create the resources again through the API.")));

	/* the TRUNCATE guard queries bookings, which a shard's trigger may not */
	(void) BookingAdminRun("DROP TRIGGER IF EXISTS resources_no_orphans ON booking.resources");
	(void) BookingAdminRun("SELECT pg_catalog.run_command_on_workers("
			   "'DROP TRIGGER IF EXISTS resources_no_orphans ON booking.resources')");
	(void) BookingAdminRun("SET LOCAL citus.enable_unsafe_triggers = on");

	(void) DistributeTables(shard_count);
	registered = RegisterTwins();
	SPI_finish();

	message = psprintf("booking is distributed over %d shards on %s workers, and %d calls are routed to the node that holds their shard.",
					   shard_count, workers, registered);
	PG_RETURN_TEXT_P(cstring_to_text(message));
}
