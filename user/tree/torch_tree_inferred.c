// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The forward inferred without Python frames (docs/tree.md "Inferred forward"): the gap
// between a batch's data_load (or the last backward / optimizer step) and what comes next.
// Above torch_tree_steps.c and torch_tree_compile.c: it places the compiles held in it.
#include "tree/torch_tree_internal.h"

/* An inferred forward: the gap since the batch's data_load ended (or, in a loop without a
 * DataLoader, since the previous backward or optimizer step) and now. */
void torch_tree__infer_forward(struct torch_tree *t, uint64_t ts, bool train)
{
	struct span *opt = train ? torch_tree__open_optimizer(t) : NULL;
	struct span *parent = opt ? opt : train ? t->step : t->epoch, *sp;
	uint64_t start = t->last_data_end_ns;

	if (train && !start)
		start = t->last_boundary_ns;
	t->last_data_end_ns = t->last_boundary_ns = 0;
	if (t->exact_forward_seen) {	/* this batch's forward was measured, not guessed */
		t->exact_forward_seen = false;
		torch_tree__place_compiles(t, NULL, parent);
		return;
	}
	/* With Python frames always, every model call is seen: none to infer, but for a
	 * training batch no model call covered (the model runs inside a compiled graph) */
	if (!start || ts <= start || (torch_tree__forwards_measured(t) && (!train || !t->compiles))) {
		torch_tree__place_compiles(t, NULL, parent);
		return;
	}
	if (parent && start < parent->start_ns)
		start = parent->start_ns;
	/* It began at the boundary, not now: its counters start from there. */
	sp = session__open_at(t->s, parent, "forward", -1, start, t->boundary_counters);
	if (!sp) {
		torch_tree__place_compiles(t, NULL, parent);
		return;
	}
	torch_tree__set_mode(sp, train ? "train" : "eval", "inferred_from_backward");
	cJSON_AddStringToObject(sp->attrs, "timing", "inferred");
	torch_tree__place_compiles(t, sp, parent);
	session__close(t->s, sp, ts, SPAN_OK);
}
