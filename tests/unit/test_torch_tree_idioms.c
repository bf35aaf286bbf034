// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The training idioms of PyTorch 2.x (issue 26), fed as their anchors arrive (the sequences
// were read from real runs: the venv's torch 2.13 wheel and Debian's 2.6): C++ grad guards,
// GradScaler's skipped steps, activation checkpointing, torch.compile's compiles, FSDP2's root
// forward, and an evaluation inside the epoch told by module.training.
#include "torch_tree_world.h"

#define GUARD 1		/* TI_GRAD_MODE obj: a C++ guard switched it (it restores it) */

static const struct rec *nth(const struct world *w, const char *name, int n)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->spans[i].name, name) && n-- == 0)
			return &w->spans[i];
	return NULL;
}

static const char *parent_name(const struct world *w, const struct rec *r)
{
	const struct rec *p = r ? by_id(w, r->parent) : NULL;

	return p ? p->name : "";
}

static bool attr_true(const struct rec *r, const char *key)
{
	return r && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r->attrs, key));
}

/* A validation pass under no_grad() + autocast: autocast's weight cache switches grad on and
 * back in C++ inside each forward. The guards decide nothing: each batch keeps its forward. */
static void test_cpp_guards_inside_validation(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		train_epoch(&w, 0, 3);
		feed(&w, TI_GRAD_MODE, NULL, 0, 0);	/* with torch.no_grad(): */
		for (int i = 0; i < 2; i++) {
			data(&w, 0);
			feed(&w, TI_GRAD_MODE, NULL, GUARD, 1);
			feed(&w, TI_GRAD_MODE, NULL, GUARD, 0);
			w.ts += 3000;
		}
		data(&w, 0);
		feed(&w, TI_GRAD_MODE, NULL, 0, 1);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count_mode(&w, "eval", "epoch"), 4, "an eval forward per validation batch");
	check_well_formed(&w);
	world_free(&w);
}

/* A compiled forward (AOTAutograd's Function.apply) switches grad off and on in C++ inside
 * every training forward: each batch stays a training batch with its forward. */
static void test_cpp_guards_inside_training(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < 3; i++) {
			data(&w, 0);
			feed(&w, TI_GRAD_MODE, NULL, 0, 1);	/* the runtime wrapper's enable_grad */
			feed(&w, TI_GRAD_MODE, NULL, GUARD, 0);
			feed(&w, TI_GRAD_MODE, NULL, GUARD, 1);
			backward(&w);
			optimizer(&w);
		}
		data(&w, 0);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count_mode(&w, "train", "step"), 6, "a forward per step");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
	check_well_formed(&w);
	world_free(&w);
}

/* Non-reentrant checkpointing: its pack hooks run `with torch.no_grad()` in Python during the
 * forward (grad already off in C++: enter and exit both say off). The backward that follows
 * makes the batch a training batch. */
static void test_nograd_regions_inside_forward(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < 3; i++) {
			data(&w, 0);
			for (int k = 0; k < 4; k++) {
				feed(&w, TI_GRAD_MODE, NULL, GUARD, 0);
				feed(&w, TI_GRAD_MODE, NULL, 0, 0);
				feed(&w, TI_GRAD_MODE, NULL, 0, 0);
				feed(&w, TI_GRAD_MODE, NULL, GUARD, 1);
			}
			backward(&w);
			optimizer(&w);
		}
		data(&w, 0);
		feed(&w, TI_GRAD_MODE, NULL, 0, 0);	/* validation on tensors at hand */
		w.ts += 3000;
		feed(&w, TI_GRAD_MODE, NULL, 0, 1);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count_mode(&w, "train", "step"), 6, "a forward per step");
	ASSERT_EQ(count(&w, "data_load", "step"), 6, "a data_load per step");
	ASSERT_EQ(count_bool(&w, "data_load", "exhausted"), 2, "the loop's end, each epoch");
	check_well_formed(&w);
	world_free(&w);
}

