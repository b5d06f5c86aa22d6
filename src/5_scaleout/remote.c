/*
 * remote.c
 *	  The guards of work that crosses to another node of a Citus cluster:
 *	  1_ground/guard.c's subtransaction, with a judge of the two errors such
 *	  work adds.  A connection failure (class 08: the node is down) comes
 *	  back as BOOKING_GUARD_UNREACHABLE, and Citus's XX000 for a shard that
 *	  moved while the call waited as BOOKING_GUARD_MOVED; any other error
 *	  is re-thrown as the guard re-throws it.
 *
 *	  Layer 5, scale-out.  Locks: the share lock of a shard move's wait
 *	  (1_ground/shard.c), after the subtransaction rolled back.
 */
#include "postgres.h"

#include "booking.h"
#include "1_ground/guard.h"
#include "1_ground/shard.h"
#include "5_scaleout/remote.h"

/* the homes the work touched, and the shard map as it was when it began */
typedef struct RemoteWork
{
	const int64 *homes;
	int			nhomes;
	uint64		generation;
} RemoteWork;

static bool
JudgeRemoteError(ErrorData *edata, void *arg, BookingGuardOutcome *outcome)
{
	RemoteWork *rw = (RemoteWork *) arg;

	switch (edata->sqlerrcode)
	{
		case ERRCODE_CONNECTION_EXCEPTION:
		case ERRCODE_CONNECTION_FAILURE:
		case ERRCODE_SQLCLIENT_UNABLE_TO_ESTABLISH_SQLCONNECTION:
			*outcome = BOOKING_GUARD_UNREACHABLE;
			return true;
		case ERRCODE_INTERNAL_ERROR:

			/*
			 * A call that waited out the end of a shard move (Citus blocks
			 * writes while it switches the shard over) finds the shard gone
			 * from the node it was sent to, and Citus raises XX000.  Only
			 * then is it a retry: the next call goes to the shard's new node.
			 * The worker may see the move committed before this node does:
			 * wait for the move to end here before looking.
			 */
			for (int i = 0; i < rw->nhomes; i++)
				BookingAwaitShardMove(rw->homes[i]);
			if (BookingShardMapGeneration() != rw->generation)
			{
				*outcome = BOOKING_GUARD_MOVED;
				return true;
			}
			return false;
		default:
			return false;
	}
}

/*
 * BookingRunGuarded for work that crosses to another node: a node that is
 * down, or a shard that moved, comes back as an outcome instead of a raw
 * error.  Always in a subtransaction of its own.
 */
BookingGuardOutcome
BookingRunGuardedRemote(BookingGuardedFn fn, void *arg, const int64 *homes, int nhomes)
{
	RemoteWork	rw = {homes, nhomes, BookingShardMapGeneration()};

	return BookingRunGuardedClassified(fn, arg, JudgeRemoteError, &rw);
}

/* BookingRunGuardedTry for work that crosses to another node */
BookingGuardOutcome
BookingRunGuardedRemoteTry(BookingTryFn fn, void *arg, bool *kept,
						   const int64 *homes, int nhomes)
{
	RemoteWork	rw = {homes, nhomes, BookingShardMapGeneration()};

	return BookingRunGuardedTryClassified(fn, arg, kept, JudgeRemoteError, &rw);
}
