/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * A torch tree fed by hand for the test_torch_tree*.c tests: a session, a clock that moves
 * 1 us an event, the event sequences the torch anchors produce for a batch, a backward and
 * an optimizer step, and the spans of the final batch read back to count and check.
 */
#ifndef __CIRRON_TORCH_TREE_WORLD_H
#define __CIRRON_TORCH_TREE_WORLD_H

#include "tree/torch_tree.h"
#include "unit.h"

#define MAX_SPANS 512

struct rec {
	long long id, parent, index;
	char name[96];
	char status[16];	/* ok, open, incomplete */
	unsigned long long start, end;
	cJSON *attrs;
};

struct world {
	struct session *s;
	struct torch_tree t;
	uint64_t ts;
	struct rec spans[MAX_SPANS];
	int n;
	cJSON *batches[16];
	int nbatches;
};

static inline void world_init(struct world *w, long epoch_steps)
{
	struct session_ids ids = { .pid = 42, .start_ticks = 7, .world_size = 1, .host = "h" };

	memset(w, 0, sizeof(*w));
	w->ts = 1000000;
	w->s = session__new(&ids, w->ts);
	torch_tree__init(&w->t, w->s, epoch_steps);
}

static inline void feed(struct world *w, enum tree_input kind, const char *name, uint64_t obj, int value)
{
	struct tree_event ev = { .kind = kind, .ts_ns = (w->ts += 1000), .tid = 1, .name = name,
				 .obj = obj, .value = value };

	torch_tree__feed(&w->t, &ev);
}

#define DATA "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__"
#define OPT "Optimizer.step#SGD.step"
#define ZERO "Optimizer.zero_grad#SGD.zero_grad"

static inline void data(struct world *w, uint64_t iter)
{
	feed(w, TI_SCOPE_ENTER, DATA, iter, 0);
	feed(w, TI_SCOPE_EXIT, NULL, 0, 0);
}

static inline void backward(struct world *w)
{
	w->ts += 5000;	/* the forward runs meanwhile */
	feed(w, TI_BACKWARD_ENTER, NULL, 0, 0);
	feed(w, TI_BACKWARD_EXIT, NULL, 0, 0);
}

static inline void optimizer(struct world *w)
{
	feed(w, TI_SCOPE_ENTER, OPT, 0, 0);
	feed(w, TI_GRAD_MODE, NULL, 0, 0);	/* the step runs under no_grad */
	feed(w, TI_GRAD_MODE, NULL, 0, 1);
	feed(w, TI_SCOPE_EXIT, NULL, 0, 0);
	feed(w, TI_SCOPE_ENTER, ZERO, 0, 0);
	feed(w, TI_SCOPE_EXIT, NULL, 0, 0);
}

static inline void train_epoch(struct world *w, uint64_t iter, int batches)
{
	for (int i = 0; i < batches; i++) {
		data(w, iter);
		backward(w);
		optimizer(w);
	}
	data(w, iter);	/* the __next__ that raises StopIteration */
}

static inline unsigned long long num(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? (unsigned long long)v->valuedouble : 0;
}

/* Ends the session as a clean exit and reads back every span from the batches. */
static inline void collect(struct world *w, bool exit_ok)
{
	const cJSON *sp;

	w->ts += 1000;
	torch_tree__finish(&w->t, exit_ok);
	session__end(w->s, w->ts, exit_ok, "exit");
	cJSON *built = session__take_batch(w->s, NULL, w->ts, true);
	char *text = cJSON_PrintUnformatted(built);

	/* Read back as a reader would: exact integers are raw text until parsed. */
	w->batches[w->nbatches] = cJSON_Parse(text);
	cJSON_free(text);
	cJSON_Delete(built);
	cJSON_ArrayForEach(sp, cJSON_GetObjectItemCaseSensitive(w->batches[w->nbatches], "spans")) {
		struct rec *r = &w->spans[w->n++];
		const cJSON *idx = cJSON_GetObjectItemCaseSensitive(sp, "index");

		r->id = (long long)num(sp, "span_id");
		r->parent = (long long)num(sp, "parent_id");
		r->index = cJSON_IsNumber(idx) ? (long long)idx->valuedouble : -1;
		snprintf(r->name, sizeof(r->name), "%s",
			 cJSON_GetObjectItemCaseSensitive(sp, "name")->valuestring);
		snprintf(r->status, sizeof(r->status), "%s",
			 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(sp, "status")) ?: "");
		r->start = num(sp, "start_ns");
		r->end = num(sp, "end_ns");
		r->attrs = cJSON_GetObjectItemCaseSensitive(sp, "attrs");
	}
	w->nbatches++;
}

static inline void world_free(struct world *w)
{
	for (int i = 0; i < w->nbatches; i++)
		cJSON_Delete(w->batches[i]);
	session__free(w->s);
}

static inline const struct rec *by_id(const struct world *w, long long id)
{
	for (int i = 0; i < w->n; i++)
		if (w->spans[i].id == id)
			return &w->spans[i];
	return NULL;
}

static inline int count(const struct world *w, const char *name, const char *parent_name)
{
	int c = 0;

	for (int i = 0; i < w->n; i++) {
		const struct rec *p = by_id(w, w->spans[i].parent);

		if (strcmp(w->spans[i].name, name) != 0)
			continue;
		if (!parent_name || (p && !strcmp(p->name, parent_name)))
			c++;
	}
	return c;
}

static inline const char *attr_str(const struct rec *r, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(r->attrs, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static inline int count_mode(const struct world *w, const char *mode, const char *parent_name)
{
	int c = 0;

	for (int i = 0; i < w->n; i++) {
		const struct rec *p = by_id(w, w->spans[i].parent);

		if (!strcmp(w->spans[i].name, "forward") && attr_str(&w->spans[i], "mode") &&
		    !strcmp(attr_str(&w->spans[i], "mode"), mode) && p && !strcmp(p->name, parent_name))
			c++;
	}
	return c;
}

static inline int count_bool(const struct world *w, const char *name, const char *key)
{
	int c = 0;

	for (int i = 0; i < w->n; i++)
		if (!strcmp(w->spans[i].name, name) &&
		    cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(w->spans[i].attrs, key)))
			c++;
	return c;
}

/* Every span ended, each lies within its parent, ids unique. */
static inline void check_well_formed(const struct world *w)
{
	for (int i = 0; i < w->n; i++) {
		const struct rec *r = &w->spans[i], *p = by_id(w, r->parent);

		ASSERT_GT(r->end, 0, r->name);
		ASSERT_LE(r->start, r->end, r->name);
		for (int j = i + 1; j < w->n; j++)
			ASSERT_NEQ(r->id, w->spans[j].id, "unique span ids");
		if (!r->parent)
			continue;
		if (!ASSERT_OK_PTR(p, "parent exists"))
			continue;
		if (!ASSERT_LE(p->start, r->start, "child starts within parent") ||
		    !ASSERT_LE(r->end, p->end, "child ends within parent"))
			fprintf(stderr, "  %s [%llu,%llu] under %s [%llu,%llu]\n", r->name, r->start,
				r->end, p->name, p->start, p->end);
	}
}

#endif
