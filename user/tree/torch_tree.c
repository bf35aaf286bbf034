// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Rules (DESIGN.md, issue "PyTorch training structure"):
// - A step begins at the first DataLoader __next__ after an optimizer step and ends when
//   the next one begins; several forward/backward pairs before one optimizer step are one step.
// - A batch loaded with grad disabled (torch.no_grad / inference_mode) is validation: its
//   data_load and forward sit under the epoch, not in a step.
// - A training __next__ stays pending until something confirms a batch was trained on
//   (backward, forward, optimizer step, a scope inside it). The __next__ that only raises
//   StopIteration is never confirmed: it becomes a data_load under the epoch marked
//   exhausted, instead of a phantom step.
// - An epoch begins with a new training iterator: when iterators cannot be told apart, at the
//   first training batch after the last iterator was exhausted (its StopIteration __next__)
//   or after a validation phase; without a DataLoader, every epoch_steps optimizer steps.
// - Without Python frames, forward is inferred: from the end of the batch's data_load (or
//   the previous backward / optimizer step) to the start of the backward, or, when no
//   backward follows, to the next batch (mode=eval). Its attrs say so.
// Loops as real code writes them (issue 18):
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
// - inference_mode() does not pass through GradMode::set_enabled, so its validation batches
//   look like training batches nothing trained on. Only the real end of an iterator is
//   exhausted: the first unconfirmed __next__ after a trained batch (the training loop's
//   StopIteration), and in a run of unconfirmed __next__ calls the last one (that loop's
//   StopIteration); the ones between are validation batches (data_load under the epoch, an
//   inferred eval forward after each). A run's member is held back until the next call
//   tells which it was. Two inference_mode loops back to back look like one.
// Evaluation and prefetching loops (issue 13):
// - A batch loaded with grad on, then a no_grad region outside any scope (HF Trainer's
//   prediction_step): a validation batch if a model call runs in the region (or, without
//   Python frames, if the region ends before the next __next__: it was the forward); else
//   as before. A forward in eval (no_grad, or module.training false) right after a batch
//   makes it a validation batch unless a backward follows.
// - Back-to-back __next__ calls (K batches fetched, then trained on; wrappers that fetch one
//   ahead) stay undecided, and the events after the last are held back, until the next
//   __next__ or optimizer step: the run's last m calls, m the batches trained on meanwhile,
//   are the step's; the ones before are settled one by one as above.
// - With --python-frames always, once a model call was seen no forward is inferred.
#include <stdio.h>
#include <string.h>
#include "tree/torch_tree.h"

enum scope_kind {
	SK_OTHER, SK_DATA_TRAIN, SK_DATA_EVAL, SK_DATA_PENDING, SK_OPTIMIZER, SK_ZERO_GRAD,
	SK_MODEL_FORWARD,	/* a model's own forward scope (DistributedDataParallel) */
	SK_COLLECTIVE,		/* waiting for a collective: part of a step, never a batch's start */
};

static bool starts_with(const char *s, const char *prefix)
{
	return s && !strncmp(s, prefix, strlen(prefix));
}

void torch_tree__init(struct torch_tree *t, struct session *s, long epoch_steps)
{
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->epoch_steps = epoch_steps > 0 ? epoch_steps : 1000;
	t->grad_enabled = true;
}

/* counters: as they were at ts, for spans ended after the fact; NULL reads them now. */
static void close_span(struct torch_tree *t, struct span **sp, uint64_t ts, const uint64_t *counters)
{
	if (*sp)
		session__close_at(t->s, *sp, ts, SPAN_OK, counters);
	*sp = NULL;
}

/* Scopes the user opened inside a step that is ending: end them with it, and say so. */
static void close_scopes_under(struct torch_tree *t, const struct span *parent, uint64_t ts,
			       const uint64_t *counters)
{
	for (int i = t->nscopes - 1; i >= 0; i--) {
		struct span *sp = t->scopes[i].span;

		if (!sp || sp->start_ns < parent->start_ns || sp->status != SPAN_OPEN)
			continue;
		cJSON_AddBoolToObject(sp->attrs, "truncated", true);
		session__close_at(t->s, sp, ts, SPAN_OK, counters);
		t->scopes[i].span = NULL;
	}
}

