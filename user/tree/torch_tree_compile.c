// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// torch.compile (issue 26): each compile a `compile` span where it ran, the step's compile
// time as compile_ns.
// - The end and the count: dynamo's create_cache_entry (probed where the build keeps its
//   symbol table: the official wheels) runs once per frame compiled, right after the compile
//   returned, with the frame's code state: the same state again is a recompilation of that
//   frame (recompile=true). torch 2.6 names each compile through record_function instead
//   (`_compile.compile_inner (dynamo_timed)`, SK_COMPILE; recompile unknown) and the backward
//   graph compiled inside the first backward (`backward._backward_impl`: backward=true).
// - The start: with Python frames, the call of dynamo's frame callback that returned just
//   before (exact); else the last point the tree knows nothing compiled (the end of the
//   batch's data_load, of a backward, an optimizer step or the previous compile):
//   timing=start_inferred.
// - Where: under what is open (an exact forward, the backward, the step, the epoch). A compile
//   after a batch whose forward is not known yet (inferred later, or the batch is undecided)
//   is held until the forward is made, and goes inside it when it lies within.
// - While a compile is known to run (dynamo's scope or callback open), what it runs is not the
//   job's: tracing runs the model's backward and switches grad mode (torch_tree_eval.c,
//   torch_tree_scopes.c); module calls inside it are the compiler's (observe/events.c).
#include <string.h>
#include "tree/torch_tree_internal.h"

bool torch_tree__compiling(const struct torch_tree *t)
{
	if (t->compile_open)
		return true;
	for (int i = t->nscopes - 1; i >= 0; i--)
		if (t->scopes[i].kind == SK_COMPILE || t->scopes[i].kind == SK_COMPILE_BACKWARD)
			return true;
	return false;
}

/* Whether sp lies under ancestor (spans still in the session's live list). */
static bool under(const struct torch_tree *t, const struct span *sp, const struct span *ancestor)
{
	while (sp && sp != ancestor) {
		const struct span *p = NULL;

		if (!sp->parent_id)
			return false;
		for (const struct span *l = t->s->live; l; l = l->next)
			if (l->id == sp->parent_id) {
				p = l;
				break;
			}
		sp = p;
	}
	return sp != NULL;
}

static void add_compile_ns(struct span *step, uint64_t ns)
{
	cJSON *v = cJSON_GetObjectItemCaseSensitive(step->attrs, "compile_ns");

	if (v)
		cJSON_SetNumberValue(v, v->valuedouble + (double)ns);
	else
		cJSON_AddNumberToObject(step->attrs, "compile_ns", (double)ns);
}

static void place(struct torch_tree *t, const struct tree_compile *c, struct span *parent)
{
	struct span *sp = session__open_at(t->s, parent, "compile", -1, c->start, NULL);

	if (!sp)
		return;
	if (c->recompile >= 0)
		cJSON_AddBoolToObject(sp->attrs, "recompile", c->recompile);
	if (c->backward)
		cJSON_AddBoolToObject(sp->attrs, "backward", true);
	if (c->start_inferred)
		cJSON_AddStringToObject(sp->attrs, "timing", "start_inferred");
	session__close_at(t->s, sp, c->end, SPAN_OK, NULL);
	if (t->step && under(t, sp, t->step))
		add_compile_ns(t->step, c->end - c->start);
}

void torch_tree__place_compiles(struct torch_tree *t, struct span *fwd, struct span *fallback)
{
	for (int i = 0; i < t->nheld_compiles; i++) {
		const struct tree_compile *c = &t->held_compiles[i];
		bool within = fwd && fwd->start_ns <= c->start &&
			      (fwd->status == SPAN_OPEN || c->end <= fwd->end_ns);

		place(t, c, within ? fwd : fallback ? fallback : torch_tree__innermost(t));
	}
	t->nheld_compiles = 0;
}

/* A compile ended: placed now under what is open, or held while the batch's forward is yet to
 * be made (inferred later). */
static void compiled(struct torch_tree *t, struct tree_compile *c)
{
	bool exact_open = (t->forward && t->forward->status == SPAN_OPEN) || t->recompute ||
			  t->backward;

	t->compiles++;
	t->compile_end_ns = c->end;
	if (!exact_open && (t->pending || t->last_data_end_ns) &&
	    t->nheld_compiles < TREE_MAX_COMPILES) {
		t->held_compiles[t->nheld_compiles++] = *c;
		return;
	}
	place(t, c, torch_tree__innermost(t));
}

/* 1 when code (a frame's code state) was compiled before, else 0 (and remembered); -1 once
 * too many frames were compiled to remember them all. */
static int seen_code(struct torch_tree *t, uint64_t code)
{
	for (int i = 0; i < t->ncodes; i++)
		if (t->codes[i] == code)
			return 1;
	if (t->ncodes == TREE_MAX_CODES)
		return -1;
	t->codes[t->ncodes++] = code;
	return 0;
}

void torch_tree__compile_scope_end(struct torch_tree *t, const struct tree_scope *sc,
				   uint64_t end_ns)
{
	struct tree_compile c = { .start = sc->start_ns, .end = end_ns, .recompile = -1,
				  .backward = sc->kind == SK_COMPILE_BACKWARD };

	t->compile_scope_end_ns = end_ns;
	t->compile_enter_ns = 0;
	compiled(t, &c);
}

void torch_tree__on_compile(struct torch_tree *t, const struct tree_event *ev)
{
	struct tree_compile c = { .end = ev->ts_ns };
	uint64_t since = t->quiet_ns > t->compile_end_ns ? t->quiet_ns : t->compile_end_ns;

	switch (ev->kind) {
	case TI_COMPILE_ENTER:
		t->compile_open = true;
		t->compile_enter_ns = ev->ts_ns;
		return;
	case TI_COMPILE_EXIT:
		t->compile_open = false;
		t->compile_exit_ns = ev->ts_ns;
		return;
	default:
		break;
	}
	c.recompile = ev->obj ? seen_code(t, ev->obj) : -1;
	/* dynamo's scope told this compile already (builds that keep it: torch 2.6) */
	if (t->compile_scope_end_ns >= since && t->compile_scope_end_ns) {
		t->compile_enter_ns = 0;
		return;
	}
	if (t->compile_enter_ns && t->compile_exit_ns >= t->compile_enter_ns && !t->compile_open) {
		c.start = t->compile_enter_ns;	/* the callback that just returned */
	} else {
		c.start = since ? since : ev->ts_ns;
		c.start_inferred = true;
	}
	t->compile_enter_ns = 0;
	compiled(t, &c);
}
