/*
 * route.c
 *	  Routing a call to the node that holds its shard, on a Citus cluster.
 *
 *	  Each API call that touches one resource (or one pool, or one booking)
 *	  has a twin, booking.shard_<name>, with the same arguments and one more,
 *	  home, that booking.distribute() registers with Citus as a distributed
 *	  function: Citus runs a call of the twin on the node that holds home's
 *	  shard, in one round trip, and every statement the twin makes there
 *	  filters on that home (force_delegation holds it to that).
 *
 *	  The public function is not itself delegated: on the coordinator it
 *	  checks its arguments, computes the home, and calls the twin through
 *	  SPI, inside a guard that turns a connection failure (the node is down)
 *	  into "busy".  A call delegated straight to a node that is down fails in
 *	  Citus before any code of ours runs; this costs a subtransaction and a
 *	  planning of the twin's call on the coordinator (docs/scale-out.md).
 *	  A call that is a statement of its own takes the direct route instead
 *	  (direct.c): the node is asked whether it answers, and the twin's call
 *	  goes there with no transaction block.
 *
 *	  On one server nothing here runs: BookingForwarding() is false.
 *
 *	  Layer 5, scale-out: the calls (6_calls) ask it first whether to run
 *	  here or on a node.  Takes no locks of its own.
 */
#include "postgres.h"

#include "access/genam.h"
#include "access/htup_details.h"
#include "access/table.h"
#include "catalog/indexing.h"
#include "catalog/pg_extension.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "lib/stringinfo.h"
#include "utils/array.h"
#include "utils/builtins.h"
#include "utils/fmgroids.h"
#include "utils/lsyscache.h"
#include "utils/syscache.h"

#include "booking.h"
#include "1_ground/guard.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/stats.h"
#include "2_locks/lock.h"
#include "3_frame/once.h"
#include "5_scaleout/direct.h"
#include "5_scaleout/remote.h"
#include "5_scaleout/route.h"

/* true while a twin runs its call here: do not route again */
static bool in_shard_call = false;

bool
BookingForwarding(void)
{
	return !in_shard_call && BookingDistributed();
}

/* The id a call routes by: its first argument, or the lowest of an array. */
static int64
RoutingId(FunctionCallInfo fcinfo)
{
	Oid		   *argtypes;
	int			nargs;

	/* the call itself names a NULL argument, as booking.<name> does */
	if (PG_ARGISNULL(0))
		return 0;
	(void) get_func_signature(fcinfo->flinfo->fn_oid, &argtypes, &nargs);
	if (nargs > 0 && argtypes[0] == INT8ARRAYOID)
	{
		ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(0);
		Datum	   *elems;
		bool	   *nulls;
		int			n;
		int64		low = PG_INT64_MAX;

		deconstruct_array(arr, INT8OID, 8, FLOAT8PASSBYVAL, TYPALIGN_DOUBLE, &elems, &nulls, &n);
		for (int i = 0; i < n; i++)
			if (!nulls[i] && DatumGetInt64(elems[i]) < low)
				low = DatumGetInt64(elems[i]);
		return low;
	}
	return PG_GETARG_INT64(0);
}

/* The role that owns extension booking. */
static Oid
ExtensionOwner(void)
{
	Relation	rel;
	ScanKeyData key;
	SysScanDesc scan;
	HeapTuple	tuple;
	Oid			owner = InvalidOid;

	rel = table_open(ExtensionRelationId, AccessShareLock);
	ScanKeyInit(&key, Anum_pg_extension_extname, BTEqualStrategyNumber, F_NAMEEQ,
				CStringGetDatum("booking"));
	scan = systable_beginscan(rel, ExtensionNameIndexId, true, NULL, 1, &key);
	tuple = systable_getnext(scan);
	if (HeapTupleIsValid(tuple))
		owner = ((Form_pg_extension) GETSTRUCT(tuple))->extowner;
	systable_endscan(scan);
	table_close(rel, AccessShareLock);
	return owner;
}