/* Reentrant checkpointing seen with Python frames: in the backward, per block, enable_grad(),
 * the block's forward again, and a backward of its own (nested Engine::execute). */
static void test_recompute_inside_backward(void)
{
	struct world w;

	world_init(&w, 1000);
	w.t.frames_always = true;
	for (int i = 0; i < 3; i++) {
		data(&w, 0);
		feed(&w, TI_FORWARD_ENTER, "Net", 0, 1);
		feed(&w, TI_GRAD_MODE, NULL, 0, 0);
		feed(&w, TI_GRAD_MODE, NULL, 0, 0);
		feed(&w, TI_FORWARD_EXIT, NULL, 0, 0);
		feed(&w, TI_BACKWARD_ENTER, NULL, 0, 0);
		for (int b = 0; b < 3; b++) {
			feed(&w, TI_GRAD_MODE, NULL, 0, 1);
			feed(&w, TI_FORWARD_ENTER, "Block", 0, 1);
			feed(&w, TI_FORWARD_EXIT, NULL, 0, 0);
			feed(&w, TI_GRAD_MODE, NULL, 0, 0);
			feed(&w, TI_BACKWARD_ENTER, NULL, 0, 0);
			feed(&w, TI_BACKWARD_EXIT, NULL, 0, 0);
		}
		feed(&w, TI_BACKWARD_EXIT, NULL, 0, 0);
		optimizer(&w);
	}
	data(&w, 0);
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 3, "steps");
	ASSERT_EQ(count(&w, "backward", "step"), 3, "one backward a step: nested ones inside it");
	ASSERT_EQ(count(&w, "backward", "backward"), 0, "nested backwards make no span");
	ASSERT_EQ(count(&w, "forward", "step"), 3, "the step's forward");
	ASSERT_EQ(count(&w, "forward", "backward"), 9, "3 recomputed forwards a backward");
	ASSERT_EQ(count_bool(&w, "forward", "recompute"), 9, "marked recompute");
	ASSERT_STREQ(attr_str(nth(&w, "forward", 1), "module"), "Block", "the block's class");
	check_well_formed(&w);
	world_free(&w);
}

/* fp16 + GradScaler: the second batch's gradients hold inf, so scaler.step() skips
 * optimizer.step() and scaler.update() lowers the scale: still one step a batch. */
static void test_grad_scaler_skipped_step(void)
{
	struct world w;

	world_init(&w, 1000);
	for (int i = 0; i < 4; i++) {
		data(&w, 0);
		backward(&w);
		feed(&w, TI_GRAD_MODE, NULL, 0, 0);	/* unscale_ */
		feed(&w, TI_GRAD_MODE, NULL, 0, 1);
		if (i != 1) {
			feed(&w, TI_SCOPE_ENTER, OPT, 0, 0);
			feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
		}
		feed(&w, TI_SCALER_UPDATE, NULL, 0, 0);
		feed(&w, TI_SCOPE_ENTER, ZERO, 0, 0);
		feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	}
	data(&w, 0);
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 4, "a step per batch");
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 3, "the skipped one has none");
	ASSERT_EQ(count_bool(&w, "step", "skipped"), 1, "one step skipped");
	ASSERT_TRUE(attr_true(nth(&w, "step", 1), "skipped"), "the second");
	ASSERT_EQ(count(&w, "data_load", "step"), 4, "a data_load per step");
	check_well_formed(&w);
	world_free(&w);
}

/* torch.compile(model), default level: the first batch compiles the training graph (a cache
 * entry of frame A), the first validation batch compiles A again (grad mode is guarded). A
 * first compile's traced backward (AOTAutograd's torch.autograd.grad, before the compile is
 * known) and a gradient penalty are no backward of the step. */
