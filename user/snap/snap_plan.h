/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_PLAN_H
#define __CIRRON_SNAP_PLAN_H

/*
 * --snapshots: the decisions, as pure functions of what the event thread knows (no BPF, no
 * target memory, no clock but the one passed in), so that each is unit-tested
 * (tests/unit/test_snap_plan.c). snapshots.c does what they decide.
 *
 * Three small machines make the snapshots, each an explicit state:
 * - the worker (enum snap_busy): idle, looking for the models, or reading them;
 * - the models (enum snap_models): not looked for, none found, found, found but to be looked
 *   for again, or refused for good (this torch or CPython cannot be read);
 * - the epoch whose record waits (enum snap_pend): none, or one whose state after its last
 *   optimizer step is to be read (or taken from a read kept from right after that step).
 * Reads are made for that epoch or ahead of an end (enum snap_purpose), and a read is exact
 * when nothing began to change the parameters while it ran (snap_plan__read_exact).
 */
#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#define SNAP_ATTEMPTS		3		/* reads of an epoch's end before it is torn */
#define FIND_REFRESH_NS		5000000000ull	/* the models are looked for again after */
#define FIND_RETRY_NS		1000000ull	/* none found: again after, doubled each time
						 * up to a second (frames read while they change
						 * can miss a local; the first epoch may be short) */
#define FIND_RETRY_MAX_NS	1000000000ull
/* Reading after every optimizer step (before the first epoch's length is known) costs the
 * job a loader wakeup each (~50 us on the 2-core VM, docs/observer-effects.md): for the
 * first EVERY_STEP_FREE steps (an epoch of a few ms is over by then), beyond only for steps
 * this long, and reads this cheap relative to them. */
#define EVERY_STEP_FREE		64
#define EVERY_STEP_MIN_NS	20000000ull
#define EVERY_STEP_READ_SHARE	10

enum snap_busy { SNAP_IDLE, SNAP_FINDING, SNAP_READING };

enum snap_models {
	SNAP_MODELS_NOT_LOOKED,	/* training has not begun: no look yet */
	SNAP_MODELS_NONE,	/* looked: none (yet); again after a backoff, or at once for an
				 * epoch that waits */
	SNAP_MODELS_FOUND,	/* the worker holds them */
	SNAP_MODELS_STALE,	/* found; looked for again (new models, wrappers) once no epoch
				 * waits */
	SNAP_MODELS_REFUSED,	/* no layout fits this torch or CPython: no more reads, for good */
};

enum snap_pend { SNAP_PEND_NONE, SNAP_PEND_WAITING };

/* What a read was made for: the epoch that waits, or ahead of an end not known yet. */
enum snap_purpose { SNAP_FOR_NOTHING, SNAP_AHEAD, SNAP_FOR_EPOCH };

/* A finished read kept, with what it reflects. */
struct snap_read {
	bool valid;
	enum snap_purpose purpose;	/* SNAP_FOR_EPOCH: made for the epoch that waits now */
	uint32_t seq;		/* the update count it reflects */
	long after_step;	/* optimizer steps then */
	cJSON *records, *model_attr;
	uint64_t bytes;
	double ms;
	bool exact;		/* nothing changed while it ran: weights and grads are a state */
	bool weights_exact;	/* its weights are the state after after_step (exact or not) */
};

/* An optimizer step's end: its wall time (as the tree's spans), the update count then, and
 * optimizer steps so far. */
struct snap_step_end {
	uint64_t end_ns;
	uint32_t seq;
	long steps;
};

/* The last few step ends: which one was an epoch's last, once the tree tells (late) where
 * the next epoch began. */
#define SNAP_STEP_ENDS 4
struct snap_step_ends {
	struct snap_step_end v[SNAP_STEP_ENDS];
	unsigned int n;		/* ends noted so far (the ring holds the last few) */
};

void snap_plan__note_step_end(struct snap_step_ends *r, struct snap_step_end e);
/* The last epoch's last step, once the next epoch (begun at start_ns) is seen: the newest
 * step end at or before start_ns, else the newest of all (or a zeroed one: none yet). */
struct snap_step_end snap_plan__last_step_before(const struct snap_step_ends *r,
						 uint64_t start_ns);
/* Whether the epoch that was open (prev_epoch) ended without its loop's end being seen:
 * it had steps since the last end seen (prev_end_steps) and no end of its own. */
bool snap_plan__ended_unseen(uint64_t prev_epoch, uint64_t ended_epoch, long last_step,
			     long prev_end_steps);

/* A read is exact when nothing began to change the parameters while it ran: BPF's update
 * count is still the one the events had shown before it began, no event was lost meanwhile
 * (a lost one may have been an update), and the objects read are still alive. */
bool snap_plan__read_exact(uint32_t seen_before, uint32_t updates_after, uint64_t drops_before,
			   uint64_t drops_after, bool objects_alive);