/*
 * A twin does what its public function does, without the checks that only
 * the public function can make (a pass member's expiry and group come from
 * the coordinator), so only the roles the public functions run as may call
 * one: the extension's owner (they are SECURITY DEFINER) and superusers.
 * Citus runs a delegated twin on its node as the user that called it, the
 * owner again.  Whatever EXECUTE an administrator grants on schema booking,
 * a client role that calls a twin directly gets 42501.
 */
static void
RequireInternalCaller(FunctionCallInfo fcinfo)
{
	Oid			user = GetUserId();
	char	   *name;
	const char *public_name = "<name>";

	if (superuser_arg(user) || user == ExtensionOwner())
		return;
	name = get_func_name(fcinfo->flinfo->fn_oid);
	if (name == NULL)
		name = "shard_*";
	/* a group member's twin is reached through the group's call */
	if (strcmp(name, "shard_seat_member") == 0)
		public_name = "reserve_seats";
	else if (strcmp(name, "shard_stay_member") == 0)
		public_name = "reserve_stays";
	else if (strncmp(name, "shard_", 6) == 0)
		public_name = name + 6;
	ereport(ERROR,
			(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
			 errmsg("booking.%s is internal", name),
			 errdetail("Only the extension's owner and superusers may call it; the public booking functions call it on the node that holds the shard."),
			 errhint("Call booking.%s instead.", public_name)));
}

/*
 * A twin's call, on the node Citus sent it to.  Citus sent it by the shard
 * map it had when the call was planned; a shard move may have switched the
 * shard over to another node since, or be about to.  So the call first
 * holds the shard's metadata lock here, as Citus's own writes do, which
 * keeps any move from switching over until this transaction ends, and then
 * finds whether the shard is still held here.  When it moved away the call
 * answers retry, having written nothing, and the next call goes to the
 * shard's new node; a call never writes into the table a move left behind.
 */
static Datum
RunTwinBody(FunctionCallInfo fcinfo, PGFunction fn, int64 home)
{
	BookingResult res;

	BookingJoinDistributedTransaction();
	if (BookingHoldShard(home))
		return fn(fcinfo);
	BookingSetMoved(&res, RoutingId(fcinfo));
	fcinfo->isnull = false;
	return BookingResultDatum(fcinfo, &res);
}

/*
 * The entry of a twin: the call, run here.  Its last argument is the home
 * the caller computed; it must be the home of the call's first argument, so
 * that a direct call of a twin cannot write rows into the wrong shard.
 */
Datum
BookingRunOnShard(FunctionCallInfo fcinfo, PGFunction fn)
{
	int			last = PG_NARGS() - 1;
	int64		home;
	Datum		result;
	bool		was_in_shard_call = in_shard_call;
	int			was_held = BookingHeldShard();

	RequireInternalCaller(fcinfo);
	if (last < 1 || PG_ARGISNULL(last))
		ereport(ERROR,
				(errcode(ERRCODE_NULL_VALUE_NOT_ALLOWED),
				 errmsg("home must not be null")));
	home = PG_GETARG_INT64(last);
	if (home != BookingHome(RoutingId(fcinfo)))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("home %lld is not the home of the call's resource or booking", (long long) home),
				 errhint("Call the booking function without the shard_ prefix.")));

	/* restored, not reset: a twin may run inside another's call on this node */
	in_shard_call = true;
	PG_TRY();
	{
		result = RunTwinBody(fcinfo, fn, home);
	}
	PG_FINALLY();
	{
		in_shard_call = was_in_shard_call;
		BookingSetHeldShard(was_held);
	}
	PG_END_TRY();
	return result;
}

/* the plan that calls one twin, prepared once per backend */
typedef struct TwinPlan
{
	char		name[NAMEDATALEN];
	BookingPlan plan;
} TwinPlan;

#define MAX_TWINS 16
static TwinPlan twin_plans[MAX_TWINS];
static int	n_twin_plans = 0;

