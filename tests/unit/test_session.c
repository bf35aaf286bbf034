// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A session: ids, spans opened and closed in it, the batches it gives the spool (their shape
// checked against schemas/spool-batch.schema.json), its end at exit and at detach.
#include <stdint.h>
#include "tree/session.h"
#include "tree/span.h"
#include "unit.h"

#define T0 1795423440131994182ull	/* a wall-clock ns value a double cannot hold */

static const struct session_ids ids = {
	.pid = 4242, .start_ticks = 987654, .rank = 1, .local_rank = 0, .world_size = 2,
	.host = "node-a.example",
};

struct closed_log {
	int n;
	char names[8][32];
	enum span_status st[8];
};

static void on_close(const struct session *s, const struct span *sp, void *ctx)
{
	struct closed_log *l = ctx;

	if (l->n < 8) {
		snprintf(l->names[l->n], sizeof(l->names[0]), "%s", sp->name);
		l->st[l->n] = sp->status;
	}
	l->n++;
}

static bool in_live_list(const struct session *s, uint64_t id)
{
	for (const struct span *sp = s->live; sp; sp = sp->next)
		if (sp->id == id)
			return true;
	return false;
}

static const cJSON *item(const cJSON *o, const char *key)
{
	return cJSON_GetObjectItemCaseSensitive(o, key);
}

/* Checks one span of a batch against schemas/spool-batch.schema.json. */
static bool check_span_shape(const cJSON *sp)
{
	static const char *const keys[] = { "span_id", "parent_id", "name", "index", "start_ns",
					     "end_ns", "status", "attrs", "marks" };
	const cJSON *st = item(sp, "status"), *end = item(sp, "end_ns");
	bool ok = true;

	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		ok &= ASSERT_OK_PTR(item(sp, keys[i]), keys[i]);
	if (!ok)
		return false;
	ok &= ASSERT_TRUE(cJSON_IsNumber(item(sp, "span_id")) &&
			  item(sp, "span_id")->valuedouble >= 1, "span_id >= 1");
	ok &= ASSERT_TRUE(cJSON_IsNull(item(sp, "parent_id")) ||
			  cJSON_IsNumber(item(sp, "parent_id")), "parent_id type");
	ok &= ASSERT_TRUE(cJSON_IsString(item(sp, "name")) && *item(sp, "name")->valuestring,
			  "name");
	ok &= ASSERT_TRUE(cJSON_IsNull(item(sp, "index")) || cJSON_IsNumber(item(sp, "index")),
			  "index type");
	ok &= ASSERT_TRUE(cJSON_IsNumber(item(sp, "start_ns")), "start_ns");
	ok &= ASSERT_TRUE(cJSON_IsObject(item(sp, "attrs")), "attrs");
	ok &= ASSERT_TRUE(cJSON_IsArray(item(sp, "marks")), "marks");
	if (!ASSERT_TRUE(cJSON_IsString(st), "status string"))
		return false;
	if (!strcmp(st->valuestring, "open")) {
		ok &= ASSERT_TRUE(cJSON_IsNull(end), "open: end_ns null");
		ok &= ASSERT_NULL(item(sp, "duration_ns"), "open: no duration_ns");
	} else {
		ok &= ASSERT_TRUE(!strcmp(st->valuestring, "ok") ||
				  !strcmp(st->valuestring, "incomplete"), "status enum");
		ok &= ASSERT_TRUE(cJSON_IsNumber(end), "closed: end_ns");
		ok &= ASSERT_TRUE(cJSON_IsNumber(item(sp, "duration_ns")), "closed: duration_ns");
	}
	return ok;
}

/*
 * Takes a batch, checks the shape a reader sees (printed, parsed back), and returns the
 * parsed copy and its text (for exact 64-bit checks). Spans must come parents first.
 */
