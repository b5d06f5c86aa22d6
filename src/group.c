/*
 * group.c
 *	  A group of bookings made all or nothing, member by member:
 *	  reserve_stays on Citus and reserve_seats.
 *
 *	  The members run in the order given (the callers sort them by resource
 *	  id, so two groups never wait on each other in a cycle) inside one
 *	  subtransaction that is kept only when every member was booked: a
 *	  refusal writes nothing and keeps no lock.  When members live on other
 *	  Citus nodes they run there through their twins, inside the
 *	  coordinator's distributed transaction (two-phase commit), and the
 *	  subtransaction is rolled back on every node.  The first member's
 *	  booking id names the group (group_id of every member).
 */
#include "postgres.h"

#include "booking.h"

typedef struct GroupArgs
{
	int			n;
	BookingMemberFn member;
	void	   *arg;
	bool		remote;
	BookingResult *res;
	int64		first;
	int			current;		/* the member at work, for a busy answer */
} GroupArgs;

static bool
RunMembers(void *arg)
{
	GroupArgs  *ga = (GroupArgs *) arg;

	ga->first = -1;
	for (int i = 0; i < ga->n; i++)
	{
		BookingResult mres;

		ga->current = i;
		ga->member(ga->arg, i, ga->remote, ga->first, &mres);
		if (mres.code != BOOKING_CREATED)
		{
			*ga->res = mres;
			return false;
		}
		if (ga->first < 0)
			ga->first = mres.booking_id;
	}
	return true;
}

/*
 * Books members 0..n-1 (resources: each one's resource, homes: where each
 * lives; home: where this call runs).  Returns the first member's booking
 * id, or -1 with res set: the first refusal, or busy / retry (naming the
 * member at work) when the subtransaction failed.
 */
int64
BookingRunGroup(int n, const int64 *resources, const int64 *homes, int64 home,
				BookingMemberFn member, void *arg, int timeout_ms, BookingResult *res)
{
	GroupArgs	ga = {n, member, arg, false, res, -1, 0};
	bool		kept = false;
	BookingGuardOutcome outcome;
	int64		resource;

	for (int i = 0; i < n; i++)
		if (BookingDistributed() && (homes[i] != home || BookingForwarding()))
			ga.remote = true;

	outcome = ga.remote ? BookingRunGuardedRemoteTry(RunMembers, &ga, &kept, homes, n)
		: BookingRunGuardedTry(RunMembers, &ga, &kept);
	resource = resources[ga.current];
	switch (outcome)
	{
		case BOOKING_GUARD_DONE:
			return kept ? ga.first : -1;
		case BOOKING_GUARD_UNREACHABLE:
			BookingSetUnreachable(res, resource);
			break;
		case BOOKING_GUARD_MOVED:
			BookingSetMoved(res, resource);
			break;
		case BOOKING_GUARD_BUSY:
			BookingSetLockOutcome(res, BOOKING_LOCK_BUSY, resource, timeout_ms);
			break;
		case BOOKING_GUARD_RETRY:
		case BOOKING_GUARD_OVERLAP:
			BookingSetLockOutcome(res, BOOKING_LOCK_RETRY, resource, timeout_ms);
			break;
	}
	return -1;
}
