// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The TensorFlow tree's rules (tftree/tf_tree.h), fed with the sequences TensorFlow 2.21's
// anchors gave on real jobs (uprobes counted with bpftrace, then CIRRON_DEBUG_TREE=1 logs of
// tests/workloads/tf_loops.py): Keras 3 and tf-keras model.fit with validation, evaluate and
// predict, custom tf.GradientTape loops (eager, and the step in a tf.function), an attach
// mid-run, lost events.
#include "torch_tree_world.h"
#include "tftree/tf_tree.h"

#define PY 100		/* the job's Python thread */
#define POOL 200	/* a TensorFlow inter-op thread: Keras's functions read their batch there */
#define TRAIN_FN "__inference_multi_step_on_iterator_476"
#define TEST_FN "__inference_multi_step_on_iterator_689"

struct tfw {
	struct world w;
	struct tf_tree tf;
};

static void tfw_init(struct tfw *x, bool mid_run)
{
	world_init(&x->w, 1000);
	tf_tree__init(&x->tf, x->w.s, 1000, mid_run);
}

static void in(struct tfw *x, enum tf_input kind, uint32_t tid, const char *name, uint64_t obj,
	       uint64_t obj2, int value)
{
	struct tf_event ev = { .kind = kind, .ts_ns = (x->w.ts += 1000), .tid = tid,
			       .name = name, .obj = obj, .obj2 = obj2, .value = value };

	tf_tree__feed(&x->tf, &ev);
}

static void iterator(struct tfw *x, uint64_t it, uint64_t ds)
{
	in(x, TFI_ITERATOR, PY, NULL, it, ds, 0);
}

static void gradient(struct tfw *x)
{
	in(x, TFI_GRADIENT_ENTER, PY, NULL, 0, 0, 0);
	x->w.ts += 4000;
	in(x, TFI_GRADIENT_EXIT, PY, NULL, 0, 0, 0);
}

static void next(struct tfw *x, uint32_t tid, uint64_t it)
{
	in(x, TFI_NEXT_ENTER, tid, NULL, it, 0, 0);
	in(x, TFI_NEXT_EXIT, tid, NULL, 0, 0, 0);
}

/* A Keras function call that reads its own batch (on an inter-op thread); hint: what a stack
 * read the loader made while the call ran found (TFH_NONE: no read fell in it). */
static void call(struct tfw *x, const char *fn, uint64_t it, int hint)
{
	in(x, TFI_CALL_ENTER, PY, fn, 0, 0, 0);
	if (it)
		next(x, POOL, it);
	x->w.ts += 2000;
	if (hint != TFH_NONE)
		in(x, TFI_STACK, 0, NULL, 1, 0, hint);
	x->w.ts += 3000;
	in(x, TFI_CALL_EXIT, PY, NULL, 0, 0, 0);
}

static void finish(struct tfw *x)
{
	x->w.ts += 1000;
	tf_tree__finish(&x->tf, true);
	collect(&x->w, true);
}

static const struct rec *nth(const struct world *w, const char *name, int k)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->spans[i].name, name) && !k--)
			return &w->spans[i];
	return NULL;
}

static int children_named(const struct world *w, const struct rec *p, const char *name)
{
	int c = 0;

	for (int i = 0; p && i < w->n; i++)
		c += w->spans[i].parent == p->id && !strcmp(w->spans[i].name, name);
	return c;
}

/* Keras 3's fit, as seen: the training iterator made, the trace's gradient, tf.function's
 * variable initializer, the gradient of the second trace, then per epoch the train function's
 * calls, an unused iterator made at the loop's end, the validation iterator and its test
 * function's calls, and the next epoch's iterator. */
