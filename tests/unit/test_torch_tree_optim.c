// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Optimizer steps as real code writes them (issue 18): closures (LBFGS), several optimizers
// a batch, updates by hand (no optimizer), an optimizer that appears later.
#include "torch_tree_world.h"

/* Spans named name whose attribute key is the string value. */
static int count_attr(const struct world *w, const char *name, const char *key, const char *value)
{
	int c = 0;

	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->spans[i].name, name) && attr_str(&w->spans[i], key) &&
		    !strcmp(attr_str(&w->spans[i], key), value))
			c++;
	return c;
}

static void scope(struct world *w, const char *name)
{
	feed(w, TI_SCOPE_ENTER, name, 0, 0);
	feed(w, TI_SCOPE_EXIT, NULL, 0, 0);
}

/* LBFGS: optimizer.step(closure) runs zero_grad, forward and backward inside the step, under
 * enable_grad within the step's no_grad. */
static void test_closure_optimizer(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int s = 0; s < 3; s++) {
		feed(&w, TI_SCOPE_ENTER, "Optimizer.step#LBFGS.step", 0, 0);
		feed(&w, TI_GRAD_MODE, NULL, 0, 0);
		for (int k = 0; k < 3; k++) {
			feed(&w, TI_GRAD_MODE, NULL, 0, 1);
			scope(&w, "Optimizer.zero_grad#LBFGS.zero_grad");
			backward(&w);
			feed(&w, TI_GRAD_MODE, NULL, 0, 0);
		}
		feed(&w, TI_GRAD_MODE, NULL, 0, 1);
		feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 3, "one step per optimizer.step(closure)");
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 3, "optimizer steps");
	ASSERT_EQ(count(&w, "backward", "optimizer_step"), 9, "closure backwards nest");
	ASSERT_EQ(count(&w, "zero_grad", "optimizer_step"), 9, "closure zero_grads nest");
	ASSERT_EQ(count_mode(&w, "train", "optimizer_step"), 9, "closure forwards nest");
	ASSERT_EQ(count(&w, "backward", "step"), 0, "no backward outside the closure");
	ASSERT_EQ(count_bool(&w, "optimizer_step", "truncated"), 0, "optimizer steps not truncated");
	ASSERT_EQ(count_attr(&w, "optimizer_step", "optimizer", "LBFGS.step"), 3, "named");
	ASSERT_EQ(count_attr(&w, "step", "boundary", "optimizer_step"), 3, "boundary");
	check_well_formed(&w);
	world_free(&w);
}

/* A GAN: per batch a discriminator step, then a generator step. */
static void test_two_optimizers_per_batch(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < 3; i++) {
			data(&w, 0);
			scope(&w, "Optimizer.zero_grad#Adam.zero_grad");
			backward(&w);
			feed(&w, TI_SCOPE_ENTER, "Optimizer.step#Adam.step", 0, 0);
			feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
			scope(&w, "Optimizer.zero_grad#SGD.zero_grad");
			backward(&w);
			feed(&w, TI_SCOPE_ENTER, OPT, 0, 0);
			feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
		}
		data(&w, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "one step per batch");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
	ASSERT_EQ(count(&w, "backward", "step"), 12, "two backwards per step");
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 12, "two optimizer steps per step");
	ASSERT_EQ(count_attr(&w, "optimizer_step", "optimizer", "Adam.step"), 6, "D steps named");
	ASSERT_EQ(count_attr(&w, "optimizer_step", "optimizer", "SGD.step"), 6, "G steps named");
	ASSERT_EQ(count_mode(&w, "train", "step"), 12, "a forward before each backward");
	ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 2, "iterator ends");
	check_well_formed(&w);
	world_free(&w);
}

/* No optimizer: `with torch.no_grad(): p -= lr * p.grad` after each backward. */
static void manual_update(struct world *w)
{
	backward(w);
	feed(w, TI_GRAD_MODE, NULL, 0, 0);
	w->ts += 2000;
	feed(w, TI_GRAD_MODE, NULL, 0, 1);
}

static void test_manual_updates_with_dataloader(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < 3; i++) {
			data(&w, 0);
			manual_update(&w);
		}
		data(&w, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "one step per batch");
	ASSERT_EQ(count_attr(&w, "step", "boundary", "data_load"), 6, "steps from batches");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
	ASSERT_EQ(count(&w, "backward", "step"), 6, "a backward per step");
	ASSERT_EQ(count_mode(&w, "train", "step"), 6, "a forward per step");
	ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 2, "iterator ends");
	check_well_formed(&w);
	world_free(&w);
}

static void test_manual_updates_without_dataloader(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int i = 0; i < 4; i++)
		manual_update(&w);
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 4, "one step per backward");
	ASSERT_EQ(count_attr(&w, "step", "boundary", "backward"), 4, "steps from backwards");
	ASSERT_EQ(count(&w, "backward", "step"), 4, "a backward per step");
	/* the first has nothing before it; the others begin where the update ended */
	ASSERT_EQ(count_mode(&w, "train", "step"), 3, "inferred forwards");
	check_well_formed(&w);
	world_free(&w);
}

/* Updates by hand first, an optimizer later: steps switch from batches to optimizer steps. */
static void test_optimizer_appears_later(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int i = 0; i < 3; i++) {
		data(&w, 0);
		manual_update(&w);
	}
	data(&w, 0);
	train_epoch(&w, 0, 3);
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count_attr(&w, "step", "boundary", "data_load"), 3, "from batches first");
	ASSERT_EQ(count_attr(&w, "step", "boundary", "optimizer_step"), 3, "then optimizer steps");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
	check_well_formed(&w);
	world_free(&w);
}

int main(void)
{
	RUN_TEST(test_closure_optimizer);
	RUN_TEST(test_two_optimizers_per_batch);
	RUN_TEST(test_manual_updates_with_dataloader);
	RUN_TEST(test_manual_updates_without_dataloader);
	RUN_TEST(test_optimizer_appears_later);
	return unit__done();
}
