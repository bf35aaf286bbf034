// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Prefetching loops (issue 13): back-to-back __next__ calls (K batches fetched, then trained
// on: HF Trainer's get_batch_samples; wrappers that fetch one ahead) stay undecided, and the
// events after the last are held back, until the next __next__ or optimizer step: the run's
// last m calls, m the batches trained on meanwhile, are the step's; the ones before are
// settled one by one (torch_tree_batches.c). A loop that runs several backwards on one batch
// before its optimizer steps (a GAN's critic: a real and a generated batch) counts its
// batches by the backwards a batch fetched alone ran (issue 44): the epoch's StopIteration
// __next__ and the next epoch's first batch, back to back, are then a loop's end and a batch.
#include <stdio.h>
#include <string.h>
#include "tree/torch_tree_internal.h"

/* A batch fetched alone ran its backwards up to its first optimizer step or the next
 * __next__: that many a batch, from now on (the last such batch's count). */
void torch_tree__learn_batch(struct torch_tree *t)
{
	if (t->batch_alone && t->batch_backwards > 0 && !t->replaying)
		t->backwards_per_batch = t->batch_backwards;
	t->batch_alone = false;
}

/* Batches trained on among the held-back events: backwards (as many a batch as a batch
 * fetched alone ran), else training forwards. */
static int trained_in_buffer(const struct torch_tree *t)
{
	bool grad = t->grad_enabled;
	int backwards = 0, forwards = 0;

	for (int i = 0; i < t->nbuffered; i++) {
		const struct tree_event *ev = &t->buffered[i].ev;

		if (ev->kind == TI_BACKWARD_ENTER)
			backwards++;
		else if (ev->kind == TI_GRAD_MODE)
			grad = ev->value != 0;
		else if (ev->kind == TI_FORWARD_ENTER && grad && ev->value != 0)
			forwards++;
	}
	if (backwards && t->backwards_per_batch > 1)
		return (backwards + t->backwards_per_batch - 1) / t->backwards_per_batch;
	return backwards ? backwards : forwards;
}

/* A run of back-to-back __next__ calls (the pending one last) was followed by what is held
 * back in buffered. If m batches were trained on before the next __next__ or optimizer step,
 * the run's last m calls fetched this step's batches (K fetched ahead, then trained on);
 * the ones before them are what they would have been one by one: a loop's end
 * (exhausted, a new epoch after it) or validation batches. Then the held-back events run. */
void torch_tree__decide_prefetch(struct torch_tree *t)
{
	int n = t->nprefetch, m, first_kept;
	uint64_t data_end = t->last_data_end_ns, quiet = t->quiet_ns;
	uint64_t boundary[SESSION_NCOUNTERS];
	struct tree_batch last = { .start = t->pending_start, .end = t->pending_end,
				   .obj = t->pending_obj };
	bool had_pending = t->pending;

	if (!n && !t->nbuffered)
		return;
	m = trained_in_buffer(t);
	first_kept = n + (had_pending ? 1 : 0) - m;
	if (first_kept < 0)
		first_kept = 0;
	memcpy(boundary, t->boundary_counters, sizeof(boundary));
	memcpy(last.start_counters, t->pending_start_counters, sizeof(last.start_counters));
	memcpy(last.end_counters, t->pending_end_counters, sizeof(last.end_counters));
	for (int i = 0; i < n; i++) {
		const struct tree_batch *b = &t->prefetch[i], *next = i + 1 < n ? &t->prefetch[i + 1] : &last;

		t->pending = true;
		t->pending_start = b->start;
		t->pending_end = b->end;
		t->pending_obj = b->obj;
		memcpy(t->pending_start_counters, b->start_counters, sizeof(b->start_counters));
		memcpy(t->pending_end_counters, b->end_counters, sizeof(b->end_counters));
		if (i < first_kept)
			torch_tree__settle_unconfirmed(t, next->start, next->start_counters);
		else
			torch_tree__confirm_batch(t);
	}
	t->nprefetch = 0;
	t->pending = had_pending;
	t->pending_start = last.start;
	t->pending_end = last.end;
	t->pending_obj = last.obj;
	memcpy(t->pending_start_counters, last.start_counters, sizeof(last.start_counters));
	memcpy(t->pending_end_counters, last.end_counters, sizeof(last.end_counters));
	/* the last batch's load ended after all of these */
	t->last_data_end_ns = data_end;
	t->quiet_ns = quiet;
	memcpy(t->boundary_counters, boundary, sizeof(boundary));
	t->replaying = true;
	for (int i = 0; i < t->nbuffered; i++)
		t->replay(t, &t->buffered[i].ev);
	t->replaying = false;
	t->nbuffered = 0;
}

/* While a run of back-to-back __next__ calls is undecided, events after its last one are
 * held back until one of them tells how many batches the step trains on. */
bool torch_tree__hold_back(struct torch_tree *t, const struct tree_event *ev)
{
	struct tree_buffered *b;
	int kind = ev->kind == TI_SCOPE_ENTER ? torch_tree__classify(ev->name) : -1;

	if (!t->nprefetch || t->replaying)
		return false;
	if (!t->pending || !t->pending_end)
		return false;	/* the run's last __next__ is still loading */
	if ((kind == SK_DATA_TRAIN && t->nbuffered) || kind == SK_OPTIMIZER ||
	    t->nbuffered == TREE_MAX_BUFFERED) {
		torch_tree__decide_prefetch(t);
		return false;
	}
	if (kind == SK_DATA_TRAIN)
		return false;	/* the run goes on */
	b = &t->buffered[t->nbuffered++];
	b->ev = *ev;
	if (ev->name) {
		snprintf(b->name, sizeof(b->name), "%s", ev->name);
		b->ev.name = b->name;
	}
	return true;
}
