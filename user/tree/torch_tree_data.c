// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A DataLoader __next__ begins on the training thread: the last batch's forward and run of
// prefetched calls are settled, and the new call waits, pending, for what it was
// (torch_tree_batches.c). A handler, above the prefetch rules.
#include <string.h>
#include "tree/torch_tree_internal.h"

void torch_tree__on_data_enter(struct torch_tree *t, const struct tree_event *ev)
{
	struct span *sp;
	bool ahead;

	torch_tree__learn_batch(t);
	torch_tree__phase_data(t);
	torch_tree__end_inferred_forward(t, ev->ts_ns);
	t->grad_calls = 0;	/* no autograd.grad call spans a __next__ either */
	/* no compile spans a __next__: a callback's return may have been left out (the end of
	 * a --python-frames sampled window) */
	t->compile_open = false;
	/* the previous batch had no backward; an unconfirmed one has its forward (if it was a
	 * batch at all) settled with it */
	if (!t->pending || !t->pending_end)
		torch_tree__infer_forward(t, ev->ts_ns, false);
	ahead = t->grad_enabled && t->pending && t->pending_end && !t->pending_nograd &&
		!t->pending_eval && t->last_event_ns == t->pending_end &&
		t->nprefetch < TREE_MAX_PREFETCH;

	/* a run of them ends here: settle it first, in order */
	if (!ahead)
		torch_tree__decide_prefetch(t);
	if (ahead) {
		/* right after the last one ended: a batch fetched ahead, or a loop's end; what
		 * follows tells (torch_tree__decide_prefetch) */
		struct tree_batch *b = &t->prefetch[t->nprefetch++];

		b->start = t->pending_start;
		b->end = t->pending_end;
		b->obj = t->pending_obj;
		memcpy(b->start_counters, t->pending_start_counters, sizeof(b->start_counters));
		memcpy(b->end_counters, t->pending_end_counters, sizeof(b->end_counters));
		t->pending = false;
	}
	torch_tree__settle_unconfirmed(t, ev->ts_ns, NULL);
	torch_tree__place_compiles(t, NULL, NULL);	/* the last batch's, where it ended */
	if (t->grad_enabled) {
		t->pending = true;
		t->pending_start = ev->ts_ns;
		t->pending_end = 0;
		t->pending_obj = ev->obj;
		torch_tree__snapshot(t, t->pending_start_counters);
		torch_tree__push_scope(t, NULL, SK_DATA_PENDING);
		return;
	}
	/* a batch loaded with grad off after the step's update (an optimizer's, or by hand):
	 * validation, not part of that step */
	if (t->step && (t->step_had_optimizer || t->step_skipped || t->step_updated))
		torch_tree__close_step(t, ev->ts_ns, NULL);
	t->eval_since_train = true;
	sp = session__open(t->s, t->step ? t->step : t->epoch, "data_load", -1, ev->ts_ns);
	torch_tree__push_scope(t, sp, SK_DATA_EVAL);
}
