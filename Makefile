# booking: PGXS build.  See docs/layout.md for what each folder holds.
EXTENSION = booking
EXTVERSION = $(shell grep default_version $(EXTENSION).control | sed -e "s/default_version[[:space:]]*=[[:space:]]*'\([^']*\)'/\1/")

MODULE_big = booking
# src/ is layered: a file calls only files of its own folder or of a lower
# one (docs/layout.md; test/house/graph.py --check keeps it so)
# (found beside this Makefile, so that a VPATH build finds them too)
BOOKING_TOP := $(dir $(lastword $(MAKEFILE_LIST)))
OBJS = $(patsubst $(BOOKING_TOP)%.c,%.o,$(sort $(wildcard $(BOOKING_TOP)src/*.c $(BOOKING_TOP)src/*/*.c)))
# sql/booking.sql is the editable script of the current version (pgvector's
# arrangement); released versions keep a frozen full script, and every change
# ships an upgrade script beside them.
DATA_built = sql/$(EXTENSION)--$(EXTVERSION).sql
DATA = $(filter-out $(DATA_built),$(wildcard sql/$(EXTENSION)--*.sql))
PGFILEDESC = "booking - race-free reservations"

PG_CPPFLAGS = -I$(srcdir)/src -I$(libpq_srcdir) -DBOOKING_EXTVERSION=\"$(EXTVERSION)\"
# libpq: 1_ground/citus_conn.c reads Citus's connections to the other nodes
SHLIB_LINK_INTERNAL = $(libpq)
PG_CFLAGS = -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-Wno-sign-compare -Wno-cast-function-type $(BOOKING_CFLAGS)

# pg_regress reads <outputdir>/sql before <inputdir>/sql (and so for specs and
# expected): test sources live in test/, expected outputs in expected/.
REGRESS = setup resources reserve_seat cancel set_capacity stripes reserve_stay \
	reserve_stays reserve_stay_any free_slots holds idempotency constraints reclaim seats_left extend_hold_until \
	guest_limit reserve_seats reduce move_stay set_buffer outbox waitlist waitlist_reclaim waitlist_newcomer expansion local_time cancel_group opening_hours slots \
	metadata forget_guest stats row_hints
REGRESS_OPTS = --inputdir=. --outputdir=test
ISOLATION = iso_last_seat iso_hot_queue iso_lock_timeout iso_cancel_reserve iso_stay_race \
	iso_group_order iso_stay_any iso_confirm_expire iso_expire_expire \
	iso_reserve_vs_expiry iso_confirm_newcomer iso_idempotency \
	iso_striped iso_key_wait iso_retry_key \
	iso_sold_out_lock iso_stay_any_refused iso_stale_probe \
	iso_relation_lock iso_snapshot_levels iso_serializable_retry \
	iso_busy_message iso_guest_limit iso_passes_order iso_move_race iso_reduce_race \
	iso_outbox_relays iso_outbox_lease iso_outbox_late_commit iso_outbox_floor iso_waitlist_cancel_newcomer \
	iso_outbox_register iso_stay_any_waiters iso_outbox_drop iso_health_snapshot \
	iso_rr_busy_now iso_pool_unit_fk iso_rr_striped_busy iso_waitlist_queued iso_session_lock_timeout iso_series_race iso_cancel_group iso_opening_hours iso_slot_race
ISOLATION_OPTS = --inputdir=. --outputdir=test --load-extension=btree_gist --load-extension=booking

PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

# after the include, so that plain `make` still builds `all`
sql/$(EXTENSION)--$(EXTVERSION).sql: sql/$(EXTENSION).sql
	cp $< $@

# the worker compares the installed version with the library's (EXTVERSION)
src/7_worker/worker.o src/7_worker/worker.bc: $(EXTENSION).control

# no dependency tracking in PGXS without --enable-depend: a change to any
# header rebuilds every file
$(OBJS) $(OBJS:.o=.bc): $(wildcard $(BOOKING_TOP)src/*.h $(BOOKING_TOP)src/*/*.h)