static void keras3_fit(struct tfw *x, int epochs, int steps, int val, bool from_start)
{
	if (from_start) {
		iterator(x, 0xa0, 0xd1);
		gradient(x);
		call(x, "__inference_initialize_variables_308", 0, TFH_FIT);
		gradient(x);
	}
	for (int e = 0; e < epochs; e++) {
		uint64_t it = 0xa0 + 0x10 * (uint64_t)e;

		if (e)
			iterator(x, it, 0xd1);
		for (int s = 0; s < steps; s++)
			call(x, TRAIN_FN, it, e || s ? TFH_NONE : TFH_FIT);
		iterator(x, 0xf00 + (uint64_t)e, 0xd1);	/* made at the loop's end, never read */
		if (!val)
			continue;
		iterator(x, 0xb0 + (uint64_t)e, 0xd2);
		for (int s = 0; s < val; s++)
			call(x, TEST_FN, 0xb0 + (uint64_t)e, s ? TFH_NONE : TFH_VALIDATION);
	}
}

static void test_keras3_fit_with_validation(void)
{
	struct tfw x;
	const struct rec *f, *ev;

	tfw_init(&x, false);
	keras3_fit(&x, 2, 4, 2, true);
	finish(&x);
	ASSERT_EQ(count(&x.w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&x.w, "step", "epoch"), 8, "steps");
	ASSERT_EQ(count(&x.w, "function", "step"), 8, "a function call a step");
	ASSERT_EQ(count(&x.w, "data_load", "function"), 8 + 0, "the batch read inside the call");
	ASSERT_EQ(count(&x.w, "eval", "epoch"), 2, "a validation an epoch, under it");
	ASSERT_EQ(count_mode(&x.w, "eval", "eval"), 4, "eval forwards");
	ASSERT_EQ(count(&x.w, "forward", "step"), 0, "no forward made up inside a step");
	ASSERT_EQ(count(&x.w, "backward", NULL), 0, "nor a backward");
	ASSERT_EQ(x.tf.step_index, 8, "step_index");
	f = nth(&x.w, "function", 0);
	if (ASSERT_OK_PTR(f, "a function span")) {
		ASSERT_STREQ(attr_str(f, "function"), "multi_step_on_iterator", "its name");
		ASSERT_STREQ(attr_str(f, "class_source"), "gradient_traced", "told by the trace");
		ASSERT_STREQ(attr_str(f, "holds"), "forward, backward, optimizer_step", "holds");
	}
	ev = nth(&x.w, "eval", 0);
	if (ASSERT_OK_PTR(ev, "an eval span")) {
		ASSERT_STREQ(attr_str(ev, "kind"), "validation", "kind");
		ASSERT_EQ(num(ev->attrs, "batches"), 2, "its calls");
		ASSERT_EQ(children_named(&x.w, ev, "forward"), 2, "its forwards");
	}
	check_well_formed(&x.w);
	world_free(&x.w);
}