static void test_compile_spans(void)
{
	const uint64_t frame = 0xabc0;
	const struct rec *c, *st;
	struct world w;

	world_init(&w, 1000);
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < 3; i++) {
			data(&w, 0);
			if (!e && !i) {
				w.ts += 50000;	/* compiling: a first compile traces the backward
						 * with autograd.grad (value 1), and switches grad
						 * in Python inside it */
				feed(&w, TI_BACKWARD_ENTER, NULL, 0x7000, 1);
				feed(&w, TI_GRAD_MODE, NULL, 0, 0);
				feed(&w, TI_GRAD_MODE, NULL, 0, 1);
				feed(&w, TI_BACKWARD_EXIT, NULL, 0, 1);
				feed(&w, TI_COMPILED, NULL, frame, 0);
			}
			if (i == 2) {	/* a gradient penalty: autograd.grad before the backward */
				feed(&w, TI_BACKWARD_ENTER, NULL, 0x7000, 1);
				feed(&w, TI_BACKWARD_EXIT, NULL, 0, 1);
			}
			backward(&w);
			optimizer(&w);
		}
		data(&w, 0);
		feed(&w, TI_GRAD_MODE, NULL, 0, 0);
		data(&w, 0);
		if (!e) {
			w.ts += 20000;
			feed(&w, TI_COMPILED, NULL, frame, 0);
		}
		data(&w, 0);
		feed(&w, TI_GRAD_MODE, NULL, 0, 1);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "compile", NULL), 2, "two compiles");
	c = nth(&w, "compile", 0);
	ASSERT_STREQ(parent_name(&w, c), "forward", "the first inside step 0's forward");
	ASSERT_FALSE(attr_true(c, "recompile"), "a first compile");
	ASSERT_STREQ(attr_str(c, "timing"), "start_inferred", "its start is the batch's load end");
	st = nth(&w, "step", 0);
	ASSERT_EQ(num(st->attrs, "compile_ns"), c->end - c->start, "the step's compile time");
	ASSERT_EQ(num(nth(&w, "step", 1)->attrs, "compile_ns"), 0, "none in step 1");
	c = nth(&w, "compile", 1);
	ASSERT_TRUE(attr_true(c, "recompile"), "the same frame again");
	ASSERT_STREQ(parent_name(&w, c), "forward", "inside the eval forward");
	ASSERT_STREQ(attr_str(by_id(&w, c->parent), "mode"), "eval", "an eval forward");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "steps");
	ASSERT_EQ(count_mode(&w, "train", "step"), 6, "a forward per step");
	ASSERT_EQ(count(&w, "backward", "step"), 6, "a backward per step: autograd.grad is none");
	check_well_formed(&w);
	world_free(&w);
}

/* With Python frames: the compiled module's forward (its own class, compiled), dynamo's
 * callback calls around the compile give its exact start; calls that compile nothing make no
 * span. */
static void test_compile_exact_with_frames(void)
{
	const struct rec *c, *f;
	uint64_t enter;
	struct world w;

	world_init(&w, 1000);
	w.t.frames_always = true;
	data(&w, 0);
	feed(&w, TI_FORWARD_ENTER, "Sequential", 1, -1);
	feed(&w, TI_COMPILE_ENTER, NULL, 0, 0);	/* a frame dynamo skips */
	feed(&w, TI_COMPILE_EXIT, NULL, 0, 0);
	feed(&w, TI_COMPILE_ENTER, NULL, 0, 0);
	enter = w.ts;
	feed(&w, TI_GRAD_MODE, NULL, 0, 0);	/* tracing's own switches */
	feed(&w, TI_GRAD_MODE, NULL, 0, 1);
	w.ts += 40000;
	feed(&w, TI_COMPILE_EXIT, NULL, 0, 0);
	feed(&w, TI_COMPILED, NULL, 0x10, 0);
	feed(&w, TI_FORWARD_EXIT, NULL, 0, 0);
	backward(&w);
	optimizer(&w);
	data(&w, 0);
	collect(&w, true);
	ASSERT_EQ(count(&w, "compile", "forward"), 1, "one compile, in the forward");
	c = nth(&w, "compile", 0);
	ASSERT_EQ(c->start, enter, "begins with the callback's call");
	ASSERT_TRUE(attr_str(c, "timing") == NULL, "exact");
	f = nth(&w, "forward", 0);
	ASSERT_STREQ(attr_str(f, "module"), "Sequential", "the wrapped module's class");
	ASSERT_TRUE(attr_true(f, "compiled"), "compiled");
	ASSERT_EQ(count(&w, "step", "epoch"), 1, "one step");
	check_well_formed(&w);
	world_free(&w);
}

