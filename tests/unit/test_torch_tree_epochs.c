// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Epochs as loops outside our own mark them (issue 44), fed by hand and from recorded runs
// (tests/unit/data/epochs/*.log: tests/workloads/epoch_loops.py under `run` with
// CIRRON_DEBUG_TREE=1):
// - a GAN over a DataLoader with 2 workers: per batch two backwards before the critic's
//   optimizer step, a third and the generator's step, pictures dumped under no_grad at each
//   epoch's first batch, state dicts saved between epochs: the StopIteration __next__ and the
//   next epoch's first batch come back to back. Logs: gan-w2-host-off (Debian's 1.13),
//   gan-w2-trixie-off (Debian's 2.6), gan-w2-always (the 2.13 wheel, --python-frames always);
//   3 epochs of 4 batches.
// - no DataLoader: batches sliced from a tensor, clip_grad_norm_ and an update by hand (or an
//   SGD step), a validation under no_grad() + model.eval() after each epoch. Logs:
//   sliced-host-off (1.13), sliced-off and sliced-always (2.13: clip_grad_norm_ opens its own
//   region), sliced-sgd-off (2.13, an optimizer); 3 epochs of 3 steps and 2 validation batches.
#include "tree_replay.h"

#define DATA_DIR "tests/unit/data/epochs/"
#define MDATA "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__"

static void mdata(struct world *w)
{
	feed(w, TI_SCOPE_ENTER, MDATA, 0, 0);
	feed(w, TI_SCOPE_EXIT, NULL, 0, 0);
}

static void adam(struct world *w)
{
	feed(w, TI_SCOPE_ENTER, "Optimizer.step#Adam.step", 0, 0);
	feed(w, TI_GRAD_MODE, NULL, 0, 0);
	feed(w, TI_GRAD_MODE, NULL, 0, 1);
	feed(w, TI_SCOPE_EXIT, NULL, 0, 0);
}

/* A no_grad region of the job's Python lasting ns. */
static void region(struct world *w, uint64_t ns)
{
	feed(w, TI_GRAD_MODE, NULL, 0, 0);
	w->ts += ns;
	feed(w, TI_GRAD_MODE, NULL, 0, 1);
}

static void model_call(struct world *w, int training)
{
	feed(w, TI_FORWARD_ENTER, "Sequential", 0, training);
	w->ts += 3000;
	feed(w, TI_FORWARD_EXIT, NULL, 0, 0);
}

static const struct rec *nth(const struct world *w, const char *name, int k)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->spans[i].name, name) && !k--)
			return &w->spans[i];
	return NULL;
}

static int kids(const struct world *w, const struct rec *parent, const char *name)
{
	int c = 0;

	for (int i = 0; i < w->n; i++)
		if (w->spans[i].parent == parent->id && !strcmp(w->spans[i].name, name))
			c++;
	return c;
}

/* Every step of the GAN: one batch, 3 backwards, 2 optimizer steps; each epoch 4 of them and
 * its loop's end. */
static void check_gan(const struct world *w, int epochs)
{
	ASSERT_EQ(count(w, "epoch", "cirron.session"), epochs, "an epoch per iterator");
	ASSERT_EQ(count(w, "step", "epoch"), 4 * epochs, "a step per batch");
	ASSERT_EQ(count(w, "data_load", "step"), 4 * epochs, "one data_load a step");
	ASSERT_EQ(count(w, "backward", "step"), 12 * epochs, "3 backwards a step");
	ASSERT_EQ(count(w, "optimizer_step", "step"), 8 * epochs, "2 optimizer steps a step");
	ASSERT_EQ(count_bool(w, "data_load", "exhausted"), epochs, "each loop's end");
	for (int e = 0; e < epochs; e++) {
		const struct rec *ep = nth(w, "epoch", e);

		if (!ASSERT_OK_PTR(ep, "epoch"))
			return;
		ASSERT_EQ(kids(w, ep, "step"), 4, "4 steps an epoch");
		ASSERT_EQ(kids(w, ep, "data_load"), 1, "the StopIteration __next__, under its epoch");
	}
	check_well_formed(w);
}