static BookingPlan *
TwinPlan_(const char *twin, int nargs, const Oid *argtypes)
{
	StringInfoData sql;
	TwinPlan   *tp;

	for (int i = 0; i < n_twin_plans; i++)
		if (strcmp(twin_plans[i].name, twin) == 0)
			return &twin_plans[i].plan;
	if (n_twin_plans >= MAX_TWINS)
		elog(ERROR, "too many routed booking functions");
	if (nargs > (int) lengthof(twin_plans[0].plan.argtypes))
		elog(ERROR, "booking.%s has too many arguments to route", twin);

	initStringInfo(&sql);
	appendStringInfoString(&sql, "SELECT r.ok, r.code, r.booking_id, r.http_status, r.message, r.replayed FROM booking.");
	appendStringInfoString(&sql, twin);
	appendStringInfoChar(&sql, '(');
	for (int i = 0; i < nargs; i++)
		appendStringInfo(&sql, "%s$%d", i > 0 ? ", " : "", i + 1);
	appendStringInfoString(&sql, ") AS r");

	tp = &twin_plans[n_twin_plans];
	strlcpy(tp->name, twin, sizeof(tp->name));
	tp->plan.sql = MemoryContextStrdup(TopMemoryContext, sql.data);
	tp->plan.nargs = nargs;
	for (int i = 0; i < nargs; i++)
		tp->plan.argtypes[i] = argtypes[i];
	tp->plan.plan = NULL;
	n_twin_plans++;
	return &tp->plan;
}

/*
 * Calls booking.<twin>(values...) through SPI (Citus runs it on the node
 * that holds the shard of its last argument, home) and puts its result in
 * res.  Errors, a node that is down among them, go to the caller's guard.
 */
void
BookingCallTwin(const char *twin, int nargs, const Oid *argtypes, Datum *values,
				const char *nulls, BookingResult *res)
{
	BookingPlan *plan = TwinPlan_(twin, nargs, argtypes);
	bool		isnull;
	char	   *code_name;
	BookingCode code;
	int32		http_status;
	int64		booking_id;

	if (BookingExecute(plan, values, nulls, false, 1) != 1)
		elog(ERROR, "a routed booking call returned no result");
	code_name = SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 2);
	http_status = BookingGetInt32(0, 4, NULL);
	if (strcmp(code_name, "ok") == 0)
		code = http_status == 201 ? BOOKING_CREATED : BOOKING_DONE;
	else if (!BookingCodeFromName(code_name, &code))
		elog(ERROR, "a routed booking call returned the unknown code \"%s\"", code_name);
	booking_id = BookingGetInt64(0, 3, &isnull);
	BookingSetResult(res, code, isnull ? -1 : booking_id, "%s",
					 SPI_getvalue(SPI_tuptable->vals[0], SPI_tuptable->tupdesc, 5));
	res->replayed = BookingGetBool(0, 6);
}

typedef struct ForwardArgs
{
	const char *twin;
	int			nargs;
	Oid		   *argtypes;
	Datum	   *values;
	char	   *nulls;
	BookingResult *res;
} ForwardArgs;

static void
RunForward(void *arg)
{
	ForwardArgs *fa = (ForwardArgs *) arg;

	BookingCallTwin(fa->twin, fa->nargs, fa->argtypes, fa->values, fa->nulls, fa->res);
}

/* a node that is down, as a result */
void
BookingSetUnreachable(BookingResult *res, int64 id)
{
	BookingSetResult(res, BOOKING_BUSY, -1,
					 "The node that holds the shard of %lld cannot be reached; try again shortly.",
					 (long long) id);
}

/* a call caught by a shard move, as a result: the next call is routed anew */
void
BookingSetMoved(BookingResult *res, int64 id)
{
	BookingSetResult(res, BOOKING_RETRY, -1,
					 "The shard of %lld moved to another node during the call; nothing was written, call again.",
					 (long long) id);
}

/*
 * A call made on the node that holds home's shard (a client connected to a
 * worker, or a call Citus delegated here: delegate.c) runs its own body
 * here, holding the shard, as its twin would.  Calling the twin through SPI
 * ran it in this backend too, after Citus had planned the call.  False when
 * the shard is not here (or has just moved away): the call is forwarded.
 */
