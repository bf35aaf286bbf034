// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The training-structure rules, fed with event sequences as the torch anchors produce them:
// the basic loop (steps, epochs, validation, inferred forwards), attaching mid-run, other
// threads, a crash, CUDA counters. Optimizer steps: test_torch_tree_optim.c; evaluation,
// inference_mode and prefetching loops: test_torch_tree_eval.c.
#include "torch_tree_world.h"

static void feed_tid(struct world *w, uint32_t tid, enum tree_input kind, const char *name)
{
	struct tree_event ev = { .kind = kind, .ts_ns = (w->ts += 1000), .tid = tid, .name = name };

	torch_tree__feed(&w->t, &ev);
}

static void validate(struct world *w, uint64_t iter, int batches)
{
	feed(w, TI_GRAD_MODE, NULL, 0, 0);
	for (int i = 0; i < batches; i++) {
		data(w, iter);
		w->ts += 3000;	/* eval forward */
	}
	data(w, iter);
	feed(w, TI_GRAD_MODE, NULL, 0, 1);
}

static void test_plain_loop_with_validation(void)
{
	struct world w;

	world_init(&w, 1000);
	train_epoch(&w, 0x1000, 3);
	validate(&w, 0x2000, 2);
	train_epoch(&w, 0x3000, 3);
	validate(&w, 0x4000, 2);
	collect(&w, true);

	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "training data_loads in steps");
	ASSERT_EQ(count(&w, "backward", "step"), 6, "backwards in steps");
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 6, "optimizer steps in steps");
	ASSERT_EQ(count(&w, "zero_grad", "step"), 6, "zero_grad inside steps");
	ASSERT_EQ(count_mode(&w, "train", "step"), 6, "train forwards in steps");
	ASSERT_EQ(count_mode(&w, "eval", "epoch"), 4, "eval forwards under epochs");
	ASSERT_EQ(count_mode(&w, "eval", "step"), 0, "no eval forward in a step");
	/* per epoch: 2 validation batches + 1 exhausted validation __next__ + 1 exhausted train */
	ASSERT_EQ(count(&w, "data_load", "epoch"), 8, "data_loads under epochs");
	for (int i = 0; i < w.n; i++) {
		if (!strcmp(w.spans[i].name, "step"))
			ASSERT_LT(w.spans[i].index, 6, "step index counts from 0");
		if (!strcmp(w.spans[i].name, "epoch"))
			ASSERT_LT(w.spans[i].index, 2, "epoch index counts from 0");
	}
	check_well_formed(&w);
	world_free(&w);
}

static void test_gradient_accumulation(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int s = 0; s < 2; s++) {
		for (int k = 0; k < 3; k++) {
			data(&w, 0x10);
			backward(&w);
		}
		optimizer(&w);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 2, "one step per optimizer step");
	ASSERT_EQ(count(&w, "backward", "step"), 6, "all backwards inside steps");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "all data_loads inside steps");
	ASSERT_EQ(count_mode(&w, "train", "step"), 6, "one forward per micro-batch");
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 2, "optimizer steps");
	check_well_formed(&w);
	world_free(&w);
}

static void test_loop_without_dataloader(void)
{
	struct world w;

	world_init(&w, 2);
	for (int s = 0; s < 5; s++) {
		backward(&w);
		optimizer(&w);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 3, "an epoch every 2 optimizer steps");
	ASSERT_EQ(count(&w, "step", "epoch"), 5, "steps");
	ASSERT_EQ(count(&w, "backward", "step"), 5, "backwards");
	ASSERT_EQ(count(&w, "data_load", NULL), 0, "no data_load without a DataLoader");
	/* the first step has nothing before its backward; later ones infer their forward */
	ASSERT_EQ(count_mode(&w, "train", "step"), 4, "inferred forwards");
	check_well_formed(&w);
	world_free(&w);
}

static void test_epochs_without_iterator_identity(void)
{
	struct world w;

	world_init(&w, 1000);
	train_epoch(&w, 0, 2);
	validate(&w, 0, 1);
	train_epoch(&w, 0, 2);
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "validation phase separates epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 4, "steps");
	check_well_formed(&w);
	world_free(&w);
}

