/*
 * forget.c
 *	  booking.forget_guest(guest): the GDPR request every shop gets.  The
 *	  guest's name is replaced, wherever the extension keeps it, by a stable
 *	  pseudonym: in its bookings (waitlist entries are bookings too), in the
 *	  requests stored under idempotency keys, and in the events.  One
 *	  guest_forgotten event per resource touched tells the relays, whose
 *	  receivers hold copies of their own.  Returns the rows changed.
 *
 *	  The pseudonym is "forgotten-" and a SHA-256 of a secret key and the
 *	  name: the same guest always gets the same one, so that what one guest
 *	  holds still counts as one guest's (a guest limit), and nobody who
 *	  lacks the key (booking.secrets, made on first use) can check a guess
 *	  of the name against it.
 *
 *	  Every write to a booking row is made under its resource's row lock
 *	  (booking.h): the guest's resources are locked one at a time, in
 *	  ascending id order, and each one's rows renamed under its lock, so a
 *	  sale of the same guest decides before or after, never in between.  The
 *	  locks are taken through statements, so that on a Citus coordinator
 *	  they reach the workers, at READ COMMITTED only.  A
 *	  resource held past the lock_timeout fails the call (55P03), with
 *	  nothing renamed: it is an admin's call, and running it again is safe.
 *	  A booking the guest makes while it runs may keep the name: run it
 *	  again once the guest's session is over.
 *
 *	  Layer 6, the calls.  Locks: the guest's resource rows, one at a time in
 *	  ascending id order, then their booking rows; then the event and key
 *	  rows of the guest.
 */
#include "postgres.h"

#include "access/xact.h"
#include "catalog/pg_type.h"
#include "utils/builtins.h"

#include "booking.h"
#include "1_ground/args.h"
#include "1_ground/result.h"
#include "1_ground/shard.h"
#include "1_ground/spi.h"
#include "1_ground/tables.h"
#include "1_ground/timeout.h"
#include "2_locks/lock.h"
#include "2_locks/tablelock.h"
#include "3_frame/events.h"

PG_FUNCTION_INFO_V1(booking_forget_guest);

#define PSEUDONYM_PREFIX "forgotten-"
#define PSEUDONYM_HEX 64

/* the key, made once: 32 random bytes from two random UUIDs */
static BookingPlan make_key_plan = {
	"INSERT INTO booking.secrets (name, value) "
	"SELECT 'pseudonym', pg_catalog.uuid_send(pg_catalog.gen_random_uuid()) "
	"OPERATOR(pg_catalog.||) pg_catalog.uuid_send(pg_catalog.gen_random_uuid()) "
	"ON CONFLICT (name) DO NOTHING",
	0, {InvalidOid}
};
static BookingPlan pseudonym_plan = {
	"SELECT '" PSEUDONYM_PREFIX "' OPERATOR(pg_catalog.||) pg_catalog.encode(pg_catalog.sha256("
	"s.value OPERATOR(pg_catalog.||) pg_catalog.convert_to($1, 'UTF8')), 'hex') "
	"FROM booking.secrets s WHERE s.name OPERATOR(pg_catalog.=) 'pseudonym'",
	1, {TEXTOID}
};
/* the resources where the guest has bookings: a scan, for a rare call */
static BookingPlan resources_plan = {
	"SELECT DISTINCT resource_id FROM booking.bookings WHERE guest OPERATOR(pg_catalog.=) $1 "
	"ORDER BY resource_id",
	1, {TEXTOID}
};
static BookingPlan rename_bookings_plan = {
	"UPDATE booking.bookings SET guest = $2 WHERE home OPERATOR(pg_catalog.=) $3 "
	"AND resource_id OPERATOR(pg_catalog.=) $4 AND guest OPERATOR(pg_catalog.=) $1",
	4, {TEXTOID, TEXTOID, INT8OID, INT8OID}
};
static BookingPlan rename_events_plan = {
	"UPDATE booking.events SET guest = $2 WHERE guest OPERATOR(pg_catalog.=) $1",
	2, {TEXTOID, TEXTOID}
};

/*
 * A stored request names the guest as one of its length-prefixed fields
 * (3_frame/idempotency.c), never the first nor the last: ",<bytes>:<name>,".
 */
static BookingPlan rename_keys_plan = {
	"UPDATE booking.idempotency_keys SET request = pg_catalog.replace(request, "
	"',' OPERATOR(pg_catalog.||) pg_catalog.octet_length($1) OPERATOR(pg_catalog.||) ':' "
	"OPERATOR(pg_catalog.||) $1 OPERATOR(pg_catalog.||) ',', "
	"',' OPERATOR(pg_catalog.||) pg_catalog.octet_length($2) OPERATOR(pg_catalog.||) ':' "
	"OPERATOR(pg_catalog.||) $2 OPERATOR(pg_catalog.||) ',') "
	"WHERE pg_catalog.strpos(request, ',' OPERATOR(pg_catalog.||) pg_catalog.octet_length($1) "
	"OPERATOR(pg_catalog.||) ':' OPERATOR(pg_catalog.||) $1 OPERATOR(pg_catalog.||) ',') "
	"OPERATOR(pg_catalog.>) 0",
	2, {TEXTOID, TEXTOID}
};

