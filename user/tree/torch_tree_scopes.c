// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What the training thread runs: record_function scopes (DataLoader, optimizer step,
// zero_grad, DDP's forward, collectives), backward and forward, each opening its span where
// it belongs. Optimizer steps as real code writes them (issue 18):
// - Closure optimizers (LBFGS: optimizer.step(closure)): a backward or forward that runs
//   inside an open optimizer_step nests under it; one step per optimizer.step call.
// - Several optimizer steps before the next DataLoader __next__ (a GAN's discriminator step,
//   then its generator step) stay in one step, each its own optimizer_step span, named by its
//   scope (attrs optimizer=Adam.step). Without a DataLoader there is no batch to tell by: a
//   backward after an optimizer step begins the next step, as before.
// - While the process has shown no optimizer step at all, steps come from DataLoader
//   batches: a batch begins a new step once the current one was updated by hand (grad
//   disabled outside any scope after its backward: `with torch.no_grad(): p -= lr * p.grad`);
//   without a DataLoader, every backward begins a step. Every step says what began it
//   (boundary=optimizer_step|data_load|backward); a step that holds the first optimizer step
//   becomes boundary=optimizer_step, and from then on steps follow optimizer steps.
#include <string.h>
#include "tree/torch_tree_internal.h"

/* FSDP2's root announces its forward (FSDP::root_pre_forward) and nothing its end (the root
 * holds no parameters of its own here, so it has no post_forward): an exact forward without
 * Python frames, ended by what comes next (end_inferred): a backward, the next batch, an
 * optimizer step. */
static void root_forward(struct torch_tree *t, const struct tree_event *ev)
{
	struct tree_event f = *ev;

	if (t->forward)
		return;	/* Python frames opened it */
	f.name = "FSDP";
	f.value = -1;
	f.obj = 0;
	torch_tree__on_forward(t, &f, true);
	t->forward_end_inferred = t->forward != NULL;
}

void torch_tree__on_scope_enter(struct torch_tree *t, const struct tree_event *ev)
{
	int kind = torch_tree__classify(ev->name);
	struct span *sp = NULL;

	/* a compile: its span is made at its end, where it belongs (torch_tree_compile.c);
	 * the compiler's own scopes inside it are none of the job's */
	if (kind == SK_COMPILE || kind == SK_COMPILE_BACKWARD || torch_tree__compiling(t)) {
		if (kind != SK_COMPILE && kind != SK_COMPILE_BACKWARD)
			kind = SK_OTHER;
		if (t->nscopes < TREE_MAX_SCOPES)
			t->scopes[t->nscopes++] = (struct tree_scope){ NULL, kind, ev->ts_ns };
		return;
	}
	if (kind == SK_DATA_TRAIN) {
		torch_tree__on_data_enter(t, ev);
		return;
	}
	if (kind == SK_ROOT_FORWARD)
		root_forward(t, ev);
	/* DDP announces its forward through record_function: an exact forward without
	 * Python frames (unless those already opened one) */
	if (kind == SK_MODEL_FORWARD) {
		struct tree_event f = *ev;

		f.name = "DistributedDataParallel";
		f.value = -1;
		if (!t->forward)
			torch_tree__on_forward(t, &f, true);
		else
			f.name = NULL;
		torch_tree__push_scope(t, f.name ? t->forward : NULL, kind);
		return;
	}
	if (t->pending && t->grad_enabled && kind != SK_COLLECTIVE)
		torch_tree__confirm_batch(t);
	if (kind == SK_ZERO_GRAD)
		torch_tree__phase_zero_grad(t);
	if (kind == SK_OPTIMIZER) {
		const char *hash = strchr(ev->name, '#');
		bool opens;

		torch_tree__learn_batch(t);
		torch_tree__end_inferred_forward(t, ev->ts_ns);
		torch_tree__infer_forward(t, ev->ts_ns, false);
		/* without a batch to tell by, each optimizer.step call is a step (LBFGS) */
		opens = !t->step || (t->step_had_optimizer && !t->step_from_data &&
				     !torch_tree__open_optimizer(t));
		torch_tree__phase_decide(t, opens);
		if (opens)
			torch_tree__open_step(t, ev->ts_ns, NULL, "optimizer_step");
		t->step_had_optimizer = true;
		t->optimizer_since_update = true;
		t->optimizer_steps++;
		torch_tree__set_boundary(t, "optimizer_step");
		sp = session__open(t->s, torch_tree__innermost(t), "optimizer_step", -1, ev->ts_ns);
		if (sp) {
			cJSON_AddStringToObject(sp->attrs, "scope", ev->name);
			cJSON_AddStringToObject(sp->attrs, "optimizer", hash ? hash + 1 : ev->name);
		}
		/* a closure's forward begins here at the earliest */
		t->last_data_end_ns = 0;
		t->last_boundary_ns = ev->ts_ns;
		torch_tree__mark_boundary(t, ev->ts_ns);
	} else if (kind == SK_COLLECTIVE && t->pending) {
		/* after a __next__ nothing confirmed yet (the epoch's last, say): the last step
		 * ended where that __next__ began, so this is the epoch's */
		sp = session__open(t->s, t->epoch, ev->name, -1, ev->ts_ns);
	} else {
		sp = session__open(t->s, torch_tree__innermost(t),
				   kind == SK_ZERO_GRAD ? "zero_grad" : ev->name, -1, ev->ts_ns);
	}
	torch_tree__push_scope(t, sp, kind);
}

