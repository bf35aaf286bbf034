// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Inference processes: the spans of a request (its region, its forwards, its token picks, its
// attributes) and the events held while it is not known whose they are. infer_tree.c feeds
// these; infer_requests.c calls them too; they call neither.
#include <stdlib.h>
#include <string.h>
#include "common/json.h"
#include "infer/infer_tree_internal.h"

void infer_tree__snapshot(const struct infer_tree *it, uint64_t out[SESSION_NCOUNTERS])
{
	if (!it->s->counters || !it->s->counters(it->s->counters_ctx, out))
		memset(out, 0, SESSION_NCOUNTERS * sizeof(out[0]));
}

void infer_tree__hold(struct infer_tree *it, const struct tree_event *ev)
{
	struct tree_buffered *b;

	if (it->nheld >= INFER_MAX_HELD) {
		it->held_dropped++;
		return;
	}
	b = &it->held[it->nheld++];
	b->ev = *ev;
	b->name[0] = 0;
	if (ev->name) {
		strncpy(b->name, ev->name, TREE_NAME_LEN - 1);
		b->name[TREE_NAME_LEN - 1] = 0;
		b->ev.name = b->name;
	}
}

/* The open region was no request (no model ran in it, or it trains): its events go back to
 * the training tree, in order. */
void infer_tree__give_back(struct infer_tree *it)
{
	if ((it->open || it->pending_call) && it->back)
		for (int i = 0; i < it->nheld; i++)
			it->back(it->back_ctx, &it->held[i].ev);
	it->open = it->fwd_open = it->pending_call = false;
	it->nheld = 0;
	it->nfwd = it->npicks = 0;
}

/* A request begins at ts (the region's start, or a prefill in it). */
void infer_tree__begin_request(struct infer_tree *it, uint64_t ts)
{
	it->start = ts;
	infer_tree__snapshot(it, it->start_counters);
	it->nfwd = it->npicks = 0;
	it->pick_op = NULL;
	it->calls = 0;
	it->fwd_open = false;
	it->decoded = it->decode_call = false;
	it->prefill_ts = 0;
	it->prefill_tokens = 0;
}

void infer_tree__open_region(struct infer_tree *it, const struct tree_event *ev,
			     const char *region)
{
	it->open = true;
	it->region = region;
	infer_tree__begin_request(it, ev->ts_ns);
	it->nstarters = 0;
	it->split = it->unseen = false;
	it->nheld = 0;
}

/* Whether a model call (outermost Module call) begins a forward or continues the last one.
 * HF generate runs its prefill as model(...) but its decode steps through the bound
 * self.__call__, which never passes slot_tp_call: there each step shows as the inner model's
 * call and then its head's (GPT2Model, then Linear). So the class of the request's first call
 * and of the first call after it begin forwards; any other class continues the forward it
 * follows (docs/inference.md). */
static bool begins_forward(struct infer_tree *it, const char *cls)
{
	cls = cls ? cls : "";
	for (int i = 0; i < it->nstarters; i++)
		if (!strcmp(it->starters[i], cls))
			return true;
	if (it->nstarters == 2 || (it->nstarters == 1 && it->fwd_open))
		return false;
	strncpy(it->starters[it->nstarters], cls, INFER_CLASS_LEN - 1);
	it->starters[it->nstarters][INFER_CLASS_LEN - 1] = 0;
	it->nstarters++;
	return true;
}

void infer_tree__forward_enter(struct infer_tree *it, uint64_t ts, const char *cls)
{
	struct infer_forward *f;

	it->calls++;
	if (!begins_forward(it, cls) && it->nfwd) {
		it->fwd_open = true;	/* its end moves to this call's end */
		return;
	}
	if (it->nfwd == it->cap_fwd) {
		long cap = it->cap_fwd ? it->cap_fwd * 2 : 64;
		struct infer_forward *n = realloc(it->fwd, (size_t)cap * sizeof(*n));

		if (!n)
			return;	/* the forward goes uncounted; the request says how many it has */
		it->fwd = n;
		it->cap_fwd = cap;
	}
	f = &it->fwd[it->nfwd++];
	f->start = f->end = ts;
	infer_tree__snapshot(it, f->c0);
	memcpy(f->c1, f->c0, sizeof(f->c1));
	it->fwd_open = true;
}

void infer_tree__forward_exit(struct infer_tree *it, uint64_t ts)
{
	struct infer_forward *f;

	if (!it->fwd_open || !it->nfwd)
		return;
	f = &it->fwd[it->nfwd - 1];
	f->end = ts;
	infer_tree__snapshot(it, f->c1);
	it->fwd_open = false;
}

void infer_tree__token_pick(struct infer_tree *it, const struct tree_event *ev)
{
	struct infer_pick *p;

	if (it->npicks == it->cap_picks) {
		long cap = it->cap_picks ? it->cap_picks * 2 : 64;
		struct infer_pick *n = realloc(it->picks, (size_t)cap * sizeof(*n));

		if (!n)
			return;	/* the token goes uncounted */
		it->picks = n;
		it->cap_picks = cap;
	}
	p = &it->picks[it->npicks++];
	p->ts = ev->ts_ns;
	infer_tree__snapshot(it, p->c);
	if (!it->pick_op)
		it->pick_op = ev->name && !strcmp(ev->name, "multinomial") ? "multinomial" : "argmax";
}

/* The request's numbers. Tokens: one per token pick (argmax, multinomial) where any was
 * seen, else one per forward of a generation (tokens_source says which). Its steps: the
 * forwards (Python frames), else the spans between picks (steps_source). */
