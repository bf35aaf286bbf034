// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots' decisions (user/snap/snap_plan.c), told through the moments of a training
// loop: optimizer steps ending with their update counts, an epoch's end seen at its loop's
// end or only when the next epoch began, reads made ahead and for the epoch, exact or torn.
#include "snap/snap_plan.h"
#include "unit.h"

#define MS 1000000ull

static struct snap_read rd(uint32_t seq, long after_step, enum snap_purpose purpose)
{
	return (struct snap_read){ .valid = true, .seq = seq, .after_step = after_step,
				   .purpose = purpose };
}

/* An epoch whose end was seen only once the next one began: its last step is the newest
 * that ended before the new epoch's start, though the tree learnt of that start after the
 * new epoch's first step had ended (a loop that goes straight on). */
static void last_step_of_an_epoch_seen_late(void)
{
	struct snap_step_ends r = {};
	struct snap_step_end e;

	e = snap_plan__last_step_before(&r, 100 * MS);
	ASSERT_EQ(e.steps, 0, "no step yet: none");
	for (long s = 1; s <= 6; s++)	/* steps end at 10, 20, ... 60 ms; 3 updates each */
		snap_plan__note_step_end(&r, (struct snap_step_end){ (uint64_t)s * 10 * MS,
								    (uint32_t)(3 * s), s });
	e = snap_plan__last_step_before(&r, 45 * MS);	/* epoch 2 began at 45 ms */
	ASSERT_EQ(e.steps, 4, "the step that ended at 40 ms");
	ASSERT_EQ(e.seq, 12, "its update count");
	e = snap_plan__last_step_before(&r, 60 * MS);
	ASSERT_EQ(e.steps, 6, "an end at the start itself counts");
	e = snap_plan__last_step_before(&r, 5 * MS);	/* older than the ring holds */
	ASSERT_EQ(e.steps, 6, "none before it: the newest");
	ASSERT_TRUE(snap_plan__ended_unseen(7, 0, 4, 0), "epoch 7 ended unseen after 4 steps");
	ASSERT_FALSE(snap_plan__ended_unseen(7, 7, 4, 0), "its end was seen already");
	ASSERT_FALSE(snap_plan__ended_unseen(7, 3, 4, 4), "no step since the last end");
	ASSERT_FALSE(snap_plan__ended_unseen(0, 0, 4, 0), "no epoch was open");
}

/* A read is exact only when nothing began to change the parameters while it ran. */
static void exact_reads(void)
{
	ASSERT_TRUE(snap_plan__read_exact(12, 12, 0, 0, true), "nothing began");
	ASSERT_FALSE(snap_plan__read_exact(12, 13, 0, 0, true), "an update began");
	ASSERT_FALSE(snap_plan__read_exact(12, 12, 0, 2, true), "events lost meanwhile");
	ASSERT_FALSE(snap_plan__read_exact(12, 12, 5, 5, false), "the objects were freed");
	ASSERT_TRUE(snap_plan__read_exact(0xffffffffu, 0xffffffffu, 5, 5, true), "wrapped count");
}

/* Which read holds an epoch's state when its end becomes known. */
static void kept_at_an_end(void)
{
	struct snap_read none = {}, cand = rd(12, 4, SNAP_AHEAD), step = rd(12, 4, SNAP_AHEAD);

	ASSERT_EQ(snap_plan__kept_at_end(&cand, &none, &none, 12, 4, false), SNAP_KEPT_CAND,
		  "read right after the last step");
	cand = rd(14, 4, SNAP_AHEAD);	/* a zero_grad began since: replaced */
	ASSERT_EQ(snap_plan__kept_at_end(&cand, &step, &none, 12, 4, false), SNAP_KEPT_STEP_READ,
		  "the step's read, kept apart");
	ASSERT_EQ(snap_plan__kept_at_end(&cand, &none, &none, 12, 4, false), SNAP_KEPT_NONE,
		  "seen at the loop's end: a later read is not the end's");
	ASSERT_EQ(snap_plan__kept_at_end(&cand, &none, &none, 12, 4, true), SNAP_KEPT_LATER_GRADS,
		  "seen late: the weights are still the step's");
	cand = rd(16, 5, SNAP_AHEAD);	/* the next step ran */
	ASSERT_EQ(snap_plan__kept_at_end(&cand, &none, &none, 12, 4, true), SNAP_KEPT_NONE,
		  "after the next step: nothing of that state");
}

/* A straight-on loop under load: the loader came late to the epoch's last step, a zero_grad
 * of the next epoch had begun, but no optimizer step: the weights are read alone, and they
 * hold the epoch's end where nothing exact does (its grads torn). */