void torch_tree__on_scope_exit(struct torch_tree *t, const struct tree_event *ev)
{
	struct tree_scope sc;

	if (!t->nscopes)
		return;	/* entered before we attached */
	sc = t->scopes[--t->nscopes];
	if (sc.kind == SK_COMPILE || sc.kind == SK_COMPILE_BACKWARD) {
		torch_tree__compile_scope_end(t, &sc, ev->ts_ns);
		return;
	}
	if (sc.kind == SK_DATA_PENDING) {
		if (t->pending && !t->pending_end)
			t->pending_end = ev->ts_ns;
		t->last_data_end_ns = ev->ts_ns;
		torch_tree__mark_boundary(t, ev->ts_ns);
		memcpy(t->pending_end_counters, t->boundary_counters,
		       sizeof(t->pending_end_counters));
		return;
	}
	if (!sc.span || sc.span->status != SPAN_OPEN)
		return;
	if (sc.kind == SK_MODEL_FORWARD) {
		if (sc.span == t->forward)
			torch_tree__on_forward(t, ev, false);
		return;
	}
	if (sc.kind == SK_DATA_TRAIN || sc.kind == SK_DATA_EVAL) {
		cJSON_AddNumberToObject(sc.span->attrs, "data_load_ns",
					(double)(ev->ts_ns - sc.span->start_ns));
		t->last_data_end_ns = ev->ts_ns;
		torch_tree__mark_boundary(t, ev->ts_ns);
	}
	session__close(t->s, sc.span, ev->ts_ns, SPAN_OK);
	if (sc.kind == SK_OPTIMIZER)
		t->optimizer_end_ns = ev->ts_ns;
	if (sc.kind == SK_OPTIMIZER ||
	    (sc.kind == SK_ZERO_GRAD && (t->step_had_optimizer || t->step_skipped))) {
		t->last_data_end_ns = 0;	/* what follows is not a forward of this batch */
		t->last_boundary_ns = ev->ts_ns;
		torch_tree__mark_boundary(t, ev->ts_ns);
	}
}