static void request_attrs(const struct infer_tree *it, struct span *req, uint64_t end)
{
	cJSON *a = req->attrs;
	const struct infer_forward *f = it->fwd;
	const struct infer_pick *p = it->picks;
	long n = it->nfwd, tokens = it->npicks ? it->npicks : it->nfwd;
	uint64_t first_end, decode_start, decode_end;

	cJSON_AddStringToObject(a, "region", it->region);
	if (it->split)	/* one of several in its region */
		cJSON_AddStringToObject(a, "begun_by", "prefill");
	if (it->prefill_tokens > 1)
		cJSON_AddNumberToObject(a, "prefill_tokens", (double)it->prefill_tokens);
	if (n)	/* seen with Python frames only */
		cJSON_AddNumberToObject(a, "forwards", (double)n);
	if (it->calls != n)
		cJSON_AddNumberToObject(a, "model_calls", (double)it->calls);
	if (it->npicks) {
		cJSON_AddNumberToObject(a, "token_picks", (double)it->npicks);
		cJSON_AddStringToObject(a, "token_pick_op", it->pick_op);
	}
	if (tokens < 2)
		return;
	if (n >= 2) {	/* steps from forwards */
		first_end = f[0].end;
		decode_start = f[1].start;
		decode_end = f[n - 1].end;
		cJSON_AddNumberToObject(a, "decode_steps", (double)(n - 1));
		json__add_u64(a, "prefill_ns", f[0].end - f[0].start);
	} else if (!n) {	/* steps between picks */
		first_end = p[0].ts;
		decode_start = p[0].ts;
		decode_end = p[it->npicks - 1].ts;
		cJSON_AddNumberToObject(a, "decode_steps", (double)(it->npicks - 1));
		cJSON_AddStringToObject(a, "steps_source", "token_picks");
		json__add_u64(a, "prefill_ns", p[0].ts - it->start);
	} else {
		return;	/* one forward, several picks: no steps to tell */
	}
	cJSON_AddNumberToObject(a, "tokens_per_sequence", (double)tokens);
	cJSON_AddStringToObject(a, "tokens_source", it->npicks ? "token_picks" : "one_per_forward");
	json__add_u64(a, "ttft_ns", first_end - it->start);
	if (decode_end > decode_start) {
		uint64_t decode_ns = decode_end - decode_start;
		long steps = n >= 2 ? n - 1 : it->npicks - 1;

		json__add_u64(a, "decode_ns", decode_ns);
		json__add_double(a, "decode_tokens_per_s", (double)steps * 1e9 / (double)decode_ns);
	}
	if (end > it->start)
		json__add_double(a, "tokens_per_s", (double)tokens * 1e9 / (double)(end - it->start));
}

/* Without forwards, the steps between token picks: prefill from the region's start to the
 * first pick, decode[i] from pick i to pick i+1 (one pick alone: a forward). */
static void pick_spans(struct infer_tree *it, struct span *req)
{
	const struct infer_pick *p = it->picks;
	struct span *sp;

	for (long i = 0; i < it->npicks; i++) {
		const char *name = it->npicks == 1 ? "forward" : i == 0 ? "prefill" : "decode";
		uint64_t start = i ? p[i - 1].ts : it->start;
		const uint64_t *c0 = i ? p[i - 1].c : it->start_counters;

		sp = session__open_at(it->s, req, name, i ? i - 1 : -1, start, c0);
		if (!sp)
			continue;
		cJSON_AddStringToObject(sp->attrs, "mode", "inference");
		cJSON_AddStringToObject(sp->attrs, "bounds", "token_picks");
		session__close_at(it->s, sp, p[i].ts, SPAN_OK, p[i].c);
	}
}

/* Makes the request and its forwards; end 0: still open (the session's end settles it). A
 * request of a region that holds several ends with its last token. */
void infer_tree__emit_request(struct infer_tree *it, uint64_t end)
{
	const uint64_t *end_counters = NULL;
	uint64_t c[SESSION_NCOUNTERS];
	struct span *req, *sp;
	cJSON *root = it->s->root->attrs;

	if (end && it->split && it->npicks) {
		end = it->picks[it->npicks - 1].ts;
		end_counters = it->picks[it->npicks - 1].c;
	} else if (end && it->split && it->nfwd && !it->fwd_open) {
		end = it->fwd[it->nfwd - 1].end;
		end_counters = it->fwd[it->nfwd - 1].c1;
	}
	req = session__open_at(it->s, NULL, "request", it->requests, it->start, it->start_counters);
	if (!req)
		return;
	it->requests++;
	request_attrs(it, req, end);
	if (!it->nfwd)
		pick_spans(it, req);
	for (long i = 0; i < it->nfwd; i++) {
		const struct infer_forward *f = &it->fwd[i];
		const char *name = it->nfwd == 1 ? "forward" : i == 0 ? "prefill" : "decode";

		sp = session__open_at(it->s, req, name, i ? i - 1 : -1, f->start, f->c0);
		if (!sp)
			continue;
		cJSON_AddStringToObject(sp->attrs, "mode", "inference");
		if (i == it->nfwd - 1 && it->fwd_open && !end)
			continue;	/* ends with the session */
		session__close_at(it->s, sp, f->end, SPAN_OK, f->c1);
	}
	if (end) {
		infer_tree__snapshot(it, c);
		session__close_at(it->s, req, end, SPAN_OK, end_counters ? end_counters : c);
	}
	if (!cJSON_GetObjectItemCaseSensitive(root, "kind"))
		cJSON_AddStringToObject(root, "kind", "inference");
	json__set_num(root, "requests", (double)it->requests);
	session__touch_root(it->s);
	it->open = it->fwd_open = false;
	it->nfwd = it->npicks = 0;
	it->nheld = 0;
}

/* Grad switches and inference_mode: a region is open while either is off/on. */
