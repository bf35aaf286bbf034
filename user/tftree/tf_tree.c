// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The TensorFlow tree's inputs (tf_tree.h): what each tf.function is (a training step, an
// evaluation, a prediction), told once per function; batches read outside a call and
// gradients, held until what follows tells whose they are. The spans: tf_tree_spans.c.
// - A function is a training step when a gradient was taken while it was traced (its
//   trace runs right before its first call: GradientTape inside it); traced without one, an
//   evaluation (a prediction by its name). Attached to a running job, whose functions were
//   traced before, the name tells, else the job's Python stack: the loader reads it now and
//   then (TFI_STACK, traced/py_stack.h), and a read made while a call ran says which Keras
//   method made that call (Keras 3 names its train and test functions alike,
//   multi_step_on_iterator; told one, the other is its pair). Until then its calls wait.
// - A gradient not followed by a new function's first call is an eager loop's backward.
// - tf.function's own variable initializer, and ops an eager call ran through the slow path
//   (their op name, no __inference_ prefix), are no steps.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tftree/tf_tree_internal.h"

#define INFERENCE_PREFIX "__inference_"

void tf_tree__init(struct tf_tree *t, struct session *s, long epoch_steps, bool mid_run)
{
	memset(t, 0, sizeof(*t));
	t->s = s;
	t->epoch_steps = epoch_steps > 0 ? epoch_steps : 1000;
	t->mid_run = mid_run;
}

/* "__inference_multi_step_on_iterator_476" -> "multi_step_on_iterator". */
static void stem_of(const char *name, char *out, size_t size)
{
	size_t n;

	if (!strncmp(name, INFERENCE_PREFIX, strlen(INFERENCE_PREFIX)))
		name += strlen(INFERENCE_PREFIX);
	snprintf(out, size, "%s", name);
	n = strlen(out);
	while (n && out[n - 1] >= '0' && out[n - 1] <= '9')
		n--;
	if (n && n < strlen(out) && out[n - 1] == '_')
		out[n - 1] = 0;
}

/* What a function's name says: tf-keras names them train_function, test_function and
 * predict_function; Keras 3's predict functions are one_step_on_data_distributed and
 * multi_step_on_data; a custom loop's are the user's. */
static enum tf_class class_of_name(const char *stem)
{
	static const char *const predict[] = { "predict", "one_step_on_data_distributed",
		"multi_step_on_data", "infer", NULL };
	static const char *const eval[] = { "test", "eval", "valid", NULL };

	for (int i = 0; predict[i]; i++)
		if (strstr(stem, predict[i]))
			return TFC_PREDICT;
	for (int i = 0; eval[i]; i++)
		if (strstr(stem, eval[i]))
			return TFC_EVAL;
	return strstr(stem, "train") ? TFC_TRAIN : TFC_UNKNOWN;
}

static enum tf_class class_of_hint(int hint)
{
	switch (hint) {
	case TFH_FIT:
		return TFC_TRAIN;
	case TFH_VALIDATION:
	case TFH_EVALUATE:
		return TFC_EVAL;
	case TFH_PREDICT:
		return TFC_PREDICT;
	default:
		return TFC_UNKNOWN;
	}
}

/* Keras 3 names its train and test functions alike (multi_step_on_iterator): of two functions
 * of one Python name that Keras calls (the stack said so for f), one is fit's step and the
 * other its evaluation. */
static void pair_with(struct tf_tree *t, const struct tf_function *f)
{
	if (!f->cls_source || strcmp(f->cls_source, "python_stack") != 0)
		return;
	for (int i = 0; i < t->nfns; i++) {
		struct tf_function *o = &t->fns[i];

		if (o == f || o->cls != TFC_UNKNOWN || strcmp(o->stem, f->stem) != 0)
			continue;
		if (f->cls == TFC_TRAIN)
			o->cls = TFC_EVAL;
		else if (f->cls == TFC_EVAL)
			o->cls = TFC_TRAIN;
		else
			continue;
		o->cls_source = "paired";
	}
}

static void tell(struct tf_tree *t, struct tf_function *f, enum tf_class cls, const char *source)
{
	f->cls = cls;
	f->cls_source = source;
	pair_with(t, f);
}

