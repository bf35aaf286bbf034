// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Validation the tree cannot see through grad mode alone: inference_mode loops (issue 18),
// evaluation loops that disable grad around the model call only or run a module in eval
// mode, and loops that fetch batches ahead (issue 13).
#include "torch_tree_world.h"

/* torch.inference_mode() validation: no GradMode event, so its batches look like
 * training batches nothing trained on. */
static void test_inference_mode_validation(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		train_epoch(&w, 0, 3);
		for (int i = 0; i < 2; i++) {
			data(&w, 0);
			w.ts += 3000;	/* eval forward */
		}
		data(&w, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count(&w, "data_load", "epoch"), 8, "train end + 2 batches + end, per epoch");
	ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 4, "only iterator ends exhausted");
	ASSERT_EQ(count_mode(&w, "eval", "epoch"), 4, "an eval forward per validation batch");
	ASSERT_EQ(count_mode(&w, "eval", "step"), 0, "none in steps");
	check_well_formed(&w);
	world_free(&w);
}

/* An evaluation loop that loads batches with grad on and disables it around the model call
 * only (HF Trainer's prediction_step): with the forward seen (Python frames) or not. */
static void test_eval_nograd_around_forward(void)
{
	for (int exact = 0; exact < 2; exact++) {
		struct world w;

		world_init(&w, 1000);
		for (int e = 0; e < 2; e++) {
			train_epoch(&w, 0, 3);
			for (int i = 0; i < 2; i++) {
				data(&w, 0);
				feed(&w, TI_GRAD_MODE, NULL, 0, 0);
				if (exact) {
					feed(&w, TI_FORWARD_ENTER, "Model", 0, 0);
					w.ts += 3000;
					feed(&w, TI_FORWARD_EXIT, NULL, 0, 0);
				} else {
					w.ts += 3000;
				}
				feed(&w, TI_GRAD_MODE, NULL, 0, 1);
			}
			data(&w, 0);	/* the evaluation loop's end */
		}
		collect(&w, true);
		ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
		ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
		ASSERT_EQ(count_mode(&w, "eval", "epoch"), 4, "an eval forward per batch, under the epoch");
		ASSERT_EQ(count_mode(&w, "eval", "step"), 0, "none in steps");
		ASSERT_EQ(count(&w, "data_load", "epoch"), 8, "train end + 2 batches + end, per epoch");
		ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 4, "only iterator ends exhausted");
		check_well_formed(&w);
		world_free(&w);
	}
}

/* A validation batch whose module is in eval mode (module.training read by Python frames)
 * under inference_mode, which the tree does not see: a validation batch, not a step. */
static void test_eval_mode_module_forward(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		train_epoch(&w, 0, 3);
		for (int i = 0; i < 3; i++) {
			data(&w, 0);
			feed(&w, TI_FORWARD_ENTER, "Model", 0, 0);
			w.ts += 3000;
			feed(&w, TI_FORWARD_EXIT, NULL, 0, 0);
		}
		data(&w, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count_mode(&w, "eval", "epoch"), 6, "eval forwards under the epoch");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
	check_well_formed(&w);
	world_free(&w);
}

/* K batches fetched back to back, then trained on (HF Trainer's get_batch_samples); with
 * `ahead`, a wrapper that fetches one batch ahead (accelerate, Lightning): the epoch's first
 * fetch and the StopIteration one shift the fetches by one. */
static void prefetch_epoch(struct world *w, int steps, int k, bool ahead)
{
	if (ahead)
		data(w, 0);
	for (int s = 0; s < steps; s++) {
		for (int i = 0; i < k; i++)
			data(w, 0);
		for (int i = 0; i < k; i++) {
			feed(w, TI_FORWARD_ENTER, "Model", 0, 1);
			w->ts += 2000;
			feed(w, TI_FORWARD_EXIT, NULL, 0, 0);
			backward(w);
		}
		optimizer(w);
	}
	if (!ahead)
		data(w, 0);	/* StopIteration */
}

static void test_prefetched_batches(void)
{
	for (int ahead = 0; ahead < 2; ahead++) {
		struct world w;

		world_init(&w, 1000);
		for (int e = 0; e < 3; e++)
			prefetch_epoch(&w, 2, 3, ahead);
		collect(&w, true);
		ASSERT_EQ(count(&w, "epoch", "cirron.session"), 3, "epochs");
		ASSERT_EQ(count(&w, "step", "epoch"), 6, "one step per optimizer step");
		ASSERT_EQ(count(&w, "data_load", "step"), 18, "K data_loads in each step");
		ASSERT_EQ(count_mode(&w, "train", "step"), 18, "K forwards in each step");
		ASSERT_EQ(count(&w, "backward", "step"), 18, "K backwards in each step");
		/* the StopIteration __next__ (ahead: the epoch's first fetch, which the tree takes
		 * for the last loop's end; the first epoch's lies before it) */
		ASSERT_EQ(count(&w, "data_load", "epoch") + count(&w, "data_load", "cirron.session"),
			  3, "one more fetch per epoch");
		ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 3, "taken for loop ends");
		check_well_formed(&w);
		world_free(&w);
	}
}

/* A training step that disables grad between its batch and its backward (a metric under
 * torch.no_grad(), Keras's loss tracker), with an optimizer or updating by hand, then a
 * validation loop under no_grad (default level: no model call seen). Nothing tells that
 * region from validation after the loop's end until the backward comes. */
static void test_nograd_metric_before_backward(void)
{
	for (int by_hand = 0; by_hand < 2; by_hand++) {
		struct world w;

		world_init(&w, 1000);
		for (int e = 0; e < 2; e++) {
			for (int i = 0; i < 3; i++) {
				data(&w, 0);
				w.ts += 3000;	/* the forward */
				feed(&w, TI_GRAD_MODE, NULL, 0, 0);	/* the metric */
				feed(&w, TI_GRAD_MODE, NULL, 0, 1);
				backward(&w);
				if (by_hand) {
					feed(&w, TI_GRAD_MODE, NULL, 0, 0);
					feed(&w, TI_GRAD_MODE, NULL, 0, 1);
				} else {
					optimizer(&w);
				}
			}
			if (!by_hand)
				data(&w, 0);	/* StopIteration (Keras never calls it) */
			feed(&w, TI_GRAD_MODE, NULL, 0, 0);
			for (int i = 0; i < 2; i++)
				data(&w, 0);	/* validation batches */
			data(&w, 0);	/* its StopIteration */
			feed(&w, TI_GRAD_MODE, NULL, 0, 1);
		}
		collect(&w, true);
		ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
		ASSERT_EQ(count(&w, "step", "epoch"), 6, "a step per batch");
		ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
		ASSERT_EQ(count_mode(&w, "train", "step"), 6, "a forward per step");
		ASSERT_EQ(count(&w, "backward", "step"), 6, "a backward per step");
		check_well_formed(&w);
		world_free(&w);
	}
}

int main(void)
{
	RUN_TEST(test_inference_mode_validation);
	RUN_TEST(test_eval_nograd_around_forward);
	RUN_TEST(test_eval_mode_module_forward);
	RUN_TEST(test_prefetched_batches);
	RUN_TEST(test_nograd_metric_before_backward);
	return unit__done();
}