static void close_step(struct torch_tree *t, uint64_t ts, const uint64_t *counters)
{
	if (!t->step)
		return;
	close_scopes_under(t, t->step, ts, counters);
	close_span(t, &t->backward, ts, counters);
	close_span(t, &t->forward, ts, counters);
	close_span(t, &t->step, ts, counters);
}

static void close_epoch(struct torch_tree *t, uint64_t ts, const uint64_t *counters)
{
	close_step(t, ts, counters);
	if (t->epoch)
		close_scopes_under(t, t->epoch, ts, counters);
	close_span(t, &t->epoch, ts, counters);
}

static void open_epoch(struct torch_tree *t, uint64_t ts, const uint64_t *counters)
{
	close_epoch(t, ts, counters);
	t->epoch = session__open_at(t->s, NULL, "epoch", t->epoch_index++, ts, counters);
	t->loop_end_counted = false;
	t->steps_in_epoch = 0;
	t->eval_since_train = false;
	t->train_exhausted = false;
}

/* What began the step: an optimizer step, a DataLoader batch, or a backward (no optimizer
 * seen yet). */
static void set_boundary(struct torch_tree *t, const char *boundary)
{
	cJSON *old;

	if (!t->step)
		return;
	old = cJSON_GetObjectItemCaseSensitive(t->step->attrs, "boundary");
	if (old && cJSON_IsString(old) && !strcmp(old->valuestring, boundary))
		return;
	cJSON_DeleteItemFromObjectCaseSensitive(t->step->attrs, "boundary");
	cJSON_AddStringToObject(t->step->attrs, "boundary", boundary);
}

static void open_step(struct torch_tree *t, uint64_t ts, const uint64_t *counters,
		      const char *boundary)
{
	close_step(t, ts, counters);
	if (!t->epoch || (!t->train_iter && t->steps_in_epoch >= t->epoch_steps))
		open_epoch(t, ts, counters);
	t->step = session__open_at(t->s, t->epoch, "step", t->step_index++, ts, counters);
	t->steps_in_epoch++;
	t->step_had_optimizer = t->step_from_data = false;
	t->step_had_backward = t->step_updated = false;
	set_boundary(t, t->optimizer_steps ? "optimizer_step" : boundary);
}

/* The innermost open optimizer step: closures run their forward and backward inside it. */
static struct span *open_optimizer(struct torch_tree *t)
{
	for (int i = t->nscopes - 1; i >= 0; i--)
		if (t->scopes[i].kind == SK_OPTIMIZER && t->scopes[i].span &&
		    t->scopes[i].span->status == SPAN_OPEN)
			return t->scopes[i].span;
	return NULL;
}

/* The innermost open span: user scopes nest inside whatever runs when they begin. */
static struct span *innermost(struct torch_tree *t)
{
	for (int i = t->nscopes - 1; i >= 0; i--)
		if (t->scopes[i].span && t->scopes[i].span->status == SPAN_OPEN)
			return t->scopes[i].span;
	if (t->backward)
		return t->backward;
	if (t->step)
		return t->step;
	return t->epoch;
}

static void set_mode(struct span *sp, const char *mode, const char *source)
{
	cJSON_AddStringToObject(sp->attrs, "mode", mode);
	cJSON_AddStringToObject(sp->attrs, "mode_source", source);
}

/* An inferred forward: the gap since the batch's data_load ended (or, in a loop without a
 * DataLoader, since the previous backward or optimizer step) and now. */
/* Counters at a boundary where an inferred forward may begin (data_load, backward or
 * optimizer step ending). */
static void snapshot(struct torch_tree *t, uint64_t out[SESSION_NCOUNTERS])
{
	if (!t->s->counters || !t->s->counters(t->s->counters_ctx, out))
		memset(out, 0, SESSION_NCOUNTERS * sizeof(out[0]));
}

static void mark_boundary(struct torch_tree *t, uint64_t ts)
{
	t->quiet_ns = ts;
	snapshot(t, t->boundary_counters);
}

/* Python frames see every model call: nothing is left to infer. */
static bool forwards_measured(const struct torch_tree *t)
{
	return t->frames_always && t->exact_forwards;
}