void torch_tree__on_backward(struct torch_tree *t, const struct tree_event *ev, bool enter)
{
	bool opens;

	/* torch.autograd.grad (value 1: it accumulates no .grad): the backward AOTAutograd
	 * traces while torch.compile compiles (before the compile is known at the default
	 * level), a gradient penalty: not the step's backward, and what runs in it (grad
	 * switches) is not the job's regions either */
	if (ev->value) {
		if (enter)
			t->grad_calls++;
		else if (t->grad_calls)
			t->grad_calls--;
		return;
	}
	if (enter)
		t->grad_calls = 0;	/* none is under way where a backward begins */
	/* a compile traces the model's backward (AOTAutograd, torch 2.6): not the job's */
	if (torch_tree__compiling(t) || torch_tree__nested_backward(t, ev, enter))
		return;
	if (!enter) {
		if (t->backward) {
			torch_tree__close_span(t, &t->recompute, ev->ts_ns, NULL);
			session__close(t->s, t->backward, ev->ts_ns, SPAN_OK);
			t->backward = NULL;
			t->last_boundary_ns = ev->ts_ns;	/* accumulation: next forward */
			torch_tree__mark_boundary(t, ev->ts_ns);
		}
		return;
	}
	torch_tree__confirm_batch(t);
	torch_tree__end_inferred_forward(t, ev->ts_ns);
	/* A loop without DataLoader: a backward after an optimizer step begins the next step,
	 * and so does every backward while no optimizer step has been seen. A backward inside
	 * an open optimizer step (a closure) is part of it. */
	opens = !t->step || (!torch_tree__open_optimizer(t) && !t->step_from_data &&
			     (t->step_had_optimizer || t->step_skipped ||
			      (!t->optimizer_steps && t->step_had_backward)));
	torch_tree__phase_decide(t, opens);	/* an evaluation since the last update */
	if (opens)
		torch_tree__open_step(t, t->last_boundary_ns ? t->last_boundary_ns : ev->ts_ns,
			  t->last_boundary_ns ? t->boundary_counters : NULL, "backward");
	torch_tree__infer_forward(t, ev->ts_ns, true);
	torch_tree__close_span(t, &t->backward, ev->ts_ns, NULL);
	t->backward = session__open(t->s, torch_tree__innermost(t), "backward", -1, ev->ts_ns);
	t->step_had_backward = true;
	t->batch_backwards++;
}

void torch_tree__on_forward(struct torch_tree *t, const struct tree_event *ev, bool enter)
{
	if (torch_tree__recompute_forward(t, ev, enter))
		return;
	if (!enter) {
		if (t->forward)
			t->exact_forward_seen = true;
		torch_tree__close_span(t, &t->forward, ev->ts_ns, NULL);
		return;
	}
	if (t->forward)
		return;	/* a nested module call */
	torch_tree__phase_model_call(t);	/* an evaluation without a DataLoader */
	torch_tree__phase_train_call(t, ev);
	t->forward_end_inferred = false;
	if (ev->name)
		t->exact_forwards = true;
	if (t->pending && t->pending_end && (!t->grad_enabled || ev->value == 0)) {
		/* an evaluation forward of the batch just loaded (grad was on for the load):
		 * the step before it is over; a validation batch unless a backward follows */
		/* module.training false right after a trained batch, with no end of the
		 * training loop between: an evaluation inside the epoch (E1, docs/tree.md) */
		if (ev->value == 0 && !t->unconfirmed_run && !t->eval_since_train &&
		    !t->train_exhausted && !t->pending_eval)
			t->eval_inside = t->eval_end_next = true;
		t->pending_eval = true;
		t->pending_nograd = t->nograd_undecided = false;
		if (t->step && torch_tree__step_done(t))
			torch_tree__close_step(t, t->pending_start, t->pending_start_counters);
	} else if (t->grad_enabled && ev->value != 0) {	/* a module in eval mode trains nothing */
		torch_tree__confirm_batch(t);
	}
	t->forward = session__open(t->s,
				   t->grad_enabled && t->step && !torch_tree__open_optimizer(t)
				   ? t->step : torch_tree__innermost(t), "forward", -1, ev->ts_ns);
	if (!t->forward)
		return;
	if (ev->value >= 0)
		torch_tree__set_mode(t->forward, ev->value ? "train" : "eval", "module.training");
	else
		torch_tree__set_mode(t->forward, t->grad_enabled ? "train" : "eval", "grad_mode");
	if (ev->name)
		cJSON_AddStringToObject(t->forward->attrs, "module", ev->name);
	if (ev->obj)	/* torch.compile(module): module is the class it wraps */
		cJSON_AddBoolToObject(t->forward->attrs, "compiled", true);
}
