// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The TensorFlow tree's spans (tf_tree.h, docs/tree.md "TensorFlow"):
// - step: a training function's call (Keras's train function: it reads its batch itself,
//   the data_load inside its `function` span), with the batch read before it if any (a
//   custom loop over a dataset); an eager loop's step runs from its batch to the next one,
//   its `backward` the gradient's computation. One compiled call holds the forward,
//   backward and update: the `function` span says so (`holds`), and no forward or backward
//   span is made up inside it.
// - epoch: the first training batch read from a new iterator (Keras 3, custom loops: one
//   iterator an epoch), or the first training step after a validation (tf-keras reads one
//   iterator for the whole fit); without a tf.data iterator, every epoch_steps steps.
// - eval: a run of evaluation or prediction calls, kind validation, evaluate or predict,
//   under its epoch (evaluate and predict outside fit: under the session, where the job's
//   Python stack said so), each call a `forward {mode=eval}` with its data_load.
#include <string.h>
#include "common/json.h"
#include "tftree/tf_tree_internal.h"

static const char *const CLASS_NAMES[] = {
	[TFC_UNKNOWN] = "unknown", [TFC_TRAIN] = "train", [TFC_EVAL] = "eval",
	[TFC_PREDICT] = "predict", [TFC_IGNORED] = "ignored",
};

void tf_tree__counters(struct tf_tree *t, uint64_t out[SESSION_NCOUNTERS])
{
	memset(out, 0, sizeof(uint64_t) * SESSION_NCOUNTERS);
	if (t->s && t->s->counters)
		t->s->counters(t->s->counters_ctx, out);
}

struct tf_iterator *tf_tree__iterator(struct tf_tree *t, uint64_t it)
{
	for (int i = t->nits - 1; i >= 0; i--)
		if (t->its[i].obj == it)
			return &t->its[i];
	return NULL;
}

static void close_span(struct tf_tree *t, struct span **sp, uint64_t ts)
{
	if (*sp)
		session__close_at(t->s, *sp, ts, SPAN_OK, NULL);
	*sp = NULL;
}

void tf_tree__close_step(struct tf_tree *t, uint64_t ts)
{
	close_span(t, &t->backward, ts);
	close_span(t, &t->step, ts);
	t->step_has_backward = false;
}

/* A validation: the epoch's; training after it begins the next epoch (one iterator a fit). */
static void validation_seen(struct tf_tree *t)
{
	t->eval_since_train = true;
	if (t->eval_dataset)
		t->val_dataset = t->eval_dataset;
}

void tf_tree__decide_eval(struct tf_tree *t, bool training_follows, const char *kind)
{
	if (t->eval && !t->eval_kind) {
		/* undecided at its start: a stack read inside it says (kind); else training
		 * after it makes it fit's validation; else it was an evaluate() after a fit
		 * whose earlier epochs had none (a fit of one epoch cannot tell: a validation) */
		t->eval_kind = kind ? kind : training_follows || t->epoch_index < 2 || t->val_dataset
			       ? "validation" : "evaluate";
		cJSON_AddStringToObject(t->eval->attrs, "kind", t->eval_kind);
		if (!strcmp(t->eval_kind, "validation"))
			validation_seen(t);
	}
}

void tf_tree__close_eval(struct tf_tree *t, bool training_follows)
{
	if (!t->eval)
		return;
	tf_tree__decide_eval(t, training_follows, NULL);
	session__close_at(t->s, t->eval, t->eval_end, SPAN_OK, NULL);
	t->eval = NULL;
	t->eval_kind = NULL;
}

void tf_tree__close_epoch(struct tf_tree *t, uint64_t ts, bool training_follows)
{
	tf_tree__close_eval(t, training_follows);
	tf_tree__close_step(t, ts);
	if (t->epoch)	/* calls of it left out (not told in time): not the whole epoch */
		session__close_at(t->s, t->epoch, ts,
				  t->epoch_calls_untold ? SPAN_INCOMPLETE : SPAN_OK, NULL);
	t->epoch = NULL;
	t->epoch_calls_untold = 0;
}

static void open_epoch(struct tf_tree *t, uint64_t ts, const uint64_t *counters)
{
	tf_tree__close_epoch(t, ts, true);
	t->epoch = session__open_at(t->s, NULL, "epoch", t->epoch_index++, ts, counters);
	t->steps_in_epoch = 0;
	t->eval_since_train = false;
}

