/*
 * once.c
 *	  One evaluation site, one call: SELECT (booking.reserve_seat(...)).*
 *	  expands, in PostgreSQL's parser, into one copy of the function call
 *	  per column of booking.result, and the executor evaluates each copy.
 *	  Without this file that booked six times, and (booking.cancel(b)).*
 *	  answered invalid_state for a booking it had just cancelled.
 *
 *	  Every call that returns booking.result remembers its call site and
 *	  result (call.c, and 5_scaleout/route.c, which uses this layer).  A
 *	  later evaluation is a copy of that call, and is answered the
 *	  remembered result without acting, when in the same
 *	  transaction and client statement it comes from another node of the
 *	  same plan (the same memory context) that is equal to the first one,
 *	  written at the same place of the query text, with the same argument
 *	  values.  Copies made by the expansion are exactly that; calls a user
 *	  wrote twice differ in their place, those of another statement or plan
 *	  in their context, and the next row's call is the first node again, so
 *	  each of those acts.
 *
 *	  Layer 3, the call frame.  Takes no locks.
 */
#include "postgres.h"

#include "access/xact.h"
#include "nodes/nodeFuncs.h"
#include "utils/datum.h"
#include "utils/lsyscache.h"
#include "utils/memutils.h"

#include "booking.h"
#include "3_frame/once.h"

#define ONCE_MAX_ARGS 16

typedef struct OnceMemo
{
	bool		valid;
	Oid			fn_oid;
	const void *site;			/* the node that acted: compared, never read */
	const void *site_cxt;		/* its memory context: compared, never read */
	Node	   *site_copy;		/* a copy of it, to compare with equal() */
	int			location;
	TimestampTz statement;		/* the client statement it ran in */
	int			nargs;
	Datum		args[ONCE_MAX_ARGS];
	bool		nulls[ONCE_MAX_ARGS];
	BookingResult res;
} OnceMemo;

static OnceMemo memo;
static MemoryContext memo_cxt = NULL;

static void
OnceXactCallback(XactEvent event, void *arg)
{
	/* a remembered site means nothing in another transaction */
	memo.valid = false;
}

void
BookingOnceInit(void)
{
	RegisterXactCallback(OnceXactCallback, NULL);
}

/* The call site of fcinfo: its FuncExpr, or NULL (a call from C, say). */
static Node *
CallSite(FunctionCallInfo fcinfo)
{
	Node	   *expr = fcinfo->flinfo ? fcinfo->flinfo->fn_expr : NULL;

	if (expr == NULL || !IsA(expr, FuncExpr) || fcinfo->nargs > ONCE_MAX_ARGS)
		return NULL;
	return expr;
}

static bool
ArgsEqual(FunctionCallInfo fcinfo)
{
	if (fcinfo->nargs != memo.nargs)
		return false;
	for (int i = 0; i < fcinfo->nargs; i++)
	{
		Oid			type;
		int16		typlen;
		bool		typbyval;

		if (fcinfo->args[i].isnull != memo.nulls[i])
			return false;
		if (fcinfo->args[i].isnull)
			continue;
		type = get_fn_expr_argtype(fcinfo->flinfo, i);
		if (!OidIsValid(type))
			return false;
		get_typlenbyval(type, &typlen, &typbyval);
		if (!datumIsEqual(fcinfo->args[i].value, memo.args[i], typbyval, typlen))
			return false;
	}
	return true;
}

/*
 * Whether this evaluation is a copy of the call just made (see above); if
 * so, *res is that call's result.
 */
bool
BookingOnceRepeat(FunctionCallInfo fcinfo, BookingResult *res)
{
	Node	   *site = CallSite(fcinfo);

	if (!memo.valid || site == NULL || (const void *) site == memo.site ||
		fcinfo->flinfo->fn_oid != memo.fn_oid ||
		GetCurrentStatementStartTimestamp() != memo.statement ||
		(const void *) GetMemoryChunkContext(site) != memo.site_cxt ||
		exprLocation(site) != memo.location ||
		!equal(site, memo.site_copy) || !ArgsEqual(fcinfo))
		return false;
	*res = memo.res;
	return true;
}

/* Remembers the call just made at fcinfo's site, and its result. */
void
BookingOnceRemember(FunctionCallInfo fcinfo, const BookingResult *res)
{
	Node	   *site = CallSite(fcinfo);
	MemoryContext old;

	memo.valid = false;
	if (site == NULL)
		return;
	if (memo_cxt == NULL)
		memo_cxt = AllocSetContextCreate(TopMemoryContext, "booking call sites",
										 ALLOCSET_SMALL_SIZES);
	MemoryContextReset(memo_cxt);
	old = MemoryContextSwitchTo(memo_cxt);
	memo.fn_oid = fcinfo->flinfo->fn_oid;
	memo.site = site;
	memo.site_cxt = GetMemoryChunkContext(site);
	memo.site_copy = copyObject(site);
	memo.location = exprLocation(site);
	memo.statement = GetCurrentStatementStartTimestamp();
	memo.nargs = fcinfo->nargs;
	for (int i = 0; i < fcinfo->nargs; i++)
	{
		Oid			type = get_fn_expr_argtype(fcinfo->flinfo, i);
		int16		typlen;
		bool		typbyval;

		memo.nulls[i] = fcinfo->args[i].isnull;
		memo.args[i] = (Datum) 0;
		if (fcinfo->args[i].isnull)
			continue;
		if (!OidIsValid(type))
		{
			MemoryContextSwitchTo(old);
			return;
		}
		get_typlenbyval(type, &typlen, &typbyval);
		memo.args[i] = datumCopy(fcinfo->args[i].value, typbyval, typlen);
	}
	MemoryContextSwitchTo(old);
	memo.res = *res;
	memo.valid = true;
}
