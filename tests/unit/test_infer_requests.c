// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Requests inside one grad-off region (issue 44): a serving loop that opens one
// inference_mode or no_grad block around many requests gets a request per prefill, told by
// the new tokens a model call embeds (TI_MODEL_TOKENS: at::embedding's token ids), its tokens
// exact. Fed by hand and from recorded runs (tests/unit/data/requests/*.log, ITREE lines of
// tests/workloads/serving.py under `run` with CIRRON_DEBUG_TREE=1: 4 requests of a 10-token
// prompt and 12 tokens, 100 ms apart):
// - one-region-inference-mode-off: one inference_mode block, the 2.13 wheel, default level;
// - one-region-no-grad-host-off: one no_grad block, Debian's 1.13, default level;
// - one-region-gpt2-always: transformers' GPT-2 in one inference_mode block, the 2.13 wheel,
//   --python-frames always;
// - each-region-no-grad-off: a no_grad block per request (as before: a request per region).
#include <stdio.h>
#include "infer/infer_tree.h"
#include "tree_replay.h"

static const char *const kinds[] = {
	[TI_GRAD_MODE] = "GRAD", [TI_FORWARD_ENTER] = "FWD+", [TI_FORWARD_EXIT] = "FWD-",
	[TI_INFERENCE_MODE] = "INFER", [TI_TOKEN_PICK] = "PICK", [TI_MODEL_TOKENS] = "TOKENS",
	[TI_BACKWARD_ENTER] = "BWD+", [TI_BACKWARD_EXIT] = "BWD-", [TI_SCOPE_ENTER] = "SCOPE+",
	[TI_SCOPE_EXIT] = "SCOPE-",
};

struct iworld {
	struct world w;
	struct infer_tree it;
};

static void to_training(void *ctx, const struct tree_event *ev)
{
	torch_tree__feed(ctx, ev);
}

static void route(struct iworld *iw, const struct tree_event *ev)
{
	if (!infer_tree__feed(&iw->it, ev, to_training, &iw->w.t))
		torch_tree__feed(&iw->w.t, ev);
}

static void ifeed(struct iworld *iw, enum tree_input kind, const char *name, int value)
{
	struct tree_event ev = { .kind = kind, .ts_ns = (iw->w.ts += 1000), .tid = 1,
				 .name = name, .value = value };

	route(iw, &ev);
}

static void iworld_init(struct iworld *iw, bool frames)
{
	world_init(&iw->w, 1000);
	infer_tree__init(&iw->it, iw->w.s);
	iw->it.frames = frames;
	iw->w.t.frames_always = frames;
}

static void iworld_collect(struct iworld *iw)
{
	infer_tree__finish(&iw->it, iw->w.ts);
	collect(&iw->w, true);
	infer_tree__free(&iw->it);
}

/* One model call over n new tokens (two embeddings: tokens and positions), then its pick. */
static void model_step(struct iworld *iw, int n, bool frames)
{
	if (frames)
		ifeed(iw, TI_FORWARD_ENTER, "TinyLM", 0);
	ifeed(iw, TI_MODEL_TOKENS, NULL, n);
	ifeed(iw, TI_MODEL_TOKENS, NULL, n);
	iw->w.ts += 5000;
	if (frames)
		ifeed(iw, TI_FORWARD_EXIT, NULL, 0);
	ifeed(iw, TI_TOKEN_PICK, "argmax", 0);
}

static void serve(struct iworld *iw, int requests, int tokens, bool frames)
{
	for (int r = 0; r < requests; r++) {
		iw->w.ts += 100000;	/* the pause between requests */
		model_step(iw, 10, frames);
		for (int k = 1; k < tokens; k++)
			model_step(iw, 1, frames);
	}
}

static const struct rec *nth(const struct world *w, const char *name, int k)
{
	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->spans[i].name, name) && !k--)
			return &w->spans[i];
	return NULL;
}

static const char *str_attr(const struct rec *r, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->attrs, key);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* requests requests of tokens tokens each, every one begun by its prefill. */
static void check_requests(const struct world *w, int requests, int tokens, bool split)
{
	ASSERT_EQ(count(w, "request", "cirron.session"), requests, "a request per prefill");
	ASSERT_EQ(count(w, "prefill", "request"), requests, "a prefill each");
	ASSERT_EQ(count(w, "decode", "request"), requests * (tokens - 1), "decode steps");
	for (int i = 0; i < requests; i++) {
		const struct rec *r = nth(w, "request", i), *next = nth(w, "request", i + 1);

		if (!ASSERT_OK_PTR(r, "request"))
			return;
		ASSERT_EQ(num(r->attrs, "tokens_per_sequence"), tokens, "tokens exact");
		ASSERT_EQ(num(r->attrs, "token_picks"), tokens, "picks");
		ASSERT_EQ(num(r->attrs, "prefill_tokens"), 10, "the prompt's tokens");
		if (split)
			ASSERT_STREQ(str_attr(r, "begun_by"), "prefill", "begun by its prefill");
		if (next)
			ASSERT_LE(r->end, next->start, "requests do not overlap");
	}
	check_well_formed(w);
}