static void infer_forward(struct torch_tree *t, uint64_t ts, bool train)
{
	struct span *opt = train ? open_optimizer(t) : NULL;
	struct span *parent = opt ? opt : train ? t->step : t->epoch, *sp;
	uint64_t start = t->last_data_end_ns;

	if (train && !start)
		start = t->last_boundary_ns;
	t->last_data_end_ns = t->last_boundary_ns = 0;
	if (t->exact_forward_seen) {	/* this batch's forward was measured, not guessed */
		t->exact_forward_seen = false;
		return;
	}
	if (!start || ts <= start || forwards_measured(t))
		return;
	if (parent && start < parent->start_ns)
		start = parent->start_ns;
	/* It began at the boundary, not now: its counters start from there. */
	sp = session__open_at(t->s, parent, "forward", -1, start, t->boundary_counters);
	if (!sp)
		return;
	set_mode(sp, train ? "train" : "eval", "inferred_from_backward");
	cJSON_AddStringToObject(sp->attrs, "timing", "inferred");
	session__close(t->s, sp, ts, SPAN_OK);
}

static bool take_new_epoch(struct torch_tree *t, uint64_t obj)
{
	bool new_epoch = !t->epoch;

	if (obj && obj != t->train_iter) {
		new_epoch |= t->train_iter != 0;
		t->train_iter = obj;
	} else if (!obj && (t->eval_since_train || t->train_exhausted)) {
		new_epoch = true;	/* the last iterator ran out, or validation came between */
	}
	return new_epoch;
}

static struct tree_scope *pending_scope(struct torch_tree *t)
{
	for (int i = t->nscopes - 1; i >= 0; i--)
		if (t->scopes[i].kind == SK_DATA_PENDING)
			return &t->scopes[i];
	return NULL;
}

static void release_held(struct torch_tree *t, bool exhausted);
static void decide_prefetch(struct torch_tree *t);

/* Make the pending training batch real: it was trained on. */
static void confirm_batch(struct torch_tree *t)
{
	struct tree_scope *sc = pending_scope(t);
	struct span *sp;

	if (!t->pending)
		return;
	t->pending = t->pending_nograd = t->pending_eval = false;
	release_held(t, true);	/* a held __next__ before a trained batch: its loop's end */
	t->unconfirmed_run = 0;
	if (take_new_epoch(t, t->pending_obj))
		open_epoch(t, t->pending_start, t->pending_start_counters);
	if (!t->step || t->step_had_optimizer || (!t->optimizer_steps && t->step_updated)) {
		open_step(t, t->pending_start, t->pending_start_counters, "data_load");
		t->step_from_data = true;
	}
	t->eval_since_train = false;
	sp = session__open_at(t->s, t->step, "data_load", -1, t->pending_start,
			      t->pending_start_counters);
	if (sp && t->pending_end) {
		cJSON_AddNumberToObject(sp->attrs, "data_load_ns",
					(double)(t->pending_end - t->pending_start));
		session__close_at(t->s, sp, t->pending_end, SPAN_OK, t->pending_end_counters);
	} else if (sc) {
		sc->span = sp;	/* still loading: a scope inside __next__ confirmed it */
		sc->kind = SK_DATA_TRAIN;
	}
}

/* A __next__ nothing trained on, as a data_load under the epoch. */
static void unconfirmed_data_load(struct torch_tree *t, uint64_t start, uint64_t end,
				  const uint64_t *start_counters, const uint64_t *end_counters,
				  bool exhausted)
{
	struct span *sp = session__open_at(t->s, t->epoch, "data_load", -1, start, start_counters);

	if (!sp)
		return;
	if (exhausted)
		cJSON_AddBoolToObject(sp->attrs, "exhausted", true);
	cJSON_AddNumberToObject(sp->attrs, "data_load_ns", (double)(end - start));
	session__close_at(t->s, sp, end, SPAN_OK, end_counters);
}