/* Whether name is a pseudonym: the prefix, then a SHA-256 in hex. */
static bool
IsPseudonym(const char *name)
{
	size_t		prefix = strlen(PSEUDONYM_PREFIX);

	if (strlen(name) != prefix + PSEUDONYM_HEX || strncmp(name, PSEUDONYM_PREFIX, prefix) != 0)
		return false;
	for (const char *p = name + prefix; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f')))
			return false;
	return true;
}

/* The guest's pseudonym, the key made first if there is none yet. */
static text *
Pseudonym(text *guest)
{
	Datum		values[1] = {PointerGetDatum(guest)};
	bool		isnull;

	(void) BookingExecute(&make_key_plan, NULL, NULL, false, 0);
	if (BookingExecute(&pseudonym_plan, values, NULL, false, 1) != 1)
		elog(ERROR, "booking.secrets has no pseudonym key");
	return DatumGetTextPCopy(BookingGetDatum(0, 1, &isnull));
}

/*
 * forget_guest(guest) returns the rows changed: bookings, events and stored
 * requests
 */
Datum
booking_forget_guest(PG_FUNCTION_ARGS)
{
	text	   *guest = BookingArgGuest(fcinfo, 0);
	text	   *pseudonym;
	Datum		values[4];
	int			n;
	int64	   *resources;
	int64		changed = 0;
	int			timeout_ms = BookingLockTimeoutDefault();

	/* each statement must see what the others committed, as a claim's do */
	if (IsolationUsesXactSnapshot())
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_TRANSACTION_STATE),
				 errmsg("booking.forget_guest runs at READ COMMITTED only"),
				 errdetail("This transaction is at %s.",
						   IsolationIsSerializable() ? "SERIALIZABLE" : "REPEATABLE READ"),
				 errhint("Call it in a transaction of its own, or begin it with BEGIN ISOLATION LEVEL READ COMMITTED.")));
	SPI_connect();
	if (BookingLockTables(timeout_ms, true) != BOOKING_LOCKED)
		ereport(ERROR,
				(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
				 errmsg("could not lock the booking tables within %d ms", timeout_ms),
				 errdetail("Another transaction holds a conflicting lock on one of them (a schema change, VACUUM FULL or LOCK TABLE)."),
				 errhint("Run booking.forget_guest again later.")));
	/* a pseudonym forgotten again stays what it is */
	if (IsPseudonym(text_to_cstring(guest)))
	{
		SPI_finish();
		PG_RETURN_INT64(0);
	}
	pseudonym = Pseudonym(guest);
	values[0] = PointerGetDatum(guest);
	values[1] = PointerGetDatum(pseudonym);

	n = BookingExecute(&resources_plan, values, NULL, false, 0);
	resources = palloc(sizeof(int64) * Max(n, 1));
	for (int i = 0; i < n; i++)
		resources[i] = BookingGetInt64(i, 1, NULL);
	for (int i = 0; i < n; i++)
	{
		BookingResource r;
		BookingResult res;
		BookingLockOutcome outcome;
		int			renamed;

		outcome = BookingLockResourceByStatement(resources[i], timeout_ms, &r);
		if (outcome == BOOKING_LOCK_NOT_FOUND)
			continue;			/* not reachable: resources are never deleted */
		if (outcome != BOOKING_LOCKED)
		{
			BookingSetLockOutcome(&res, outcome, resources[i], timeout_ms);
			ereport(ERROR,
					(errcode(ERRCODE_LOCK_NOT_AVAILABLE),
					 errmsg("could not forget the guest on resource %lld", (long long) resources[i]),
					 errdetail("%s", res.message),
					 errhint("Nothing was renamed; run booking.forget_guest again.")));
		}
		values[2] = Int64GetDatum(r.home);
		values[3] = Int64GetDatum(r.id);
		renamed = BookingExecute(&rename_bookings_plan, values, NULL, false, 0);
		changed += renamed;
		BookingEmitResourceEvent("guest_forgotten", &r,
								 psprintf("{\"guest\": \"%s\", \"bookings\": %d}",
										  text_to_cstring(pseudonym), renamed));
	}
	changed += BookingExecute(&rename_events_plan, values, NULL, false, 0);
	changed += BookingExecute(&rename_keys_plan, values, NULL, false, 0);
	SPI_finish();
	PG_RETURN_INT64(changed);
}
