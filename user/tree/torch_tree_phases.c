// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Evaluation phases of loops without a DataLoader (issue 44): batches sliced from a tensor,
// trained on, then a validation under torch.no_grad() (and model.eval()), then training
// again. No iterator ends, so the phase is what ends the epoch:
// - The no_grad regions the job's Python opens after a step's update (its optimizer step, or
//   the region of an update by hand) and before the next step's backward are counted. Every
//   step has as many of its own (the update after clip_grad_norm_'s region on torch 2, an EMA
//   update, a metric): the fewest seen after a step is that number. Regions beyond it are an
//   evaluation: an `eval` span under the epoch from the first of them to the last one's end,
//   the step ended where it began, and the epoch ended with it; the next step begins the next
//   epoch. Decided when the next step begins (or the session ends cleanly).
// - With Python frames, a region in which the model runs after the update is an evaluation
//   for sure: the `eval` span opens at its start, when the first model call comes, so that
//   the evaluation's forwards (mode=eval) sit inside it; later regions until training
//   resumes extend it, and those without a model call (the next update) do not count.
// A handler below scopes and grad switches, above the span bookkeeping (torch_tree_steps.c).
#include <string.h>
#include "tree/torch_tree_internal.h"

static bool after_update(const struct torch_tree *t)
{
	return !t->data_seen && t->step && torch_tree__step_done(t) && !t->nscopes;
}

static void forget(struct torch_tree *t)
{
	t->phase_regions = 0;
	t->phase_open = false;
}

/* A no_grad region the job's Python opened (start) or left (!start), grad going from on to
 * off or back, outside any scope. */
void torch_tree__phase_region(struct torch_tree *t, uint64_t ts, bool start)
{
	if (!start) {
		if (!t->phase_open)
			return;
		t->phase_open = false;
		t->phase_end = ts;
		torch_tree__snapshot(t, t->phase_end_counters);
		return;
	}
	if (!after_update(t) && !t->eval)
		return;
	if (t->phase_regions < TREE_MAX_PHASE_REGIONS) {
		t->phase_start[t->phase_regions] = ts;
		torch_tree__snapshot(t, t->phase_start_counters[t->phase_regions]);
	}
	t->phase_regions++;
	t->phase_open = true;
}

/* A model call (Python frames): inside a region after the update, an evaluation. */
void torch_tree__phase_model_call(struct torch_tree *t)
{
	int i = t->phase_regions - 1;

	if (!t->phase_open || t->grad_enabled)
		return;
	if (t->eval) {
		t->eval_forwards++;
		return;
	}
	if (i < 0 || i >= TREE_MAX_PHASE_REGIONS)
		return;
	torch_tree__close_step(t, t->phase_start[i], t->phase_start_counters[i]);
	t->eval = session__open_at(t->s, t->epoch, "eval", -1, t->phase_start[i],
				   t->phase_start_counters[i]);
	t->eval_forwards = 1;
	t->eval_first = i;
	torch_tree__count_loop_end(t);
}

/* Whether what the job does now is its epoch's, not a step's: an evaluation under way or
 * decided to be one (marks it prints go on the epoch). */
bool torch_tree__phase_current(const struct torch_tree *t)
{
	int own = t->regions_per_step;

	if (t->data_seen || !t->epoch)
		return false;
	if (t->eval)
		return !t->phase_open;
	return own >= 0 && t->phase_regions > own && !torch_tree__forwards_measured(t);
}

static void end_epoch(struct torch_tree *t, struct span *eval, int regions)
{
	if (eval) {
		cJSON_AddNumberToObject(eval->attrs, "regions", regions);
		if (t->eval_forwards > 0)
			cJSON_AddNumberToObject(eval->attrs, "forwards", (double)t->eval_forwards);
		session__close_at(t->s, eval, t->phase_end, SPAN_OK, t->phase_end_counters);
	}
	torch_tree__count_loop_end(t);
	torch_tree__close_epoch(t, t->phase_end, t->phase_end_counters);
	t->phase_epochs = true;
	/* the next step's forward begins after the evaluation, not before it */
	t->last_boundary_ns = t->phase_end;
	t->quiet_ns = t->phase_end;
	memcpy(t->boundary_counters, t->phase_end_counters, sizeof(t->boundary_counters));
}

/* Training goes on: new_step, a step begins (a backward or an optimizer step that opens one,
 * or the session's clean end), so the regions since the last update are known; else what
 * came was part of the step (its optimizer step after clip_grad_norm_'s region). */
void torch_tree__phase_decide(struct torch_tree *t, bool new_step)
{
	int n = t->phase_regions, own = t->regions_per_step;

	if (t->phase_open) {	/* a region still open: it decides nothing yet */
		if (!new_step)
			return;
		t->phase_end = t->last_ts_ns;
		torch_tree__snapshot(t, t->phase_end_counters);
	}
	if (t->eval) {
		struct span *eval = t->eval;

		t->eval = NULL;
		end_epoch(t, eval, n - t->eval_first);
		forget(t);
		return;
	}
	if (!new_step || t->data_seen || torch_tree__forwards_measured(t)) {
		forget(t);
		return;
	}
	if (own < 0 || n <= own) {	/* a step's own regions: learnt after a step's update */
		if (t->step && torch_tree__step_done(t) && (own < 0 || n < own))
			t->regions_per_step = n;
		forget(t);
		return;
	}
	if (own < TREE_MAX_PHASE_REGIONS) {
		struct span *eval;

		torch_tree__close_step(t, t->phase_start[own], t->phase_start_counters[own]);
		eval = session__open_at(t->s, t->epoch, "eval", -1, t->phase_start[own],
					t->phase_start_counters[own]);
		t->eval_forwards = 0;
		end_epoch(t, eval, n - own);
	}
	forget(t);
}

/* A training model call (Python frames, grad on, the module in training mode) after a step's
 * update, without a DataLoader: training resumes, and the call begins the next step (before,
 * the step went on to the next backward: an evaluation's epoch held the next one's forward). */
void torch_tree__phase_train_call(struct torch_tree *t, const struct tree_event *ev)
{
	if (t->data_seen || !t->grad_enabled || ev->value == 0 || !ev->name || t->backward ||
	    torch_tree__open_optimizer(t) || !(t->eval || (t->step && torch_tree__step_done(t))))
		return;
	torch_tree__phase_decide(t, true);
	torch_tree__open_step(t, ev->ts_ns, NULL, "forward");
}

/* optimizer.zero_grad() after an evaluation (a loop that zeroes the grads between its forward
 * and its backward): training resumes, and the next step holds it. */
void torch_tree__phase_zero_grad(struct torch_tree *t)
{
	if (!torch_tree__phase_current(t))
		return;
	torch_tree__phase_decide(t, true);
	if (!t->step)
		torch_tree__open_step(t, t->last_boundary_ns, t->boundary_counters, "optimizer_step");
}

/* A DataLoader batch: its iterators tell epochs from now on. */
void torch_tree__phase_data(struct torch_tree *t)
{
	if (t->eval)
		torch_tree__phase_decide(t, true);
	t->data_seen = true;
	forget(t);
}