/* Two backwards before the first optimizer step: the StopIteration __next__ and the next
 * epoch's first batch, back to back, are not one step's two batches. */
static void test_gan_epochs_back_to_back(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 3; e++) {
		for (int b = 0; b < 4; b++) {
			mdata(&w);
			backward(&w);	/* the critic on real data */
			backward(&w);	/* ... and on generated data */
			adam(&w);
			backward(&w);	/* the generator */
			adam(&w);
			if (b == 0) {	/* a picture of the batch and of the generator's output */
				region(&w, 2000);
				region(&w, 2000);
			}
		}
		mdata(&w);	/* StopIteration: workers shut down, state dicts saved */
	}
	collect(&w, true);
	check_gan(&w, 3);
	world_free(&w);
}

/* Batches fetched K at a time (HF Trainer's get_batch_samples) in a loop that runs 2
 * backwards a batch: a run of 2 __next__ calls and 4 backwards is one step of 2 batches. */
static void test_runs_count_batches_by_their_backwards(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int s = 0; s < 2; s++) {	/* alone: 2 backwards a batch */
		data(&w, 0);
		backward(&w);
		backward(&w);
		optimizer(&w);
	}
	for (int s = 0; s < 2; s++) {
		data(&w, 0);
		data(&w, 0);
		for (int k = 0; k < 4; k++)
			backward(&w);
		optimizer(&w);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 4, "steps");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "the runs' batches are their steps'");
	ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 0, "no loop's end");
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 1, "one epoch");
	check_well_formed(&w);
	world_free(&w);
}

/* Batches sliced from a tensor, an update by hand (and, clip != 0, clip_grad_norm_'s own
 * region before it, as torch 2 has), a validation of ns after each epoch. */
static void sliced_loop(struct world *w, int epochs, int steps, bool clip, bool metric,
			uint64_t val_ns)
{
	for (int e = 0; e < epochs; e++) {
		for (int s = 0; s < steps; s++) {
			backward(w);
			if (clip)
				region(w, 1000);
			region(w, 1000);	/* the update */
			if (metric)
				region(w, 1000);	/* an accuracy every step */
		}
		if (val_ns)
			region(w, val_ns);
	}
}

static void check_sliced(const struct world *w, int epochs, int steps, uint64_t val_ns)
{
	ASSERT_EQ(count(w, "epoch", "cirron.session"), epochs, "an epoch per validation");
	ASSERT_EQ(count(w, "step", "epoch"), epochs * steps, "a step per backward");
	ASSERT_EQ(count(w, "eval", "epoch"), epochs, "each validation an eval span");
	for (int e = 0; e < epochs; e++) {
		const struct rec *ep = nth(w, "epoch", e), *ev = nth(w, "eval", e);

		if (!ASSERT_OK_PTR(ep, "epoch") || !ASSERT_OK_PTR(ev, "eval"))
			return;
		ASSERT_EQ(kids(w, ep, "step"), steps, "steps an epoch");
		ASSERT_EQ(ev->parent, ep->id, "under its epoch");
		ASSERT_EQ(ev->end - ev->start, val_ns + 1000, "its duration: the region's");
		ASSERT_EQ(ev->end, ep->end, "the epoch ends with it");
		ASSERT_EQ(num(ev->attrs, "regions"), 1, "one region");
	}
	check_well_formed(w);
}

static void test_validation_ends_epoch_without_dataloader(void)
{
	struct world w;

	world_init(&w, 1000);
	sliced_loop(&w, 3, 3, false, false, 50000);
	collect(&w, true);
	check_sliced(&w, 3, 3, 50000);
	world_free(&w);
}

static void test_validation_after_clip_grad_norm(void)
{
	struct world w;

	world_init(&w, 1000);
	sliced_loop(&w, 3, 4, true, false, 50000);
	collect(&w, true);
	check_sliced(&w, 3, 4, 50000);
	world_free(&w);
}