/* A read's weights are exact, even where its grads are not (a zero_grad or a backward ran
 * meanwhile), when no optimizer step began while it ran: the job's weights change only in
 * its optimizer steps (a job that updates them by hand is never read so). */
bool snap_plan__weights_exact(uint64_t steps_before, uint64_t steps_after, uint64_t drops_before,
			      uint64_t drops_after, bool objects_alive);
/* Whether to read the weights alone now, an update under way (the grads changing): no
 * optimizer step is open, the last one (step, in the tree's count) may end an epoch (a
 * candidate, snap_plan__candidate) or is the one whose epoch waits for its record, and no
 * read of its weights is kept (have_it). */
bool snap_plan__weights_read_due(long step, bool in_step, bool candidate, long waiting_step,
				 bool have_it);

/* Which read holds an epoch's state when its end is known (end_seq after last_step steps): */
enum snap_kept {
	SNAP_KEPT_NONE,
	SNAP_KEPT_CAND,		/* the newest exact read, made at that update count */
	SNAP_KEPT_STEP_READ,	/* the exact read made right after that step, since replaced */
	SNAP_KEPT_LATER_GRADS,	/* known late: the newest read, after that step but once
				 * another update began (its grads may be a later update's) */
	SNAP_KEPT_WEIGHTS,	/* a read of that step's weights made while a later update ran:
				 * its grads are torn */
};
enum snap_kept snap_plan__kept_at_end(const struct snap_read *cand,
				      const struct snap_read *step_read,
				      const struct snap_read *weights_read, uint32_t end_seq,
				      long last_step, bool late);

/* The record of the epoch that waits, from what there is: */
enum snap_settle {
	SNAP_SETTLE_FRESH,	/* the newest exact read, made for it at its end's count */
	SNAP_SETTLE_KEPT,	/* the read kept from right after its last step */
	SNAP_SETTLE_TORN,	/* only torn reads of its last step's state (or one that failed,
				 * whose records say why): the last one, labelled torn */
	SNAP_SETTLE_NONE,	/* nothing: a record that says why */
};
enum snap_settle snap_plan__settle(const struct snap_read *cand, uint32_t end_seq,
				   long last_step, const struct snap_read *kept,
				   const struct snap_read *torn);

/* After a read made for the epoch that waits (attempts: reads for it so far, this one in): */
enum snap_outcome {
	SNAP_OUT_SETTLE,	/* it (or the kept one) is the epoch's: its record now */
	SNAP_OUT_LATER_STATE,	/* exact, but the end's state was gone before it began: this
				 * later state is recorded, and says so */
	SNAP_OUT_RETRY,		/* torn: read again at the next quiet moment */
	SNAP_OUT_TORN,		/* torn SNAP_ATTEMPTS times: the last torn one is recorded */
};
enum snap_outcome snap_plan__after_epoch_read(bool exact, uint32_t seq, uint32_t end_seq,
					      bool kept_valid, int attempts);

/* Whether to look for the models now (the worker idle): once training begins, again while
 * none is found (backing off; at once for an epoch that waits, unless the last look was made
 * for it), and a found set again once no epoch waits. */
bool snap_plan__look_due(enum snap_models m, bool training, uint64_t now_ns,
			 uint64_t look_after_ns, bool epoch_waits, bool last_look_for_epoch);
/* The wait before the next look after one that found none: 1 ms, doubled each time, up to a
 * second; 0 after one that found some (a refresh comes FIND_REFRESH_NS later). */
uint64_t snap_plan__retry_ns(uint64_t last_retry_ns, bool found);

/* A step that may end an epoch: every `every` steps since the last end (0: none are). */
bool snap_plan__candidate(long step, long prev_end_steps, uint64_t every);
/* Whether a read now would be one made ahead: right after an optimizer step that may end an
 * epoch (snap_plan__candidate), not at an update count read already. */
bool snap_plan__ahead_due(long steps, long prev_end_steps, uint64_t every, bool read_any,
			  uint32_t last_read_seq, uint32_t seen);

/* How often BPF wakes the loader at a step's end (struct snap_wake: every, base). */
struct snap_pace {
	uint64_t first_step_ns;	/* when steps were first counted here (0: not yet) */
	long first_steps;
};
struct snap_wake_plan {
	bool set;		/* change the wakeups to these */
	uint64_t every, base;	/* 0: none */
};
/* Once an epoch's end was seen (epoch_len > 0 steps, the next end expected at end_step +
 * steps_offset in BPF's count): every epoch_len steps. Before: every step for the first
 * EVERY_STEP_FREE steps, then every step only where steps are long and reads cheap. */
struct snap_wake_plan snap_plan__wakeups(struct snap_pace *p, bool end_seen, long epoch_len,
					 long end_step, long steps_offset, long steps,
					 uint64_t now_ns, double read_ms_last);

#endif