/* A validation batch's forward, not seen itself: from start to end under the epoch. */
static void inferred_eval_forward(struct torch_tree *t, uint64_t start, const uint64_t *start_counters,
				  uint64_t end, const uint64_t *end_counters)
{
	struct span *sp;

	if (end <= start || forwards_measured(t))
		return;
	sp = session__open_at(t->s, t->epoch, "forward", -1, start, start_counters);
	if (!sp)
		return;
	set_mode(sp, "eval", "inferred_from_backward");
	cJSON_AddStringToObject(sp->attrs, "timing", "inferred");
	session__close_at(t->s, sp, end, SPAN_OK, end_counters);
}

static void count_loop_end(struct torch_tree *t)
{
	if (!t->loop_end_counted)
		t->loop_ends++;
	t->loop_end_counted = true;
}

/* The held __next__ is known now: its loop's end (exhausted), or a validation batch, whose
 * forward ran until the next __next__ began. */
static void release_held(struct torch_tree *t, bool exhausted)
{
	if (!t->held)
		return;
	t->held = false;
	unconfirmed_data_load(t, t->held_start, t->held_end, t->held_start_counters,
			      t->held_end_counters, exhausted);
	if (!exhausted)
		inferred_eval_forward(t, t->held_end, t->held_end_counters, t->held_next,
				      t->held_next_counters);
}

/* The pending batch was a validation batch: its forward ran in eval (no_grad around the
 * model call, or a module in eval mode) and no backward followed. The step before it ended
 * where its __next__ began. */
static void eval_batch(struct torch_tree *t)
{
	t->pending = t->pending_nograd = t->pending_eval = false;
	t->last_data_end_ns = 0;
	if (t->step && (t->step_had_optimizer || (!t->optimizer_steps && t->step_updated)))
		close_step(t, t->pending_start, t->pending_start_counters);
	release_held(t, false);	/* another __next__ followed it: a batch */
	t->unconfirmed_run = 0;	/* the next unconfirmed __next__ is this loop's end */
	t->eval_since_train = true;
	unconfirmed_data_load(t, t->pending_start, t->pending_end, t->pending_start_counters,
			      t->pending_end_counters, false);
}

/* A pending __next__ that nothing confirmed: the loop's last, StopIteration call, or (under
 * inference_mode, which the tree cannot see) a validation batch. next_ts: the start of the
 * __next__ that follows it (0: none follows: grad mode changed, or the session ends). */
static void settle_unconfirmed(struct torch_tree *t, uint64_t next_ts, const uint64_t *next_counters)
{
	if (t->pending && t->pending_eval) {
		eval_batch(t);
		return;
	}
	if (t->pending_nograd)	/* grad went off after it, with no model call inside */
		next_ts = 0;
	t->pending_nograd = false;
	if (!t->pending || !t->pending_end) {
		if (!next_ts)
			release_held(t, true);
		return;
	}
	t->pending = false;
	t->last_data_end_ns = 0;
	t->train_exhausted = true;
	count_loop_end(t);
	if (t->step && (t->step_had_optimizer || (!t->optimizer_steps && t->step_updated)))
		close_step(t, t->pending_start, t->pending_start_counters);	/* the loop's last */
	release_held(t, false);	/* another unconfirmed __next__ followed it: a batch */
	if (t->unconfirmed_run++ == 0 || !next_ts) {
		unconfirmed_data_load(t, t->pending_start, t->pending_end,
				      t->pending_start_counters, t->pending_end_counters, true);
		return;
	}
	t->held = true;
	t->held_start = t->pending_start;
	t->held_end = t->pending_end;
	t->held_next = next_ts;
	memcpy(t->held_start_counters, t->pending_start_counters, sizeof(t->held_start_counters));
	memcpy(t->held_end_counters, t->pending_end_counters, sizeof(t->held_end_counters));
	if (next_counters)
		memcpy(t->held_next_counters, next_counters, sizeof(t->held_next_counters));
	else
		snapshot(t, t->held_next_counters);
}

static void push_scope(struct torch_tree *t, struct span *sp, int kind)
{
	if (t->nscopes < TREE_MAX_SCOPES)
		t->scopes[t->nscopes++] = (struct tree_scope){ sp, kind };
}