static void classify(struct tf_tree *t, struct tf_function *f)
{
	enum tf_class by_name = class_of_name(f->stem);

	if (!strcmp(f->stem, "initialize_variables")) {
		tell(t, f, TFC_IGNORED, "name");
	} else if (t->gradient_since_call) {
		tell(t, f, TFC_TRAIN, "gradient_traced");	/* its trace took a gradient */
	} else if (by_name != TFC_UNKNOWN && (t->mid_run || by_name != TFC_TRAIN)) {
		tell(t, f, by_name, "name");
	} else if (!t->mid_run) {
		tell(t, f, TFC_EVAL, "no_gradient");	/* traced under observation, no gradient */
	} else {
		/* traced before the attach: a function of a Keras name told apart already, else
		 * a stack read inside one of its calls tells (TFI_STACK); its calls wait */
		for (int i = 0; i < t->nfns; i++)
			if (&t->fns[i] != f && t->fns[i].cls != TFC_UNKNOWN)
				pair_with(t, &t->fns[i]);
	}
}

static struct tf_function *function_of(struct tf_tree *t, const char *name)
{
	for (int i = 0; i < t->nfns; i++)
		if (!strcmp(t->fns[i].name, name))
			return &t->fns[i];
	return NULL;
}

bool tf_tree__wants_stack(const struct tf_tree *t)
{
	if (t->eval && !t->eval_kind)
		return true;
	for (int i = 0; i < t->nfns; i++)
		if (t->fns[i].cls == TFC_UNKNOWN)
			return true;
	return false;
}

static struct tf_function *learn(struct tf_tree *t, const char *name)
{
	struct tf_function *f = function_of(t, name);

	if (f)
		return f;
	if (t->nfns == TF_MAX_FUNCTIONS)	/* forget the oldest: retraces make new names */
		memmove(&t->fns[0], &t->fns[1], sizeof(t->fns[0]) * --t->nfns);
	f = &t->fns[t->nfns++];
	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	stem_of(name, f->stem, sizeof(f->stem));
	classify(t, f);
	return f;
}

/* What the stack reads that fell inside the call [start, end] say, or TFH_NONE. */
static int read_within(struct tf_tree *t, uint64_t start, uint64_t end)
{
	int hint = TFH_NONE;

	for (int i = 0; i < t->nobs; i++)
		if (t->obs[i].ts >= start && t->obs[i].ts <= end && t->obs[i].hint != TFH_NONE)
			hint = t->obs[i].hint;
	return hint;
}

static void on_stack(struct tf_tree *t, const struct tf_event *ev)
{
	if (!ev->obj || ev->value == TFH_NONE)
		return;		/* not inside a call: it says nothing about one */
	if (t->nobs == TF_MAX_OBS)
		memmove(&t->obs[0], &t->obs[1], sizeof(t->obs[0]) * --t->nobs);
	t->obs[t->nobs].ts = ev->ts_ns;
	t->obs[t->nobs].hint = ev->value;
	t->nobs++;
}

static void on_iterator(struct tf_tree *t, const struct tf_event *ev)
{
	struct tf_iterator *it = tf_tree__iterator(t, ev->obj);

	if (!it) {
		if (t->nits == TF_MAX_ITERATORS)
			memmove(&t->its[0], &t->its[1], sizeof(t->its[0]) * --t->nits);
		it = &t->its[t->nits++];
	}
	it->obj = ev->obj;	/* an address freed and made again is a new iterator */
	it->dataset = ev->obj2;
	it->fresh = true;
}

/* The gradients held were an eager loop's backwards: what came next was no new function. */
static void settle_gradients(struct tf_tree *t, int n)
{
	for (int i = 0; i < n; i++) {
		bool open = t->grad_open && i == t->ngrads - 1;

		tf_tree__eager_backward(t, t->grads[i].start,
					open ? t->last_ts_ns : t->grads[i].end);
	}
	memmove(&t->grads[0], &t->grads[n], sizeof(t->grads[0]) * (size_t)(t->ngrads - n));
	t->ngrads -= n;
	if (!t->ngrads)
		t->grad_open = false;
}

/* The call of a function not told yet returned: a stack read inside it tells (then its
 * spans are made, its batch's too), else it is left out (counted), and after
 * TF_UNDECIDED_CALLS of them it is taken for a step. */