static void weights_while_grads_change(void)
{
	struct snap_read none = {}, later = rd(14, 5, SNAP_AHEAD), w = rd(13, 4, SNAP_AHEAD);

	ASSERT_TRUE(snap_plan__weights_exact(24, 24, 0, 0, true), "no optimizer step began");
	ASSERT_FALSE(snap_plan__weights_exact(24, 25, 0, 0, true), "the next step began");
	ASSERT_FALSE(snap_plan__weights_exact(24, 24, 0, 1, true), "events lost");
	ASSERT_FALSE(snap_plan__weights_exact(24, 24, 0, 0, false), "objects freed");
	ASSERT_TRUE(snap_plan__candidate(24, 16, 8), "an epoch's length after the last end");
	ASSERT_FALSE(snap_plan__candidate(25, 16, 8), "mid-epoch");
	ASSERT_FALSE(snap_plan__candidate(24, 16, 0), "no wakeups: no candidate");
	ASSERT_TRUE(snap_plan__weights_read_due(24, false, true, -1, false), "a candidate's weights");
	ASSERT_FALSE(snap_plan__weights_read_due(24, true, true, -1, false), "inside its step");
	ASSERT_FALSE(snap_plan__weights_read_due(24, false, true, -1, true), "read already");
	ASSERT_TRUE(snap_plan__weights_read_due(24, false, false, 24, false), "the waiting epoch's");
	ASSERT_FALSE(snap_plan__weights_read_due(25, false, false, 24, false), "a step later: gone");
	w.exact = false;
	w.weights_exact = true;
	ASSERT_EQ(snap_plan__kept_at_end(&later, &none, &w, 12, 4, true), SNAP_KEPT_WEIGHTS,
		  "the end known late: its weights, grads torn");
	ASSERT_EQ(snap_plan__kept_at_end(&later, &none, &w, 12, 6, true), SNAP_KEPT_NONE,
		  "another step's weights are not this end's");
	w.weights_exact = false;
	ASSERT_EQ(snap_plan__kept_at_end(&later, &none, &w, 12, 4, true), SNAP_KEPT_NONE,
		  "a step began during that read: nothing");
}

/* The record of an epoch that waits, from what there is. */
static void settling(void)
{
	struct snap_read none = {}, fresh = rd(12, 4, SNAP_FOR_EPOCH), ahead = rd(12, 4, SNAP_AHEAD),
			 kept = rd(12, 4, SNAP_AHEAD), torn = rd(13, 4, SNAP_FOR_EPOCH);

	ASSERT_EQ(snap_plan__settle(&fresh, 12, 4, &kept, &torn), SNAP_SETTLE_FRESH,
		  "a read made for it at its end's count");
	ASSERT_EQ(snap_plan__settle(&ahead, 12, 4, &kept, &torn), SNAP_SETTLE_KEPT,
		  "a read made ahead is the kept one's business");
	torn.model_attr = (cJSON *)1;	/* a read that found its tensors */
	ASSERT_EQ(snap_plan__settle(&fresh, 11, 4, &none, &torn), SNAP_SETTLE_TORN,
		  "for another count, nothing kept: torn");
	ASSERT_EQ(snap_plan__settle(&fresh, 11, 3, &none, &torn), SNAP_SETTLE_NONE,
		  "a torn read of a later step is none of the epoch's");
	torn.model_attr = NULL;
	ASSERT_EQ(snap_plan__settle(&fresh, 11, 3, &none, &torn), SNAP_SETTLE_TORN,
		  "a read that failed says why, whatever its step");
	ASSERT_EQ(snap_plan__settle(&none, 12, 4, &none, &none), SNAP_SETTLE_NONE, "nothing");
}

/* Reads made for the waiting epoch: exact at its count, later, or torn up to SNAP_ATTEMPTS. */
static void reads_for_an_epoch(void)
{
	ASSERT_EQ(snap_plan__after_epoch_read(true, 12, 12, false, 1), SNAP_OUT_SETTLE, "exact");
	ASSERT_EQ(snap_plan__after_epoch_read(false, 12, 12, true, 1), SNAP_OUT_SETTLE,
		  "torn, but the step's state was kept");
	ASSERT_EQ(snap_plan__after_epoch_read(true, 14, 12, false, 1), SNAP_OUT_LATER_STATE,
		  "exact, of a later state");
	ASSERT_EQ(snap_plan__after_epoch_read(false, 12, 12, false, 1), SNAP_OUT_RETRY, "torn");
	ASSERT_EQ(snap_plan__after_epoch_read(false, 12, 12, false, SNAP_ATTEMPTS), SNAP_OUT_TORN,
		  "torn the last time");
}

/* Looks for the models: when training begins, backing off while none is found, at once for
 * an epoch that waits, and again now and then once no epoch waits. */
