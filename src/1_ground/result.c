/*
 * result.c
 *	  The stable result codes of the API, their HTTP statuses, and the
 *	  booking.result composite every mutating call returns.
 *
 *	  Layer 1, the ground.  Takes no locks.
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "funcapi.h"
#include "utils/builtins.h"

#include "booking.h"
#include "1_ground/result.h"

typedef struct BookingCodeInfo
{
	const char *name;
	int			http_status;
	bool		ok;
} BookingCodeInfo;

/* indexed by BookingCode; names and statuses are the public contract */
static const BookingCodeInfo code_info[] = {
	[BOOKING_CREATED] = {"ok", 201, true},
	[BOOKING_DONE] = {"ok", 200, true},
	[BOOKING_SOLD_OUT] = {"sold_out", 409, false},
	[BOOKING_BUSY] = {"busy", 503, false},
	[BOOKING_NOT_FOUND] = {"not_found", 404, false},
	[BOOKING_INVALID_STATE] = {"invalid_state", 409, false},
	[BOOKING_VERSION_CONFLICT] = {"version_conflict", 409, false},
	[BOOKING_RETRY] = {"retry", 409, false},
	[BOOKING_CAPACITY_BELOW_TAKEN] = {"capacity_below_taken", 409, false},
	[BOOKING_UNAVAILABLE] = {"unavailable", 409, false},
	[BOOKING_JUST_TAKEN] = {"just_taken", 409, false},
	[BOOKING_HOLD_EXPIRED] = {"hold_expired", 410, false},
	[BOOKING_IDEMPOTENCY_MISMATCH] = {"idempotency_mismatch", 422, false},
	[BOOKING_GUEST_LIMIT] = {"guest_limit", 409, false},
	[BOOKING_WAITLISTED] = {"waitlisted", 202, true},
	[BOOKING_SEATS_AVAILABLE] = {"seats_available", 409, false},
	[BOOKING_ALREADY_WAITING] = {"already_waiting", 409, false},
	[BOOKING_CLOSED] = {"closed", 409, false},
};

/* stats.c keeps a counter per code */
StaticAssertDecl(lengthof(code_info) == BOOKING_NUM_CODES,
				 "BOOKING_NUM_CODES must count every code");

const char *
BookingCodeName(BookingCode code)
{
	return code_info[code].name;
}

int
BookingCodeHttpStatus(BookingCode code)
{
	return code_info[code].http_status;
}

bool
BookingCodeIsOk(BookingCode code)
{
	return code_info[code].ok;
}

/* Maps a stored code back; "ok" is ambiguous, so callers keep the status. */
bool
BookingCodeFromName(const char *name, BookingCode *code)
{
	for (int i = 0; i < (int) lengthof(code_info); i++)
	{
		if (strcmp(code_info[i].name, name) == 0)
		{
			*code = (BookingCode) i;
			return true;
		}
	}
	return false;
}

/*
 * Fills a result; booking_id < 0 means "no booking".  The message lives in a
 * fixed buffer so a result survives SPI_finish and subtransaction aborts.
 */
void
BookingSetResult(BookingResult *res, BookingCode code, int64 booking_id,
				 const char *fmt,...)
{
	va_list		args;

	res->code = code;
	res->has_booking_id = booking_id >= 0;
	res->booking_id = booking_id >= 0 ? booking_id : 0;
	res->replayed = false;
	va_start(args, fmt);
	vsnprintf(res->message, sizeof(res->message), fmt, args);
	va_end(args);
}

/* Builds the booking.result datum in the caller's memory context. */
Datum
BookingResultDatum(FunctionCallInfo fcinfo, const BookingResult *res)
{
	TupleDesc	tupdesc;
	Datum		values[6];
	bool		nulls[6] = {false, false, false, false, false, false};
	HeapTuple	tuple;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "booking.result expected as the return type");
	tupdesc = BlessTupleDesc(tupdesc);

	values[0] = BoolGetDatum(BookingCodeIsOk(res->code));
	values[1] = CStringGetTextDatum(BookingCodeName(res->code));
	values[2] = Int64GetDatum(res->booking_id);
	nulls[2] = !res->has_booking_id;
	values[3] = Int32GetDatum(BookingCodeHttpStatus(res->code));
	values[4] = CStringGetTextDatum(res->message);
	values[5] = BoolGetDatum(res->replayed);

	tuple = heap_form_tuple(tupdesc, values, nulls);
	return HeapTupleGetDatum(tuple);
}