/* A region after every step's update (a metric) is the step's own: no evaluation. */
static void test_region_every_step_is_no_evaluation(void)
{
	struct world w;

	world_init(&w, 1000);
	sliced_loop(&w, 2, 3, true, true, 0);
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 1, "one epoch");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count(&w, "eval", NULL), 0, "no eval span");
	check_well_formed(&w);
	world_free(&w);
}

/* With an optimizer: the step ends with its optimizer step; the validation's region after it. */
static void test_validation_after_optimizer_steps(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		for (int s = 0; s < 3; s++) {
			backward(&w);
			optimizer(&w);
		}
		region(&w, 30000);
	}
	collect(&w, true);
	check_sliced(&w, 2, 3, 30000);
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 6, "optimizer steps");
	world_free(&w);
}

/* With Python frames: the evaluation's model calls inside its span; a training call begins
 * the next step. */
static void test_validation_forwards_with_frames(void)
{
	struct world w;

	world_init(&w, 1000);
	w.t.frames_always = true;
	for (int e = 0; e < 2; e++) {
		for (int s = 0; s < 3; s++) {
			model_call(&w, 1);
			backward(&w);
			region(&w, 1000);
		}
		feed(&w, TI_GRAD_MODE, NULL, 0, 0);
		model_call(&w, 0);
		model_call(&w, 0);
		feed(&w, TI_GRAD_MODE, NULL, 0, 1);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "eval", "epoch"), 2, "eval spans");
	ASSERT_EQ(count_mode(&w, "eval", "eval"), 4, "the validation's forwards inside them");
	ASSERT_EQ(count_mode(&w, "train", "eval"), 0, "no training forward inside them");
	ASSERT_EQ(count_mode(&w, "train", "step"), 5, "training forwards in their steps");
	ASSERT_EQ(num(nth(&w, "eval", 0)->attrs, "forwards"), 2, "forwards counted");
	check_well_formed(&w);
	world_free(&w);
}

/* Real runs. */
static void test_gan_recorded(void)
{
	static const char *const logs[] = { "gan-w2-host-off.log", "gan-w2-trixie-off.log",
					    "gan-w2-always.log" };

	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		char path[256];
		struct world w;

		snprintf(path, sizeof(path), DATA_DIR "%s", logs[i]);
		if (!replay_log(&w, path, strstr(logs[i], "always") != NULL))
			continue;
		check_gan(&w, 3);
		world_free(&w);
	}
}

static void test_sliced_recorded(void)
{
	static const char *const logs[] = { "sliced-host-off.log", "sliced-off.log",
					    "sliced-always.log", "sliced-sgd-off.log" };

	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		bool frames = strstr(logs[i], "always") != NULL;
		char path[256];
		struct world w;

		snprintf(path, sizeof(path), DATA_DIR "%s", logs[i]);
		if (!replay_log(&w, path, frames))
			continue;
		ASSERT_EQ(count(&w, "epoch", "cirron.session"), 3, logs[i]);
		ASSERT_EQ(count(&w, "step", "epoch"), 9, logs[i]);
		ASSERT_EQ(count(&w, "eval", "epoch"), 3, logs[i]);
		for (int e = 0; e < 3; e++)
			ASSERT_EQ(kids(&w, nth(&w, "epoch", e), "step"), 3, logs[i]);
		if (frames)
			ASSERT_EQ(count_mode(&w, "eval", "eval"), 6, "2 validation forwards each");
		check_well_formed(&w);
		world_free(&w);
	}
}

int main(void)
{
	RUN_TEST(test_gan_epochs_back_to_back);
	RUN_TEST(test_runs_count_batches_by_their_backwards);
	RUN_TEST(test_validation_ends_epoch_without_dataloader);
	RUN_TEST(test_validation_after_clip_grad_norm);
	RUN_TEST(test_region_every_step_is_no_evaluation);
	RUN_TEST(test_validation_after_optimizer_steps);
	RUN_TEST(test_validation_forwards_with_frames);
	RUN_TEST(test_gan_recorded);
	RUN_TEST(test_sliced_recorded);
	return unit__done();
}
