// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The TensorFlow tree's inputs recorded from real runs (CIRRON_DEBUG_TREE=1, tensorflow-cpu
// 2.21 in the venv of tests/scripts/make-tf-venv.sh, tests/workloads/tf_loops.py), fed again
// through the rules: tests/unit/data/tf/*.log.
// - keras3-fit: Keras 3.15 model.fit, 2 epochs of 4 batches, validation of 2, then evaluate()
//   and predict() of 2 batches each;
// - tf-keras-fit: the same with tf-keras 2.21 (TF_USE_LEGACY_KERAS=1);
// - tape-eager, tape-function: a tf.GradientTape loop, 2 epochs of 3 batches, eager and with
//   the step in a tf.function;
// - keras3-attach: a Keras 3 fit of 8 batches and 2 validation batches an epoch, attached
//   in its third epoch for 3 s, the loader's stack reads (TFSTACK) among the inputs.
#include "torch_tree_world.h"
#include "tftree/tf_tree.h"

#define DATA_DIR "tests/unit/data/tf/"

static const char *const kinds[] = {
	[TFI_CALL_ENTER] = "TFCALL+", [TFI_CALL_EXIT] = "TFCALL-", [TFI_GRADIENT_ENTER] = "TFGRAD+",
	[TFI_GRADIENT_EXIT] = "TFGRAD-", [TFI_NEXT_ENTER] = "TFNEXT+", [TFI_NEXT_EXIT] = "TFNEXT-",
	[TFI_ITERATOR] = "TFITER", [TFI_LOST] = "TFLOST", [TFI_STACK] = "TFSTACK",
};

/* "TREE pid=P tid=T ts=NS KIND name=NAME obj=HEX obj2=HEX val=V" */
static bool parse(const char *line, struct tf_event *ev, char *name, size_t size)
{
	char kind[16];
	unsigned long long ts, obj, obj2;
	unsigned int tid;

	if (sscanf(line, "TREE pid=%*d tid=%u ts=%llu %15s name=%255s obj=%llx obj2=%llx val=%d",
		   &tid, &ts, kind, name, &obj, &obj2, &ev->value) != 7)
		return false;
	ev->kind = (enum tf_input)-1;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (!strcmp(kind, kinds[k]))
			ev->kind = (enum tf_input)k;
	ev->tid = tid;
	ev->ts_ns = ts;
	ev->obj = obj;
	ev->obj2 = obj2;
	ev->name = strcmp(name, "-") ? name : NULL;
	(void)size;
	return (int)ev->kind >= 0;
}

static bool replay(struct world *w, struct tf_tree *t, const char *file, bool mid_run)
{
	char line[512], name[256];
	FILE *f = fopen(file, "re");
	int n = 0;

	if (!ASSERT_OK_PTR(f, file))
		return false;
	world_init(w, 1000);
	tf_tree__init(t, w->s, 1000, mid_run);
	while (fgets(line, sizeof(line), f)) {
		struct tf_event ev = {0};

		if (!parse(line, &ev, name, sizeof(name)))
			continue;
		if (!n++)	/* the session began at the first input */
			w->s->root->start_ns = ev.ts_ns;
		tf_tree__feed(t, &ev);
		w->ts = ev.ts_ns;
	}
	fclose(f);
	ASSERT_GT(n, 10, "inputs read");
	w->ts += 1000;
	tf_tree__finish(t, true);
	collect(w, true);
	return true;
}

static const struct rec *nth(const struct world *w, const char *name, int k)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->spans[i].name, name) && !k--)
			return &w->spans[i];
	return NULL;
}

static int kids(const struct world *w, const struct rec *p, const char *name)
{
	int c = 0;

	for (int i = 0; p && i < w->n; i++)
		c += w->spans[i].parent == p->id && !strcmp(w->spans[i].name, name);
	return c;
}

