/*
 * seat_take.h
 *	  Taking the seats of a reserve_seat and writing its booking row
 *	  (seat_take.c).  Layer 4, inventory.
 */
#ifndef BOOKING_SEAT_TAKE_H
#define BOOKING_SEAT_TAKE_H

#include "booking.h"

#include "1_ground/result.h"
#include "4_inventory/seat_sale.h"

extern bool BookingSeatTake(BookingSeatRequest *req, BookingResult *res);

#endif							/* BOOKING_SEAT_TAKE_H */