static void test_one_inference_mode_region(void)
{
	struct iworld iw;

	iworld_init(&iw, false);
	ifeed(&iw, TI_INFERENCE_MODE, NULL, 1);
	serve(&iw, 4, 12, false);
	iw.w.ts += 100000;
	ifeed(&iw, TI_INFERENCE_MODE, NULL, 0);
	iworld_collect(&iw);
	check_requests(&iw.w, 4, 12, true);
	/* the first begins at its prefill, not at the region's start; the last ends with its
	 * last token, not at the region's end */
	ASSERT_EQ(nth(&iw.w, "request", 0)->start, nth(&iw.w, "prefill", 0)->start, "first start");
	ASSERT_EQ(nth(&iw.w, "request", 3)->end, nth(&iw.w, "decode", 43)->end, "last end");
	world_free(&iw.w);
}

static void test_one_no_grad_region_with_frames(void)
{
	struct iworld iw;

	iworld_init(&iw, true);
	ifeed(&iw, TI_GRAD_MODE, NULL, 0);
	serve(&iw, 3, 5, true);
	ifeed(&iw, TI_GRAD_MODE, NULL, 1);
	iworld_collect(&iw);
	check_requests(&iw.w, 3, 5, true);
	ASSERT_EQ(num(nth(&iw.w, "request", 1)->attrs, "forwards"), 5, "its forwards");
	world_free(&iw.w);
}

/* A region per request: as before, the region is the request (no begun_by). */
static void test_region_per_request(void)
{
	struct iworld iw;

	iworld_init(&iw, false);
	for (int r = 0; r < 3; r++) {
		ifeed(&iw, TI_GRAD_MODE, NULL, 0);
		serve(&iw, 1, 4, false);
		ifeed(&iw, TI_GRAD_MODE, NULL, 1);
	}
	iworld_collect(&iw);
	check_requests(&iw.w, 3, 4, false);
	ASSERT_STREQ(str_attr(nth(&iw.w, "request", 0), "begun_by"), "", "no begun_by");
	world_free(&iw.w);
}

/* A prompt prefilled in chunks (no token between them) is one request. */
static void test_chunked_prefill_is_one_request(void)
{
	struct iworld iw;

	iworld_init(&iw, false);
	ifeed(&iw, TI_INFERENCE_MODE, NULL, 1);
	for (int r = 0; r < 2; r++) {
		ifeed(&iw, TI_MODEL_TOKENS, NULL, 10);	/* first chunk, no pick */
		model_step(&iw, 10, false);		/* second chunk and its token */
		for (int k = 1; k < 3; k++)
			model_step(&iw, 1, false);
	}
	ifeed(&iw, TI_INFERENCE_MODE, NULL, 0);
	iworld_collect(&iw);
	ASSERT_EQ(count(&iw.w, "request", "cirron.session"), 2, "two requests");
	ASSERT_EQ(num(nth(&iw.w, "request", 0)->attrs, "tokens_per_sequence"), 3, "tokens");
	world_free(&iw.w);
}

/* Recorded runs: "ITREE pid=P tid=T ts=NS KIND name=NAME obj=HEX val=V". */
static bool replay_requests(struct iworld *iw, const char *file, bool frames)
{
	char line[512], name[256];
	FILE *f = fopen(file, "re");

	if (!ASSERT_OK_PTR(f, file))
		return false;
	iworld_init(iw, frames);
	while (fgets(line, sizeof(line), f)) {
		struct tree_event ev = { 0 };
		unsigned long long ts, obj;
		char kind[16];
		unsigned int tid;

		if (sscanf(line, "ITREE pid=%*d tid=%u ts=%llu %15s name=%255s obj=%llx val=%d", &tid,
			   &ts, kind, name, &obj, &ev.value) != 6)
			continue;
		ev.kind = (enum tree_input)-1;
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++)
			if (kinds[k] && !strcmp(kind, kinds[k]))
				ev.kind = (enum tree_input)k;
		if ((int)ev.kind < 0)
			continue;
		ev.tid = tid;
		ev.ts_ns = ts;
		ev.obj = obj;
		ev.name = strcmp(name, "-") ? name : NULL;
		iw->w.ts = ts;
		route(iw, &ev);
	}
	fclose(f);
	iworld_collect(iw);
	return true;
}

static void test_recorded(void)
{
	static const struct { const char *log; bool frames, split; } runs[] = {
		{ "one-region-inference-mode-off.log", false, true },
		{ "one-region-no-grad-host-off.log", false, true },
		{ "one-region-gpt2-always.log", true, true },
		{ "each-region-no-grad-off.log", false, false },
	};

	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++) {
		char path[256];
		struct iworld iw;

		snprintf(path, sizeof(path), "tests/unit/data/requests/%s", runs[i].log);
		if (!replay_requests(&iw, path, runs[i].frames))
			continue;
		fprintf(stderr, "  %s\n", runs[i].log);
		check_requests(&iw.w, 4, 12, runs[i].split);
		world_free(&iw.w);
	}
}

int main(void)
{
	RUN_TEST(test_one_inference_mode_region);
	RUN_TEST(test_one_no_grad_region_with_frames);
	RUN_TEST(test_region_per_request);
	RUN_TEST(test_chunked_prefill_is_one_request);
	RUN_TEST(test_recorded);
	return unit__done();
}
