/*
 * booking.h
 *	  Declarations shared by the booking extension's C files.
 *
 * Lock order, everywhere: the tables (RowExclusiveLock, tables.c), then an
 * idempotency key's advisory lock (held for the call only, idempotency.c), then resource rows in
 * ascending id order, then the stripes of a striped resource in ascending
 * order, then booking rows of those resources.  (A fast-path buyer of a
 * striped resource holds one stripe and waits for nothing else.)  Every write
 * to a booking row is made while holding its resource's row lock, so a caller
 * that holds a resource lock never waits for a booking row.
 */
#ifndef BOOKING_H
#define BOOKING_H

#include "postgres.h"

#include "datatype/timestamp.h"
#include "executor/spi.h"
#include "fmgr.h"
#include "portability/instr_time.h"
#include "storage/itemptr.h"
#include "storage/lock.h"
#include "utils/rangetypes.h"

/* qualified names the SQL text and the error matching rely on */
#define BOOKING_OVERLAP_CONSTRAINT "bookings_no_overlap"

#define BOOKING_MAX_GUEST_BYTES 1024
#define BOOKING_MAX_KEY_BYTES 255
#define BOOKING_MAX_GROUP 100
#define BOOKING_MAX_HOLD_USECS ((int64) 3660 * USECS_PER_DAY)	/* ten years */
#define BOOKING_MESSAGE_LEN 512

/* result.c: the stable business codes of booking.result */
typedef enum BookingCode
{
	BOOKING_CREATED,			/* ok, 201 */
	BOOKING_DONE,				/* ok, 200 */
	BOOKING_SOLD_OUT,
	BOOKING_BUSY,
	BOOKING_NOT_FOUND,
	BOOKING_INVALID_STATE,
	BOOKING_VERSION_CONFLICT,
	BOOKING_RETRY,
	BOOKING_CAPACITY_BELOW_TAKEN,
	BOOKING_UNAVAILABLE,
	BOOKING_JUST_TAKEN,
	BOOKING_HOLD_EXPIRED,
	BOOKING_IDEMPOTENCY_MISMATCH,
	BOOKING_GUEST_LIMIT,
	BOOKING_WAITLISTED,			/* ok, 202 */
	BOOKING_SEATS_AVAILABLE,
	BOOKING_ALREADY_WAITING
} BookingCode;

/* how many codes there are: the last one above, plus one (result.c checks it) */
#define BOOKING_NUM_CODES ((int) BOOKING_ALREADY_WAITING + 1)

typedef struct BookingResult
{
	BookingCode code;
	bool		has_booking_id;
	int64		booking_id;
	bool		replayed;
	char		message[BOOKING_MESSAGE_LEN];
} BookingResult;

extern const char *BookingCodeName(BookingCode code);
extern int	BookingCodeHttpStatus(BookingCode code);
extern bool BookingCodeIsOk(BookingCode code);
extern bool BookingCodeFromName(const char *name, BookingCode *code);
extern void BookingSetResult(BookingResult *res, BookingCode code, int64 booking_id,
							 const char *fmt,...) pg_attribute_printf(4, 5);
extern Datum BookingResultDatum(FunctionCallInfo fcinfo, const BookingResult *res);

/* args.c: argument checks; each error names the argument */
extern int64 BookingArgId(FunctionCallInfo fcinfo, int argno, const char *name);
extern text *BookingArgGuest(FunctionCallInfo fcinfo, int argno);
extern int32 BookingArgQuantity(FunctionCallInfo fcinfo, int argno);
extern bool BookingArgHold(FunctionCallInfo fcinfo, int argno, int64 *hold_us);
extern int	BookingArgLockTimeout(FunctionCallInfo fcinfo, int argno);
extern char *BookingArgKey(FunctionCallInfo fcinfo, int argno);
extern void BookingArgDuring(FunctionCallInfo fcinfo, int argno, const char *name,
							 TimestampTz *lower, TimestampTz *upper);
extern int64 BookingIntervalUsecs(const Interval *span, const char *name);
extern Datum BookingMakeRange(TimestampTz lower, TimestampTz upper, bool upper_infinite);
extern TimestampTz BookingArgUntil(FunctionCallInfo fcinfo, int argno);
extern bool BookingArgMemberExpiry(FunctionCallInfo fcinfo, int argno, TimestampTz now,
								   TimestampTz *expires_at);
