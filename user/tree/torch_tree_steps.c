// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Steps and epochs: the basic training loop (for each batch: forward, backward,
// optimizer.step), and the forward inferred when Python frames do not show it.
// - A step begins at the first DataLoader __next__ after an optimizer step and ends when
//   the next one begins; several forward/backward pairs before one optimizer step are one step.
// - An epoch begins with a new training iterator: when iterators cannot be told apart, at the
//   first training batch after the last iterator was exhausted (its StopIteration __next__)
//   or after a validation phase; without a DataLoader, every epoch_steps optimizer steps.
// - Without Python frames, forward is inferred: from the end of the batch's data_load (or
//   the previous backward / optimizer step) to the start of the backward, or, when no
//   backward follows, to the next batch (mode=eval). Its attrs say so.
// - With --python-frames always, once a model call was seen no forward is inferred.
#include <string.h>
#include "tree/torch_tree_internal.h"

/* counters: as they were at ts, for spans ended after the fact; NULL reads them now. */
void torch_tree__close_span(struct torch_tree *t, struct span **sp, uint64_t ts,
			    const uint64_t *counters)
{
	if (*sp)
		session__close_at(t->s, *sp, ts, SPAN_OK, counters);
	*sp = NULL;
}

/* Scopes the user opened inside a step that is ending: end them with it, and say so. */
static void close_scopes_under(struct torch_tree *t, const struct span *parent, uint64_t ts,
			       const uint64_t *counters)
{
	for (int i = t->nscopes - 1; i >= 0; i--) {
		struct span *sp = t->scopes[i].span;

		if (!sp || sp->start_ns < parent->start_ns || sp->status != SPAN_OPEN)
			continue;
		cJSON_AddBoolToObject(sp->attrs, "truncated", true);
		session__close_at(t->s, sp, ts, SPAN_OK, counters);
		t->scopes[i].span = NULL;
	}
}

void torch_tree__close_step(struct torch_tree *t, uint64_t ts, const uint64_t *counters)
{
	if (!t->step)
		return;
	close_scopes_under(t, t->step, ts, counters);
	torch_tree__close_span(t, &t->backward, ts, counters);
	torch_tree__close_span(t, &t->forward, ts, counters);
	torch_tree__close_span(t, &t->step, ts, counters);
}

void torch_tree__close_epoch(struct torch_tree *t, uint64_t ts, const uint64_t *counters)
{
	torch_tree__close_step(t, ts, counters);
	if (t->epoch)
		close_scopes_under(t, t->epoch, ts, counters);
	torch_tree__close_span(t, &t->epoch, ts, counters);
}

void torch_tree__open_epoch(struct torch_tree *t, uint64_t ts, const uint64_t *counters)
{
	torch_tree__close_epoch(t, ts, counters);
	t->epoch = session__open_at(t->s, NULL, "epoch", t->epoch_index++, ts, counters);
	t->loop_end_counted = false;
	t->steps_in_epoch = 0;
	t->eval_since_train = false;
	t->train_exhausted = false;
	t->eval_inside = t->eval_end_next = false;
}

/* What began the step: an optimizer step, a DataLoader batch, or a backward (no optimizer
 * seen yet). */
void torch_tree__set_boundary(struct torch_tree *t, const char *boundary)
{
	cJSON *old;

	if (!t->step)
		return;
	old = cJSON_GetObjectItemCaseSensitive(t->step->attrs, "boundary");
	if (old && cJSON_IsString(old) && !strcmp(old->valuestring, boundary))
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(t->step->attrs, "boundary");
	cJSON_AddStringToObject(t->step->attrs, "boundary", boundary);
}

void torch_tree__open_step(struct torch_tree *t, uint64_t ts, const uint64_t *counters,
			   const char *boundary)
{
	torch_tree__close_step(t, ts, counters);
	if (!t->epoch ||
	    (!t->train_iter && !t->phase_epochs && t->steps_in_epoch >= t->epoch_steps))
		torch_tree__open_epoch(t, ts, counters);
	t->step = session__open_at(t->s, t->epoch, "step", t->step_index++, ts, counters);
	t->steps_in_epoch++;
	t->step_had_optimizer = t->step_from_data = false;
	t->step_had_backward = t->step_updated = t->step_skipped = false;
	torch_tree__set_boundary(t, t->optimizer_steps ? "optimizer_step" : boundary);
}

/* The step has what ends it: an optimizer step (or one GradScaler skipped), or, while no
 * optimizer step was ever seen, an update by hand. The next batch begins a new one. */
bool torch_tree__step_done(const struct torch_tree *t)
{
	return t->step_had_optimizer || t->step_skipped ||
	       (!t->optimizer_steps && t->step_updated);
}

/* The innermost open optimizer step: closures run their forward and backward inside it. */
struct span *torch_tree__open_optimizer(struct torch_tree *t)
{
	for (int i = t->nscopes - 1; i >= 0; i--)
		if (t->scopes[i].kind == SK_OPTIMIZER && t->scopes[i].span &&
		    t->scopes[i].span->status == SPAN_OPEN)
			return t->scopes[i].span;
	return NULL;
}

static struct span *later(struct span *a, struct span *b)
{
	if (!b || b->status != SPAN_OPEN)
		return a;
	return !a || b->start_ns >= a->start_ns ? b : a;
}

/* The innermost open span: user scopes nest inside whatever runs when they begin, and so
 * do the scopes and collectives of a forward seen as it runs (an exact one: Python frames,
 * DDP's and FSDP's own scopes) and a forward recomputed in a backward. Open spans nest, so
 * the one that began last is the innermost. */
struct span *torch_tree__innermost(struct torch_tree *t)
{
	struct span *sp = NULL;

	for (int i = t->nscopes - 1; i >= 0 && !sp; i--)
		if (t->scopes[i].span && t->scopes[i].span->status == SPAN_OPEN)
			sp = t->scopes[i].span;
	sp = later(sp, t->backward);
	sp = later(sp, t->forward);
	sp = later(sp, t->recompute);
	if (sp)
		return sp;
	if (t->eval)	/* an evaluation without a DataLoader: its forwards */
		return t->eval;
	if (t->step)
		return t->step;
	return t->epoch;
}

void torch_tree__set_mode(struct span *sp, const char *mode, const char *source)
{
	cJSON_AddStringToObject(sp->attrs, "mode", mode);
	cJSON_AddStringToObject(sp->attrs, "mode_source", source);
}

/* Counters at a boundary where an inferred forward may begin (data_load, backward or
 * optimizer step ending). */
void torch_tree__snapshot(struct torch_tree *t, uint64_t out[SESSION_NCOUNTERS])
{
	if (!t->s->counters || !t->s->counters(t->s->counters_ctx, out))
		memset(out, 0, SESSION_NCOUNTERS * sizeof(out[0]));
}

void torch_tree__mark_boundary(struct torch_tree *t, uint64_t ts)
{
	t->quiet_ns = ts;
	torch_tree__snapshot(t, t->boundary_counters);
}

/* Python frames see every model call: nothing is left to infer. */
bool torch_tree__forwards_measured(const struct torch_tree *t)
{
	return t->frames_always && t->exact_forwards;
}

bool torch_tree__take_new_epoch(struct torch_tree *t, uint64_t obj)
{
	bool new_epoch = !t->epoch;

	if (obj && obj != t->train_iter) {
		new_epoch |= t->train_iter != 0;
		t->train_iter = obj;
	} else if (!obj && (t->train_exhausted || (t->eval_since_train && !t->eval_inside))) {
		new_epoch = true;	/* the last iterator ran out, or validation came between */
	}
	return new_epoch;
}
