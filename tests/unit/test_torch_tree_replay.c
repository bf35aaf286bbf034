// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Tree inputs recorded from real runs (CIRRON_DEBUG_TREE=1: one line per input, the training
// process's), fed again through the rules: tests/unit/data/idioms/*.log, 2 epochs of 4
// training batches and 2 validation batches each (tests/workloads/idiom_*.py):
// - amp-off: fp16 autocast + GradScaler, step 2 skipped, the 2.13 wheel, default level;
// - cm-off: torch.compile(model), inductor, the 2.13 wheel, default level;
// - t-cm-off: the same on Debian's 2.6 (aot_eager: dynamo's scopes, AOT tracing a backward);
// - t-ck-n-off: non-reentrant checkpointing, Debian's 2.6, default level;
// - ck-r-always: reentrant checkpointing, the 2.13 wheel, --python-frames always;
// - keras-off: Keras 3.15 on the 2.13 wheel (tests/workloads/frameworks.py keras), default
//   level: no optimizer step, grad disabled for metric updates before each backward, the
//   loader's last __next__ never called, a batch peeked at under no_grad before training.
#include "torch_tree_world.h"

#define DATA_DIR "tests/unit/data/idioms/"

static const char *const kinds[] = {
	[TI_SCOPE_ENTER] = "SCOPE+", [TI_SCOPE_EXIT] = "SCOPE-", [TI_BACKWARD_ENTER] = "BWD+",
	[TI_BACKWARD_EXIT] = "BWD-", [TI_GRAD_MODE] = "GRAD", [TI_FORWARD_ENTER] = "FWD+",
	[TI_FORWARD_EXIT] = "FWD-", [TI_LOST] = "LOST", [TI_COMPILE_ENTER] = "COMPILE+",
	[TI_COMPILE_EXIT] = "COMPILE-", [TI_COMPILED] = "COMPILED", [TI_SCALER_UPDATE] = "SCALER",
};

/* "TREE pid=P tid=T ts=NS KIND name=NAME obj=HEX val=V" (NAME may hold spaces) */
static bool parse(char *line, struct tree_event *ev, char *name, size_t size)
{
	char *kind, *n, *o;
	unsigned int tid;
	unsigned long long ts;
	int off = 0;

	if (sscanf(line, "TREE pid=%*d tid=%u ts=%llu %n", &tid, &ts, &off) < 2 || !off)
		return false;
	kind = line + off;
	n = strstr(kind, " name=");
	o = n ? strstr(n, " obj=") : NULL;
	if (!o)
		return false;
	*n = 0;
	memset(ev, 0, sizeof(*ev));
	ev->kind = (enum tree_input)-1;
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
		if (kinds[k] && !strcmp(kind, kinds[k]))
			ev->kind = (enum tree_input)k;
	if ((int)ev->kind < 0)
		return false;
	*o = 0;
	snprintf(name, size, "%s", n + 6);
	ev->name = strcmp(name, "-") ? name : NULL;
	ev->tid = tid;
	ev->ts_ns = ts;
	return sscanf(o + 1, "obj=%llx val=%d", (unsigned long long *)&ev->obj, &ev->value) == 2;
}

static bool replay(struct world *w, const char *file, bool frames_always)
{
	char line[512], name[256];
	FILE *f = fopen(file, "re");

	if (!ASSERT_OK_PTR(f, file))
		return false;
	world_init(w, 1000);
	w->t.frames_always = frames_always;
	while (fgets(line, sizeof(line), f)) {
		struct tree_event ev;

		line[strcspn(line, "\n")] = 0;
		if (!parse(line, &ev, name, sizeof(name)))
			continue;
		w->ts = ev.ts_ns;
		torch_tree__feed(&w->t, &ev);
	}
	fclose(f);
	collect(w, true);
	return true;
}

/* Every idiom's tree: 2 epochs, one step a batch with its data_load, forward and backward;
 * each validation batch an eval forward under its epoch. */
static void check_plain(struct world *w, int optimizer_steps)
{
	ASSERT_EQ(count(w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(w, "step", "epoch"), 8, "a step per batch");
	ASSERT_EQ(count(w, "data_load", "step"), 8, "a data_load per step");
	ASSERT_EQ(count_mode(w, "train", "step"), 8, "a forward per step");
	ASSERT_EQ(count(w, "backward", "step"), 8, "a backward per step");
	ASSERT_EQ(count(w, "optimizer_step", "step"), optimizer_steps, "optimizer steps");
	ASSERT_EQ(count_mode(w, "eval", "epoch"), 4, "the validation forwards");
	ASSERT_EQ(count_bool(w, "data_load", "exhausted"), 2, "a training loop's end an epoch");
	check_well_formed(w);
}

static void test_amp_skipped_step(void)
{
	struct world w;

	if (!replay(&w, DATA_DIR "amp-off.log", false))
		return;
	check_plain(&w, 7);
	ASSERT_EQ(count_bool(&w, "step", "skipped"), 1, "GradScaler skipped one");
	world_free(&w);
}

static void test_compiled_model(void)
{
	struct world w;

	if (!replay(&w, DATA_DIR "cm-off.log", false))
		return;
	check_plain(&w, 8);
	ASSERT_EQ(count(&w, "compile", "forward"), 2, "the training and the eval graph");
	ASSERT_EQ(count_bool(&w, "compile", "recompile"), 1, "the eval graph recompiles");
	world_free(&w);
}

static void test_compiled_model_torch26(void)
{
	struct world w;

	if (!replay(&w, DATA_DIR "t-cm-off.log", false))
		return;
	check_plain(&w, 8);
	ASSERT_EQ(count(&w, "compile", "forward"), 2, "the training and the eval graph");
	ASSERT_EQ(count(&w, "compile", "backward"), 1, "the backward graph, in the backward");
	world_free(&w);
}

static void test_checkpoint_torch26(void)
{
	struct world w;

	if (!replay(&w, DATA_DIR "t-ck-n-off.log", false))
		return;
	check_plain(&w, 8);
	world_free(&w);
}

static void test_checkpoint_recompute(void)
{
	struct world w;

	if (!replay(&w, DATA_DIR "ck-r-always.log", true))
		return;
	check_plain(&w, 8);
	ASSERT_EQ(count(&w, "forward", "backward"), 24, "3 blocks recomputed a backward");
	ASSERT_EQ(count_bool(&w, "forward", "recompute"), 24, "marked recompute");
	world_free(&w);
}

/* Keras: each training step disables grad (its loss tracker's updates) between the batch
 * and the backward, as its validation steps do around the model call; nothing tells them
 * apart until a backward comes or not. */
static void test_keras(void)
{
	struct world w;

	if (!replay(&w, DATA_DIR "keras-off.log", false))
		return;
	check_plain(&w, 0);
	ASSERT_EQ(count(&w, "forward", "cirron.session"), 1, "the batch peeked at before training");
	world_free(&w);
}

int main(void)
{
	RUN_TEST(test_amp_skipped_step);
	RUN_TEST(test_compiled_model);
	RUN_TEST(test_compiled_model_torch26);
	RUN_TEST(test_checkpoint_torch26);
	RUN_TEST(test_checkpoint_recompute);
	RUN_TEST(test_keras);
	return unit__done();
}