extern int64 BookingArgGroup(FunctionCallInfo fcinfo, int argno);
extern Datum *BookingArgArray(FunctionCallInfo fcinfo, int argno, const char *name, Oid elemtype,
							  int max, int *n);

/* spi_util.c: plan cache and the one subtransaction helper */
typedef struct BookingPlan
{
	const char *sql;
	int			nargs;
	Oid			argtypes[16];
	SPIPlanPtr	plan;
} BookingPlan;

typedef enum BookingGuardOutcome
{
	BOOKING_GUARD_DONE,
	BOOKING_GUARD_BUSY,			/* 55P03: lock_timeout or NOWAIT */
	BOOKING_GUARD_RETRY,		/* 40001 or 40P01 */
	BOOKING_GUARD_OVERLAP,		/* 23P01 of bookings_no_overlap */
	BOOKING_GUARD_UNREACHABLE,	/* class 08 (Citus: a node is down); remote guards only */
	BOOKING_GUARD_MOVED			/* Citus's XX000 while a shard moved; remote guards only */
} BookingGuardOutcome;

typedef void (*BookingGuardedFn) (void *arg);
typedef bool (*BookingTryFn) (void *arg);

extern int	BookingExecute(BookingPlan *plan, Datum *values, const char *nulls,
						   bool read_only, long tcount);
extern int	BookingExecuteLatest(BookingPlan *plan, Datum *values, const char *nulls,
								 long tcount);
extern int	BookingExecuteCommitted(BookingPlan *plan, Datum *values, const char *nulls,
									long tcount);
extern BookingGuardOutcome BookingRunGuarded(BookingGuardedFn fn, void *arg);
extern BookingGuardOutcome BookingRunGuardedTry(BookingTryFn fn, void *arg, bool *kept);
extern BookingGuardOutcome BookingRunGuardedRemote(BookingGuardedFn fn, void *arg,
												   const int64 *homes, int nhomes);
extern BookingGuardOutcome BookingRunGuardedRemoteTry(BookingTryFn fn, void *arg, bool *kept,
													  const int64 *homes, int nhomes);
extern void BookingNoteSerializableRetry(void);
extern int	BookingPushLockTimeout(int timeout_ms);
extern void BookingPopLockTimeout(int nestlevel);
extern int64 BookingGetInt64(int row, int col, bool *isnull);
extern int32 BookingGetInt32(int row, int col, bool *isnull);
extern bool BookingGetBool(int row, int col);
extern Datum BookingGetDatum(int row, int col, bool *isnull);

/* lock.c: resource row locks, fast conditional path first */
typedef enum BookingLockOutcome
{
	BOOKING_LOCKED,
	BOOKING_LOCK_BUSY,
	BOOKING_LOCK_RETRY,
	BOOKING_LOCK_NOT_FOUND
} BookingLockOutcome;

typedef struct BookingResource
{
	int64		id;
	int64		home;			/* where its rows live (shard.c) */
	int32		capacity;
	int32		taken;			/* unused (0) when striped */
	int64		version;
	int32		stripes;		/* > 1: free seats live in booking.resource_stripes */
	int32		guest_limit;	/* 0: none */
	int64		buffer_before;	/* microseconds a stay keeps free before it */
	int64		buffer_after;	/* and after it */
	int32		waiting;		/* entries in its waitlist (waitlist.c) */
} BookingResource;

extern int	booking_lock_timeout_ms;
extern void BookingLockInit(void);
extern BookingLockOutcome BookingLockResource(int64 id, int timeout_ms, BookingResource *res);
extern BookingLockOutcome BookingLockPeeked(BookingResource *res, ItemPointer tid, int timeout_ms);
extern bool BookingTryLockResource(int64 id, BookingResource *res);
extern BookingLockOutcome BookingWaitGuarded(BookingGuardedFn fn, void *arg, int timeout_ms);
extern BookingLockOutcome BookingWaitGuardedTry(BookingTryFn fn, void *arg, int timeout_ms,
												bool *kept);
