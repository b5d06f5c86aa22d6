/*
 * citus_conn.c
 *	  Whether Citus's connection to a node answers, read off the connection
 *	  itself, without a round trip.
 *
 *	  Citus keeps a connection per node, user and database for the session,
 *	  and the next statement it sends to the node takes it.  Whether it
 *	  still answers shows on this side: a node that stopped, crashed or
 *	  restarted closed its end, and libpq reads the close as soon as it
 *	  looks; a connection that cannot be opened is bad from the start.  So
 *	  the question costs two reads of the socket instead of a statement's
 *	  round trip to the node (about a tenth of a call on the direct route).
 *	  A node that stops answering without closing (its machine lost) is not
 *	  seen this way, nor by a statement sent to it before its timeouts.
 *
 *	  Citus 13's GetNodeConnection is found in the loaded library by name,
 *	  as 1_ground/citus_local.c finds its functions, and the libpq
 *	  connection is read from the head of the MultiConnection it returns.
 *	  That head is Citus 13's: only a library that says it is Citus 13 is
 *	  read, and only when the head names the node, the user and the
 *	  database asked for.  Where any of this fails (a Citus built for
 *	  PostgreSQL 16 or later hides its functions; another major of Citus)
 *	  the caller cannot be told and asks the node instead.
 *
 *	  Layer 1, the ground.  Takes no locks.
 */
#include "postgres.h"

#include "commands/dbcommands.h"
#include "fmgr.h"
#include "libpq-fe.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "booking.h"
#include "1_ground/citus_conn.h"

/* Citus 13's GetNodeConnection (connection_management.h) */
typedef void *(*CitusGetNodeConnectionFn) (uint32 flags, const char *hostname, int32 port);

/* the head of Citus 13's MultiConnection, as connection_management.h declares it */
typedef struct CitusConnectionHead
{
	char		hostname[255];	/* MAX_NODE_LENGTH */
	int32		port;
	char		user[NAMEDATALEN];
	char		database[NAMEDATALEN];
	PGconn	   *conn;
} CitusConnectionHead;

static bool looked = false;
static CitusGetNodeConnectionFn get_node_connection = NULL;

/*
 * Whether the connection this session's next statement to nodename:nodeport
 * takes answers, in *answers; false when that cannot be told here.  Opens
 * the connection when the session has none, as a statement would.
 */
bool
BookingCitusConnectionAnswers(const char *nodename, int32 nodeport, bool *answers)
{
	CitusConnectionHead *head;
	const char *user;
	char	   *database;
	PGconn	   *conn;

	if (!looked)
	{
		PGFunction	version = load_external_function("citus", "citus_version", false, NULL);

		looked = true;
		if (version != NULL)
		{
			LOCAL_FCINFO(fcinfo, 0);
			char	   *v;

			/* citus_version() takes no argument and reads nothing of its call */
			InitFunctionCallInfoData(*fcinfo, NULL, 0, InvalidOid, NULL, NULL);
			v = text_to_cstring(DatumGetTextPP(version(fcinfo)));
			if (strncmp(v, "Citus 13.", 9) == 0)
				get_node_connection = (CitusGetNodeConnectionFn)
					load_external_function("citus", "GetNodeConnection", false, NULL);
			pfree(v);
		}
	}
	if (get_node_connection == NULL)
		return false;

	head = (CitusConnectionHead *) get_node_connection(0, nodename, nodeport);
	user = GetUserNameFromId(GetUserId(), true);
	database = get_database_name(MyDatabaseId);
	if (head == NULL || user == NULL || database == NULL || head->port != nodeport ||
		strncmp(head->hostname, nodename, sizeof(head->hostname)) != 0 ||
		strncmp(head->user, user, NAMEDATALEN) != 0 ||
		strncmp(head->database, database, NAMEDATALEN) != 0 || head->conn == NULL)
		return false;			/* not the head this file knows */
	conn = head->conn;

	/* between statements Citus leaves its connections idle; anything else is asked */
	if (PQstatus(conn) == CONNECTION_OK && PQtransactionStatus(conn) != PQTRANS_IDLE)
		return false;

	/*
	 * A node that ends a connection may first say why (an error libpq hands
	 * to Citus's notice receiver, which logs it), then close: the second
	 * read sees the close that arrived with the message.
	 */
	for (int i = 0; i < 2 && PQstatus(conn) == CONNECTION_OK; i++)
		if (!PQconsumeInput(conn))
			break;
	*answers = PQstatus(conn) == CONNECTION_OK;
	return true;
}
