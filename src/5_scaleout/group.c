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
 *
 *	  Layer 5, scale-out.  Locks: those of its members, in the order given.
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "utils/timestamp.h"

#include "booking.h"
#include "1_ground/guard.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "2_locks/lock.h"
#include "5_scaleout/group.h"
#include "5_scaleout/remote.h"
#include "5_scaleout/route.h"

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

/*
 * A member's work on the node that holds resource, through its twin.  The
 * member twins take (resource, guest, what, expires_at, group_id,
 * lock_timeout, metadata, home), what being the member's own (its seats, its range)
 * of type what_type.  The expiry is the group's, computed once, so that
 * every member of a hold lapses at once; group_id < 0: this member is the
 * first, and its id names the group.
 */
void
BookingRunMemberTwin(const char *twin, int64 resource, text *guest, Oid what_type, Datum what,
					 bool has_hold, TimestampTz expires_at, int64 group_id, int timeout_ms,
					 Jsonb *metadata, BookingResult *res)
{
	Oid			types[8] = {INT8OID, TEXTOID, what_type, TIMESTAMPTZOID, INT8OID, INTERVALOID,
	JSONBOID, INT8OID};
	Datum		values[8];
	char		nulls[8];
	Interval   *wait = palloc0(sizeof(Interval));

	memset(nulls, ' ', sizeof(nulls));
	wait->time = (int64) timeout_ms * 1000;
	values[0] = Int64GetDatum(resource);
	values[1] = PointerGetDatum(guest);
	values[2] = what;
	values[3] = TimestampTzGetDatum(expires_at);
	if (!has_hold)
		nulls[3] = 'n';
	values[4] = Int64GetDatum(group_id);
	if (group_id < 0)
		nulls[4] = 'n';
	values[5] = IntervalPGetDatum(wait);
	values[6] = PointerGetDatum(metadata);
	if (metadata == NULL)
		nulls[6] = 'n';
	values[7] = Int64GetDatum(BookingHome(resource));
	BookingCallTwin(twin, 8, types, values, nulls, res);
}