/* torch 2.6 names its compiles: `_compile.compile_inner (dynamo_timed)` around one, the
 * backward graph's inside the first backward. AOTAutograd traces the model's backward and
 * switches grad inside the compile: none of it is the job's. */
static void test_compile_scopes_torch26(void)
{
	const struct rec *c;
	struct world w;

	world_init(&w, 1000);
	data(&w, 0);
	feed(&w, TI_SCOPE_ENTER, "_compile.compile_inner (dynamo_timed)", 0, 0);
	feed(&w, TI_SCOPE_ENTER, "OutputGraph.call_user_compiler (dynamo_timed)", 0, 0);
	feed(&w, TI_BACKWARD_ENTER, NULL, 0, 0);
	feed(&w, TI_BACKWARD_EXIT, NULL, 0, 0);
	feed(&w, TI_GRAD_MODE, NULL, 0, 0);
	feed(&w, TI_GRAD_MODE, NULL, 0, 1);
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	feed(&w, TI_BACKWARD_ENTER, NULL, 0, 0);
	feed(&w, TI_SCOPE_ENTER, "backward._backward_impl (dynamo_timed)", 0, 0);
	feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
	feed(&w, TI_BACKWARD_EXIT, NULL, 0, 0);
	optimizer(&w);
	data(&w, 0);
	backward(&w);
	optimizer(&w);
	data(&w, 0);
	collect(&w, true);
	ASSERT_EQ(count(&w, "step", "epoch"), 2, "steps");
	ASSERT_EQ(count(&w, "backward", "step"), 2, "the traced backward is no backward");
	ASSERT_EQ(count(&w, "compile", "forward"), 1, "the frame's compile, in the forward");
	ASSERT_EQ(count(&w, "compile", "backward"), 1, "the backward graph's, in the backward");
	c = nth(&w, "compile", 0);
	ASSERT_TRUE(cJSON_GetObjectItemCaseSensitive(c->attrs, "recompile") == NULL,
		    "recompile not told");
	ASSERT_EQ(count(&w, "OutputGraph.call_user_compiler (dynamo_timed)", NULL), 0,
		  "the compiler's own scopes make no span");
	ASSERT_EQ(count_bool(&w, "compile", "backward"), 1, "backward=true");
	check_well_formed(&w);
	world_free(&w);
}

/* A whole train step compiled, Python frames always: the model runs inside the compiled graph
 * (no module call), the optimizer step too (no scope); validation calls the plain model.
 * Steps come from the batches, each forward inferred. */
static void test_compiled_step_with_frames(void)
{
	struct world w;

	world_init(&w, 1000);
	w.t.frames_always = true;
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < 3; i++) {
			data(&w, 0);
			if (!e && !i)
				feed(&w, TI_COMPILED, NULL, 0x20, 0);
			backward(&w);
			feed(&w, TI_GRAD_MODE, NULL, 0, 0);	/* the step's no_grad */
			feed(&w, TI_GRAD_MODE, NULL, 0, 1);
			feed(&w, TI_SCOPE_ENTER, ZERO, 0, 0);
			feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
		}
		data(&w, 0);
		feed(&w, TI_GRAD_MODE, NULL, 0, 0);
		data(&w, 0);
		feed(&w, TI_FORWARD_ENTER, "Sequential", 0, 0);
		feed(&w, TI_FORWARD_EXIT, NULL, 0, 0);
		data(&w, 0);
		feed(&w, TI_GRAD_MODE, NULL, 0, 1);
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 6, "a step per batch");
	ASSERT_EQ(count(&w, "optimizer_step", "step"), 0, "no optimizer step seen");
	ASSERT_EQ(count_mode(&w, "train", "step"), 6, "a forward per step, inferred");
	ASSERT_EQ(count_mode(&w, "eval", "epoch"), 2, "the exact eval forwards");
	ASSERT_STREQ(attr_str(nth(&w, "step", 3), "boundary"), "data_load", "from the batches");
	check_well_formed(&w);
	world_free(&w);
}

