// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// DataLoader batches: what a __next__ was (a training batch, a validation batch, or a loop's
// end) is known only from what follows it, so it is decided here, after the fact.
// - A training __next__ stays pending until something confirms a batch was trained on
//   (backward, forward, optimizer step, a scope inside it). The __next__ that only raises
//   StopIteration is never confirmed: it becomes a data_load under the epoch marked
//   exhausted, instead of a phantom step.
// - A batch loaded with grad disabled (torch.no_grad / inference_mode) is validation: its
//   data_load and forward sit under the epoch, not in a step.
// - inference_mode() does not pass through GradMode::set_enabled, so its validation batches
//   look like training batches nothing trained on (issue 18). Only the real end of an
//   iterator is exhausted: the first unconfirmed __next__ after a trained batch (the training
//   loop's StopIteration), and in a run of unconfirmed __next__ calls the last one (that
//   loop's StopIteration); the ones between are validation batches (data_load under the
//   epoch, an inferred eval forward after each). A run's member is held back until the next
//   call tells which it was. Two inference_mode loops back to back look like one.
#include <string.h>
#include "tree/torch_tree_internal.h"

static struct tree_scope *pending_scope(struct torch_tree *t)
{
	for (int i = t->nscopes - 1; i >= 0; i--)
		if (t->scopes[i].kind == SK_DATA_PENDING)
			return &t->scopes[i];
	return NULL;
}

/* The pending batch was a validation batch: its forward ran in eval (no_grad around the
 * model call, or a module in eval mode) and no backward followed. The step before it ended
 * where its __next__ began. */
void torch_tree__eval_batch(struct torch_tree *t)
{
	t->pending = t->pending_nograd = t->pending_eval = false;
	t->last_data_end_ns = 0;
	if (t->step && torch_tree__step_done(t))
		torch_tree__close_step(t, t->pending_start, t->pending_start_counters);
	torch_tree__release_held(t, false);	/* another __next__ followed it: a batch */
	t->unconfirmed_run = 0;	/* the next unconfirmed __next__ is this loop's end */
	t->eval_since_train = true;
	torch_tree__unconfirmed_data_load(t, t->pending_start, t->pending_end,
					  t->pending_start_counters, t->pending_end_counters,
					  false);
}

/* The pending batch had a no_grad region that ended before the next __next__ and no backward:
 * an evaluation batch whose model call disabled grad (HF Trainer's prediction_step); without
 * a model call seen, the region was its forward. */
void torch_tree__nograd_eval_batch(struct torch_tree *t)
{
	uint64_t start = t->nograd_start, end = t->nograd_end;
	uint64_t start_counters[SESSION_NCOUNTERS], end_counters[SESSION_NCOUNTERS];

	memcpy(start_counters, t->nograd_counters, sizeof(start_counters));
	memcpy(end_counters, t->nograd_end_counters, sizeof(end_counters));
	torch_tree__eval_batch(t);
	if (!torch_tree__forwards_measured(t))
		torch_tree__inferred_eval_forward(t, start, start_counters, end, end_counters);
}

/* Make the pending training batch real: it was trained on. */
void torch_tree__confirm_batch(struct torch_tree *t)
{
	struct tree_scope *sc = pending_scope(t);
	struct span *sp;

	if (!t->pending)
		return;
	t->pending = t->pending_nograd = t->nograd_undecided = t->pending_eval = false;
	/* fetched alone (not one of a run being decided): its backwards count a batch's */
	t->batch_alone = !t->replaying && !t->nprefetch;
	t->batch_backwards = 0;
	/* a held __next__ before a trained batch: its loop's end */
	torch_tree__release_held(t, true);
	t->unconfirmed_run = 0;
	if (torch_tree__take_new_epoch(t, t->pending_obj))
		torch_tree__open_epoch(t, t->pending_start, t->pending_start_counters);
	t->eval_inside = t->eval_end_next = false;
	if (!t->step || torch_tree__step_done(t)) {
		torch_tree__open_step(t, t->pending_start, t->pending_start_counters, "data_load");
		t->step_from_data = true;
	}
	t->eval_since_train = false;
	sp = session__open_at(t->s, t->step, "data_load", -1, t->pending_start,
			      t->pending_start_counters);
	if (sp && t->pending_end) {
		cJSON_AddNumberToObject(sp->attrs, "data_load_ns",
					(double)(t->pending_end - t->pending_start));
		session__close_at(t->s, sp, t->pending_end, SPAN_OK, t->pending_end_counters);
	} else if (sc) {
		sc->span = sp;	/* still loading: a scope inside __next__ confirmed it */
		sc->kind = SK_DATA_TRAIN;
	}
}

