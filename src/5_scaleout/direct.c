/*
 * direct.c
 *	  The direct route: a call that is the whole of a statement of its own,
 *	  outside a transaction block, goes to its node as Citus delegates a
 *	  function, in one round trip that the node commits by itself, instead
 *	  of inside the guard's subtransaction, which makes Citus open a
 *	  transaction block on the node (BEGIN and SAVEPOINT, the call, RELEASE,
 *	  COMMIT: four round trips, the row lock held across three of them).
 *
 *	  The guard's promise is kept another way: the node is asked first
 *	  whether it answers (Citus's citus_check_connection_to_node, over the
 *	  connection the call then uses), and one that does not answers busy.  A
 *	  node that dies between the question and the call fails the call with
 *	  Citus's own error, as it fails a call that it dies under.  A call
 *	  caught by a shard move answers retry from the node itself
 *	  (route.c's BookingRunOnShard).
 *
 *	  "Whole statement" is read from the portal that runs it: one SELECT of
 *	  this function alone, in its FROM list or as its output (the call, or
 *	  fields of its result), and nothing volatile in its arguments or beside
 *	  it.
 *	  Then nothing of the statement can fail after the node committed but
 *	  the answer's way back, and a client that loses an answer calls again
 *	  with its idempotency key, as after any lost answer.  Anything else (a
 *	  transaction block, a function or procedure calling it, several calls
 *	  in one statement) takes the guarded route, all or nothing with its
 *	  transaction.
 *
 *	  Layer 5, scale-out.  Takes no locks.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "nodes/makefuncs.h"
#include "nodes/plannodes.h"
#include "nodes/primnodes.h"
#include "optimizer/clauses.h"
#include "optimizer/optimizer.h"
#include "parser/parse_func.h"
#include "tcop/pquery.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/portal.h"

#include "booking.h"
#include "1_ground/citus_conn.h"
#include "1_ground/citus_local.h"
#include "1_ground/shard.h"
#include "5_scaleout/direct.h"

/* booking.direct_route: off sends every routed call by the guarded route */
static bool direct_route = true;

void
BookingDirectInit(void)
{
	DefineCustomBoolVariable("booking.direct_route",
							 "On Citus, a call that is a statement of its own goes to its node directly.",
							 "It asks the node whether it answers first, and a node that does not answers busy; "
							 "a node that dies between that question and the call fails the call with Citus's "
							 "error.  Off: every routed call runs in a subtransaction on its node, which turns "
							 "any connection failure into busy, at the cost of two more round trips.",
							 &direct_route,
							 true,
							 PGC_USERSET,
							 0,
							 NULL, NULL, NULL);
}

/*
 * The call itself, with arguments that do nothing of their own: no volatile
 * function (one could write, or call booking again) and no subquery.
 */
static bool
IsThisCall(Node *expr, Oid fn)
{
	FuncExpr   *call;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return false;
	call = (FuncExpr *) expr;
	return call->funcid == fn && !call->funcretset &&
		!contain_volatile_functions((Node *) call->args) &&
		!contain_subplans((Node *) call->args);
}

/*
 * Whether the running call takes the direct route: booking.direct_route is
 * on, and the call is the whole of a top-level statement outside a
 * transaction block, SELECT f(...) or SELECT ... FROM f(...).
 */