static void on_data_enter(struct torch_tree *t, const struct tree_event *ev)
{
	struct span *sp;
	bool ahead;

	/* the previous batch had no backward; an unconfirmed one has its forward (if it was a
	 * batch at all) settled with it */
	if (!t->pending || !t->pending_end)
		infer_forward(t, ev->ts_ns, false);
	ahead = t->grad_enabled && t->pending && t->pending_end && !t->pending_nograd &&
		!t->pending_eval && t->last_event_ns == t->pending_end &&
		t->nprefetch < TREE_MAX_PREFETCH;

	if (!ahead)
		decide_prefetch(t);	/* a run of them ends here: settle it first, in order */
	if (ahead) {
		/* right after the last one ended: a batch fetched ahead, or a loop's end; what
		 * follows tells (decide_prefetch) */
		struct tree_batch *b = &t->prefetch[t->nprefetch++];

		b->start = t->pending_start;
		b->end = t->pending_end;
		b->obj = t->pending_obj;
		memcpy(b->start_counters, t->pending_start_counters, sizeof(b->start_counters));
		memcpy(b->end_counters, t->pending_end_counters, sizeof(b->end_counters));
		t->pending = false;
	}
	settle_unconfirmed(t, ev->ts_ns, NULL);
	if (t->grad_enabled) {
		t->pending = true;
		t->pending_start = ev->ts_ns;
		t->pending_end = 0;
		t->pending_obj = ev->obj;
		snapshot(t, t->pending_start_counters);
		push_scope(t, NULL, SK_DATA_PENDING);
		return;
	}
	if (t->step && t->step_had_optimizer)
		close_step(t, ev->ts_ns, NULL);
	t->eval_since_train = true;
	sp = session__open(t->s, t->step ? t->step : t->epoch, "data_load", -1, ev->ts_ns);
	push_scope(t, sp, SK_DATA_EVAL);
}

static int classify(const char *name)
{
	if (starts_with(name, "enumerate(DataLoader)#"))
		return SK_DATA_TRAIN;
	if (starts_with(name, "Optimizer.step#"))
		return SK_OPTIMIZER;
	if (starts_with(name, "Optimizer.zero_grad#"))
		return SK_ZERO_GRAD;
	if (!strcmp(name, "DistributedDataParallel.forward"))
		return SK_MODEL_FORWARD;
	if (!strcmp(name, "collective_wait") || starts_with(name, "nccl."))
		return SK_COLLECTIVE;
	return SK_OTHER;
}

static void on_forward(struct torch_tree *t, const struct tree_event *ev, bool enter);

static void on_scope_enter(struct torch_tree *t, const struct tree_event *ev)
{
	int kind = classify(ev->name);
	struct span *sp = NULL;

	if (kind == SK_DATA_TRAIN) {
		on_data_enter(t, ev);
		return;
	}
	/* DDP announces its forward through record_function: an exact forward without
	 * Python frames (unless those already opened one) */
	if (kind == SK_MODEL_FORWARD) {
		struct tree_event f = *ev;

		f.name = "DistributedDataParallel";
		f.value = -1;
		if (!t->forward)
			on_forward(t, &f, true);
		else
			f.name = NULL;
		push_scope(t, f.name ? t->forward : NULL, kind);
		return;
	}
	if (t->pending && t->grad_enabled && kind != SK_COLLECTIVE)
		confirm_batch(t);
	if (kind == SK_OPTIMIZER) {
		const char *hash = strchr(ev->name, '#');

		infer_forward(t, ev->ts_ns, false);
		/* without a batch to tell by, each optimizer.step call is a step (LBFGS) */
		if (!t->step || (t->step_had_optimizer && !t->step_from_data && !open_optimizer(t)))
			open_step(t, ev->ts_ns, NULL, "optimizer_step");
		t->step_had_optimizer = true;
		t->optimizer_steps++;
		set_boundary(t, "optimizer_step");
		sp = session__open(t->s, innermost(t), "optimizer_step", -1, ev->ts_ns);
		if (sp) {
			cJSON_AddStringToObject(sp->attrs, "scope", ev->name);
			cJSON_AddStringToObject(sp->attrs, "optimizer", hash ? hash + 1 : ev->name);
		}
		/* a closure's forward begins here at the earliest */
		t->last_data_end_ns = 0;
		t->last_boundary_ns = ev->ts_ns;
		mark_boundary(t, ev->ts_ns);
	} else if (kind == SK_COLLECTIVE && t->pending) {
		/* after a __next__ nothing confirmed yet (the epoch's last, say): the last step
		 * ended where that __next__ began, so this is the epoch's */
		sp = session__open(t->s, t->epoch, ev->name, -1, ev->ts_ns);
	} else {
		sp = session__open(t->s, innermost(t), kind == SK_ZERO_GRAD ? "zero_grad" : ev->name,
				   -1, ev->ts_ns);
	}
	push_scope(t, sp, kind);
}