extern void BookingSetLockOutcome(BookingResult *res, BookingLockOutcome outcome, int64 resource,
								  int timeout_ms);

/* tables.c: the extension's tables, and the table locks a call takes first */
typedef enum BookingTable
{
	BOOKING_TABLE_RESOURCES,
	BOOKING_TABLE_BOOKINGS,
	BOOKING_TABLE_STRIPES,
	BOOKING_TABLE_KEYS,
	BOOKING_NUM_TABLES
} BookingTable;

extern void BookingTablesInit(void);
extern Oid	BookingTableOid(BookingTable table);
extern Oid	BookingTableOidIfKnown(BookingTable table);
extern BookingLockOutcome BookingLockTables(int timeout_ms, bool with_keys);
extern int	BookingTimeLeft(int timeout_ms, TimestampTz *deadline);
extern int	BookingMillisecondsLeft(TimestampTz deadline);

/* route.c: on Citus, a call runs on the node that holds its shard */
extern bool BookingForwarding(void);
extern Datum BookingRunOnShard(FunctionCallInfo fcinfo, PGFunction fn);
extern Datum BookingForward(FunctionCallInfo fcinfo, const char *twin, int64 home, int64 resource);
extern void BookingCallTwin(const char *twin, int nargs, const Oid *argtypes, Datum *values,
							const char *nulls, BookingResult *res);
extern void BookingSetUnreachable(BookingResult *res, int64 id);
extern void BookingSetMoved(BookingResult *res, int64 id);

