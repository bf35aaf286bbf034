// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Grad switches (c10::GradMode::set_enabled) on the training thread: no_grad regions the
// job's Python opens (validation, an update by hand), told apart from C++ guards. A handler:
// it settles batches (torch_tree_batches.c) and calls nothing above it.
#include "tree/torch_tree_internal.h"

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

		torch_tree__phase_region(t, ev->ts_ns, true);	/* before it updates the step */

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
		torch_tree__phase_region(t, ev->ts_ns, false);
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