static void on_scope_exit(struct torch_tree *t, const struct tree_event *ev)
{
	struct tree_scope sc;

	if (!t->nscopes)
		return;	/* entered before we attached */
	sc = t->scopes[--t->nscopes];
	if (sc.kind == SK_DATA_PENDING) {
		if (t->pending && !t->pending_end)
			t->pending_end = ev->ts_ns;
		t->last_data_end_ns = ev->ts_ns;
		mark_boundary(t, ev->ts_ns);
		memcpy(t->pending_end_counters, t->boundary_counters,
		       sizeof(t->pending_end_counters));
		return;
	}
	if (!sc.span || sc.span->status != SPAN_OPEN)
		return;
	if (sc.kind == SK_MODEL_FORWARD) {
		if (sc.span == t->forward)
			on_forward(t, ev, false);
		return;
	}
	if (sc.kind == SK_DATA_TRAIN || sc.kind == SK_DATA_EVAL) {
		cJSON_AddNumberToObject(sc.span->attrs, "data_load_ns",
					(double)(ev->ts_ns - sc.span->start_ns));
		t->last_data_end_ns = ev->ts_ns;
		mark_boundary(t, ev->ts_ns);
	}
	session__close(t->s, sc.span, ev->ts_ns, SPAN_OK);
	if (sc.kind == SK_OPTIMIZER)
		t->optimizer_end_ns = ev->ts_ns;
	if (sc.kind == SK_OPTIMIZER || (sc.kind == SK_ZERO_GRAD && t->step_had_optimizer)) {
		t->last_data_end_ns = 0;	/* what follows is not a forward of this batch */
		t->last_boundary_ns = ev->ts_ns;
		mark_boundary(t, ev->ts_ns);
	}
}

static void on_backward(struct torch_tree *t, const struct tree_event *ev, bool enter)
{
	if (!enter) {
		if (t->backward) {
			session__close(t->s, t->backward, ev->ts_ns, SPAN_OK);
			t->backward = NULL;
			t->last_boundary_ns = ev->ts_ns;	/* accumulation: next forward */
			mark_boundary(t, ev->ts_ns);
		}
		return;
	}
	confirm_batch(t);
	/* A loop without DataLoader: a backward after an optimizer step begins the next step,
	 * and so does every backward while no optimizer step has been seen. A backward inside
	 * an open optimizer step (a closure) is part of it. */
	if (!t->step || (!open_optimizer(t) && !t->step_from_data &&
			 (t->step_had_optimizer || (!t->optimizer_steps && t->step_had_backward))))
		open_step(t, t->last_boundary_ns ? t->last_boundary_ns : ev->ts_ns,
			  t->last_boundary_ns ? t->boundary_counters : NULL, "backward");
	infer_forward(t, ev->ts_ns, true);
	close_span(t, &t->backward, ev->ts_ns, NULL);
	t->backward = session__open(t->s, innermost(t), "backward", -1, ev->ts_ns);
	t->step_had_backward = true;
}

static void on_forward(struct torch_tree *t, const struct tree_event *ev, bool enter)
{
	if (!enter) {
		if (t->forward)
			t->exact_forward_seen = true;
		close_span(t, &t->forward, ev->ts_ns, NULL);
		return;
	}
	if (t->forward)
		return;	/* a nested module call */
	if (ev->name)
		t->exact_forwards = true;
	if (t->pending && t->pending_end && (!t->grad_enabled || ev->value == 0)) {
		/* an evaluation forward of the batch just loaded (grad was on for the load):
		 * the step before it is over; a validation batch unless a backward follows */
		t->pending_eval = true;
		t->pending_nograd = false;
		if (t->step && (t->step_had_optimizer || (!t->optimizer_steps && t->step_updated)))
			close_step(t, t->pending_start, t->pending_start_counters);
	} else if (t->grad_enabled && ev->value != 0) {	/* a module in eval mode trains nothing */
		confirm_batch(t);
	}
	t->forward = session__open(t->s, t->grad_enabled && t->step && !open_optimizer(t)
				   ? t->step : innermost(t), "forward", -1, ev->ts_ns);
	if (!t->forward)
		return;
	if (ev->value >= 0)
		set_mode(t->forward, ev->value ? "train" : "eval", "module.training");
	else
		set_mode(t->forward, t->grad_enabled ? "train" : "eval", "grad_mode");
	if (ev->name)
		cJSON_AddStringToObject(t->forward->attrs, "module", ev->name);
}

