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
// by hand (no_grad after a backward). The switches' handler is torch_tree_grad.c, the batches
// are decided in torch_tree_batches.c; this file makes a validation batch's inferred forward.
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

