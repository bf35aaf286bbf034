/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_RECORDS_H
#define __CIRRON_SNAP_RECORDS_H

/* --snapshots: the records of an epoch (one per model, or one that says why there is none),
 * held until the next epoch begins, then out with the next batch. */
#include <stdbool.h>
#include <stdint.h>

struct snap_ctl;
struct snap_env;
struct snap_read;
struct target;

void snap_read__free(struct snap_read *r);
struct snap_read snap_read__dup(const struct snap_read *r);
/* The records held for the last epoch go out. */
void snap_records__flush_held(struct target *t);
/* The first look came back: the early records go out, with the snapshots' why (a layout
 * that is not found, no model) as their error where there is one, else with the error they
 * were made with (the state was gone before it could be read). */
void snap_records__resolve_early(struct target *t);
/* An epoch that ends again: the records made at its earlier end go. */
void snap_records__drop(struct target *t, uint64_t span_id);
/* An epoch's records from a read: one per model. */
void snap_records__from(const struct snap_env *e, struct target *t, uint64_t span_id,
			long epoch, long last_step, const struct snap_read *rd, bool exact,
			int attempts, const char *note);
void snap_records__error(const struct snap_env *e, struct target *t, uint64_t span_id,
			 long epoch, long last_step, const char *why);
/* The waiting epoch's record, from what there is (snap_plan__settle): the fresh read of its
 * end's state, the one kept from right after its last step, the last torn one, or why there
 * is none. */
void snap_records__settle(const struct snap_env *e, struct target *t, const char *why_none);
/* Why_none when a later epoch ended while this one waited: its record waits for the next
 * state read (a later one, said so), where there is room, instead of an error at once. */
extern const char snap_why_next_ended[];
/* The epochs behind that no state came for (the session ends): their errors. */
void snap_records__behind_errors(const struct snap_env *e, struct target *t, const char *why);

#endif
