// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The training-structure state machine (torch_tree.h, DESIGN.md "Tree rules", issue "PyTorch
// training structure"). Its files, from the top down: each calls only files below it (events
// held back are replayed through t->replay, not by name), and none calls back up:
// - torch_tree.c (this file): the entry points, dispatch by input, lost events.
// - torch_tree_scopes.c: record_function scopes, backward and forward; optimizer steps:
//   closures, several optimizers, no optimizer (issue 18).
// - torch_tree_data.c: a DataLoader __next__ begins.  torch_tree_grad.c: grad switches.
// - torch_tree_prefetch.c: back-to-back __next__ calls (K batches fetched, then trained on),
//   decided by what follows (issue 13).
// - torch_tree_batches.c: what a __next__ was: pending until something trains on it; a loop's
//   end (StopIteration); inference_mode loops (issue 18); validation batches.
// - torch_tree_eval.c: the forwards of validation batches (issue 13).
//   torch_tree_inferred.c: the forward inferred without Python frames.
//   torch_tree_stack.c: the scope stack and what a scope's name means.
// - torch_tree_compile.c: torch.compile's compiles (issue 26). torch_tree_amp.c: GradScaler's
//   skipped optimizer steps (issue 26). torch_tree_recompute.c: inside a backward: activation
//   checkpointing's nested backwards and recomputed forwards (issue 26).
// - torch_tree_phases.c: evaluation phases (no_grad after the update) of loops without a
//   DataLoader, which end their epochs (issue 44).
// - torch_tree_steps.c: steps, epochs and the spans' bookkeeping, over tree/session.h.
// The files share torch_tree_internal.h. Inference processes have a tree of their own
// (infer_tree.h), beside this one, over the same session.h.
#include <string.h>
#include "tree/torch_tree_internal.h"
#include "tree/tree_debug.h"

static void dispatch(struct torch_tree *t, const struct tree_event *ev);

void torch_tree__init(struct torch_tree *t, struct session *s, long epoch_steps)
{
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->replay = dispatch;
	t->epoch_steps = epoch_steps > 0 ? epoch_steps : 1000;
	t->grad_enabled = true;
	t->regions_per_step = -1;
}

/* Events were dropped: scopes, forward and backward may never see their ends. End them
 * now as incomplete (each once), forget the scope stack and a half-seen batch; the step
 * and epoch go on, marked. The next data_load or backward starts cleanly. */
static void on_lost(struct torch_tree *t, const struct tree_event *ev)
{
	struct span *open[TREE_MAX_SCOPES + 3];
	int n = 0;

	t->events_lost += ev->value;
	for (int i = t->nscopes - 1; i >= 0; i--)
		if (t->scopes[i].span && t->scopes[i].span->status == SPAN_OPEN)
			open[n++] = t->scopes[i].span;
	if (t->recompute)
		open[n++] = t->recompute;
	if (t->forward)
		open[n++] = t->forward;
	if (t->backward)
		open[n++] = t->backward;
	for (int i = 0; i < n; i++) {
		cJSON_AddNumberToObject(open[i]->attrs, "events_lost", ev->value);
		session__close(t->s, open[i], ev->ts_ns, SPAN_INCOMPLETE);
	}
	t->forward = t->backward = t->recompute = NULL;
	t->backward_depth = 0;
	t->forward_end_inferred = t->compile_open = false;
	t->compile_enter_ns = 0;
	t->nscopes = 0;
	t->pending = false;
	t->last_data_end_ns = t->last_boundary_ns = 0;
	t->exact_forward_seen = false;
	t->held = false;
	torch_tree__place_compiles(t, NULL, NULL);
	if (t->step && !cJSON_GetObjectItemCaseSensitive(t->step->attrs, "events_lost"))
		cJSON_AddNumberToObject(t->step->attrs, "events_lost", ev->value);
}