static void check_fit(const char *file, const char *fn)
{
	static const char *const want[] = { "validation", "validation", "evaluate", "predict" };
	struct world w;
	struct tf_tree t;

	if (!replay(&w, &t, file, false))
		return;
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	for (int e = 0; e < 2; e++)
		ASSERT_EQ(kids(&w, nth(&w, "epoch", e), "step"), 4, "steps an epoch");
	ASSERT_EQ(count(&w, "function", "step"), 8, "a training call a step");
	ASSERT_EQ(count(&w, "data_load", "function"), 8, "its batch, inside it");
	ASSERT_STREQ(attr_str(nth(&w, "function", 0), "function"), fn, "the train function");
	ASSERT_EQ(count(&w, "eval", "epoch"), 4, "eval runs");
	for (int i = 0; i < 4; i++) {
		const struct rec *ev = nth(&w, "eval", i);

		if (!ASSERT_OK_PTR(ev, "eval"))
			break;
		ASSERT_STREQ(attr_str(ev, "kind"), want[i], "kind");
		ASSERT_EQ(kids(&w, ev, "forward"), 2, "its calls");
	}
	ASSERT_EQ(count(&w, "backward", NULL), 0, "no backward made up");
	check_well_formed(&w);
	world_free(&w);
}

static void test_keras3_fit(void)
{
	check_fit(DATA_DIR "keras3-fit.log", "multi_step_on_iterator");
}

static void test_tf_keras_fit(void)
{
	check_fit(DATA_DIR "tf-keras-fit.log", "train_function");
}

static void check_tape(const char *file, bool function)
{
	struct world w;
	struct tf_tree t;

	if (!replay(&w, &t, file, false))
		return;
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a batch a step");
	ASSERT_EQ(count(&w, function ? "function" : "backward", "step"), 6, "its work");
	ASSERT_EQ(count(&w, function ? "backward" : "function", NULL), 0, "nothing else");
	ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 2, "each loop's end");
	check_well_formed(&w);
	world_free(&w);
}

static void test_tape_eager(void)
{
	check_tape(DATA_DIR "tape-eager.log", false);
}

static void test_tape_function(void)
{
	check_tape(DATA_DIR "tape-function.log", true);
}

/* Attached in the third epoch: whole epochs after the first, each with its 8 steps and its
 * validation of 2 calls; the functions told by stack reads made inside calls. */
static void test_keras3_attach(void)
{
	struct world w;
	struct tf_tree t;
	int whole = 0;

	if (!replay(&w, &t, DATA_DIR "keras3-attach.log", true))
		return;
	for (int e = 1; nth(&w, "epoch", e + 1); e++) {	/* not the first, not the last */
		const struct rec *ep = nth(&w, "epoch", e), *ev;

		whole++;
		ASSERT_EQ(kids(&w, ep, "step"), 8, "steps");
		ASSERT_EQ(kids(&w, ep, "eval"), 1, "its validation");
		for (int i = 0; i < w.n; i++) {
			ev = &w.spans[i];
			if (ev->parent == ep->id && !strcmp(ev->name, "eval")) {
				ASSERT_STREQ(attr_str(ev, "kind"), "validation", "kind");
				ASSERT_EQ(kids(&w, ev, "forward"), 2, "its calls");
			}
		}
	}
	ASSERT_GT(whole, 2, "whole epochs seen");
	ASSERT_EQ(count(&w, "backward", NULL), 0, "no backward made up");
	for (int i = 0; i < w.n; i++)
		if (!strcmp(w.spans[i].name, "function"))
			ASSERT_STREQ(attr_str(&w.spans[i], "function_class"), "train", "steps");
	check_well_formed(&w);
	world_free(&w);
}

int main(void)
{
	RUN_TEST(test_keras3_fit);
	RUN_TEST(test_tf_keras_fit);
	RUN_TEST(test_tape_eager);
	RUN_TEST(test_tape_function);
	RUN_TEST(test_keras3_attach);
	return unit__done();
}