/* Whether a training batch read from it (0: none read) begins an epoch. */
static bool epoch_begins(struct tf_tree *t, uint64_t it)
{
	struct tf_iterator *i = it ? tf_tree__iterator(t, it) : NULL;
	bool fresh = i && i->fresh;

	if (i) {
		i->fresh = false;
		t->train_dataset = i->dataset;
	}
	if (it && (fresh || !t->train_iterator))
		t->train_iterator = it;
	if (!t->epoch)
		return true;
	if (fresh && t->steps_in_epoch)
		return true;	/* a new iterator over the training data */
	if (t->eval_since_train && t->steps_in_epoch)
		return true;	/* training again after a validation (one iterator a fit) */
	return !t->train_iterator && t->steps_in_epoch >= t->epoch_steps;
}

/* A step begins at start (its batch's read, else its call or gradient). */
static void begin_step(struct tf_tree *t, uint64_t start, uint64_t it, const uint64_t *counters,
		       const char *boundary)
{
	tf_tree__close_eval(t, true);
	tf_tree__close_step(t, start);
	if (epoch_begins(t, it))
		open_epoch(t, start, counters);
	t->step = session__open_at(t->s, t->epoch, "step", t->step_index++, start, counters);
	if (t->step)
		cJSON_AddStringToObject(t->step->attrs, "boundary", boundary);
	t->steps_in_epoch++;
	t->eval_since_train = false;
	t->active = true;
}

/* The batch held, read before the call or gradient that used it, under parent. */
static void held_data_load(struct tf_tree *t, struct span *parent)
{
	struct span *d;

	if (!t->held)
		return;
	t->held = false;
	d = session__open_at(t->s, parent, "data_load", -1, t->held_next.start,
			     t->held_next.counters_start);
	if (!d)
		return;
	cJSON_AddNumberToObject(d->attrs, "data_load_ns",
				(double)(t->held_next.end - t->held_next.start));
	session__close_at(t->s, d, t->held_next.end, SPAN_OK, t->held_next.counters_end);
}

static struct span *open_call(struct tf_tree *t, struct span *parent, const char *name)
{
	struct span *c = session__open_at(t->s, parent, name, -1, t->call_start, t->call_counters);
	const struct tf_function *f = t->call_fn;

	if (!c)
		return NULL;
	cJSON_AddStringToObject(c->attrs, "function", f->stem);
	cJSON_AddStringToObject(c->attrs, "mode", f->cls == TFC_TRAIN ? "train" : "eval");
	cJSON_AddBoolToObject(c->attrs, "graph", true);
	cJSON_AddStringToObject(c->attrs, "function_class", CLASS_NAMES[f->cls]);
	cJSON_AddStringToObject(c->attrs, "class_source", f->cls_source);
	return c;
}

void tf_tree__place_train(struct tf_tree *t, uint64_t it)
{
	uint64_t start = t->held ? t->held_next.start : t->call_start;
	const uint64_t *counters = t->held ? t->held_next.counters_start : t->call_counters;

	if (t->call_placed)
		return;
	t->call_placed = true;
	begin_step(t, start, it, counters, "function_call");
	held_data_load(t, t->step);
	t->call = open_call(t, t->step, "function");
	if (t->call)	/* what one compiled graph runs, not told apart */
		cJSON_AddStringToObject(t->call->attrs, "holds",
					"forward, backward, optimizer_step");
}

/* What an evaluation run is: what validations read before tells first; an evaluation with no
 * training before it in its epoch is no validation; else NULL: a stack read inside one of its
 * calls tells (tf_tree__call_end), or what follows it (tf_tree__close_eval). */
static const char *eval_kind(struct tf_tree *t, uint64_t dataset)
{
	if (t->call_fn->cls == TFC_PREDICT)
		return "predict";
	if (t->val_dataset && dataset)
		return dataset == t->val_dataset ? "validation" : "evaluate";
	if (!t->epoch || !t->steps_in_epoch)
		return "evaluate";
	return NULL;
}

