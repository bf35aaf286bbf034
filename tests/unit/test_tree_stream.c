// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The streamed span tree (read/tree_stream.c) with a reader that records what it is handed,
// and the text view on top of it: order, completion across batches, spans open at the end,
// tops, and memory that does not grow with the stream.
#include <errno.h>
#include "read/batch.h"
#include "common/sbuf.h"
#include "trace/text_tree.h"
#include "read/tree_stream.h"
#include "unit.h"

#define SID "vm-1-2"

/* A batch of the spans in body (JSON array members), seq as named. */
static bool parse(struct batch *b, int seq, const char *body)
{
	char name[64], *text = NULL;
	char why[256];
	bool ok;

	snprintf(name, sizeof(name), SID ".%08d.json", seq);
	if (asprintf(&text, "{\"format\":\"cirron-spool/1\",\"session_id\":\"" SID "\",\"pid\":1,"
		     "\"rank\":0,\"local_rank\":0,\"world_size\":1,\"host\":\"vm\",\"seq\":%d,"
		     "\"written_ns\":%d,\"final\":false,\"health\":{},\"spans\":[%s]}", seq,
		     1000000 + seq, body) < 0)
		return false;
	ok = ASSERT_OK(batch__parse(b, name, text, why, sizeof(why)), why);
	free(text);
	return ok;
}

#define SPAN(id, parent, name, start, end, status) "{\"span_id\":" #id ",\"parent_id\":" \
	#parent ",\"name\":\"" name "\",\"index\":null,\"start_ns\":" #start ",\"end_ns\":" \
	#end ",\"duration_ns\":" #end ",\"status\":\"" status "\",\"attrs\":{},\"marks\":[]}"
#define OK(id, parent, name, start, dur) SPAN(id, parent, name, start, dur, "ok")
#define OPEN(id, parent, name, start) "{\"span_id\":" #id ",\"parent_id\":" #parent \
	",\"name\":\"" name "\",\"index\":null,\"start_ns\":" #start ",\"end_ns\":null," \
	"\"status\":\"open\",\"attrs\":{},\"marks\":[]}"

/* A reader that writes "name(kid kid ...)" of each node it renders, and hands the root's
 * kids over as they come. */
struct rec {
	struct sbuf out;
	size_t completed, open_at_end;
};

static void rec_complete(struct tstream *t, struct tnode *n)
{
	struct rec *r = tstream__ctx(t);

	r->completed++;
	r->open_at_end += !!(n->flags & TN_OPEN_AT_END);
}

static void rec_render(struct tstream *t, struct tnode *n)
{
	struct sbuf b = {};

	sbuf__puts(&b, n->sp.name);
	if (n->first < n->nkids) {
		sbuf__puts(&b, "(");
		for (size_t i = n->first; i < n->nkids; i++) {
			sbuf__puts(&b, i > n->first ? " " : "");
			sbuf__puts(&b, n->kids[i]->out ? n->kids[i]->out : "?");
		}
		sbuf__puts(&b, ")");
	}
	while (n->first < n->nkids)
		tstream__drop(t, n->kids[n->first]);
	n->out = sbuf__take(&b);
}

static void rec_put(struct rec *r, const struct tnode *n)
{
	sbuf__puts(&r->out, r->out.n ? " " : "");
	sbuf__puts(&r->out, n->out ? n->out : "?");
}

static void rec_flush(struct tstream *t, struct tnode *s, bool finishing)
{
	struct rec *r = tstream__ctx(t);

	while (s->first < s->nkids && (s->kids[s->first]->flags & TN_COMPLETE) &&
	       (finishing || s->nkids - s->first > TSTREAM_SETTLE)) {
		rec_put(r, s->kids[s->first]);
		tstream__drop(t, s->kids[s->first]);
	}
}

static void rec_top(struct tstream *t, struct tnode *n)
{
	struct rec *r = tstream__ctx(t);

	sbuf__puts(&r->out, " | ");
	sbuf__puts(&r->out, n->out ? n->out : "?");
}

static void rec_free(struct tnode *n)
{
	free(n->out);
	n->out = NULL;
}

static const struct tstream_ops rec_ops = {
	.complete = rec_complete,
	.render = rec_render,
	.flush = rec_flush,
	.top = rec_top,
	.free_out = rec_free,
};

static const struct span root = { .id = 1, .name = "root", .index = -1, .status = SPAN_OPEN };

/* Feeds the batches (NULL-terminated bodies) to a recording stream; returns what it wrote. */
static char *stream(struct rec *r, const char *const *bodies)
{
	struct tstream *t = tstream__new(&rec_ops, r);
	struct span rt = root;

	*r = (struct rec){};
	rt.attrs = cJSON_CreateObject();
	rt.marks = cJSON_CreateArray();
	if (!ASSERT_OK_PTR(t, "tstream__new") || !ASSERT_OK(tstream__set_root(t, &rt), "root"))
		goto out;
	for (int i = 0; bodies[i]; i++) {
		struct batch b;

		if (!parse(&b, i, bodies[i]))
			break;
		ASSERT_OK(tstream__batch(t, &b), "batch");
		batch__free(&b);
	}
	ASSERT_OK(tstream__finish(t), "finish");
out:
	tstream__free(t);
	cJSON_Delete(rt.attrs);
	cJSON_Delete(rt.marks);
	return sbuf__take(&r->out);
}

/* Children come in the order they were made; they are shown by start (an inferred forward
 * is made after the backward that follows it). */