static void untold_call_end(struct tf_tree *t, uint64_t ts)
{
	struct tf_function *f = t->call_fn;
	enum tf_class cls = class_of_hint(read_within(t, t->call_start, ts));

	if (cls == TFC_UNKNOWN && f->calls >= TF_UNDECIDED_CALLS)
		tell(t, f, TFC_TRAIN, "assumed");
	else if (cls != TFC_UNKNOWN)
		tell(t, f, cls, "python_stack");
	if (f->cls == TFC_UNKNOWN) {
		cJSON *n = cJSON_GetObjectItemCaseSensitive(t->s->root->attrs, "tf_calls_left_out");

		t->calls_untold++;	/* said on the session: nothing left out silently */
		if (n)
			cJSON_SetNumberValue(n, (double)t->calls_untold);
		else
			cJSON_AddNumberToObject(t->s->root->attrs, "tf_calls_left_out",
						(double)t->calls_untold);
		session__touch_root(t->s);
		if (t->epoch) {
			n = cJSON_GetObjectItemCaseSensitive(t->epoch->attrs, "tf_calls_left_out");
			if (n)
				cJSON_SetNumberValue(n, (double)++t->epoch_calls_untold);
			else
				cJSON_AddNumberToObject(t->epoch->attrs, "tf_calls_left_out",
							(double)++t->epoch_calls_untold);
		}
		t->call_fn = NULL;
		t->pend_next = false;
		return;
	}
	if (t->pend_next) {
		t->next_iterator = t->pend_next_it;
		tf_tree__call_next(t, t->pend_next_start, true);
		tf_tree__call_next(t, t->pend_next_end, false);
		t->pend_next = false;
	}
	tf_tree__call_end(t, ts);
}

static void on_call(struct tf_tree *t, const struct tf_event *ev)
{
	struct tf_function *f;

	if (!t->py_tid)
		t->py_tid = ev->tid;
	if (ev->tid != t->py_tid)
		return;		/* a call from another thread (a py_function's): not a step */
	if (ev->kind == TFI_CALL_EXIT) {
		if (!t->call_depth || --t->call_depth || !t->call_fn)
			return;
		if (t->call_fn->cls == TFC_UNKNOWN)
			untold_call_end(t, ev->ts_ns);
		else
			tf_tree__call_end(t, ev->ts_ns);
		if (t->eval && !t->eval_kind) {	/* a stack read inside the call tells */
			int h = read_within(t, t->call_start, ev->ts_ns);

			if (h == TFH_VALIDATION || h == TFH_EVALUATE)
				tf_tree__decide_eval(t, false, h == TFH_VALIDATION ? "validation"
										  : "evaluate");
		}
		return;
	}
	if (t->call_depth++)
		return;		/* nested: part of the outer call */
	if (!ev->name || strncmp(ev->name, INFERENCE_PREFIX, strlen(INFERENCE_PREFIX)) != 0)
		return;		/* an eager op through the slow path */
	f = function_of(t, ev->name);
	if (!f && t->ngrads) {	/* the gradients were this new function's traces */
		t->ngrads = 0;
		t->grad_open = false;
		t->gradient_since_call = true;
	}
	settle_gradients(t, t->ngrads);
	f = learn(t, ev->name);
	if (f->cls == TFC_IGNORED)
		return;
	t->gradient_since_call = false;
	f->calls++;
	t->call_fn = f;
	t->call_start = ev->ts_ns;
	t->call_placed = false;
	t->call_batches = 0;
	t->pend_next = false;
	tf_tree__counters(t, t->call_counters);
	if (f->cls == TFC_UNKNOWN)
		return;		/* placed when told, at its return */
	if (t->held) {		/* its batch was read before the call: its epoch is known */
		if (f->cls == TFC_TRAIN)
			tf_tree__place_train(t, t->held_next.iterator);
		else
			tf_tree__place_eval(t, t->held_next.iterator);
	}
}