static void test_keras3_fit_without_validation(void)
{
	struct tfw x;

	tfw_init(&x, false);
	keras3_fit(&x, 3, 5, 0, true);
	finish(&x);
	ASSERT_EQ(count(&x.w, "epoch", "cirron.session"), 3, "a new training iterator an epoch");
	ASSERT_EQ(count(&x.w, "step", "epoch"), 15, "steps");
	ASSERT_EQ(count(&x.w, "eval", NULL), 0, "no evaluation");
	for (int e = 0; e < 3; e++)
		ASSERT_EQ(children_named(&x.w, nth(&x.w, "epoch", e), "step"), 5, "steps an epoch");
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* tf-keras reads one iterator for the whole fit: epochs come from the validations; then
 * evaluate() on new data (a dataset of its own) and predict(). */
static void test_tf_keras_one_iterator(void)
{
	struct tfw x;
	const struct rec *ev;

	tfw_init(&x, false);
	iterator(&x, 0xa0, 0xd1);
	gradient(&x);	/* two traces (the first makes the variables), no initializer call */
	gradient(&x);
	for (int e = 0; e < 2; e++) {
		for (int s = 0; s < 4; s++)
			call(&x, "__inference_train_function_563", 0xa0, TFH_NONE);
		iterator(&x, 0xb0 + (uint64_t)e, 0xd2);
		for (int s = 0; s < 2; s++)
			call(&x, "__inference_test_function_745", 0xb0 + (uint64_t)e, TFH_NONE);
	}
	iterator(&x, 0xc0, 0xd3);
	call(&x, "__inference_test_function_745", 0xc0, TFH_EVALUATE);
	call(&x, "__inference_test_function_745", 0xc0, TFH_NONE);
	iterator(&x, 0xe0, 0xd4);
	call(&x, "__inference_predict_function_981", 0xe0, TFH_PREDICT);
	finish(&x);
	ASSERT_EQ(count(&x.w, "epoch", "cirron.session"), 2, "training after validation");
	ASSERT_EQ(count(&x.w, "step", "epoch"), 8, "steps");
	/* evaluate() and predict() after fit: under its last epoch (nothing ends it) */
	ASSERT_EQ(count(&x.w, "eval", "epoch"), 4, "eval runs under the epochs");
	ev = nth(&x.w, "eval", 2);
	if (ASSERT_OK_PTR(ev, "evaluate"))
		ASSERT_STREQ(attr_str(ev, "kind"), "evaluate", "kind");
	ev = nth(&x.w, "eval", 3);
	if (ASSERT_OK_PTR(ev, "predict"))
		ASSERT_STREQ(attr_str(ev, "kind"), "predict", "kind");
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* Without the Python stack's word (another CPython), an evaluate() on new data after the
 * validations read what validations did not: not a validation. */
static void test_evaluate_told_by_its_dataset(void)
{
	struct tfw x;
	const struct rec *ev;

	tfw_init(&x, false);
	keras3_fit(&x, 2, 2, 1, true);
	iterator(&x, 0xc0, 0xd9);
	call(&x, TEST_FN, 0xc0, TFH_NONE);
	finish(&x);
	ASSERT_EQ(count(&x.w, "eval", NULL), 3, "eval runs");
	ev = nth(&x.w, "eval", 2);
	if (ASSERT_OK_PTR(ev, "evaluate"))
		ASSERT_STREQ(attr_str(ev, "kind"), "evaluate", "a dataset no validation read");
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* The stack read too late to say (NONE): what follows an evaluation run tells. Training after
 * it: fit's validation; nothing after it, in a fit whose earlier epochs had none: an
 * evaluate(); the last epoch's, when earlier ones had one on the same data: a validation. */
static void test_eval_kind_told_by_what_follows(void)
{
	struct tfw x;
	const struct rec *ev;

	tfw_init(&x, false);
	keras3_fit(&x, 3, 2, 0, true);
	iterator(&x, 0xc0, 0xd9);
	call(&x, TEST_FN, 0xc0, TFH_NONE);
	call(&x, TEST_FN, 0xc0, TFH_NONE);
	finish(&x);
	ev = nth(&x.w, "eval", 0);
	if (ASSERT_OK_PTR(ev, "evaluate"))
		ASSERT_STREQ(attr_str(ev, "kind"), "evaluate", "no validation in earlier epochs");
	check_well_formed(&x.w);
	world_free(&x.w);

	tfw_init(&x, false);
	iterator(&x, 0xa0, 0xd1);
	gradient(&x);
	for (int e = 0; e < 2; e++) {
		for (int s = 0; s < 2; s++)
			call(&x, "__inference_train_function_563", 0xa0, TFH_NONE);
		iterator(&x, 0xb0 + (uint64_t)e, 0xd2);
		call(&x, "__inference_test_function_745", 0xb0 + (uint64_t)e, TFH_NONE);
	}
	finish(&x);
	ASSERT_EQ(count(&x.w, "epoch", "cirron.session"), 2, "epochs");
	for (int i = 0; i < 2; i++) {
		ev = nth(&x.w, "eval", i);
		if (ASSERT_OK_PTR(ev, "validation"))
			ASSERT_STREQ(attr_str(ev, "kind"), "validation", "kind");
	}
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* A custom loop, eager: for each batch of a dataset, tape.gradient and apply; the loop's last
 * read raises OutOfRange; each epoch's iterator may reuse the last one's address. */
static void test_eager_gradient_tape_loop(void)
{
	struct tfw x;
	const struct rec *st;

	tfw_init(&x, false);
	for (int e = 0; e < 2; e++) {
		iterator(&x, 0xa0, 0xd1);
		for (int s = 0; s < 3; s++) {
			next(&x, PY, 0xa0);
			x.w.ts += 3000;		/* the forward, op by op */
			in(&x, TFI_CALL_ENTER, PY, "BiasAdd", 0, 0, 0);	/* a slow-path op */
			in(&x, TFI_CALL_EXIT, PY, NULL, 0, 0, 0);
			gradient(&x);
		}
		next(&x, PY, 0xa0);	/* end of sequence */
	}
	finish(&x);
	ASSERT_EQ(count(&x.w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&x.w, "step", "epoch"), 6, "a step a gradient");
	ASSERT_EQ(count(&x.w, "backward", "step"), 6, "the gradient is the backward");
	ASSERT_EQ(count(&x.w, "data_load", "step"), 6, "its batch");
	ASSERT_EQ(count_bool(&x.w, "data_load", "exhausted"), 2, "each loop's end");
	ASSERT_EQ(count(&x.w, "function", NULL), 0, "eager ops are no function");
	st = nth(&x.w, "step", 0);
	if (ASSERT_OK_PTR(st, "a step")) {
		ASSERT_STREQ(attr_str(st, "boundary"), "data_load", "boundary");
		ASSERT_STREQ(attr_str(st, "unseen"), "forward, optimizer_step", "unseen");
	}
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* A custom loop whose step is a tf.function: the batch read eagerly, then the call (its
 * first one right after its trace, which took the gradient). */
static void test_function_step_loop(void)
{
	struct tfw x;

	tfw_init(&x, false);
	for (int e = 0; e < 2; e++) {
		iterator(&x, 0xa0 + (uint64_t)e, 0xd1);
		for (int s = 0; s < 3; s++) {
			next(&x, PY, 0xa0 + (uint64_t)e);
			if (!e && !s)
				gradient(&x);	/* the trace */
			call(&x, "__inference_step_154", 0, TFH_NONE);
		}
		next(&x, PY, 0xa0 + (uint64_t)e);
	}
	finish(&x);
	ASSERT_EQ(count(&x.w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&x.w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count(&x.w, "data_load", "step"), 6, "the batch before the call");
	ASSERT_EQ(count(&x.w, "function", "step"), 6, "the call");
	ASSERT_EQ(count(&x.w, "backward", NULL), 0, "the trace's gradient is no backward");
	ASSERT_EQ(count_bool(&x.w, "data_load", "exhausted"), 2, "each loop's end");
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* Attached mid-run: the functions were traced before. Keras 3 names its train and test
 * functions alike: the Python stack tells (fit; evaluate inside fit). */
static void test_attach_mid_run_keras3(void)
{
	struct tfw x;
	const struct rec *f;

	tfw_init(&x, true);
	call(&x, TRAIN_FN, 0xa0, TFH_FIT);	/* in the middle of an epoch */
	call(&x, TRAIN_FN, 0xa0, TFH_NONE);
	iterator(&x, 0xb0, 0xd2);
	call(&x, TEST_FN, 0xb0, TFH_VALIDATION);
	iterator(&x, 0xa1, 0xd1);
	call(&x, TRAIN_FN, 0xa1, TFH_NONE);
	finish(&x);
	ASSERT_EQ(count(&x.w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&x.w, "step", "epoch"), 3, "steps");
	ASSERT_EQ(count(&x.w, "eval", "epoch"), 1, "validation");
	f = nth(&x.w, "function", 0);
	if (ASSERT_OK_PTR(f, "function"))
		ASSERT_STREQ(attr_str(f, "class_source"), "python_stack", "told by the stack");
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* Attached during a validation: the test function's calls wait (left out) while nothing
 * tells them; once a stack read inside a training call tells the train function, the other
 * function of its Python name is fit's evaluation. Reads outside any call say nothing. */
static void test_attach_mid_run_paired(void)
{
	struct tfw x;
	const struct rec *f;

	tfw_init(&x, true);
	call(&x, TEST_FN, 0xb0, TFH_NONE);	/* no read fell in it */
	in(&x, TFI_STACK, 0, NULL, 0, 0, TFH_VALIDATION);	/* between calls: nothing */
	call(&x, TEST_FN, 0xb0, TFH_NONE);
	iterator(&x, 0xa1, 0xd1);
	call(&x, TRAIN_FN, 0xa1, TFH_FIT);
	call(&x, TRAIN_FN, 0xa1, TFH_NONE);
	iterator(&x, 0xb1, 0xd2);
	call(&x, TEST_FN, 0xb1, TFH_NONE);
	iterator(&x, 0xa2, 0xd1);
	call(&x, TRAIN_FN, 0xa2, TFH_NONE);
	finish(&x);
	ASSERT_EQ(x.tf.calls_untold, 2, "the calls before anything told");
	ASSERT_EQ(count(&x.w, "step", "epoch"), 3, "steps");
	ASSERT_EQ(count(&x.w, "eval", "epoch"), 1, "the validation");
	ASSERT_EQ(count(&x.w, "epoch", "cirron.session"), 2, "epochs");
	f = nth(&x.w, "forward", 0);
	if (ASSERT_OK_PTR(f, "forward"))
		ASSERT_STREQ(attr_str(f, "class_source"), "paired", "paired");
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* Attached mid-run without the stack's word: tf-keras's names tell; a function whose name
 * says nothing waits TF_UNDECIDED_CALLS calls (left out), then is taken for a step. */
static void test_attach_mid_run_names(void)
{
	struct tfw x;

	tfw_init(&x, true);
	call(&x, "__inference_train_function_563", 0xa0, TFH_NONE);
	call(&x, "__inference_test_function_745", 0xb0, TFH_NONE);
	for (int i = 0; i < TF_UNDECIDED_CALLS + 2; i++)
		call(&x, "__inference_my_step_12", 0xa0, TFH_NONE);
	finish(&x);
	ASSERT_EQ(x.tf.calls_untold, TF_UNDECIDED_CALLS - 1, "waited");
	ASSERT_EQ(count(&x.w, "step", "epoch"), 1 + 3, "train_function and my_step's last");
	ASSERT_EQ(count(&x.w, "eval", NULL), 1, "test_function");
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* An epoch in which a call was left out (its function not told yet) is not whole: it closes
 * incomplete and says how many; the epochs after it are whole. */
static void test_epoch_with_calls_left_out(void)
{
	struct tfw x;
	const struct rec *e0, *e1;
	const cJSON *n;

	tfw_init(&x, true);
	call(&x, TRAIN_FN, 0xa0, TFH_FIT);
	call(&x, "__inference_my_metric_17", 0, TFH_NONE);	/* nothing tells it */
	call(&x, TRAIN_FN, 0xa0, TFH_NONE);
	iterator(&x, 0xb0, 0xd2);
	call(&x, TEST_FN, 0xb0, TFH_NONE);
	iterator(&x, 0xa1, 0xd1);
	call(&x, TRAIN_FN, 0xa1, TFH_NONE);
	call(&x, TRAIN_FN, 0xa1, TFH_NONE);
	iterator(&x, 0xb1, 0xd2);
	call(&x, TEST_FN, 0xb1, TFH_NONE);
	iterator(&x, 0xa2, 0xd1);
	call(&x, TRAIN_FN, 0xa2, TFH_NONE);
	finish(&x);
	e0 = nth(&x.w, "epoch", 0);
	e1 = nth(&x.w, "epoch", 1);
	if (ASSERT_OK_PTR(e0, "first epoch") && ASSERT_OK_PTR(e1, "second epoch")) {
		ASSERT_STREQ(e0->status, "incomplete", "a call of it left out");
		n = cJSON_GetObjectItemCaseSensitive(e0->attrs, "tf_calls_left_out");
		ASSERT_EQ(cJSON_IsNumber(n) ? (int)n->valuedouble : -1, 1, "said how many");
		ASSERT_STREQ(e1->status, "ok", "whole");
		ASSERT_EQ(children_named(&x.w, e1, "eval"), 1, "its validation");
		ASSERT_OK_PTR(cJSON_GetObjectItemCaseSensitive(e1->attrs, "tf_calls_left_out") ?
			      NULL : e1, "nothing left out of it");
	}
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* Calls from other threads (a py_function's) are no steps; events lost end what was open as
 * incomplete, and the tree goes on. */
static void test_other_threads_and_lost_events(void)
{
	struct tfw x;
	int incomplete = 0;

	tfw_init(&x, false);
	keras3_fit(&x, 1, 2, 0, true);
	in(&x, TFI_CALL_ENTER, 999, TRAIN_FN, 0, 0, 0);
	in(&x, TFI_CALL_EXIT, 999, NULL, 0, 0, 0);
	in(&x, TFI_CALL_ENTER, PY, TRAIN_FN, 0, 0, 0);
	next(&x, POOL, 0xa0);
	in(&x, TFI_LOST, PY, NULL, 0, 0, 3);
	call(&x, TRAIN_FN, 0xa0, TFH_NONE);
	finish(&x);
	ASSERT_EQ(count(&x.w, "step", "epoch"), 4, "steps: the other thread's call is none");
	for (int i = 0; i < x.w.n; i++)
		incomplete += cJSON_GetObjectItemCaseSensitive(x.w.spans[i].attrs, "events_lost") != NULL;
	ASSERT_GT(incomplete, 0, "spans the loss cut say so");
	ASSERT_EQ(x.tf.events_lost, 3, "counted");
	world_free(&x.w);
}

/* steps_per_execution: one call reads several batches. */
static void test_several_batches_a_call(void)
{
	struct tfw x;
	const struct rec *f;

	tfw_init(&x, false);
	iterator(&x, 0xa0, 0xd1);
	gradient(&x);
	in(&x, TFI_CALL_ENTER, PY, TRAIN_FN, 0, 0, 0);
	for (int i = 0; i < 4; i++)
		next(&x, POOL, 0xa0);
	in(&x, TFI_CALL_EXIT, PY, NULL, 0, 0, 0);
	finish(&x);
	ASSERT_EQ(count(&x.w, "step", "epoch"), 1, "one step a call");
	ASSERT_EQ(count(&x.w, "data_load", "function"), 4, "its batches");
	f = nth(&x.w, "function", 0);
	if (ASSERT_OK_PTR(f, "function"))
		ASSERT_EQ(num(f->attrs, "batches"), 4, "batches");
	check_well_formed(&x.w);
	world_free(&x.w);
}

/* What the job prints goes to the span open (tf_tree__current), end-of-epoch values to the
 * epoch; nothing seen yet: NULL (the session root takes them). */
static void test_current_span(void)
{
	struct tfw x;

	tfw_init(&x, false);
	ASSERT_TRUE(tf_tree__current(&x.tf, x.w.ts) == NULL, "nothing open");
	keras3_fit(&x, 1, 1, 0, true);
	in(&x, TFI_CALL_ENTER, PY, TRAIN_FN, 0, 0, 0);
	next(&x, POOL, 0xa0);
	ASSERT_TRUE(tf_tree__current(&x.tf, x.w.ts) == x.tf.call, "the call");
	in(&x, TFI_CALL_EXIT, PY, NULL, 0, 0, 0);
	ASSERT_TRUE(tf_tree__current(&x.tf, x.w.ts) == x.tf.epoch, "between steps: the epoch");
	ASSERT_TRUE(tf_tree__epoch(&x.tf) == x.tf.epoch, "the epoch");
	ASSERT_TRUE(x.tf.active, "active");
	finish(&x);
	world_free(&x.w);
}

int main(void)
{
	RUN_TEST(test_keras3_fit_with_validation);
	RUN_TEST(test_keras3_fit_without_validation);
	RUN_TEST(test_tf_keras_one_iterator);
	RUN_TEST(test_evaluate_told_by_its_dataset);
	RUN_TEST(test_eval_kind_told_by_what_follows);
	RUN_TEST(test_eager_gradient_tape_loop);
	RUN_TEST(test_function_step_loop);
	RUN_TEST(test_attach_mid_run_keras3);
	RUN_TEST(test_attach_mid_run_paired);
	RUN_TEST(test_attach_mid_run_names);
	RUN_TEST(test_epoch_with_calls_left_out);
	RUN_TEST(test_other_threads_and_lost_events);
	RUN_TEST(test_several_batches_a_call);
	RUN_TEST(test_current_span);
	return unit__done();
}