/* A __next__ nothing trained on, as a data_load under the epoch. */
void torch_tree__unconfirmed_data_load(struct torch_tree *t, uint64_t start, uint64_t end,
				       const uint64_t *start_counters,
				       const uint64_t *end_counters, bool exhausted)
{
	struct span *sp = session__open_at(t->s, t->epoch, "data_load", -1, start, start_counters);

	if (!sp)
		return;
	if (exhausted)
		cJSON_AddBoolToObject(sp->attrs, "exhausted", true);
	cJSON_AddNumberToObject(sp->attrs, "data_load_ns", (double)(end - start));
	session__close_at(t->s, sp, end, SPAN_OK, end_counters);
}

void torch_tree__count_loop_end(struct torch_tree *t)
{
	if (!t->loop_end_counted)
		t->loop_ends++;
	t->loop_end_counted = true;
}

/* The held __next__ is known now: its loop's end (exhausted), or a validation batch, whose
 * forward ran until the next __next__ began. */
void torch_tree__release_held(struct torch_tree *t, bool exhausted)
{
	if (!t->held)
		return;
	t->held = false;
	torch_tree__unconfirmed_data_load(t, t->held_start, t->held_end, t->held_start_counters,
					  t->held_end_counters, exhausted);
	if (!exhausted)
		torch_tree__inferred_eval_forward(t, t->held_end, t->held_end_counters,
						  t->held_next, t->held_next_counters);
}

/* A pending __next__ that nothing confirmed: the loop's last, StopIteration call, or (under
 * inference_mode, which the tree cannot see) a validation batch. next_ts: the start of the
 * __next__ that follows it (0: none follows: grad mode changed, or the session ends). */
void torch_tree__settle_unconfirmed(struct torch_tree *t, uint64_t next_ts,
				    const uint64_t *next_counters)
{
	bool validation;

	if (t->pending && t->pending_eval) {
		torch_tree__eval_batch(t);
		return;
	}
	/* the region ended before this __next__: the model call of an evaluation batch; right
	 * after training and with no model call to tell, the loop's end and a validation on
	 * tensors at hand (below) */
	if (t->pending && t->pending_nograd && t->nograd_end && !t->nograd_undecided) {
		torch_tree__nograd_eval_batch(t);
		return;
	}
	if (t->pending_nograd)	/* grad went off after it and stays off: the loop's end */
		next_ts = 0;
	validation = t->pending && t->pending_nograd && t->nograd_undecided && t->nograd_end;
	t->pending_nograd = t->nograd_undecided = false;
	if (!t->pending || !t->pending_end) {
		if (!next_ts)
			torch_tree__release_held(t, true);
		return;
	}
	t->pending = false;
	t->last_data_end_ns = 0;
	if (t->eval_end_next) {	/* the end of an evaluation inside the epoch (E1) */
		t->eval_end_next = false;
	} else {
		t->train_exhausted = true;
		torch_tree__count_loop_end(t);
	}
	/* the loop's last */
	if (t->step && torch_tree__step_done(t))
		torch_tree__close_step(t, t->pending_start, t->pending_start_counters);
	/* another unconfirmed __next__ followed it: a batch */
	torch_tree__release_held(t, false);
	if (t->unconfirmed_run++ == 0 || !next_ts) {
		torch_tree__unconfirmed_data_load(t, t->pending_start, t->pending_end,
						  t->pending_start_counters,
						  t->pending_end_counters, true);
		if (validation)
			torch_tree__inferred_eval_forward(t, t->nograd_start, t->nograd_counters,
							  t->nograd_end, t->nograd_end_counters);
		return;
	}
	t->held = true;
	t->held_start = t->pending_start;
	t->held_end = t->pending_end;
	t->held_next = next_ts;
	memcpy(t->held_start_counters, t->pending_start_counters, sizeof(t->held_start_counters));
	memcpy(t->held_end_counters, t->pending_end_counters, sizeof(t->held_end_counters));
	if (next_counters)
		memcpy(t->held_next_counters, next_counters, sizeof(t->held_next_counters));
	else
		torch_tree__snapshot(t, t->held_next_counters);
}