static void test_nested_user_regions(void)
{
	struct world w;
	const struct rec *outer = NULL, *inner = NULL;

	world_init(&w, 1000);
	data(&w, 1);
	feed(&w, TI_SCOPE_ENTER, "outer", 0, 0);
	feed(&w, TI_SCOPE_ENTER, "inner", 0, 0);
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	backward(&w);
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	optimizer(&w);
	collect(&w, true);
	for (int i = 0; i < w.n; i++) {
		if (!strcmp(w.spans[i].name, "outer"))
			outer = &w.spans[i];
		if (!strcmp(w.spans[i].name, "inner"))
			inner = &w.spans[i];
	}
	if (ASSERT_OK_PTR(outer, "outer") && ASSERT_OK_PTR(inner, "inner")) {
		ASSERT_EQ(inner->parent, outer->id, "inner nests in outer");
		ASSERT_STREQ(by_id(&w, outer->parent)->name, "step", "outer's parent");
	}
	ASSERT_EQ(count(&w, "backward", "outer"), 1, "backward ran inside outer");
	check_well_formed(&w);
	world_free(&w);
}

static void test_attach_mid_run(void)
{
	struct world w;

	world_init(&w, 1000);
	/* We attach while a step is in its backward: the exits have no entries. */
	feed(&w, TI_BACKWARD_EXIT, NULL, 0, 0);
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	feed(&w, TI_SCOPE_ENTER, OPT, 0, 0);	/* half a step: opens one, counted */
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	train_epoch(&w, 0x77, 2);
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 3, "the partial step and two full ones");
	ASSERT_EQ(count(&w, "backward", NULL), 2, "unpaired exits are ignored");
	check_well_formed(&w);
	world_free(&w);
}

static void test_other_threads_ignored(void)
{
	struct world w;

	world_init(&w, 1000);
	data(&w, 1);
	feed_tid(&w, 9, TI_SCOPE_ENTER, DATA);
	feed_tid(&w, 9, TI_BACKWARD_ENTER, NULL);
	backward(&w);
	optimizer(&w);
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", NULL), 1, "steps");
	ASSERT_EQ(count(&w, "backward", NULL), 1, "the other thread's backward is not ours");
	ASSERT_EQ(count(&w, "data_load", NULL), 1, "data_loads");
	world_free(&w);
}

static void test_crash_leaves_incomplete(void)
{
	struct world w;
	int incomplete = 0;

	world_init(&w, 1000);
	data(&w, 1);
	feed(&w, TI_BACKWARD_ENTER, NULL, 0, 0);	/* dies inside backward */
	collect(&w, false);
	for (int i = 0; i < w.n; i++) {
		const cJSON *sp;

		(void)sp;
		if (!strcmp(w.spans[i].name, "backward") || !strcmp(w.spans[i].name, "step") ||
		    !strcmp(w.spans[i].name, "epoch"))
			incomplete++;
	}
	ASSERT_EQ(incomplete, 3, "backward, step and epoch present");
	ASSERT_EQ(count(&w, "backward", "step"), 1, "backward in the step");
	world_free(&w);
}

/* A fake CUDA runtime: 10 launches and 100 bytes copied between two reads. */
static bool fake_counters(void *ctx, uint64_t out[SESSION_NCOUNTERS])
{
	uint64_t *calls = ctx;

	(*calls)++;
	memset(out, 0, SESSION_NCOUNTERS * sizeof(out[0]));
	out[0] = *calls * 10;
	out[1] = *calls * 100;
	return true;
}

static void test_cuda_counters_land_on_spans(void)
{
	struct world w;
	uint64_t calls = 0;
	int backwards = 0;

	world_init(&w, 1000);
	w.s->counters = fake_counters;
	w.s->counters_ctx = &calls;
	data(&w, 1);
	backward(&w);
	optimizer(&w);
	collect(&w, true);
	for (int i = 0; i < w.n; i++) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(w.spans[i].attrs, "cuda.launches");
		const cJSON *b = cJSON_GetObjectItemCaseSensitive(w.spans[i].attrs,
								  "cuda.memcpy_bytes");

		if (!w.spans[i].parent)
			continue;
		if (!ASSERT_TRUE(cJSON_IsNumber(l) && cJSON_IsNumber(b), w.spans[i].name))
			continue;
		/* each span saw the counters move between its open and its close */
		ASSERT_EQ((long long)l->valuedouble % 10, 0, "launch delta");
		ASSERT_EQ((long long)b->valuedouble, (long long)l->valuedouble * 10, "bytes delta");
		backwards += !strcmp(w.spans[i].name, "backward");
	}
	ASSERT_EQ(backwards, 1, "backward carries its CUDA delta");
	world_free(&w);
}

int main(void)
{
	RUN_TEST(test_plain_loop_with_validation);
	RUN_TEST(test_gradient_accumulation);
	RUN_TEST(test_loop_without_dataloader);
	RUN_TEST(test_epochs_without_iterator_identity);
	RUN_TEST(test_nested_user_regions);
	RUN_TEST(test_attach_mid_run);
	RUN_TEST(test_other_threads_ignored);
	RUN_TEST(test_crash_leaves_incomplete);
	RUN_TEST(test_cuda_counters_land_on_spans);
	return unit__done();
}