/* booking.shard_<name>: the twin of booking.<name> that runs on the shard's node */
#define BOOKING_SHARD_TWIN(name) \
	PG_FUNCTION_INFO_V1(booking_shard_##name); \
	Datum \
	booking_shard_##name(PG_FUNCTION_ARGS) \
	{ \
		return BookingRunOnShard(fcinfo, booking_##name); \
	}

/* shard.c: where rows live (home 0 on one server; a shard's representative on Citus) */
extern void BookingShardInit(void);
extern uint64 BookingShardMapGeneration(void);
extern void BookingAwaitShardMove(int64 home);
extern bool BookingDistributed(void);
extern int64 BookingHome(int64 id);
extern int	BookingAllHomes(int64 **homes);
extern int64 BookingNewId(const char *seq, int64 home);
extern Oid	BookingLocalShard(BookingTable table, int64 home);

/* rowlock.c: counter rows locked in C, and the queue of a hot row's buyers */
typedef enum BookingRowOutcome
{
	BOOKING_ROW_LOCKED,
	BOOKING_ROW_HELD,			/* by another transaction, or changed since read */
	BOOKING_ROW_MISSING
} BookingRowOutcome;

typedef struct BookingStripeRow
{
	int32		stripe;
	int32		free;			/* -1: its resource has a guest limit */
	ItemPointerData tid;		/* the version read */
} BookingStripeRow;

extern bool BookingRowPeekResource(int64 id, int64 home, BookingResource *res, ItemPointer tid);
extern BookingRowOutcome BookingRowTryLock(BookingTable table, int64 home, ItemPointer tid);
extern BookingRowOutcome BookingRowWaitResource(int64 id, int64 home, ItemPointer tid,
												TimestampTz deadline, BookingResource *res);
extern int	BookingRowPeekStripes(int64 resource, int64 home, BookingStripeRow *rows, int max);
extern BookingRowOutcome BookingRowWaitStripe(int64 resource, int32 stripe, int64 home,
											  ItemPointer tid, TimestampTz deadline, int32 *free);

/* a booking row as this transaction wrote it, for its event */
typedef struct BookingOwnBooking
{
	int64		resource;
	Datum		guest;
	int32		quantity;
	Datum		during;
	bool		during_null;
	Datum		expires_at;
	bool		expires_null;
	Datum		group_id;
	bool		group_null;
	Datum		status;			/* booking.status */
} BookingOwnBooking;

extern bool BookingRowReadOwnBooking(int64 home, int64 id, BookingOwnBooking *b);

/* call.c: the frame every mutating call runs in */
typedef void (*BookingBodyFn) (void *state, BookingResult *res);

typedef struct BookingCall
{
	const char *key;			/* idempotency key or NULL */
	const char *request;		/* canonical form of the request, for keys */
	int			timeout_ms;
	int64		resource;		/* for messages only */
	int64		home;			/* where the key is stored (shard.c) */
	TimestampTz now;			/* the time of the call */
	BookingBodyFn body;
	void	   *state;
} BookingCall;

extern void BookingCallInit(void);
extern void BookingRunCall(BookingCall *call, BookingResult *res);
extern Datum BookingCallDatum(FunctionCallInfo fcinfo, BookingCall *call);

/* once.c: the copies of one call that (f(...)).* makes answer its result */
extern void BookingOnceInit(void);
extern bool BookingOnceRepeat(FunctionCallInfo fcinfo, BookingResult *res);
extern void BookingOnceRemember(FunctionCallInfo fcinfo, const BookingResult *res);

/* stats.c: calls, times and lock waits per function and code, in shared memory */
typedef struct BookingStatsCall
{
	int			slot;			/* -1: not counted */
	instr_time	start;
} BookingStatsCall;

extern bool booking_track_stats;
extern void BookingStatsInit(void);
extern void BookingStatsBegin(FunctionCallInfo fcinfo, BookingStatsCall *sc);
extern void BookingStatsEnd(BookingStatsCall *sc, BookingCode code);
extern void BookingStatsWaitBegin(void);
extern void BookingStatsWaitEnd(void);

/* idempotency.c */
typedef enum BookingKeyClaim
{
	BOOKING_KEY_OWNED,			/* we hold the key's lock; do the work */
	BOOKING_KEY_REPLAYED,		/* res holds the stored result or a mismatch */
	BOOKING_KEY_BUSY,
	BOOKING_KEY_RETRY
} BookingKeyClaim;

typedef struct BookingKey
{
	int64		home;			/* where the key is stored */
	const char *key;
	const char *request;
	LOCKTAG		tag;			/* the key's advisory lock, held while we own it */
	bool		remote;			/* Citus coordinator: the key's shard is elsewhere */
} BookingKey;

extern int	booking_idempotency_retention_s;
extern void BookingIdempotencyInit(void);
extern BookingKeyClaim BookingClaimKey(BookingKey *key, int timeout_ms, TimestampTz now,
									   BookingResult *res);
extern void BookingFinishKey(BookingKey *key, const BookingResult *res, TimestampTz now);
extern int64 BookingPurgeKeys(int64 home, TimestampTz now, int32 batch);
extern char *BookingRequestString(const char *fn, int nfields, const char *const *fields);

/*
 * seat.c: the booking row a seat sale writes.  Every statement that takes
 * seats and writes that row in one go numbers its parameters alike: $1 the
 * resource, $2 the quantity, $3 the guest, $4 the hold's expiry (NULL: none),
 * $5 the time of the call, $6 the validity range, $7 the resource's home,
 * $8 the booking's id (NULL: the next of the sequence; on Citus one drawn
 * to land in the home's shard).  "from" names a CTE that yields one row when
 * the seats were taken, none when they were not (or a one-row subquery, to
 * write the row alone).
 */
#define BOOKING_SEAT_ROW_PARAMS 8
#define BOOKING_SEAT_ROW_TYPES \
	INT8OID, INT4OID, TEXTOID, TIMESTAMPTZOID, TIMESTAMPTZOID, TSTZRANGEOID, INT8OID, INT8OID
#define BOOKING_INSERT_SEAT_ROW_AS(limited, from) \
	"INSERT INTO booking.bookings " \
	"(home, id, resource_id, guest, quantity, status, expires_at, created_at, validity, limited) " \
	"SELECT $7, COALESCE($8, pg_catalog.nextval('booking.bookings_id_seq'::pg_catalog.regclass)), " \
	"$1, $3, $2, CASE WHEN $4 IS NULL THEN 'confirmed'::booking.status " \
	"ELSE 'pending'::booking.status END, $4, $5, $6, " limited " FROM " from " RETURNING id"
#define BOOKING_INSERT_SEAT_ROW(from) BOOKING_INSERT_SEAT_ROW_AS("false", from)
/* on a resource with a guest limit (limit.c) */
#define BOOKING_INSERT_LIMITED_SEAT_ROW(from) BOOKING_INSERT_SEAT_ROW_AS("true", from)

/* counter.c: a resource's seats, on its row or its stripes, under its row lock */
typedef enum BookingCounterTake
{
	BOOKING_COUNTER_TAKEN,
	BOOKING_COUNTER_SOLD_OUT,
	BOOKING_COUNTER_BUSY,
	BOOKING_COUNTER_RETRY
} BookingCounterTake;

/* seats on their way back: the resource as read under its lock, the stripe locked */
typedef struct BookingGiveBack
{
	BookingResource resource;
	int32		stripe;
} BookingGiveBack;

extern int32 BookingCounterReclaim(const BookingResource *r, TimestampTz now);
extern int32 BookingCounterExpired(int64 home, int n);
extern int64 BookingCounterFree(const BookingResource *r, int timeout_ms,
								BookingLockOutcome *outcome);
extern void BookingCounterSetTaken(const BookingResource *r, int32 capacity, int32 taken);
extern BookingCounterTake BookingCounterTakeSeats(const BookingResource *r, int32 quantity,
												  int timeout_ms, TimestampTz now,
												  int64 *free_left);
extern BookingLockOutcome BookingCounterOpenGiveBack(const BookingResource *r, int timeout_ms,
													 BookingGiveBack *gb);
extern void BookingCounterGiveBack(BookingGiveBack *gb, int32 seats);
extern void BookingCounterSetLayout(const BookingResource *r, int32 stripes, int64 free);

/* stripes.c: hot inventory */
#define BOOKING_MAX_STRIPES 64

extern void BookingStripesRemember(int64 resource, int32 stripes);
extern int32 BookingStripesHint(int64 resource);
extern BookingLockOutcome BookingStripesTakeFast(const Datum *row, const char *row_nulls,
												 int32 stripes, int timeout_ms,
												 int64 *booking_id);
extern BookingLockOutcome BookingStripesTakeCommitted(const Datum *row, const char *row_nulls,
													  int timeout_ms, int64 *booking_id,
													  int64 *total, int *nstripes);
#define BOOKING_STRIPES_LIMITED (-1)	/* *total: decide under the resource row */
extern BookingLockOutcome BookingStripesLockOne(int64 resource, int32 stripes, int timeout_ms,
												int32 *stripe);
extern void BookingStripeAdd(int64 resource, int32 stripe, int32 seats);
extern int64 BookingStripesLockAll(int64 resource, int timeout_ms, BookingLockOutcome *outcome);
extern void BookingStripesSpread(int64 resource, int32 stripes, int64 free);
extern void BookingStripesRebuild(const BookingResource *r, int32 stripes, int64 free);
extern void BookingStripesMark(const BookingResource *r, int32 guest_limit, int32 waiting);

/* hold.c: a booking read under its resource's row lock, for the calls that change it */
typedef enum BookingStatus
{
	BOOKING_STATUS_PENDING,
	BOOKING_STATUS_CONFIRMED,
	BOOKING_STATUS_CANCELLED,
	BOOKING_STATUS_EXPIRED,
	BOOKING_STATUS_WAITING
} BookingStatus;

typedef struct BookingLifecycle
{
	int64		booking;
	int64		home;			/* the booking's, its resource's (shard.c) */
	int64		by_us;			/* extend_hold */
	TimestampTz until;			/* extend_hold_until */
	int			timeout_ms;
	TimestampTz now;			/* set again once the lock is held */
} BookingLifecycle;

typedef struct BookingLocked
{
	BookingResource resource;
	BookingStatus status;
	TimestampTz expires_at;
	int32		quantity;
	bool		is_seat;
	TimestampTz created_at;
	TimestampTz ends_at;		/* a stay's end (upper(during)); 0 for seats */
} BookingLocked;

extern bool BookingLockBooking(BookingLifecycle *req, BookingLocked *b, BookingResult *res);
extern bool BookingEndBooking(BookingLifecycle *req, BookingLocked *b, const char *status,
							  BookingResult *res);
extern void BookingSetHoldExpired(BookingResult *res, BookingLifecycle *req, BookingLocked *b);

/* group.c: members booked all or nothing; remote: the member lives on another node */
typedef void (*BookingMemberFn) (void *arg, int i, bool remote, int64 group_id,
								 BookingResult *res);

extern int64 BookingRunGroup(int n, const int64 *resources, const int64 *homes, int64 home,
							 BookingMemberFn member, void *arg, int timeout_ms,
							 BookingResult *res);

/* limit.c: what one guest may hold of a resource */
extern bool BookingGuestLimitAllows(const BookingResource *r, text *guest, int32 quantity,
									bool stays, TimestampTz now, BookingResult *res);
extern bool BookingGuestLimitAllowsMove(const BookingResource *r, int64 booking, TimestampTz now,
										BookingResult *res);

/*
 * SQL for a range [lower, upper) widened by the intervals before and after
 * (buffers, at most 366 days: resource.c), kept within the timestamps
 * PostgreSQL can represent, as BookingStayFootprint does in C.
 */
#define BOOKING_SQL_WIDENED(lower, upper, before, after) \
	"pg_catalog.tstzrange(CASE WHEN " lower " OPERATOR(pg_catalog.>=) " \
	"'4713-11-25 00:00:00+00 BC'::pg_catalog.timestamptz " \
	"THEN " lower " OPERATOR(pg_catalog.-) " before " " \
	"ELSE '4714-11-24 00:00:00+00 BC'::pg_catalog.timestamptz END, " \
	"CASE WHEN " upper " OPERATOR(pg_catalog.<=) '294275-12-31 00:00:00+00'::pg_catalog.timestamptz " \
	"THEN " upper " OPERATOR(pg_catalog.+) " after " " \
	"ELSE '294276-12-31 23:59:59.999999+00'::pg_catalog.timestamptz END, '[)')"

/* slots.c */
extern Datum BookingStayFootprint(TimestampTz lower, TimestampTz upper, const BookingResource *r);
extern bool BookingNextFreeSlot(int64 resource, TimestampTz from, int64 length_us,
								TimestampTz now, TimestampTz *start);
extern void BookingDescribeNextSlot(char *buf, size_t len, int64 resource,
									TimestampTz lower, TimestampTz upper, TimestampTz now);

/* events.c: the outbox rows every state change writes */
extern bool booking_notify;
extern void BookingEventsInit(void);
extern void BookingEventsWorkerStarted(void);
extern void BookingEventsWorkerStopped(int code, Datum arg);
extern void BookingEventsWorkerNumbering(bool numbering);
extern bool BookingEventsTakeNews(void);
extern bool BookingEventsPending(void);
extern void BookingEventsAnnounce(void);
extern bool BookingEventsWorkerNumbers(void);
extern void BookingEventsWakeWorker(void);
extern void BookingEventsInvalidateNow(void);

/* the shortest time between two of the worker's NOTIFYs: a busy worker is a busy core */
#define BOOKING_NOTIFY_INTERVAL_MS 50
extern const char *BookingStatusName(BookingStatus status);
extern bool BookingEventsWanted(void);
extern void BookingEventsForget(Oid relid);
extern void BookingEmitEvent(const char *kind, int64 home, int64 booking,
							 const char *status_before, const char *code);
extern void BookingEmitResourceEvent(const char *kind, const BookingResource *r,
									 const char *payload);

/* outbox.c: consumers, claims, acks, and the purge of old events */
extern int	booking_event_retention_s;
extern void BookingOutboxInit(void);
extern int64 BookingPurgeEvents(int64 home, TimestampTz now, int32 batch);
extern int64 BookingNumberAll(int32 batch);

/* waitlist.c: the line of a sold-out resource */
extern int	booking_waitlist_offer_s;
extern void BookingWaitlistInit(void);
extern void BookingWaitlistServe(int64 resource, int timeout_ms, TimestampTz now);
extern int64 BookingWaitlistServeHome(int64 home, TimestampTz now, int32 batch);
extern void BookingWaitlistLeft(const BookingResource *r, TimestampTz now);
extern int32 BookingWaitlistTrim(const BookingResource *r, int32 capacity);
extern bool BookingWaitlistLetsIn(const BookingResource *r, BookingResult *res);

/* worker.c */
extern void BookingWorkerInit(void);

#endif							/* BOOKING_H */