static void on_next(struct tf_tree *t, const struct tf_event *ev)
{
	bool in_call = t->call_fn && t->call_depth;

	if (ev->kind == TFI_NEXT_EXIT) {
		if (!t->next_open)
			return;
		t->next_open = false;
		if (t->next_in_call && t->call_fn && t->call_fn->cls == TFC_UNKNOWN) {
			if (!t->pend_next_end)
				t->pend_next_end = ev->ts_ns;
			return;
		}
		if (t->next_in_call) {
			tf_tree__call_next(t, ev->ts_ns, false);
			return;
		}
		t->held = true;		/* whose batch: the next call or gradient tells */
		t->held_next.start = t->next_start;
		t->held_next.end = ev->ts_ns;
		t->held_next.iterator = t->next_iterator;
		memcpy(t->held_next.counters_start, t->next_counters, sizeof(t->next_counters));
		tf_tree__counters(t, t->held_next.counters_end);
		return;
	}
	settle_gradients(t, t->ngrads);
	if (!in_call && t->held)
		tf_tree__next_exhausted(t);	/* read, and nothing came of it: the loop's end */
	t->gradient_since_call = false;
	t->next_open = true;
	t->next_in_call = in_call;
	t->next_start = ev->ts_ns;
	t->next_iterator = ev->obj;
	tf_tree__counters(t, t->next_counters);
	if (in_call && t->call_fn->cls == TFC_UNKNOWN) {
		if (!t->pend_next) {	/* its first batch, made a span if it is told */
			t->pend_next = true;
			t->pend_next_start = ev->ts_ns;
			t->pend_next_end = 0;
			t->pend_next_it = ev->obj;
		}
	} else if (in_call) {
		tf_tree__call_next(t, ev->ts_ns, true);
	}
}

static void on_gradient(struct tf_tree *t, const struct tf_event *ev)
{
	if (ev->tid != t->py_tid && t->py_tid)
		return;
	if (!t->py_tid)
		t->py_tid = ev->tid;
	if (t->call_depth)
		return;		/* inside a call (a py_function): no step's */
	if (ev->kind == TFI_GRADIENT_EXIT) {
		if (t->grad_open) {
			t->grad_open = false;
			t->grads[t->ngrads - 1].end = ev->ts_ns;
		}
		return;
	}
	if (t->ngrads == TF_MAX_GRADS)
		settle_gradients(t, 1);
	t->grads[t->ngrads].start = ev->ts_ns;
	t->grads[t->ngrads].end = 0;
	t->ngrads++;
	t->grad_open = true;
}

static void on_lost(struct tf_tree *t, const struct tf_event *ev)
{
	struct span **open[] = { &t->data, &t->call, &t->backward };

	t->events_lost += ev->value;
	for (size_t i = 0; i < sizeof(open) / sizeof(open[0]); i++) {
		if (!*open[i])
			continue;
		cJSON_AddNumberToObject((*open[i])->attrs, "events_lost", ev->value);
		session__close(t->s, *open[i], ev->ts_ns, SPAN_INCOMPLETE);
		*open[i] = NULL;
	}
	if (t->step && !cJSON_GetObjectItemCaseSensitive(t->step->attrs, "events_lost"))
		cJSON_AddNumberToObject(t->step->attrs, "events_lost", ev->value);
	t->call_fn = NULL;
	t->call_depth = 0;
	t->next_open = t->held = t->grad_open = false;
	t->ngrads = 0;
}

void tf_tree__feed(struct tf_tree *t, const struct tf_event *ev)
{
	if (ev->ts_ns > t->last_ts_ns)
		t->last_ts_ns = ev->ts_ns;
	switch (ev->kind) {
	case TFI_CALL_ENTER:
	case TFI_CALL_EXIT:
		on_call(t, ev);
		break;
	case TFI_GRADIENT_ENTER:
	case TFI_GRADIENT_EXIT:
		on_gradient(t, ev);
		break;
	case TFI_NEXT_ENTER:
	case TFI_NEXT_EXIT:
		on_next(t, ev);
		break;
	case TFI_ITERATOR:
		on_iterator(t, ev);
		break;
	case TFI_LOST:
		on_lost(t, ev);
		break;
	case TFI_STACK:
		on_stack(t, ev);
		break;
	}
}

struct span *tf_tree__current(struct tf_tree *t, uint64_t ts)
{
	if (ts > t->last_ts_ns)
		t->last_ts_ns = ts;
	if (t->call)
		return t->call;
	if (t->step)
		return t->step;
	if (t->eval)
		return t->eval;
	return t->epoch;
}

struct span *tf_tree__epoch(const struct tf_tree *t)
{
	return t->epoch;
}

void tf_tree__finish(struct tf_tree *t, bool clean_exit)
{
	settle_gradients(t, t->ngrads);
	if (t->held)
		tf_tree__next_exhausted(t);
	tf_tree__decide_eval(t, false, NULL);
	if (!clean_exit)
		return;
	tf_tree__close_eval(t, false);
	tf_tree__close_step(t, t->last_ts_ns);
	tf_tree__close_epoch(t, t->last_ts_ns, false);
}