static void looks(void)
{
	uint64_t retry = 0;

	ASSERT_FALSE(snap_plan__look_due(SNAP_MODELS_NOT_LOOKED, false, 0, 0, false, false),
		     "before training");
	ASSERT_TRUE(snap_plan__look_due(SNAP_MODELS_NOT_LOOKED, true, 0, 0, false, false),
		    "training began");
	ASSERT_FALSE(snap_plan__look_due(SNAP_MODELS_NONE, true, 5 * MS, 6 * MS, false, false),
		     "none found: not before the backoff");
	ASSERT_TRUE(snap_plan__look_due(SNAP_MODELS_NONE, true, 6 * MS, 6 * MS, false, false),
		    "after it");
	ASSERT_TRUE(snap_plan__look_due(SNAP_MODELS_NONE, true, 5 * MS, 6 * MS, true, false),
		    "an epoch waits: at once");
	ASSERT_FALSE(snap_plan__look_due(SNAP_MODELS_NONE, true, 5 * MS, 6 * MS, true, true),
		     "the last look was for it already");
	ASSERT_FALSE(snap_plan__look_due(SNAP_MODELS_FOUND, true, 9000000000000000000ull, 0, false, false),
		     "found: no look until a refresh is due");
	ASSERT_TRUE(snap_plan__look_due(SNAP_MODELS_STALE, true, 0, 0, false, false), "refresh");
	ASSERT_FALSE(snap_plan__look_due(SNAP_MODELS_STALE, true, 0, 0, true, false),
		     "not while an epoch waits");
	ASSERT_FALSE(snap_plan__look_due(SNAP_MODELS_REFUSED, true, 9000000000000000000ull, 0, true, false),
		     "refused: never");
	for (int i = 0; i < 20; i++)
		retry = snap_plan__retry_ns(retry, false);
	ASSERT_EQ(retry, FIND_RETRY_MAX_NS, "the backoff stops at a second");
	ASSERT_EQ(snap_plan__retry_ns(FIND_RETRY_NS, false), 2 * FIND_RETRY_NS, "doubles");
	ASSERT_EQ(snap_plan__retry_ns(retry, true), 0, "found: no backoff");
}

/* Reads ahead: right after the steps that may end an epoch, once per update count. */
static void reads_ahead(void)
{
	ASSERT_TRUE(snap_plan__ahead_due(3, 0, 1, false, 0, 9), "every step, first epoch");
	ASSERT_FALSE(snap_plan__ahead_due(3, 0, 1, true, 9, 9), "read at this count already");
	ASSERT_TRUE(snap_plan__ahead_due(20, 10, 10, true, 5, 9), "an epoch's length after");
	ASSERT_FALSE(snap_plan__ahead_due(25, 10, 10, true, 5, 9), "mid-epoch");
	ASSERT_FALSE(snap_plan__ahead_due(10, 10, 10, true, 5, 9), "no step since the end");
	ASSERT_FALSE(snap_plan__ahead_due(3, 0, 0, false, 0, 9), "no wakeups asked");
}

/* Wakeups: every step while the first epoch's length is unknown (free for 64 steps, then
 * only for long steps and cheap reads), then every epoch's length. */
static void wakeups(void)
{
	struct snap_pace p = {};
	struct snap_wake_plan w;

	w = snap_plan__wakeups(&p, false, 0, 0, 0, 10, 1000 * MS, 0.1);
	ASSERT_FALSE(w.set, "the first 64 steps: as they are");
	ASSERT_EQ(p.first_steps, 10, "pace counted from here");
	w = snap_plan__wakeups(&p, false, 0, 0, 0, 110, 1000 * MS + 100 * 5 * MS, 0.1);
	ASSERT_TRUE(w.set && w.every == 0, "5 ms steps: no more every step");
	p = (struct snap_pace){};
	snap_plan__wakeups(&p, false, 0, 0, 0, 10, 1000 * MS, 0.1);
	w = snap_plan__wakeups(&p, false, 0, 0, 0, 110, 1000 * MS + 100 * 50 * MS, 0.1);
	ASSERT_TRUE(w.set && w.every == 1, "50 ms steps, 0.1 ms reads: every step");
	w = snap_plan__wakeups(&p, false, 0, 0, 0, 110, 1000 * MS + 100 * 50 * MS, 10);
	ASSERT_TRUE(w.set && w.every == 0, "reads of a fifth of a step: no");
	w = snap_plan__wakeups(&p, true, 25, 75, 3, 80, 0, 0.1);
	ASSERT_TRUE(w.set, "an end seen");
	ASSERT_EQ(w.every, 25, "every epoch's length");
	ASSERT_EQ(w.base, 78, "from its end, in BPF's count");
	w = snap_plan__wakeups(&p, true, 0, 75, 3, 80, 0, 0.1);
	ASSERT_FALSE(w.set, "no step since the last end: as they are");
}

int main(void)
{
	RUN_TEST(last_step_of_an_epoch_seen_late);
	RUN_TEST(exact_reads);
	RUN_TEST(kept_at_an_end);
	RUN_TEST(weights_while_grads_change);
	RUN_TEST(settling);
	RUN_TEST(reads_for_an_epoch);
	RUN_TEST(looks);
	RUN_TEST(reads_ahead);
	RUN_TEST(wakeups);
	return unit__done();
}