/* One event into the rules: each input to its handler. */
static void dispatch(struct torch_tree *t, const struct tree_event *ev)
{
	switch (ev->kind) {
	case TI_SCOPE_ENTER:
		torch_tree__on_scope_enter(t, ev);
		break;
	case TI_SCOPE_EXIT:
		torch_tree__on_scope_exit(t, ev);
		break;
	case TI_BACKWARD_ENTER:
	case TI_BACKWARD_EXIT:
		torch_tree__on_backward(t, ev, ev->kind == TI_BACKWARD_ENTER);
		break;
	case TI_GRAD_MODE:
		torch_tree__on_grad_mode(t, ev);
		break;
	case TI_FORWARD_ENTER:
	case TI_FORWARD_EXIT:
		torch_tree__on_forward(t, ev, ev->kind == TI_FORWARD_ENTER);
		break;
	case TI_COMPILE_ENTER:
	case TI_COMPILE_EXIT:
	case TI_COMPILED:
		torch_tree__on_compile(t, ev);
		break;
	case TI_SCALER_UPDATE:
		torch_tree__on_scaler_update(t, ev);
		break;
	case TI_LOST:	/* handled above */
	case TI_INFERENCE_MODE:	/* the inference tree's (infer_tree.h) */
	case TI_TOKEN_PICK:
	case TI_MODEL_TOKENS:
		break;
	}
	t->last_event_ns = ev->ts_ns;
}

/* Scopes only the training thread opens: the first one names it. */
static bool trains(int kind)
{
	return kind == SK_DATA_TRAIN || kind == SK_OPTIMIZER || kind == SK_ZERO_GRAD ||
	       kind == SK_MODEL_FORWARD || kind == SK_ROOT_FORWARD;
}

void torch_tree__feed(struct torch_tree *t, const struct tree_event *ev)
{
	if (ev->kind == TI_INFERENCE_MODE || ev->kind == TI_TOKEN_PICK ||
	    ev->kind == TI_MODEL_TOKENS)
		return;	/* the inference tree's input; the rules here never see it */
	tree_debug__input("TREE", t->s ? t->s->pid : 0, ev);
	if (ev->kind == TI_LOST) {	/* from any thread: the gap may hide the training one's */
		torch_tree__decide_prefetch(t);
		on_lost(t, ev);
		return;
	}
	if (!t->tid && (ev->kind == TI_BACKWARD_ENTER ||
			(ev->kind == TI_SCOPE_ENTER && trains(torch_tree__classify(ev->name)))))
		t->tid = ev->tid;
	if (t->tid && ev->tid != t->tid)
		return;	/* other threads: their own scopes do not shape the tree */
	if (ev->ts_ns > t->last_ts_ns)
		t->last_ts_ns = ev->ts_ns;
	if (torch_tree__hold_back(t, ev))
		return;
	dispatch(t, ev);
}

void torch_tree__finish(struct torch_tree *t, bool clean_exit)
{
	torch_tree__decide_prefetch(t);
	torch_tree__settle_unconfirmed(t, 0, NULL);
	torch_tree__place_compiles(t, NULL, NULL);
	t->last_data_end_ns = 0;
	if (clean_exit)	/* an evaluation after the last step */
		torch_tree__phase_decide(t, true);
	/* A clean exit ends the last step and epoch with the last thing seen: the loop ran
	 * to completion. After a crash or a detach they stay as they are (open). */
	if (clean_exit && t->last_ts_ns)
		torch_tree__close_epoch(t, t->last_ts_ns, NULL);
}

struct span *torch_tree__current(struct torch_tree *t, uint64_t ts)
{
	struct span *sp = torch_tree__innermost(t);

	if (sp && ts > t->last_ts_ns)
		t->last_ts_ns = ts;
	/* After a __next__ that nothing confirmed yet, a finished step has ended where that
	 * __next__ began (the next batch's step, or the loop's end): the epoch holds now. */
	if (sp == t->step && t->pending && t->pending_end && t->epoch &&
	    torch_tree__step_done(t))
		return t->epoch;
	if ((sp == t->step || sp == t->eval) && torch_tree__phase_current(t))
		return t->epoch;	/* an evaluation (without a DataLoader) is under way or over */

	if (t->forward && t->forward->status == SPAN_OPEN && (sp == t->step || sp == t->epoch))
		return t->forward;
	return sp;
}
