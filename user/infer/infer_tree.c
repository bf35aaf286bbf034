// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Inference processes: a request per grad-off region, prefill and decode steps under it
// (infer_tree.h, docs/inference.md).
#include <stdlib.h>
#include <string.h>
#include "common/json.h"
#include "infer/infer_tree_internal.h"
#include "tree/tree_debug.h"

void infer_tree__init(struct infer_tree *it, struct session *s)
{
	memset(it, 0, sizeof(*it));
	it->s = s;
}

void infer_tree__free(struct infer_tree *it)
{
	free(it->fwd);
	free(it->picks);
	it->fwd = NULL;
	it->picks = NULL;
	it->nfwd = it->cap_fwd = it->npicks = it->cap_picks = 0;
}

/* What only a training loop does: a backward that accumulates gradients (not
 * torch.autograd.grad), an optimizer's scopes, a DataLoader's batches, a grad scaler. */
static bool trains(const struct tree_event *ev)
{
	static const char *const names[] = { "Optimizer.", "enumerate(DataLoader)" };

	if (ev->kind == TI_BACKWARD_ENTER)
		return ev->value == 0;
	if (ev->kind == TI_SCALER_UPDATE)
		return true;
	if (ev->kind != TI_SCOPE_ENTER || !ev->name)
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(ev->name, names[i], strlen(names[i])))
			return true;
	return false;
}

static bool on_switch(struct infer_tree *it, const struct tree_event *ev)
{
	bool was = it->grad_off || it->inference_on;

	if (infer_tree__unseen_switch(it, ev))
		return true;
	if (ev->kind == TI_GRAD_MODE) {
		if (ev->obj)	/* a C++ guard that restores the mode: no region */
			return it->open;
		it->grad_off = !ev->value;
	} else {
		it->inference_on = ev->value;
	}
	if (!was && (it->grad_off || it->inference_on)) {
		infer_tree__open_region(it, ev, ev->kind == TI_GRAD_MODE ? "no_grad" : "inference_mode");
		infer_tree__hold(it, ev);
		return true;
	}
	if (was && !it->grad_off && !it->inference_on && it->open) {
		infer_tree__hold(it, ev);
		if (!it->nfwd && !it->npicks &&
		    (it->frames || strcmp(it->region, "inference_mode") != 0)) {
			/* no model ran (or, without Python frames, a no_grad region), no token
			 * was picked: a region of the job's own (weight init, a metric), not
			 * a request. Without frames an inference_mode region is one: only code
			 * that runs a model for its output opens one. */
			infer_tree__give_back(it);
			return true;
		}
		infer_tree__emit_request(it, ev->ts_ns);
		return true;
	}
	if (it->open)
		infer_tree__hold(it, ev);
	return it->open || ev->kind == TI_INFERENCE_MODE;
}

bool infer_tree__feed(struct infer_tree *it, const struct tree_event *ev, infer_giveback_fn back,
		      void *ctx)
{
	it->back = back;
	it->back_ctx = ctx;
	tree_debug__input("ITREE", it->s ? it->s->pid : 0, ev);
	if (it->trains)	/* the training tree has no use for these */
		return ev->kind == TI_INFERENCE_MODE || ev->kind == TI_TOKEN_PICK ||
		       ev->kind == TI_MODEL_TOKENS;
	if (trains(ev)) {	/* from now on every event is the training tree's */
		it->trains = true;
		infer_tree__give_back(it);
		return false;
	}
	if (ev->kind == TI_LOST) {
		infer_tree__give_back(it);	/* its start or end may be gone */
		return false;
	}
	if (infer_tree__pending_call(it, ev))
		return true;
	if (ev->kind == TI_GRAD_MODE || ev->kind == TI_INFERENCE_MODE) {
		if (!it->tid && ((ev->kind == TI_GRAD_MODE && !ev->value && !ev->obj) ||
				 (ev->kind == TI_INFERENCE_MODE && ev->value)))
			it->tid = ev->tid;
		if (ev->tid != it->tid)
			return ev->kind == TI_INFERENCE_MODE;
		return on_switch(it, ev);
	}
	if (ev->kind == TI_TOKEN_PICK) {
		if (it->open && ev->tid == it->tid) {
			infer_tree__hold(it, ev);
			infer_tree__token_pick(it, ev);
			it->decoded = true;
		}
		return true;	/* outside a request: nothing to the training tree */
	}
	if (ev->kind == TI_MODEL_TOKENS)
		return infer_tree__model_tokens(it, ev);
	if (ev->tid != it->tid)
		return false;
	if (ev->kind == TI_FORWARD_ENTER || ev->kind == TI_FORWARD_EXIT) {
		bool enter = ev->kind == TI_FORWARD_ENTER;

		if (it->open) {
			infer_tree__hold(it, ev);
			if (enter)
				infer_tree__forward_enter(it, ev->ts_ns, ev->name);
			else
				infer_tree__forward_exit(it, ev->ts_ns);
			return true;
		}
		/* An eval forward between requests (a region begun before an attach): not the
		 * training tree's once the process is known to serve requests. */
		if (it->requests && (enter ? ev->value == 0 : it->fwd_open)) {
			it->fwd_open = enter;
			it->loose_forwards += enter;
			return true;
		}
		return false;
	}
	if (it->open)
		infer_tree__hold(it, ev);
	return it->open;
}

void infer_tree__finish(struct infer_tree *it, uint64_t ts)
{
	(void)ts;
	if (!it->trains && it->open && (it->nfwd || it->npicks) && infer_tree__unseen_request(it))
		infer_tree__emit_request(it, it->exited && it->split ? ts : 0);
	if (it->loose_forwards) {
		json__set_num(it->s->root->attrs, "forwards_outside_requests", (double)it->loose_forwards);
		session__touch_root(it->s);
	}
}