/* Events were dropped: scopes, forward and backward may never see their ends. End them
 * now as incomplete (each once), forget the scope stack and a half-seen batch; the step
 * and epoch go on, marked. The next data_load or backward starts cleanly. */
static void on_lost(struct torch_tree *t, const struct tree_event *ev)
{
	struct span *open[TREE_MAX_SCOPES + 2];
	int n = 0;

	t->events_lost += ev->value;
	for (int i = t->nscopes - 1; i >= 0; i--)
		if (t->scopes[i].span && t->scopes[i].span->status == SPAN_OPEN)
			open[n++] = t->scopes[i].span;
	if (t->forward)
		open[n++] = t->forward;
	if (t->backward)
		open[n++] = t->backward;
	for (int i = 0; i < n; i++) {
		cJSON_AddNumberToObject(open[i]->attrs, "events_lost", ev->value);
		session__close(t->s, open[i], ev->ts_ns, SPAN_INCOMPLETE);
	}
	t->forward = t->backward = NULL;
	t->nscopes = 0;
	t->pending = false;
	t->last_data_end_ns = t->last_boundary_ns = 0;
	t->exact_forward_seen = false;
	t->held = false;
	if (t->step && !cJSON_GetObjectItemCaseSensitive(t->step->attrs, "events_lost"))
		cJSON_AddNumberToObject(t->step->attrs, "events_lost", ev->value);
}

static void dispatch(struct torch_tree *t, const struct tree_event *ev)
{
	switch (ev->kind) {
	case TI_SCOPE_ENTER:
		on_scope_enter(t, ev);
		break;
	case TI_SCOPE_EXIT:
		on_scope_exit(t, ev);
		break;
	case TI_BACKWARD_ENTER:
	case TI_BACKWARD_EXIT:
		on_backward(t, ev, ev->kind == TI_BACKWARD_ENTER);
		break;
	case TI_GRAD_MODE:
		if (!ev->value && !t->nscopes) {
			bool after_training = !t->unconfirmed_run && !t->eval_since_train &&
					      !t->train_exhausted;

			/* The first __next__ nothing trained on, then no_grad, and no model
			 * call to tell (no Python frames): the training loop's end
			 * (StopIteration) and what follows it (validation on tensors at
			 * hand), settled below. */
			bool undecidable = after_training && !forwards_measured(t);

			if (t->pending && t->pending_end && !t->pending_nograd && !t->pending_eval &&
			    !undecidable) {
				/* a batch loaded with grad on, then no_grad: the model call of
				 * an evaluation loop (HF Trainer), or validation after the loop's
				 * end; what runs inside tells (and, right after training, the
				 * training loop is over either way) */
				if (after_training)
					count_loop_end(t);
				t->pending_nograd = true;
				t->nograd_start = ev->ts_ns;
				snapshot(t, t->nograd_counters);
			} else if (!t->pending_nograd && !t->pending_eval) {
				settle_unconfirmed(t, 0, NULL);	/* validation begins after the
								 * last batch */
			}
			if (t->step_had_backward && !t->backward)
				t->step_updated = true;	/* or an update by hand */
		}
		if (ev->value && !t->grad_enabled && !t->nscopes) {
			if (t->pending_nograd && !forwards_measured(t)) {
				/* no model call seen: the no_grad region was its forward */
				uint64_t now[SESSION_NCOUNTERS];

				snapshot(t, now);
				eval_batch(t);
				inferred_eval_forward(t, t->nograd_start, t->nograd_counters,
						      ev->ts_ns, now);
			}
			t->last_data_end_ns = 0;	/* validation is over: no forward spans it */
			if (t->step_updated && !t->step_had_optimizer) {
				t->last_boundary_ns = ev->ts_ns;	/* the update ended here */
				mark_boundary(t, ev->ts_ns);
			}
		}
		t->grad_enabled = ev->value != 0;
		break;
	case TI_FORWARD_ENTER:
	case TI_FORWARD_EXIT:
		on_forward(t, ev, ev->kind == TI_FORWARD_ENTER);
		break;
	case TI_LOST:	/* handled above */
		break;
	}
	t->last_event_ns = ev->ts_ns;
}

