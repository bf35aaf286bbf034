// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The inference tree (infer/infer_tree.h, issue 36) beside the training tree, events routed
// as observe/events.c routes them: requests, prefill and decode, regions that are no request,
// and a process that trains.
#include "infer/infer_tree.h"
#include "torch_tree_world.h"

struct iworld {
	struct world w;
	struct infer_tree it;
};

static void to_training(void *ctx, const struct tree_event *ev)
{
	torch_tree__feed(ctx, ev);
}

static void iworld_init(struct iworld *iw)
{
	world_init(&iw->w, 1000);
	infer_tree__init(&iw->it, iw->w.s);
	iw->it.frames = true;
}

static void tfeed(struct iworld *iw, uint32_t tid, enum tree_input kind, const char *name,
		  uint64_t obj, int value)
{
	struct tree_event ev = { .kind = kind, .ts_ns = (iw->w.ts += 1000), .tid = tid,
				 .name = name, .obj = obj, .value = value };

	if (!infer_tree__feed(&iw->it, &ev, to_training, &iw->w.t))
		torch_tree__feed(&iw->w.t, &ev);
}

static void rfeed(struct iworld *iw, enum tree_input kind, const char *name, uint64_t obj,
		  int value)
{
	tfeed(iw, 1, kind, name, obj, value);
}

static void call(struct iworld *iw, const char *cls)
{
	rfeed(iw, TI_FORWARD_ENTER, cls, 0, 0);
	iw->w.ts += 5000;	/* the model runs */
	rfeed(iw, TI_FORWARD_EXIT, NULL, 0, 0);
}

/* HF generate: @torch.no_grad(), the prefill as model(...), the decode steps through the
 * bound __call__ (the inner model, then the head). */
static void generate(struct iworld *iw, int tokens)
{
	rfeed(iw, TI_GRAD_MODE, NULL, 0, 0);
	call(iw, "GPT2LMHeadModel");
	for (int i = 1; i < tokens; i++) {
		call(iw, "GPT2Model");
		call(iw, "Linear");
	}
	rfeed(iw, TI_GRAD_MODE, NULL, 0, 1);
}

static void iworld_collect(struct iworld *iw)
{
	infer_tree__finish(&iw->it, iw->w.ts);
	collect(&iw->w, true);
}

static const struct rec *named(const struct world *w, const char *name, int nth)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->spans[i].name, name) && !nth--)
			return &w->spans[i];
	return NULL;
}

static void test_generate_requests(void)
{
	struct iworld iw;
	const struct rec *r;

	iworld_init(&iw);
	for (int k = 0; k < 3; k++)	/* nn.init's regions while the model is built */
		rfeed(&iw, TI_GRAD_MODE, NULL, 0, !(k & 1) ? 0 : 1);
	rfeed(&iw, TI_GRAD_MODE, NULL, 0, 1);
	generate(&iw, 6);
	generate(&iw, 3);
	iworld_collect(&iw);
	ASSERT_EQ(count(&iw.w, "request", "cirron.session"), 2, "a request per generate call");
	ASSERT_EQ(count(&iw.w, "prefill", "request"), 2, "a prefill each");
	ASSERT_EQ(count(&iw.w, "decode", "request"), 5 + 2, "decode steps");
	r = named(&iw.w, "request", 0);
	ASSERT_TRUE(r != NULL, "request[0]");
	if (r) {
		ASSERT_EQ(num(r->attrs, "forwards"), 6, "forwards");
		ASSERT_EQ(num(r->attrs, "model_calls"), 11, "model calls");
		ASSERT_EQ(num(r->attrs, "decode_steps"), 5, "decode_steps");
		ASSERT_EQ(num(r->attrs, "tokens_per_sequence"), 6, "tokens");
		ASSERT_TRUE(num(r->attrs, "ttft_ns") > 0 && num(r->attrs, "ttft_ns") < r->end - r->start,
			    "ttft inside the request");
	}
	ASSERT_EQ(count(&iw.w, "forward", NULL), 0, "no loose forward");
	check_well_formed(&iw.w);
	world_free(&iw.w);
	infer_tree__free(&iw.it);
}

/* A serving call under inference_mode: one forward; a region without a model call: none. */
static void test_inference_mode_and_empty_regions(void)
{
	struct iworld iw;
	const struct rec *r;

	iworld_init(&iw);
	rfeed(&iw, TI_INFERENCE_MODE, NULL, 0, 1);
	call(&iw, "Net");
	rfeed(&iw, TI_INFERENCE_MODE, NULL, 0, 0);
	rfeed(&iw, TI_INFERENCE_MODE, NULL, 0, 1);
	rfeed(&iw, TI_INFERENCE_MODE, NULL, 0, 0);
	iworld_collect(&iw);
	ASSERT_EQ(count(&iw.w, "request", "cirron.session"), 1, "one request");
	ASSERT_EQ(count(&iw.w, "forward", "request"), 1, "its forward");
	r = named(&iw.w, "request", 0);
	ASSERT_TRUE(r && !strcmp(attr_str(r, "region"), "inference_mode"), "region");
	check_well_formed(&iw.w);
	world_free(&iw.w);
	infer_tree__free(&iw.it);
}

/* The default level (no Python frames): generate's tokens seen as its argmax or multinomial
 * calls bound its steps; a no_grad region with no pick is the job's own, an inference_mode
 * region a request alone; picks on another thread or outside a region count for nothing. */
