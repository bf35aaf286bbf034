/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_RANK_STEPS_H
#define __CIRRON_RANK_STEPS_H

#include <stdbool.h>
#include <stdint.h>
#include "read/phases.h"
#include "read/spool_view.h"

/* One rank's closed steps and their phases, as its batches are read on demand (trace
 * --ranks reads every rank's in step with the others'). */
struct step_times {
	long index;
	uint64_t total, phase[PH__COUNT];
	/* the collective_wait inside each phase (DDP's all-reduce waits at backward's end):
	 * phase[p] - waited[p] is the time p kept the rank busy */
	uint64_t waited[PH__COUNT];
};

struct rank_steps;

struct rank_steps *rank_steps__new(struct spool_view *v, struct rsession *s);
const struct rsession *rank_steps__session(const struct rank_steps *r);
/* Reads on until a step with an index above idx is queued, or the batches end. Returns 0 or
 * -ENOMEM. */
int rank_steps__past(struct rank_steps *r, long idx);
/* Steps queued, or batches left. */
bool rank_steps__has_more(const struct rank_steps *r);
/* The first queued step of index idx, or NULL. */
const struct step_times *rank_steps__at(const struct rank_steps *r, long idx);
/* Takes the oldest queued step if its index is idx or less (valid until the next call). */
const struct step_times *rank_steps__pop_upto(struct rank_steps *r, long idx);
void rank_steps__free(struct rank_steps *r);

#endif
