// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Requests within one grad-off region (issue 44): a serving loop inside one inference_mode or
// no_grad block is many requests, not one. A model call's new tokens (TI_MODEL_TOKENS: the
// token ids at::embedding takes, their last dimension) tell a prefill (more than one) from a
// decode step (one): a prefill after a token was made begins the next request, and the
// request before it ends with its last token. A region whose opening switch was not seen (it
// began before an attach, or torch does not show it: inference_mode in builds without a
// symbol table) is opened by a prefill; its requests are generations (a decode step after the
// prefill), anything else in it goes back to the training tree.
#include <string.h>
#include "infer/infer_tree_internal.h"

/* The open request is made (end: its last token), or, in a region nobody saw open, given back
 * when it generated nothing; the region goes on. */
static void end_request(struct infer_tree *it, uint64_t end)
{
	if (it->unseen && !it->decode_call) {
		infer_tree__give_back(it);
		it->open = true;
		return;
	}
	if (!it->split && it->prefill_ts) {	/* the region's first: from its prefill */
		it->start = it->prefill_ts;
		memcpy(it->start_counters, it->prefill_counters, sizeof(it->start_counters));
	}
	it->split = true;
	infer_tree__emit_request(it, end);
	it->open = true;
}

/* n new tokens in a model call: one is a decode step's; more than one a prefill (a forward's
 * two embeddings, tokens and positions, say the same), the next request's after a token was
 * made in this one. That request begins at this call (its model call, already open with
 * Python frames, goes with it). A prompt prefilled in chunks (no token between) stays one. */
static void model_tokens(struct infer_tree *it, const struct tree_event *ev)
{
	struct infer_forward moved = { 0 };
	bool move;

	if (ev->value <= 1) {
		it->decoded = it->decode_call = true;
		return;
	}
	if (it->decoded && (it->npicks || it->nfwd || it->unseen)) {
		move = it->fwd_open && it->nfwd > 0;
		if (move) {	/* this prefill's own model call */
			moved = it->fwd[--it->nfwd];
			it->fwd_open = false;
			it->calls--;
		}
		end_request(it, ev->ts_ns);
		infer_tree__begin_request(it, move ? moved.start : ev->ts_ns);
		if (move) {
			memcpy(it->start_counters, moved.c0, sizeof(it->start_counters));
			it->fwd[it->nfwd++] = moved;	/* room: the array held it */
			it->fwd_open = true;
			it->calls = 1;
		}
	}
	if (!it->prefill_ts) {
		it->prefill_ts = it->nfwd && it->fwd_open ? it->fwd[it->nfwd - 1].start : ev->ts_ns;
		infer_tree__snapshot(it, it->prefill_counters);
		it->prefill_tokens = ev->value;
	}
	it->decoded = false;
}

bool infer_tree__model_tokens(struct infer_tree *it, const struct tree_event *ev)
{
	if (!it->open && ev->value > 1 && (!it->tid || ev->tid == it->tid)) {
		/* a prefill outside any region seen: one began unseen; a model call held for
		 * it (Python frames) is its first forward */
		struct tree_event call = it->held[0].ev;
		bool pending = it->pending_call && it->nheld;
		int n = it->nheld;

		it->tid = ev->tid;
		infer_tree__open_region(it, pending ? &call : ev, "unseen");
		it->unseen = it->split = true;
		if (pending) {
			it->nheld = n;
			it->pending_call = false;
			infer_tree__forward_enter(it, call.ts_ns, call.name);
		}
	}
	if (it->open && ev->tid == it->tid)
		model_tokens(it, ev);
	return true;
}

bool infer_tree__unseen_switch(struct infer_tree *it, const struct tree_event *ev)
{
	bool on = ev->kind == TI_GRAD_MODE ? ev->value : !ev->value;

	if (!it->open || !it->unseen || ev->tid != it->tid ||
	    (ev->kind == TI_GRAD_MODE && ev->obj))
		return false;
	infer_tree__hold(it, ev);
	if (!on)	/* a region nested in it (generate's no_grad) */
		return true;
	/* grad back on, or inference_mode left: the region that was not seen opening ends */
	end_request(it, ev->ts_ns);
	it->open = it->unseen = it->split = false;
	it->grad_off = it->inference_on = false;
	it->nheld = 0;
	return true;
}

bool infer_tree__unseen_request(const struct infer_tree *it)
{
	return !it->unseen || it->decode_call;
}

bool infer_tree__pending_call(struct infer_tree *it, const struct tree_event *ev)
{
	bool enter = ev->kind == TI_FORWARD_ENTER, exit = ev->kind == TI_FORWARD_EXIT;

	if (it->open || !it->frames || (it->tid && ev->tid != it->tid) ||
	    (it->pending_call && ev->tid != it->held[0].ev.tid))
		return false;
	if (!it->pending_call) {
		if (!enter)
			return false;
		it->pending_call = true;	/* held until it tells */
		it->nheld = 0;
		infer_tree__hold(it, ev);
		return true;
	}
	if (ev->kind == TI_MODEL_TOKENS || ev->kind == TI_TOKEN_PICK)
		return false;	/* told below (a prefill opens a region), or nothing */
	if (!exit && ev->kind != TI_GRAD_MODE && ev->kind != TI_INFERENCE_MODE &&
	    ev->kind != TI_LOST) {
		infer_tree__hold(it, ev);	/* inside the call */
		return true;
	}
	/* the call ended, or a switch came, before any prefill: no request's; an eval call
	 * between requests is counted on the root as before */
	if (exit && it->requests && it->held[0].ev.value == 0) {
		it->pending_call = false;
		it->nheld = 0;
		it->loose_forwards++;
		return true;
	}
	infer_tree__give_back(it);
	return false;
}
