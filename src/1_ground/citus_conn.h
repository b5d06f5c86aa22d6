/*
 * citus_conn.h
 *	  Whether Citus's connection to a node answers, read off the connection
 *	  (citus_conn.c).  Layer 1, the ground.
 */
#ifndef BOOKING_CITUS_CONN_H
#define BOOKING_CITUS_CONN_H

#include "booking.h"

extern bool BookingCitusConnectionAnswers(const char *nodename, int32 nodeport, bool *answers);

#endif							/* BOOKING_CITUS_CONN_H */