static void kids_by_start(void)
{
	static const char *const bodies[] = {
		OPEN(2, 1, "step", 100) "," OK(3, 2, "data_load", 100, 10) "," OK(5, 2, "backward", 130, 10) ","
		OK(4, 2, "forward", 110, 20),
		OK(2, 1, "step", 100, 50),
		NULL,
	};
	struct rec r;
	char *out = stream(&r, bodies);

	ASSERT_STREQ(out, "step(data_load forward backward)", "by start");
	ASSERT_EQ(r.completed, 4, "each completes once");
	free(out);
}

/* A span open in one batch, its kids in the next, its end in a third: complete only then;
 * spans never ended complete at the end, as open. */
static void across_batches_and_open_at_end(void)
{
	static const char *const bodies[] = {
		OPEN(2, 1, "epoch", 10),
		OPEN(2, 1, "epoch", 10) "," OK(3, 2, "step", 20, 5) "," OPEN(4, 2, "step", 30),
		OK(4, 2, "step", 30, 5) "," OK(2, 1, "epoch", 10, 40) "," OPEN(5, 1, "epoch", 60) ","
		OPEN(6, 5, "step", 61),
		NULL,
	};
	struct rec r;
	char *out = stream(&r, bodies);

	ASSERT_STREQ(out, "epoch(step step) epoch(step)", "the tree");
	ASSERT_EQ(r.open_at_end, 2, "epoch[1] and its step were open at the end");
	free(out);
}

/* A span whose parent is in no batch is a top, handed over at the end, by start; a loop is
 * cut where it closes. */
static void tops_and_loops(void)
{
	static const char *const bodies[] = {
		OK(9, 7, "orphan", 50, 1) "," OK(10, 9, "kid", 50, 1) "," OK(3, 4, "a", 5, 1) ","
		OK(4, 3, "b", 6, 1) "," OK(2, 1, "epoch", 1, 1),
		NULL,
	};
	struct rec r;
	char *out = stream(&r, bodies);

	ASSERT_STREQ(out, "epoch | b(a) | orphan(kid)", "root's tree, then tops by start");
	free(out);
}

/* 200k steps of 4 phases in 1000 batches: the text view keeps a run's head and tail only, so
 * the nodes held at once stay well under one batch's spans, whatever the length. */
static void text_memory_bounded(void)
{
	struct text_tree tt = {};
	struct tstream *t;
	struct span rt = root;
	char *printed = NULL;
	size_t plen;
	long id = 3;

	tt.out = open_memstream(&printed, &plen);
	t = tstream__new(&text_tree__ops, &tt);
	rt.attrs = cJSON_CreateObject();
	rt.marks = cJSON_CreateArray();
	if (!ASSERT_OK_PTR(t, "tstream__new") || !ASSERT_OK(tstream__set_root(t, &rt), "root"))
		return;
	for (int k = 0; k < 1000; k++) {
		struct sbuf body = {};
		struct batch b;

		sbuf__printf(&body, "{\"span_id\":2,\"parent_id\":1,\"name\":\"epoch\",\"index\":0,"
			     "\"start_ns\":1,\"end_ns\":%s,\"duration_ns\":%s,\"status\":\"%s\","
			     "\"attrs\":{},\"marks\":[]}", k == 999 ? "100000000" : "null",
			     k == 999 ? "100000000" : "null", k == 999 ? "ok" : "open");
		for (int i = 0; i < 200; i++) {
			long step = id++, s0 = 1000 + (long)(k * 200 + i) * 100;

			sbuf__printf(&body, ",{\"span_id\":%ld,\"parent_id\":2,\"name\":\"step\","
				     "\"index\":%d,\"start_ns\":%ld,\"end_ns\":%ld,\"duration_ns\":80,"
				     "\"status\":\"ok\",\"attrs\":{},\"marks\":[]}", step, k * 200 + i,
				     s0, s0 + 80);
			for (int p = 0; p < 4; p++)
				sbuf__printf(&body, ",{\"span_id\":%ld,\"parent_id\":%ld,\"name\":\"%s\","
					     "\"index\":null,\"start_ns\":%ld,\"end_ns\":%ld,"
					     "\"duration_ns\":20,\"status\":\"ok\",\"attrs\":{},"
					     "\"marks\":[]}", id++, step, (const char *[]){ "data_load",
					     "forward", "backward", "optimizer_step" }[p], s0 + p * 20,
					     s0 + p * 20 + 20);
		}
		if (!parse(&b, k, body.p))
			break;
		ASSERT_OK(tstream__batch(t, &b), "batch");
		batch__free(&b);
		sbuf__free(&body);
	}
	ASSERT_OK(tstream__finish(t), "finish");
	ASSERT_LT(tstream__peak(t), 2000, "nodes held at once (a batch has 1001)");
	tstream__free(t);
	fclose(tt.out);
	ASSERT_HAS_SUBSTR(printed, "  epoch[0] - 100.0ms\n    steps: 200000, time p50 ~80ns p90 ~80ns "
			  "p99 ~80ns max 80ns; data_load 25.0% of step time\n    step[0] - 80ns\n",
			  "the epoch summed up (past 65536 steps, from a histogram: ~)");
	ASSERT_HAS_SUBSTR(printed, "    ... 199995 more step spans ...\n    step[199998]", "elided");
	free(printed);
	text_tree__free(&tt);
	cJSON_Delete(rt.attrs);
	cJSON_Delete(rt.marks);
}

int main(void)
{
	RUN_TEST(kids_by_start);
	RUN_TEST(across_batches_and_open_at_end);
	RUN_TEST(tops_and_loops);
	RUN_TEST(text_memory_bounded);
	return unit__done();
}