bool
BookingDirectRoute(FunctionCallInfo fcinfo)
{
	PlannedStmt *stmt;
	Plan	   *plan;
	Oid			fn = fcinfo->flinfo->fn_oid;

	/* a subtransaction (a savepoint, an exception block) is a block too */
	if (!direct_route || IsTransactionBlock() || GetCurrentTransactionNestLevel() != 1)
		return false;
	if (ActivePortal == NULL || list_length(ActivePortal->stmts) != 1)
		return false;
	stmt = (PlannedStmt *) linitial(ActivePortal->stmts);
	if (stmt == NULL || !IsA(stmt, PlannedStmt) || stmt->commandType != CMD_SELECT ||
		stmt->utilityStmt != NULL || stmt->hasModifyingCTE || stmt->subplans != NIL ||
		stmt->rowMarks != NIL)
		return false;
	plan = stmt->planTree;
	if (plan == NULL || plan->lefttree != NULL || plan->righttree != NULL ||
		plan->initPlan != NIL || plan->qual != NIL)
		return false;

	if (IsA(plan, Result))
	{
		Node	   *call = NULL;
		ListCell   *lc;

		if (((Result *) plan)->resconstantqual != NULL || plan->targetlist == NIL)
			return false;

		/*
		 * Every output column is the call or a field of its result: (f(...)).*
		 * runs it once per column, and 3_frame/once.c answers the copies
		 */
		foreach(lc, plan->targetlist)
		{
			Node	   *expr = (Node *) ((TargetEntry *) lfirst(lc))->expr;

			if (expr != NULL && IsA(expr, FieldSelect))
				expr = (Node *) ((FieldSelect *) expr)->arg;
			if (call == NULL)
			{
				if (!IsThisCall(expr, fn))
					return false;
				call = expr;
			}
			/* equal() ignores locations: a call written twice is two calls */
			else if (!equal(expr, call) ||
					 ((FuncExpr *) expr)->location != ((FuncExpr *) call)->location)
				return false;
		}
		return true;
	}
	if (IsA(plan, FunctionScan))
	{
		FunctionScan *scan = (FunctionScan *) plan;

		/* the output columns run after the call: nothing there may fail on its own */
		if (list_length(scan->functions) != 1 || scan->funcordinality ||
			contain_volatile_functions((Node *) plan->targetlist))
			return false;
		return IsThisCall(((RangeTblFunction *) linitial(scan->functions))->funcexpr, fn);
	}
	return false;
}

/*
 * Whether the node that holds home's shard answers: true when it does, or
 * when the shard is on this node.  Read off Citus's connection of this user
 * to that node, the one the call then uses (1_ground/citus_conn.c), or,
 * where that cannot be read, asked over it with Citus's
 * citus_check_connection_to_node, a round trip.  A node that cannot be
 * reached makes Citus warn, which the client is spared (the server log
 * keeps it).  The question goes through fmgr, not a statement: a statement
 * was planned anew at every call.
 */
bool
BookingNodeAnswers(int64 home)
{
	static Oid	check_fn = InvalidOid;
	char	   *nodename;
	int32		nodeport;
	int			nestlevel;
	bool		answers;

	if (!BookingShardNode(home, &nodename, &nodeport))
		return true;
	nestlevel = NewGUCNestLevel();
	(void) set_config_option("client_min_messages", "error", PGC_USERSET, PGC_S_SESSION,
							 GUC_ACTION_SAVE, true, 0, false);
	if (!BookingCitusConnectionAnswers(nodename, nodeport, &answers))
	{
		if (!OidIsValid(check_fn))
		{
			Oid			argtypes[2] = {TEXTOID, INT4OID};

			check_fn = LookupFuncName(list_make2(makeString("pg_catalog"),
												 makeString("citus_check_connection_to_node")),
									  2, argtypes, false);
		}
		answers = DatumGetBool(OidFunctionCall2(check_fn, CStringGetTextDatum(nodename),
												Int32GetDatum(nodeport)));
	}
	AtEOXact_GUC(true, nestlevel);
	return answers;
}

/*
 * On the node: a twin the direct route sent runs as a statement of its own,
 * to which Citus gives no distributed transaction id.  Citus's distributed
 * deadlock detector takes every such transaction of a node for one, finds
 * cycles through them that are not there, and cancels a distributed
 * transaction in them (groups over two nodes were cancelled beside direct
 * cancels, 94 of 4,000 in groups.sh).  So the twin starts a coordinated
 * transaction here, as a statement a client makes on this node does, which
 * gives it an id of its own: Citus's UseCoordinatedTransaction, looked up
 * once in the loaded library (1_ground/citus_local.c; a Citus without it
 * keeps the old behaviour).
 */
void
BookingJoinDistributedTransaction(void)
{
	if (!BookingDistributed() || IsTransactionBlock() || GetCurrentTransactionNestLevel() != 1)
		return;					/* no Citus, or the caller's transaction has its id */
	BookingCitusUseCoordinated();
}

/*
 * Until BookingPopDirect: Citus sends a delegated call to its node with no
 * transaction block, as it sends one a client made at the top level.
 */
int
BookingPushDirect(void)
{
	int			nestlevel = NewGUCNestLevel();

	(void) set_config_option("citus.function_opens_transaction_block", "off",
							 PGC_USERSET, PGC_S_SESSION, GUC_ACTION_SAVE, true, 0, false);
	return nestlevel;
}

void
BookingPopDirect(int nestlevel)
{
	AtEOXact_GUC(true, nestlevel);
}
