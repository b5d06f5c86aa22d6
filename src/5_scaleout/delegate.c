/*
 * delegate.c
 *	  booking.delegate_calls(enabled): on a Citus coordinator, has Citus
 *	  send the client calls that touch one resource, pool or booking (named
 *	  by their first argument) straight to the node that holds its shard.
 *
 *	  By default such a call runs on the coordinator first: it asks the
 *	  node whether it answers, answers busy if not, and calls its twin there
 *	  (route.c, direct.c).  Delegated, a call that is a statement of its own
 *	  (SELECT * FROM booking.reserve_seat(...)) is sent by Citus's planner to
 *	  the node in one round trip, where it runs as its twin would (route.c's
 *	  RunHere): the coordinator's part and the question are saved, and a
 *	  node that cannot be reached fails the call with Citus's connection
 *	  error instead of answering busy.  Citus delegates nothing in a
 *	  transaction block, or inside a larger statement: those calls take the
 *	  guarded route as before and keep busy.
 *
 *	  The first argument hashes to the shard of the call's home (ids are
 *	  drawn so: 1_ground/shard.c), so Citus finds the node by it; each twin
 *	  checks the same.  Off removes the calls from Citus's distributed
 *	  objects on every node (pg_dist_object), where distribute() never put
 *	  them: Citus has no call that undoes create_distributed_function.
 *
 *	  Layer 5, scale-out; an admin call beside distribute().  Locks: what
 *	  Citus's create_distributed_function and the catalog writes take.
 */
#include "postgres.h"

#include "executor/spi.h"
#include "lib/stringinfo.h"
#include "utils/builtins.h"

#include "booking.h"
#include "5_scaleout/distribute.h"

PG_FUNCTION_INFO_V1(booking_delegate_calls);

/* the client calls with a twin whose home is their first argument's */
static const char *const delegable[] = {
	"reserve_seat(bigint, text, integer, interval, text, interval, jsonb)",
	"reserve_stay(bigint, text, tstzrange, interval, text, interval, jsonb)",
	"reserve_stay_any(bigint, text, tstzrange, interval, text, interval, jsonb)",
	"reserve_nights(bigint, text, date, date, interval, text, interval, jsonb)",
	"reserve_series(bigint, text, tstzrange, interval, integer, interval, text, interval, jsonb)",
	"reserve_slot(bigint, text, tstzrange, integer, interval, text, interval, jsonb)",
	"confirm(bigint, text)",
	"cancel(bigint, text)",
	"extend_hold(bigint, interval)",
	"extend_hold_until(bigint, timestamptz)",
	"reduce(bigint, integer, text)",
	"move_stay(bigint, tstzrange, text, interval)",
	"join_waitlist(bigint, text, integer, text, jsonb)",
};

/* the statement that forgets the calls as distributed objects, run on each node */
static char *
ForgetCalls(void)
{
	StringInfoData sql;

	initStringInfo(&sql);
	appendStringInfoString(&sql,
						   "DELETE FROM pg_catalog.pg_dist_object "
						   "WHERE classid OPERATOR(pg_catalog.=) 'pg_catalog.pg_proc'::pg_catalog.regclass "
						   "AND objid OPERATOR(pg_catalog.=) ANY (ARRAY[");
	for (int i = 0; i < (int) lengthof(delegable); i++)
		appendStringInfo(&sql, "%s'booking.%s'::pg_catalog.regprocedure::pg_catalog.oid",
						 i > 0 ? ", " : "", delegable[i]);
	appendStringInfoString(&sql, "])");
	return sql.data;
}

/*
 * delegate_calls(enabled) returns a sentence that says what it did
 */
Datum
booking_delegate_calls(PG_FUNCTION_ARGS)
{
	bool		enabled = PG_ARGISNULL(0) ? true : PG_GETARG_BOOL(0);
	StringInfoData sql;
	char	   *forget;
	char	   *failed;

	SPI_connect();
	if (!BookingAdminRunBool("SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_extension "
							 "WHERE extname OPERATOR(pg_catalog.=) 'citus')") ||
		!BookingIsDistributed("booking.resources"))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("booking.delegate_calls() needs booking distributed on Citus"),
				 errhint("Run booking.distribute() on the coordinator first.")));
	if (!BookingAdminRunBool("SELECT pg_catalog.citus_is_coordinator()"))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("booking.delegate_calls() runs on the coordinator"),
				 errhint("Call it on the node where booking.distribute() was run.")));

	if (enabled)
	{
		for (int i = 0; i < (int) lengthof(delegable); i++)
		{
			initStringInfo(&sql);
			appendStringInfo(&sql,
							 "SELECT pg_catalog.create_distributed_function('booking.%s'::pg_catalog.regprocedure, "
							 "'$1', colocate_with => 'booking.resources')", delegable[i]);
			(void) BookingAdminRun(sql.data);
		}
		SPI_finish();
		PG_RETURN_TEXT_P(cstring_to_text(psprintf(
			"%d calls are delegated: Citus sends one that is a statement of its own to the node that holds its shard, "
			"and a node that cannot be reached fails it with Citus's error instead of busy.",
			(int) lengthof(delegable))));
	}

	/* the workers first: a call made there must not go on being delegated */
	forget = ForgetCalls();
	initStringInfo(&sql);
	appendStringInfo(&sql,
					 "SELECT pg_catalog.string_agg(nodename || ':' || nodeport || ': ' || result, '; ') "
					 "FROM pg_catalog.run_command_on_workers(%s) WHERE NOT success",
					 quote_literal_cstr(forget));
	failed = BookingAdminRun(sql.data);
	if (failed != NULL)
		ereport(ERROR,
				(errcode(ERRCODE_CONNECTION_FAILURE),
				 errmsg("booking.delegate_calls(false) could not reach every worker"),
				 errdetail("%s", failed),
				 errhint("Call it again when every worker answers.")));
	(void) BookingAdminRun(forget);
	SPI_finish();
	PG_RETURN_TEXT_P(cstring_to_text(psprintf(
		"%d calls are routed by booking again: a node that cannot be reached answers busy.",
		(int) lengthof(delegable))));
}