/* Batches trained on among the held-back events: backwards, else training forwards. */
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
	return backwards ? backwards : forwards;
}

/* A run of back-to-back __next__ calls (the pending one last) was followed by what is held
 * back in buffered. If m batches were trained on before the next __next__ or optimizer step,
 * the run's last m calls fetched this step's batches (K fetched ahead, then trained on);
 * the ones before them are what they would have been one by one: a loop's end
 * (exhausted, a new epoch after it) or validation batches. Then the held-back events run. */
static void decide_prefetch(struct torch_tree *t)
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
			settle_unconfirmed(t, next->start, next->start_counters);
		else
			confirm_batch(t);
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
		dispatch(t, &t->buffered[i].ev);
	t->replaying = false;
	t->nbuffered = 0;
}

/* While a run of back-to-back __next__ calls is undecided, events after its last one are
 * held back until one of them tells how many batches the step trains on. */
static bool hold_back(struct torch_tree *t, const struct tree_event *ev)
{
	struct tree_buffered *b;
	int kind = ev->kind == TI_SCOPE_ENTER ? classify(ev->name) : -1;

	if (!t->nprefetch || t->replaying)
		return false;
	if (!t->pending || !t->pending_end)
		return false;	/* the run's last __next__ is still loading */
	if ((kind == SK_DATA_TRAIN && t->nbuffered) || kind == SK_OPTIMIZER ||
	    t->nbuffered == TREE_MAX_BUFFERED) {
		decide_prefetch(t);
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

void torch_tree__feed(struct torch_tree *t, const struct tree_event *ev)
{
	if (ev->kind == TI_LOST) {	/* from any thread: the gap may hide the training one's */
		decide_prefetch(t);
		on_lost(t, ev);
		return;
	}
	if (!t->tid && (ev->kind == TI_BACKWARD_ENTER ||
			(ev->kind == TI_SCOPE_ENTER && classify(ev->name) != SK_OTHER &&
			 classify(ev->name) != SK_COLLECTIVE)))
		t->tid = ev->tid;
	if (t->tid && ev->tid != t->tid)
		return;	/* other threads: their own scopes do not shape the tree */
	if (ev->ts_ns > t->last_ts_ns)
		t->last_ts_ns = ev->ts_ns;
	if (hold_back(t, ev))
		return;
	dispatch(t, ev);
}

void torch_tree__finish(struct torch_tree *t, bool clean_exit)
{
	decide_prefetch(t);
	settle_unconfirmed(t, 0, NULL);
	t->last_data_end_ns = 0;
	/* A clean exit ends the last step and epoch with the last thing seen: the loop ran
	 * to completion. After a crash or a detach they stay as they are (open). */
	if (clean_exit && t->last_ts_ns)
		close_epoch(t, t->last_ts_ns, NULL);
}

struct span *torch_tree__current(struct torch_tree *t, uint64_t ts)
{
	struct span *sp = innermost(t);

	if (sp && ts > t->last_ts_ns)
		t->last_ts_ns = ts;
	/* After a __next__ that nothing confirmed yet, a finished step has ended where that
	 * __next__ began (the next batch's step, or the loop's end): the epoch holds now. */
	if (sp == t->step && t->pending && t->pending_end && t->epoch &&
	    (t->step_had_optimizer || (!t->optimizer_steps && t->step_updated)))
		return t->epoch;

	if (t->forward && t->forward->status == SPAN_OPEN && (sp == t->step || sp == t->epoch))
		return t->forward;
	return sp;
}
