// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Evaluation loops (issue 13) that do not load their batches with grad disabled, so a batch
// looks like training until what follows it says otherwise:
// - A batch loaded with grad on, then a no_grad region outside any scope (HF Trainer's
//   prediction_step): a validation batch if a model call runs in the region (or, without
//   Python frames, if the region ends before the next __next__: it was the forward); else
//   as before. A forward in eval (no_grad, or module.training false) right after a batch
//   makes it a validation batch unless a backward follows.
// Grad mode also ends a training loop (no_grad after its last __next__) and shows an update
// by hand (no_grad after a backward, torch_tree_scopes.c).
#include <string.h>
#include "tree/torch_tree_internal.h"

/* A validation batch's forward, not seen itself: from start to end under the epoch. */
void torch_tree__inferred_eval_forward(struct torch_tree *t, uint64_t start,
				       const uint64_t *start_counters, uint64_t end,
				       const uint64_t *end_counters)
{
	struct span *sp;

	if (end <= start || torch_tree__forwards_measured(t) ||
	    !(sp = session__open_at(t->s, t->epoch, "forward", -1, start, start_counters))) {
		torch_tree__place_compiles(t, NULL, t->epoch);
		return;
	}
	torch_tree__set_mode(sp, "eval", "inferred_from_backward");
	cJSON_AddStringToObject(sp->attrs, "timing", "inferred");
	torch_tree__place_compiles(t, sp, t->epoch);
	session__close_at(t->s, sp, end, SPAN_OK, end_counters);
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

/* Grad mode set outside any scope (torch.no_grad and its end): what the batch before it was,
 * and an update by hand. Only switches the job's Python made count (value ev->obj == 0):
 * C++ guards (autograd.Function.apply, autocast's cache: docs/tree.md "Grad switches") and
 * switches inside a backward or a compile restore the mode before returning, so they only
 * keep the mode the tree mirrors. */
void torch_tree__on_grad_mode(struct torch_tree *t, const struct tree_event *ev)
{
	bool guard = ev->obj || t->backward || t->grad_calls || torch_tree__compiling(t);

	/* A region begins where grad goes from on to off: a no_grad() entered with grad already
	 * off is nested in something that switched it (activation checkpointing's pack hooks
	 * and its reentrant forward, under Function.apply's guard) and decides nothing. */
	if (!guard && !ev->value && t->grad_enabled && !t->nscopes) {
		bool after_training = t->step_index && !t->unconfirmed_run &&
				      !t->eval_since_train && !t->train_exhausted;

		/* The first __next__ after training, then no_grad, and no model call to
		 * tell (no Python frames): the training loop's end (StopIteration) and
		 * what follows it (validation on tensors at hand), or a training batch
		 * whose step disables grad before its backward (Keras's metric updates).
		 * A backward tells the second; the next __next__ the first
		 * (torch_tree__settle_unconfirmed). */
		bool undecidable = after_training && !torch_tree__forwards_measured(t);

		if (t->pending && t->pending_end && !t->pending_nograd && !t->pending_eval) {
			/* A batch loaded with grad on, then no_grad: the model call of an
			 * evaluation loop (HF Trainer), or validation after the loop's end.
			 * What comes first tells: a backward (a training batch after all), the
			 * region's end and then the next __next__ (an evaluation batch), or the
			 * next __next__ with the region still open (the loop's end). Right after
			 * training, with a model call to tell, the training loop is over either
			 * way. */
			if (after_training && !undecidable)
				torch_tree__count_loop_end(t);
			t->nograd_undecided = undecidable;
			t->pending_nograd = true;
			t->nograd_start = ev->ts_ns;
			t->nograd_end = 0;
			torch_tree__snapshot(t, t->nograd_counters);
		} else if (!t->pending_nograd && !t->pending_eval) {
			/* validation begins after the last batch */
			torch_tree__settle_unconfirmed(t, 0, NULL);
		}
		if (t->step_had_backward && !t->backward)
			t->step_updated = true;	/* or an update by hand */
	}
	if (!guard && ev->value && !t->grad_enabled && !t->nscopes) {
		if (t->pending_nograd && !t->nograd_end) {
			t->nograd_end = ev->ts_ns;	/* decided by what follows */
			torch_tree__snapshot(t, t->nograd_end_counters);
		} else if (!t->pending_nograd) {
			t->last_data_end_ns = 0;	/* validation is over: no forward spans it */
		}
		/* (a region of the batch loaded since is no end of the last step's update: if a
		 * backward follows, the batch's forward spans it, Keras's metric updates) */
		if (t->step_updated && !t->step_had_optimizer && !t->pending_nograd) {
			t->last_boundary_ns = ev->ts_ns;	/* the update ended here */
			torch_tree__mark_boundary(t, ev->ts_ns);
		}
	}
	t->grad_enabled = ev->value != 0;
}