static cJSON *take(struct session *s, bool final, uint64_t seq, char **text_out)
{
	static const char *const keys[] = { "format", "session_id", "pid", "rank", "local_rank",
					     "world_size", "host", "seq", "written_ns", "final",
					     "spans", "health" };
	cJSON *health = cJSON_CreateObject(), *b, *back, *sp;
	char *text;

	cJSON_AddNumberToObject(health, "ring_drops", 0);
	b = session__take_batch(s, health, T0 + 999, final);
	if (!ASSERT_OK_PTR(b, "batch"))
		return NULL;
	text = cJSON_PrintUnformatted(b);
	cJSON_Delete(b);
	back = cJSON_Parse(text);
	if (!ASSERT_OK_PTR(back, "batch parses back")) {
		cJSON_free(text);
		return NULL;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		ASSERT_OK_PTR(item(back, keys[i]), keys[i]);
	/* all_open: the batch holds every open span (readers take the open path from it) */
	ASSERT_EQ(cJSON_IsTrue(item(back, "all_open")), s->resend_open, "all_open when it does");
	ASSERT_EQ(cJSON_GetArraySize(back), sizeof(keys) / sizeof(keys[0]) + s->resend_open,
		  "no other keys");
	ASSERT_STREQ(cJSON_GetStringValue(item(back, "format")), "cirron-spool/1", "format");
	ASSERT_STREQ(cJSON_GetStringValue(item(back, "session_id")), s->id, "session_id");
	ASSERT_STREQ(cJSON_GetStringValue(item(back, "host")), "node-a.example", "host");
	ASSERT_TRUE(cJSON_IsNumber(item(back, "pid")) && item(back, "pid")->valueint == 4242,
		    "pid");
	ASSERT_TRUE(cJSON_IsNumber(item(back, "rank")) && item(back, "rank")->valueint == 1,
		    "rank");
	ASSERT_TRUE(cJSON_IsNumber(item(back, "local_rank")) &&
		    item(back, "local_rank")->valueint == 0, "local_rank");
	ASSERT_TRUE(cJSON_IsNumber(item(back, "world_size")) &&
		    item(back, "world_size")->valueint == 2, "world_size");
	ASSERT_TRUE(cJSON_IsNumber(item(back, "seq")) &&
		    item(back, "seq")->valuedouble == (double)seq, "seq");
	ASSERT_HAS_SUBSTR(text, "\"written_ns\":1795423440131995181", "written_ns exact");
	ASSERT_TRUE(cJSON_IsBool(item(back, "final")) &&
		    cJSON_IsTrue(item(back, "final")) == final, "final");
	ASSERT_TRUE(cJSON_IsObject(item(back, "health")) &&
		    cJSON_IsNumber(item(item(back, "health"), "ring_drops")), "health taken");
	if (!ASSERT_TRUE(cJSON_IsArray(item(back, "spans")), "spans array"))
		goto out;
	cJSON_ArrayForEach(sp, item(back, "spans")) {
		const cJSON *parent = item(sp, "parent_id"), *later;

		if (!check_span_shape(sp) || !cJSON_IsNumber(parent))
			continue;
		/* the parent came in an earlier batch or earlier in this one, never later */
		for (later = sp->next; later; later = later->next)
			if (item(later, "span_id")->valuedouble == parent->valuedouble)
				break;
		ASSERT_NULL(later, "parent after its child in a batch");
	}
out:
	if (text_out)
		*text_out = text;
	else
		cJSON_free(text);
	return back;
}

static const cJSON *span_named(const cJSON *batch, const char *name)
{
	const cJSON *sp;

	cJSON_ArrayForEach(sp, item(batch, "spans"))
		if (!strcmp(cJSON_GetStringValue(item(sp, "name")), name))
			return sp;
	return NULL;
}

static int nspans(const cJSON *batch)
{
	return cJSON_GetArraySize(item(batch, "spans"));
}

static const char *status_of(const cJSON *batch, const char *name)
{
	return cJSON_GetStringValue(item(span_named(batch, name), "status"));
}

/* A host name the kernel leaves as "(none)" still gives an id the schema and file names take. */
static void id_of_an_odd_host_name(void)
{
	struct session_ids odd = ids;
	char id[SESSION_ID_MAX];

	odd.host = "(none)";
	session__format_id(&odd, id, sizeof(id));
	ASSERT_STREQ(id, "_none_-4242-987654", "characters outside [A-Za-z0-9._-] become _");
	odd.host = "";
	session__format_id(&odd, id, sizeof(id));
	ASSERT_STREQ(id, "unknown-4242-987654", "no host name");
}

static void session_new(void)
{
	struct session *s = session__new(&ids, T0);

	if (!ASSERT_OK_PTR(s, "session__new"))
		return;
	ASSERT_STREQ(s->id, "node-a.example-4242-987654", "id = host-pid-start_ticks");
	ASSERT_STREQ(s->host, "node-a.example", "host");
	ASSERT_EQ(s->pid, 4242, "pid");
	ASSERT_EQ(s->rank, 1, "rank");
	ASSERT_EQ(s->world_size, 2, "world_size");
	ASSERT_EQ(s->seq, 0, "seq");
	ASSERT_EQ(s->depth, 0, "depth");
	ASSERT_FALSE(s->ended, "ended");
	if (ASSERT_OK_PTR(s->root, "root")) {
		ASSERT_STREQ(s->root->name, "cirron.session", "root name");
		ASSERT_EQ(s->root->id, 1, "root id");
		ASSERT_EQ(s->root->parent_id, 0, "root has no parent");
		ASSERT_EQ(s->root->index, -1, "root index");
		ASSERT_U64_EQ(s->root->start_ns, T0, "root start");
		ASSERT_EQ(s->root->end_ns, 0, "root open");
		ASSERT_EQ(s->root->status, SPAN_OPEN, "root status");
		ASSERT_TRUE(s->live == s->root && !s->root->next, "live = root");
	}
	session__free(s);
	session__free(NULL);
}

static void open_close_nesting(void)
{
	struct session *s = session__new(&ids, T0);
	struct span *epoch, *step, *fwd;

	if (!ASSERT_OK_PTR(s, "session__new"))
		return;
	epoch = session__open(s, NULL, "epoch", 0, T0 + 10);
	step = session__open(s, epoch, "step", 3, T0 + 20);
	fwd = session__open(s, step, "forward", -1, T0 + 30);
	if (!ASSERT_OK_PTR(epoch, "epoch") || !ASSERT_OK_PTR(step, "step") ||
	    !ASSERT_OK_PTR(fwd, "forward"))
		goto out;
	ASSERT_EQ(epoch->parent_id, s->root->id, "epoch under root");
	ASSERT_EQ(step->parent_id, epoch->id, "step under epoch");
	ASSERT_EQ(fwd->parent_id, step->id, "forward under step");
	ASSERT_TRUE(epoch->id != step->id && step->id != fwd->id && epoch->id != s->root->id,
		    "unique ids");
	ASSERT_STREQ(step->name, "step", "name copied");
	ASSERT_EQ(step->index, 3, "index");
	ASSERT_U64_EQ(step->start_ns, T0 + 20, "start");
	ASSERT_EQ(step->status, SPAN_OPEN, "open");
	ASSERT_EQ(s->depth, 3, "depth 3");

	session__close(s, fwd, T0 + 35, SPAN_OK);
	ASSERT_EQ(fwd->status, SPAN_OK, "closed ok");
	ASSERT_U64_EQ(fwd->end_ns, T0 + 35, "end");
	ASSERT_EQ(s->depth, 2, "depth 2");
	session__close(s, step, T0 + 40, SPAN_INCOMPLETE);
	ASSERT_EQ(step->status, SPAN_INCOMPLETE, "closed incomplete");
	ASSERT_EQ(s->depth, 1, "depth 1");
	ASSERT_EQ(s->root->status, SPAN_OPEN, "root still open");
out:
	session__free(s);
}

static void batch_order_and_streaming(void)
{
	struct session *s = session__new(&ids, T0);
	struct span *epoch, *step, *fwd, *bwd;
	uint64_t fwd_id, bwd_id;
	const cJSON *sp;
	cJSON *b;
	char *text;
	int i = 0;

	if (!ASSERT_OK_PTR(s, "session__new"))
		return;
	epoch = session__open(s, NULL, "epoch", 0, T0 + 10);
	step = session__open(s, epoch, "step", 0, T0 + 20);
	fwd = session__open(s, step, "forward", -1, T0 + 30);
	if (!ASSERT_OK_PTR(fwd, "forward"))
		goto out;
	session__close(s, fwd, T0 + 40, SPAN_OK);
	bwd = session__open(s, step, "backward", -1, T0 + 50);
	if (!ASSERT_OK_PTR(bwd, "backward"))
		goto out;
	fwd_id = fwd->id;
	bwd_id = bwd->id;

	/* batch 0: everything, oldest first */
	b = take(s, false, 0, &text);
	if (b) {
		static const char *const order[] = { "cirron.session", "epoch", "step", "forward",
						      "backward" };

		ASSERT_EQ(nspans(b), 5, "batch 0 spans");
		cJSON_ArrayForEach(sp, item(b, "spans"))
			if (i < 5)
				ASSERT_STREQ(cJSON_GetStringValue(item(sp, "name")), order[i++],
					     "oldest first");
		ASSERT_STREQ(status_of(b, "forward"), "ok", "forward closed");
		ASSERT_STREQ(status_of(b, "backward"), "open", "backward open");
		ASSERT_HAS_SUBSTR(text, "\"start_ns\":1795423440131994212,\"end_ns\":"
				  "1795423440131994222,\"duration_ns\":10", "forward exact ns");
		cJSON_free(text);
		cJSON_Delete(b);
	}
	ASSERT_EQ(s->seq, 1, "seq advanced");
	ASSERT_FALSE(in_live_list(s, fwd_id), "closed forward freed after its batch");
	ASSERT_TRUE(in_live_list(s, bwd_id), "open backward kept");

	/* batch 1: nothing changed, nothing sent (not even the root) */
	b = take(s, false, 1, NULL);
	if (b)
		ASSERT_EQ(nspans(b), 0, "batch 1 empty");
	cJSON_Delete(b);

	/* batch 2: backward closes: sent once more, closed, then freed */
	session__close(s, bwd, T0 + 60, SPAN_OK);
	b = take(s, false, 2, NULL);
	if (b) {
		ASSERT_EQ(nspans(b), 1, "batch 2 spans");
		ASSERT_STREQ(status_of(b, "backward"), "ok", "backward closed");
	}
	cJSON_Delete(b);
	ASSERT_FALSE(in_live_list(s, bwd_id), "backward freed");

	/* batch 3: a mark on the open step sends the step alone */
	span__add_mark(step, cJSON_CreateString("checkpoint"));
	b = take(s, false, 3, NULL);
	if (b) {
		ASSERT_EQ(nspans(b), 1, "batch 3 spans");
		ASSERT_EQ(cJSON_GetArraySize(item(span_named(b, "step"), "marks")), 1, "mark");
	}
	cJSON_Delete(b);

	/* batch 4: the root comes back only when touched */
	cJSON_AddNumberToObject(s->root->attrs, "cuda_launches", 12);
	b = take(s, false, 4, NULL);
	if (b)
		ASSERT_EQ(nspans(b), 0, "untouched root not resent");
	cJSON_Delete(b);
	session__touch_root(s);
	b = take(s, false, 5, NULL);
	if (b) {
		ASSERT_EQ(nspans(b), 1, "batch 5 spans");
		ASSERT_TRUE(cJSON_IsNumber(item(item(span_named(b, "cirron.session"), "attrs"),
					       "cuda_launches")), "root's fresh attrs");
	}
	cJSON_Delete(b);
	ASSERT_TRUE(in_live_list(s, s->root->id), "root never freed");
out:
	session__free(s);
}

static void open_and_closed_between_batches(void)
{
	struct session *s = session__new(&ids, T0);
	struct span *sp;
	int seen = 0;
	cJSON *b;

	if (!ASSERT_OK_PTR(s, "session__new"))
		return;
	cJSON_Delete(take(s, false, 0, NULL));
	for (int round = 0; round < 3; round++) {
		sp = session__open(s, NULL, "data_load", round, T0 + 100 * round);
		if (!ASSERT_OK_PTR(sp, "open"))
			break;
		session__close(s, sp, T0 + 100 * round + 50, SPAN_OK);
		b = take(s, false, 1 + round, NULL);
		if (b) {
			ASSERT_EQ(nspans(b), 1, "one span per batch");
			seen += span_named(b, "data_load") != NULL;
		}
		cJSON_Delete(b);
	}
	ASSERT_EQ(seen, 3, "each closed span in exactly one batch");
	ASSERT_TRUE(s->live == s->root && !s->root->next, "only the root stays");
	session__free(s);
}

/* --max-spool-mb: every batch carries the open spans, so the newest batch alone holds the
 * open path once older ones are removed; closed spans still come once. */
static void resend_open_spans(void)
{
	struct session *s = session__new(&ids, T0);
	struct span *epoch, *step;
	cJSON *b;

	if (!ASSERT_OK_PTR(s, "session__new"))
		return;
	s->resend_open = true;
	epoch = session__open(s, NULL, "epoch", 0, T0 + 10);
	step = session__open(s, epoch, "step", 0, T0 + 20);
	if (!ASSERT_OK_PTR(step, "open"))
		goto out;
	cJSON_Delete(take(s, false, 0, NULL));
	b = take(s, false, 1, NULL);	/* nothing changed */
	if (b) {
		ASSERT_EQ(nspans(b), 3, "root, epoch, step again");
		ASSERT_STREQ(status_of(b, "step"), "open", "step open");
	}
	cJSON_Delete(b);
	session__close(s, step, T0 + 30, SPAN_OK);
	b = take(s, false, 2, NULL);
	if (b) {
		ASSERT_EQ(nspans(b), 3, "the closed step once more, with the open ones");
		ASSERT_STREQ(status_of(b, "step"), "ok", "step closed");
	}
	cJSON_Delete(b);
	b = take(s, false, 3, NULL);
	if (b) {
		ASSERT_EQ(nspans(b), 2, "root and epoch");
		ASSERT_NULL(span_named(b, "step"), "a closed span is not sent again");
	}
	cJSON_Delete(b);
	s->resend_open = false;
	b = take(s, false, 4, NULL);
	if (b)
		ASSERT_EQ(nspans(b), 0, "without it, only what changed");
	cJSON_Delete(b);
out:
	session__free(s);
}

static void depth_cap(void)
{
	struct session *s = session__new(&ids, T0);
	struct span *parent = NULL, *sp, *innermost = NULL;
	const cJSON *d;
	cJSON *b;

	if (!ASSERT_OK_PTR(s, "session__new"))
		return;
	cJSON_Delete(take(s, false, 0, NULL));
	for (int i = 0; i < SESSION_MAX_DEPTH; i++) {
		sp = session__open(s, parent, "scope", i, T0 + i);
		if (!ASSERT_OK_PTR(sp, "open within the cap"))
			goto out;
		parent = innermost = sp;
	}
	ASSERT_EQ(s->depth, SESSION_MAX_DEPTH, "depth at the cap");
	ASSERT_NULL(session__open(s, parent, "scope", 64, T0 + 64), "65th open");
	ASSERT_NULL(session__open(s, NULL, "sibling", -1, T0 + 65), "66th open, at the root");
	ASSERT_EQ(s->depth, SESSION_MAX_DEPTH, "depth unchanged");
	d = item(s->root->attrs, "depth_capped");
	ASSERT_TRUE(cJSON_IsNumber(d) && d->valuedouble == 2, "depth_capped counts 2");

	/* below the cap again, opening works */
	session__close(s, innermost, T0 + 70, SPAN_OK);
	sp = session__open(s, parent, "again", -1, T0 + 71);
	ASSERT_OK_PTR(sp, "open after a close");

	session__touch_root(s);
	b = take(s, false, 1, NULL);
	if (b) {
		d = item(item(span_named(b, "cirron.session"), "attrs"), "depth_capped");
		ASSERT_TRUE(cJSON_IsNumber(d) && d->valuedouble == 2, "depth_capped in batch");
		ASSERT_EQ(nspans(b), 1 + SESSION_MAX_DEPTH + 1, "root, 64 scopes, again");
	}
	cJSON_Delete(b);
out:
	session__free(s);
}

static void close_twice(void)
{
	struct session *s = session__new(&ids, T0);
	struct closed_log log = {};
	struct span *a;

	if (!ASSERT_OK_PTR(s, "session__new"))
		return;
	s->on_close = on_close;
	s->on_close_ctx = &log;
	a = session__open(s, NULL, "epoch", 0, T0 + 1);
	if (!ASSERT_OK_PTR(a, "open"))
		goto out;
	session__close(s, a, T0 + 100, SPAN_OK);
	session__close(s, a, T0 + 200, SPAN_INCOMPLETE);
	ASSERT_EQ(a->status, SPAN_OK, "status of the first close");
	ASSERT_U64_EQ(a->end_ns, T0 + 100, "end of the first close");
	ASSERT_EQ(s->depth, 0, "depth decremented once");
	ASSERT_EQ(log.n, 1, "on_close once");
	ASSERT_STREQ(log.names[0], "epoch", "on_close span");
out:
	session__free(s);
}

static void end_at_exit(bool exit_ok)
{
	struct session *s = session__new(&ids, T0);
	struct closed_log log = {};
	struct span *epoch, *step, *fwd;
	uint64_t end = T0 + 5000;
	cJSON *b;
	char *text;

	if (!ASSERT_OK_PTR(s, "session__new"))
		return;
	s->on_close = on_close;
	s->on_close_ctx = &log;
	epoch = session__open(s, NULL, "epoch", 0, T0 + 10);
	step = session__open(s, epoch, "step", 0, T0 + 20);
	fwd = session__open(s, step, "forward", -1, T0 + 30);
	if (!ASSERT_OK_PTR(fwd, "forward"))
		goto out;
	session__close(s, fwd, T0 + 40, SPAN_OK);
	log.n = 0;

	session__end(s, end, exit_ok, exit_ok ? "exit" : "signal");
	ASSERT_TRUE(s->ended, "ended");
	ASSERT_EQ(s->depth, 0, "nothing open");
	ASSERT_EQ(step->status, SPAN_INCOMPLETE, "step incomplete");
	ASSERT_EQ(epoch->status, SPAN_INCOMPLETE, "epoch incomplete");
	ASSERT_U64_EQ(step->end_ns, end, "step end");
	ASSERT_U64_EQ(epoch->end_ns, end, "epoch end");
	ASSERT_EQ(s->root->status, exit_ok ? SPAN_OK : SPAN_INCOMPLETE, "root status");
	ASSERT_U64_EQ(s->root->end_ns, end, "root end");
	ASSERT_EQ(fwd->status, SPAN_OK, "closed span untouched");
	ASSERT_U64_EQ(fwd->end_ns, T0 + 40, "closed span's end untouched");
	ASSERT_STREQ(cJSON_GetStringValue(item(s->root->attrs, "end_cause")),
		     exit_ok ? "exit" : "signal", "end_cause");
	/* innermost first */
	if (ASSERT_EQ(log.n, 3, "on_close for step, epoch, root")) {
		ASSERT_STREQ(log.names[0], "step", "first closed");
		ASSERT_STREQ(log.names[1], "epoch", "second closed");
		ASSERT_STREQ(log.names[2], "cirron.session", "root last");
	}

	/* a second end changes nothing */
	session__end(s, end + 1, !exit_ok, "again");
	ASSERT_EQ(log.n, 3, "second end closes nothing");
	ASSERT_U64_EQ(s->root->end_ns, end, "root end kept");
	ASSERT_STREQ(cJSON_GetStringValue(item(s->root->attrs, "end_cause")),
		     exit_ok ? "exit" : "signal", "end_cause kept");

	b = take(s, true, 0, &text);
	if (b) {
		ASSERT_EQ(nspans(b), 4, "final batch spans");
		ASSERT_STREQ(status_of(b, "cirron.session"), exit_ok ? "ok" : "incomplete",
			     "root in batch");
		ASSERT_STREQ(status_of(b, "step"), "incomplete", "step in batch");
		ASSERT_HAS_SUBSTR(text, "\"end_ns\":1795423440131999182", "exact end in batch");
		cJSON_free(text);
		cJSON_Delete(b);
	}
	ASSERT_TRUE(s->live == s->root && !s->root->next, "only the root stays");
out:
	session__free(s);
}

static void end_at_exit_ok(void)
{
	end_at_exit(true);
}

static void end_at_exit_failed(void)
{
	end_at_exit(false);
}

static void end_at_detach(void)
{
	struct session *s = session__new(&ids, T0);
	struct closed_log log = {};
	struct span *epoch, *step;
	const cJSON *sp;
	cJSON *b;

	if (!ASSERT_OK_PTR(s, "session__new"))
		return;
	s->on_close = on_close;
	s->on_close_ctx = &log;
	epoch = session__open(s, NULL, "epoch", 0, T0 + 10);
	step = session__open(s, epoch, "step", 0, T0 + 20);
	if (!ASSERT_OK_PTR(step, "step"))
		goto out;
	cJSON_Delete(take(s, false, 0, NULL));	/* nothing dirty after this */

	session__end(s, 0, true, "detach");
	ASSERT_EQ(step->status, SPAN_OPEN, "step stays open");
	ASSERT_EQ(epoch->status, SPAN_OPEN, "epoch stays open");
	ASSERT_EQ(s->root->status, SPAN_OPEN, "root stays open");
	ASSERT_EQ(step->end_ns, 0, "no end");
	ASSERT_EQ(s->root->end_ns, 0, "no root end");
	ASSERT_EQ(log.n, 3, "sinks still hear of each open span");
	ASSERT_STREQ(cJSON_GetStringValue(item(s->root->attrs, "end_cause")), "detach",
		     "end_cause");

	b = take(s, true, 1, NULL);
	if (b) {
		ASSERT_EQ(nspans(b), 3, "the open spans are sent again");
		cJSON_ArrayForEach(sp, item(b, "spans")) {
			ASSERT_STREQ(cJSON_GetStringValue(item(sp, "status")), "open", "open");
			ASSERT_TRUE(cJSON_IsNull(item(sp, "end_ns")), "end_ns null");
		}
	}
	cJSON_Delete(b);
out:
	session__free(s);
}
int main(void)
{
	RUN_TEST(id_of_an_odd_host_name);
	RUN_TEST(session_new);
	RUN_TEST(open_close_nesting);
	RUN_TEST(batch_order_and_streaming);
	RUN_TEST(open_and_closed_between_batches);
	RUN_TEST(resend_open_spans);
	RUN_TEST(depth_cap);
	RUN_TEST(close_twice);
	RUN_TEST(end_at_exit_ok);
	RUN_TEST(end_at_exit_failed);
	RUN_TEST(end_at_detach);
	return unit__done();
}
