// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What runs inside a backward (issue 26): activation checkpointing recomputes the forward of
// each checkpointed part during the backward, on the thread that runs it (the CPU; a GPU's
// autograd engine runs backward on a device thread of its own, which the tree does not
// follow).
// - Reentrant checkpointing (use_reentrant=True) runs a backward of its own inside the
//   backward (CheckpointFunction.backward calls torch.autograd.backward): a nested
//   Engine::execute stays part of the open backward (a depth count; its exit ends only it).
//   Nested means deeper on the stack (its stack pointer at entry, from BPF, below the open
//   one's): an entry at the open one's depth or above follows a backward that an exception
//   left, and begins a backward of its own.
// - A Module call while a backward runs is a recomputed forward: `forward {recompute=true}`
//   under the backward, never a forward of the step (Python frames only: without them
//   nothing shows it, and its time is the backward's).
// - Grad switches inside a backward (the recompute runs under torch.enable_grad()) restore
//   the mode before the backward returns: they decide nothing (torch_tree_eval.c).
#include "tree/torch_tree_internal.h"

bool torch_tree__nested_backward(struct torch_tree *t, const struct tree_event *ev, bool enter)
{
	if (enter) {
		if (!t->backward) {
			t->backward_sp = ev->obj;
			return false;
		}
		/* not deeper on the stack than the open one: that one was left by an exception
		 * (a reentrant backward runs inside it, below its frame); a new backward */
		if (ev->obj && t->backward_sp && ev->obj >= t->backward_sp) {
			t->backward_depth = 0;
			t->backward_sp = ev->obj;
			return false;
		}
		t->backward_depth++;
		return true;
	}
	if (!t->backward_depth)
		return false;
	t->backward_depth--;
	return true;
}

bool torch_tree__recompute_forward(struct torch_tree *t, const struct tree_event *ev, bool enter)
{
	if (!enter) {
		if (!t->recompute)
			return false;
		torch_tree__close_span(t, &t->recompute, ev->ts_ns, NULL);
		return true;
	}
	if (!t->backward || t->recompute)
		return t->recompute != NULL;
	t->recompute = session__open(t->s, torch_tree__innermost(t), "forward", -1, ev->ts_ns);
	if (!t->recompute)
		return true;
	cJSON_AddBoolToObject(t->recompute->attrs, "recompute", true);
	if (ev->value >= 0)
		torch_tree__set_mode(t->recompute, ev->value ? "train" : "eval", "module.training");
	else
		torch_tree__set_mode(t->recompute, "train", "backward");
	if (ev->name)
		cJSON_AddStringToObject(t->recompute->attrs, "module", ev->name);
	return true;
}