void tf_tree__place_eval(struct tf_tree *t, uint64_t it)
{
	struct tf_iterator *i = it ? tf_tree__iterator(t, it) : NULL;
	uint64_t dataset = i ? i->dataset : 0;
	uint64_t start = t->held ? t->held_next.start : t->call_start;

	if (t->call_placed)
		return;
	t->call_placed = true;
	if (i)
		i->fresh = false;
	if (t->step)	/* an eager step ends where the evaluation begins */
		tf_tree__close_step(t, start);
	if (t->eval && ((t->eval_dataset != dataset && dataset) ||
			(t->call_fn->cls == TFC_PREDICT) != (t->eval_kind && *t->eval_kind == 'p')))
		tf_tree__close_eval(t, false);	/* another run: other data, or a prediction */
	if (!t->eval) {
		const char *kind = eval_kind(t, dataset);

		t->eval = session__open_at(t->s, t->epoch, "eval", t->eval_index++, start,
					   t->held ? t->held_next.counters_start : t->call_counters);
		t->eval_kind = kind;
		t->eval_dataset = dataset;
		t->eval_batches = 0;
		if (t->eval && kind)
			cJSON_AddStringToObject(t->eval->attrs, "kind", kind);
		if (kind && !strcmp(kind, "validation"))
			validation_seen(t);
	}
	t->active = true;
	held_data_load(t, t->eval);
	t->call = open_call(t, t->eval, "forward");
}

void tf_tree__call_next(struct tf_tree *t, uint64_t ts, bool enter)
{
	uint64_t c[SESSION_NCOUNTERS];

	if (!enter) {
		if (t->data) {
			cJSON_AddNumberToObject(t->data->attrs, "data_load_ns",
						(double)(ts - t->data->start_ns));
			close_span(t, &t->data, ts);
		}
		return;
	}
	if (t->call_fn->cls == TFC_TRAIN)
		tf_tree__place_train(t, t->next_iterator);
	else
		tf_tree__place_eval(t, t->next_iterator);
	t->call_batches++;
	tf_tree__counters(t, c);
	close_span(t, &t->data, ts);
	t->data = session__open_at(t->s, t->call, "data_load", -1, ts, c);
}

void tf_tree__call_end(struct tf_tree *t, uint64_t ts)
{
	bool train = t->call_fn->cls == TFC_TRAIN;

	if (train)
		tf_tree__place_train(t, 0);
	else
		tf_tree__place_eval(t, 0);
	close_span(t, &t->data, ts);
	if (t->call && t->call_batches > 1)
		cJSON_AddNumberToObject(t->call->attrs, "batches", t->call_batches);
	close_span(t, &t->call, ts);
	t->call_fn = NULL;
	if (train) {
		tf_tree__close_step(t, ts);
	} else {
		t->eval_end = ts;
		if (t->eval)
			json__set_num(t->eval->attrs, "batches", ++t->eval_batches);
	}
}

void tf_tree__next_exhausted(struct tf_tree *t)
{
	struct span *parent = t->epoch, *d;

	if (!t->held)
		return;
	if (t->step && !t->step_has_backward) {
		/* an eager step whose batch nobody trained on: it was no step */
		parent = t->step;
	} else {
		tf_tree__close_step(t, t->held_next.start);
	}
	if (t->eval && t->held_next.iterator && t->eval_dataset) {
		struct tf_iterator *i = tf_tree__iterator(t, t->held_next.iterator);

		if (i && i->dataset == t->eval_dataset)
			parent = t->eval;
	}
	t->held = false;
	if (!t->active)
		return;		/* no training nor evaluation seen: nothing to hang it on */
	d = session__open_at(t->s, parent, "data_load", -1, t->held_next.start,
			     t->held_next.counters_start);
	if (!d)
		return;
	cJSON_AddBoolToObject(d->attrs, "exhausted", true);
	cJSON_AddNumberToObject(d->attrs, "data_load_ns",
				(double)(t->held_next.end - t->held_next.start));
	session__close_at(t->s, d, t->held_next.end, SPAN_OK, t->held_next.counters_end);
}

void tf_tree__eager_backward(struct tf_tree *t, uint64_t start, uint64_t end)
{
	if (t->held) {
		begin_step(t, t->held_next.start, t->held_next.iterator,
			   t->held_next.counters_start, "data_load");
		held_data_load(t, t->step);
	} else if (!t->step || t->step_has_backward) {
		begin_step(t, start, 0, NULL, "backward");
	}
	if (!t->step)
		return;
	t->step_has_backward = true;
	if (!cJSON_GetObjectItemCaseSensitive(t->step->attrs, "unseen"))	/* eager ops */
		cJSON_AddStringToObject(t->step->attrs, "unseen", "forward, optimizer_step");
	t->backward = session__open_at(t->s, t->step, "backward", -1, start, NULL);
	if (t->backward)
		cJSON_AddStringToObject(t->backward->attrs, "source", "tape.gradient");
	close_span(t, &t->backward, end);
}