static bool
RunHere(FunctionCallInfo fcinfo, int64 home, Datum *result)
{
	int			was_held = BookingHeldShard();

	if (!OidIsValid(BookingLocalShard(BOOKING_TABLE_RESOURCES, home)))
		return false;
	BookingJoinDistributedTransaction();
	if (!BookingHoldShard(home) || BookingHeldShard() < 0)
	{
		BookingSetHeldShard(was_held);
		return false;
	}
	in_shard_call = true;
	PG_TRY();
	{
		*result = FunctionCallInvoke(fcinfo);
	}
	PG_FINALLY();
	{
		in_shard_call = false;
		BookingSetHeldShard(was_held);
	}
	PG_END_TRY();
	return true;
}

/*
 * Calls the twin of the running function on the node that holds home's
 * shard, with the same arguments; returns its booking.result.  A node that
 * cannot be reached answers busy.
 */
Datum
BookingForward(FunctionCallInfo fcinfo, const char *twin, int64 home, int64 resource)
{
	Oid		   *sigtypes;
	int			nargs;
	Oid		   *argtypes;
	Datum	   *values;
	char	   *nulls;
	BookingResult res;
	ForwardArgs fa;
	BookingStatsCall sc;
	Datum		here;

	if (RunHere(fcinfo, home, &here))
		return here;
	/* a copy of this call made by (f(...)).* answers its result (3_frame/once.c) */
	if (BookingOnceRepeat(fcinfo, &res))
		return BookingResultDatum(fcinfo, &res);
	(void) get_func_signature(fcinfo->flinfo->fn_oid, &sigtypes, &nargs);
	argtypes = palloc(sizeof(Oid) * (nargs + 1));
	values = palloc(sizeof(Datum) * (nargs + 1));
	nulls = palloc(nargs + 1);
	for (int i = 0; i < nargs; i++)
	{
		argtypes[i] = sigtypes[i];
		nulls[i] = PG_ARGISNULL(i) ? 'n' : ' ';
		values[i] = PG_ARGISNULL(i) ? (Datum) 0 : PG_GETARG_DATUM(i);
	}
	argtypes[nargs] = INT8OID;
	values[nargs] = Int64GetDatum(home);
	nulls[nargs] = ' ';
	fa.twin = twin;
	fa.nargs = nargs + 1;
	fa.argtypes = argtypes;
	fa.values = values;
	fa.nulls = nulls;
	fa.res = &res;

	/* counted here as the client saw it; a twin run in this backend is not counted again */
	BookingStatsBegin(fcinfo, &sc);
	SPI_connect();
	if (BookingDirectRoute(fcinfo))
	{
		/* the direct route (direct.c): two round trips instead of four */
		if (BookingNodeAnswers(home))
		{
			int			nestlevel = BookingPushDirect();

			RunForward(&fa);
			BookingPopDirect(nestlevel);
		}
		else
			BookingSetUnreachable(&res, resource);
	}
	else
		switch (BookingRunGuardedRemote(RunForward, &fa, &home, 1))
		{
			case BOOKING_GUARD_DONE:
				break;
			case BOOKING_GUARD_UNREACHABLE:
				BookingSetUnreachable(&res, resource);
				break;
			case BOOKING_GUARD_MOVED:
				BookingSetMoved(&res, resource);
				break;
			case BOOKING_GUARD_BUSY:
				BookingSetLockOutcome(&res, BOOKING_LOCK_BUSY, resource, 0);
				break;
			case BOOKING_GUARD_RETRY:
			case BOOKING_GUARD_OVERLAP:
				BookingSetLockOutcome(&res, BOOKING_LOCK_RETRY, resource, 0);
				break;
		}
	SPI_finish();
	BookingStatsEnd(&sc, res.code);
	if (res.code == BOOKING_RETRY)
		BookingNoteSerializableRetry();
	BookingOnceRemember(fcinfo, &res);
	return BookingResultDatum(fcinfo, &res);
}