/* FSDP2 without Python frames: FSDP::root_pre_forward begins the forward; FSDP's forward scopes
 * and collectives nest in it; the backward's start ends it. */
static void test_fsdp_root_forward(void)
{
	const struct rec *f;
	struct world w;

	world_init(&w, 1000);
	for (int i = 0; i < 2; i++) {
		data(&w, 0);
		feed(&w, TI_SCOPE_ENTER, "FSDP::root_pre_forward", 0, 0);
		feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
		feed(&w, TI_SCOPE_ENTER, "FSDP::pre_forward (0)", 0, 0);
		feed(&w, TI_SCOPE_ENTER, "collective_wait", 0, 0);
		feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
		feed(&w, TI_SCOPE_EXIT, NULL, 0, 0);
		backward(&w);
		optimizer(&w);
	}
	data(&w, 0);
	collect(&w, true);
	ASSERT_EQ(count(&w, "forward", "step"), 2, "a forward per step");
	f = nth(&w, "forward", 0);
	ASSERT_TRUE(attr_str(f, "timing") == NULL, "begun exactly");
	ASSERT_TRUE(attr_true(f, "end_inferred"), "ended by the backward");
	ASSERT_EQ(count(&w, "FSDP::pre_forward (0)", "forward"), 2, "FSDP's scopes inside it");
	ASSERT_EQ(count(&w, "FSDP::root_pre_forward", "forward"), 2, "its own scope too");
	ASSERT_EQ(count(&w, "collective_wait", "step"), 0, "no collective loose in the step");
	check_well_formed(&w);
	world_free(&w);
}

/* model.eval() and no no_grad(), an evaluation every 2 training batches, Python frames: the
 * modules in eval mode right after a trained batch tell an evaluation inside the epoch. */
static void test_eval_inside_epoch(void)
{
	struct world w;

	world_init(&w, 1000);
	w.t.frames_always = true;
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < 4; i++) {
			data(&w, 0);
			feed(&w, TI_FORWARD_ENTER, "Net", 0, 1);
			feed(&w, TI_FORWARD_EXIT, NULL, 0, 0);
			backward(&w);
			optimizer(&w);
			if (i % 2 == 0)
				continue;
			for (int v = 0; v < 2; v++) {
				data(&w, 0);
				feed(&w, TI_FORWARD_ENTER, "Net", 0, 0);
				feed(&w, TI_FORWARD_EXIT, NULL, 0, 0);
			}
			data(&w, 0);	/* the evaluation loop's end */
		}
		data(&w, 0);	/* the training loop's end */
	}
	collect(&w, true);
	ASSERT_EQ(count(&w, "epoch", "cirron.session"), 2, "epochs");
	ASSERT_EQ(count(&w, "step", "epoch"), 8, "steps");
	ASSERT_EQ(count_mode(&w, "eval", "epoch"), 8, "the evaluations' forwards");
	check_well_formed(&w);
	world_free(&w);
}

int main(void)
{
	RUN_TEST(test_cpp_guards_inside_validation);
	RUN_TEST(test_cpp_guards_inside_training);
	RUN_TEST(test_nograd_regions_inside_forward);
	RUN_TEST(test_recompute_inside_backward);
	RUN_TEST(test_grad_scaler_skipped_step);
	RUN_TEST(test_compile_spans);
	RUN_TEST(test_compile_exact_with_frames);
	RUN_TEST(test_compile_scopes_torch26);
	RUN_TEST(test_compiled_step_with_frames);
	RUN_TEST(test_fsdp_root_forward);
	RUN_TEST(test_eval_inside_epoch);
	return unit__done();
}
