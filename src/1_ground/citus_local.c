/*
 * citus_local.c
 *	  Whether this transaction may work on this node's shards in this
 *	  backend, and telling Citus that it did.
 *
 *	  Citus runs a statement on a shard of the node it runs on either here
 *	  (its local execution) or through a connection to the node itself, and
 *	  keeps one way per transaction: a connection cannot see what this
 *	  backend wrote or locked, and this backend would wait for the
 *	  connection's locks.  When the transaction already reached the node's
 *	  shards through a connection (or the session turned local execution
 *	  off), booking must not touch them here either, or Citus's next
 *	  statement waits for a row lock of this backend (a distributed
 *	  deadlock with itself).  When booking works on them here, Citus must
 *	  know, as its local execution tells it: its later statements on this
 *	  node's shards then run here too, and a transaction that writes here
 *	  and on another node commits with two phases.
 *
 *	  Citus 13's functions are found in the loaded library by name, here
 *	  and in citus_conn.c (its connections).  A Citus
 *	  built for PostgreSQL 16 or later hides them (modules are built with
 *	  hidden symbols there): then booking cannot ask or tell, and goes on as
 *	  before: it works on the shards here unless the session turned local
 *	  execution off, and its statements go through Citus (shardplan.c).
 *
 *	  Layer 1, the ground.  Takes no locks.
 */
#include "postgres.h"

#include "fmgr.h"
#include "utils/guc.h"

#include "booking.h"
#include "1_ground/citus_local.h"

/* Citus 13's LocalExecutionStatus (local_executor.h): REQUIRED, OPTIONAL, DISABLED */
#define CITUS_LOCAL_EXECUTION_REQUIRED 0
#define CITUS_LOCAL_EXECUTION_DISABLED 2

typedef int (*CitusStatusFn) (void);
typedef void (*CitusSetStatusFn) (int status);
typedef void (*CitusVoidFn) (void);

static bool looked = false;
static CitusStatusFn get_status = NULL;
static CitusSetStatusFn set_status = NULL;
static CitusVoidFn use_2pc = NULL;
static CitusVoidFn use_coordinated = NULL;

static void
LookUp(void)
{
	if (looked)
		return;
	get_status = (CitusStatusFn) load_external_function("citus", "GetCurrentLocalExecutionStatus",
														false, NULL);
	set_status = (CitusSetStatusFn) load_external_function("citus", "SetLocalExecutionStatus",
														   false, NULL);
	use_2pc = (CitusVoidFn) load_external_function("citus", "Use2PCForCoordinatedTransaction",
												   false, NULL);
	use_coordinated = (CitusVoidFn) load_external_function("citus", "UseCoordinatedTransaction",
														   false, NULL);
	looked = true;
}

/* Whether Citus can be asked and told (its functions were found). */
bool
BookingCitusLocalKnown(void)
{
	LookUp();
	return get_status != NULL && set_status != NULL && use_2pc != NULL;
}

/*
 * Whether this transaction may work on this node's shards in this backend
 * (only asked where the tables are distributed).
 */
bool
BookingCitusLocalAllowed(void)
{
	const char *local;

	if (BookingCitusLocalKnown() && get_status() == CITUS_LOCAL_EXECUTION_DISABLED)
		return false;
	/* a user who turned Citus's local execution off gets its connections */
	local = GetConfigOption("citus.enable_local_execution", true, false);
	return local == NULL || strcmp(local, "on") == 0;
}

/*
 * This transaction works on this node's shards here (after
 * BookingCitusLocalAllowed said it may); writes: it writes there.
 */
void
BookingCitusLocalUsed(bool writes)
{
	if (!BookingCitusLocalKnown())
		return;
	set_status(CITUS_LOCAL_EXECUTION_REQUIRED);
	if (writes)
		use_2pc();
}

/*
 * Starts a coordinated transaction, which gives this one a distributed
 * transaction id (5_scaleout/direct.c says why); nothing where Citus hides
 * the function.
 */
void
BookingCitusUseCoordinated(void)
{
	LookUp();
	if (use_coordinated != NULL)
		use_coordinated();
}