static void test_token_picks(void)
{
	struct iworld iw;
	const struct rec *r, *p, *d;

	iworld_init(&iw);
	iw.it.frames = false;
	rfeed(&iw, TI_GRAD_MODE, NULL, 0, 0);	/* nn.init */
	rfeed(&iw, TI_GRAD_MODE, NULL, 0, 1);
	rfeed(&iw, TI_TOKEN_PICK, "argmax", 0, 0);	/* an accuracy outside any region */
	rfeed(&iw, TI_GRAD_MODE, NULL, 0, 0);	/* generate, sampling 4 tokens */
	iw.w.ts += 50000;	/* its prefill */
	for (int i = 0; i < 4; i++) {
		rfeed(&iw, TI_TOKEN_PICK, "multinomial", 0, 0);
		tfeed(&iw, 2, TI_TOKEN_PICK, "argmax", 0, 0);	/* another thread's */
		iw.w.ts += 10000;
	}
	rfeed(&iw, TI_GRAD_MODE, NULL, 0, 1);
	rfeed(&iw, TI_INFERENCE_MODE, NULL, 0, 1);	/* a serving call: no pick */
	iw.w.ts += 3000;
	rfeed(&iw, TI_INFERENCE_MODE, NULL, 0, 0);
	iworld_collect(&iw);
	ASSERT_EQ(count(&iw.w, "request", "cirron.session"), 2, "generate and the serving call");
	ASSERT_EQ(count(&iw.w, "prefill", "request"), 1, "a prefill");
	ASSERT_EQ(count(&iw.w, "decode", "request"), 3, "a decode step between two picks");
	r = named(&iw.w, "request", 0);
	p = named(&iw.w, "prefill", 0);
	d = named(&iw.w, "decode", 2);
	if (ASSERT_TRUE(r && p && d, "spans")) {
		ASSERT_EQ(num(r->attrs, "token_picks"), 4, "picks of its thread");
		ASSERT_EQ(num(r->attrs, "tokens_per_sequence"), 4, "tokens");
		ASSERT_STREQ(attr_str(r, "tokens_source"), "token_picks", "exact");
		ASSERT_STREQ(attr_str(r, "steps_source"), "token_picks", "steps");
		ASSERT_STREQ(attr_str(r, "token_pick_op"), "multinomial", "op");
		ASSERT_EQ(num(r->attrs, "decode_steps"), 3, "decode steps");
		ASSERT_TRUE(cJSON_GetObjectItemCaseSensitive(r->attrs, "forwards") == NULL,
			    "no forwards without frames");
		ASSERT_EQ(p->start, r->start, "prefill from the request's start");
		ASSERT_EQ(num(r->attrs, "ttft_ns"), p->end - p->start, "ttft: to the first pick");
		ASSERT_EQ(d->end - d->start, 12000, "a decode step: one pick to the next");
		ASSERT_TRUE(d->end < r->end, "the last pick before the region's end");
	}
	r = named(&iw.w, "request", 1);
	if (ASSERT_TRUE(r != NULL, "request[1]")) {
		ASSERT_STREQ(attr_str(r, "region"), "inference_mode", "region");
		ASSERT_TRUE(cJSON_GetObjectItemCaseSensitive(r->attrs, "token_picks") == NULL,
			    "no picks");
	}
	ASSERT_EQ(count(&iw.w, "forward", NULL), 0, "no forward");
	check_well_formed(&iw.w);
	world_free(&iw.w);
	infer_tree__free(&iw.it);
}

/* A training job that loads a batch with grad off first (a DataLoader inside the region) and
 * trains: the region goes back to the training tree, and so does every event after it. */
static void test_training_keeps_its_tree(void)
{
	struct iworld iw;

	iworld_init(&iw);
	rfeed(&iw, TI_GRAD_MODE, NULL, 0, 0);
	rfeed(&iw, TI_SCOPE_ENTER, DATA, 9, 0);
	rfeed(&iw, TI_SCOPE_EXIT, NULL, 0, 0);
	rfeed(&iw, TI_GRAD_MODE, NULL, 0, 1);
	for (int e = 0; e < 2; e++)
		for (int i = 0; i < 3; i++) {
			rfeed(&iw, TI_SCOPE_ENTER, DATA, (uint64_t)e + 1, 0);
			rfeed(&iw, TI_SCOPE_EXIT, NULL, 0, 0);
			iw.w.ts += 5000;
			rfeed(&iw, TI_BACKWARD_ENTER, NULL, 0, 0);
			rfeed(&iw, TI_BACKWARD_EXIT, NULL, 0, 0);
			rfeed(&iw, TI_SCOPE_ENTER, OPT, 0, 0);
			rfeed(&iw, TI_SCOPE_EXIT, NULL, 0, 0);
		}
	rfeed(&iw, TI_GRAD_MODE, NULL, 0, 0);	/* evaluation after training: no request */
	call(&iw, "Net");
	rfeed(&iw, TI_GRAD_MODE, NULL, 0, 1);
	iworld_collect(&iw);
	ASSERT_EQ(count(&iw.w, "request", NULL), 0, "no request in a training job");
	ASSERT_EQ(count(&iw.w, "step", "epoch"), 6, "its steps");
	ASSERT_TRUE(iw.it.trains, "known to train");
	check_well_formed(&iw.w);
	world_free(&iw.w);
	infer_tree__free(&iw.it);
}

int main(void)
{
	RUN_TEST(test_generate_requests);
	RUN_TEST(test_inference_mode_and_empty_regions);
	RUN_TEST(test_training_keeps_its_tree);
	RUN_TEST(test_token_picks);
	return unit__done();
}
