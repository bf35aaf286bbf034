// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "common/demangle.h"
#include "common/json.h"
#include "gputime/gpu_spans.h"

enum acc_mode { MODE_NONE, MODE_CUPTI, MODE_BOUND };

struct gpu_kernel_time {
	uint32_t name;		/* name id; 0: a copy or memset (kind says which) */
	uint8_t kind;		/* enum gpu_item_kind */
	uint64_t ns;
};

struct gpu_acc {
	struct span *sp;
	uint64_t start, end;	/* CLOCK_MONOTONIC; end: UINT64_MAX while open */
	uint64_t closed_at;
	enum acc_mode mode;
	bool top, share;
	bool all_seen;		/* begun after the companion was on: its calls are all known */
	bool cut_short;		/* written before its records could all come (final) */
	struct gpu_union u;
	uint64_t calls;		/* launches, graph launches and copies made in it */
	uint64_t calls_with_work;	/* those with GPU work */
	uint64_t max_launch;
	uint64_t counted;	/* its launches + graph launches + copies, as the probes counted */
	uint64_t last_launch;	/* MODE_BOUND: the process's last launch when it closed */
	struct gpu_kernel_time *k;
	size_t nk, capk;
};

static bool is(const struct span *sp, const char *name)
{
	return !strcmp(sp->name, name);
}

static void acc_reset(struct gpu_acc *a)
{
	gpu_union__free(&a->u);
	free(a->k);
	a->k = NULL;
	a->nk = a->capk = 0;
	a->calls = a->calls_with_work = a->max_launch = 0;
}

static void kernel_time(struct gpu_acc *a, const struct gpu_item *it)
{
	uint32_t name = it->kind == GPU_ITEM_KERNEL ? it->name_id : 0;

	for (size_t i = 0; i < a->nk; i++)
		if (a->k[i].name == name && a->k[i].kind == it->kind) {
			a->k[i].ns += it->end - it->start;
			return;
		}
	if (a->nk == a->capk) {
		size_t cap = a->capk ? 2 * a->capk : 16;
		struct gpu_kernel_time *v = realloc(a->k, cap * sizeof(*v));

		if (!v)
			return;
		a->k = v;
		a->capk = cap;
	}
	a->k[a->nk++] = (struct gpu_kernel_time){ name, it->kind, it->end - it->start };
}

static void add_item(struct gpu_acc *a, const struct gpu_item *it)
{
	if (it->first && it->api != GPU_API_MEMSET) {	/* the probes count no memset */
		a->calls++;
		if (it->kind != GPU_ITEM_NONE)
			a->calls_with_work++;
	}
	if (it->launch > a->max_launch)
		a->max_launch = it->launch;
	if (it->kind == GPU_ITEM_NONE)
		return;
	gpu_union__add(&a->u, it->start, it->end);
	if (a->top)
		kernel_time(a, it);
}

/* The first of v[0..n) (sorted by launch) made at or after t. */
static size_t lower(const struct gpu_item *v, size_t n, uint64_t t)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (v[mid].launch < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void add_range(struct gpu_acc *a, const struct gpu_item *v, size_t n)
{
	for (size_t i = lower(v, n, a->start); i < n && v[i].launch < a->end; i++)
		add_item(a, &v[i]);
}

static struct gpu_acc *find(const struct gpu_spans *g, const struct span *sp, size_t *at)
{
	for (size_t i = g->n; i-- > 0;)
		if (g->v[i].sp == sp) {
			if (at)
				*at = i;
			return &g->v[i];
		}
	return NULL;
}

static void drop(struct gpu_spans *g, size_t i)
{
	acc_reset(&g->v[i]);
	memmove(g->v + i, g->v + i + 1, (g->n - i - 1) * sizeof(g->v[0]));
	g->n--;
}

int gpu_spans__open(struct gpu_spans *g, struct span *sp, uint64_t start)
{
	struct gpu_acc *a;

	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 32;
		struct gpu_acc *v = realloc(g->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		g->v = v;
		g->cap = cap;
	}
	a = &g->v[g->n];
	memset(a, 0, sizeof(*a));
	a->sp = sp;
	a->start = start;
	a->end = UINT64_MAX;
	a->top = is(sp, "step") || is(sp, "request");
	a->share = a->top || is(sp, "epoch") || is(sp, "cirron.session");
	add_range(a, g->window, g->nwin);	/* opened after the fact: what came since */
	g->n++;
	return 0;
}

static double attr_num(const struct span *sp, const char *name)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(sp->attrs, name);

	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

bool gpu_spans__close(struct gpu_spans *g, struct span *sp, uint64_t end,
		      const uint64_t *counters, const struct gpu_source *src, uint64_t now)
{
	size_t i;
	struct gpu_acc *a = find(g, sp, &i);

	if (!a)
		return false;
	a->end = end;
	a->closed_at = now;
	if (a->max_launch >= end) {	/* closed after the fact: only what came before its end */
		acc_reset(a);
		add_range(a, g->window, g->nwin);
	}
	a->counted = (uint64_t)(attr_num(sp, "cuda.launches") + attr_num(sp, "cuda.graph_launches") +
				attr_num(sp, "cuda.memcpy_calls"));
	if (counters && a->counted)
		a->last_launch = counters[CC_LAST_LAUNCH_NS];
	if (src->join && (src->cupti || a->calls)) {
		a->mode = MODE_CUPTI;
		a->all_seen = src->cupti && src->active_since && src->active_since <= a->start;
	} else if (a->last_launch) {
		a->mode = MODE_BOUND;
	}
	if (a->mode == MODE_NONE) {
		drop(g, i);
		return false;
	}
	g->held++;
	return true;
}

static void merge_window(struct gpu_spans *g, const struct gpu_item *v, size_t n)
{
	size_t keep_from, room;
	uint64_t newest;

	if (!n)
		return;
	if (g->nwin + n > g->capwin) {
		size_t cap = g->capwin ? g->capwin : 1024;
		struct gpu_item *w;

		while (cap < g->nwin + n)
			cap *= 2;
		w = realloc(g->window, cap * sizeof(*w));
		if (!w)
			return;
		g->window = w;
		g->capwin = cap;
	}
	/* v is sorted; most of it comes after the window's last: merge from the back */
	{
		size_t i = g->nwin, j = n, k = g->nwin + n;

		while (j > 0) {
			if (i > 0 && g->window[i - 1].launch > v[j - 1].launch)
				g->window[--k] = g->window[--i];
			else
				g->window[--k] = v[--j];
		}
	}
	g->nwin += n;
	newest = g->window[g->nwin - 1].launch;
	keep_from = lower(g->window, g->nwin,
			  newest > GPU_SPANS_WINDOW_NS ? newest - GPU_SPANS_WINDOW_NS : 0);
	room = g->nwin > GPU_SPANS_WINDOW_MAX ? g->nwin - GPU_SPANS_WINDOW_MAX : 0;
	if (room > keep_from)
		keep_from = room;
	if (keep_from) {
		memmove(g->window, g->window + keep_from, (g->nwin - keep_from) * sizeof(*v));
		g->nwin -= keep_from;
	}
}

static int by_launch(const void *x, const void *y)
{
	const struct gpu_item *a = x, *b = y;

	return a->launch < b->launch ? -1 : a->launch > b->launch;
}

void gpu_spans__items(struct gpu_spans *g, const struct gpu_item *items, size_t n)
{
	struct gpu_item *v;

	if (!n || !(v = malloc(n * sizeof(*v))))
		return;
	memcpy(v, items, n * sizeof(*v));
	qsort(v, n, sizeof(*v), by_launch);
	for (size_t i = 0; i < g->n; i++)
		add_range(&g->v[i], v, n);
	merge_window(g, v, n);
	free(v);
}

void gpu_spans__sync(struct gpu_spans *g, uint64_t entry, uint64_t ret)
{
	if (ret >= g->sync_return) {
		g->sync_entry = entry;
		g->sync_return = ret;
	}
}

static int by_ns(const void *x, const void *y)
{
	const struct gpu_kernel_time *a = x, *b = y;

	return a->ns > b->ns ? -1 : a->ns < b->ns;
}

/* The step's kernels with the most GPU time, by demangled name; the rest as "other". */
static void top_kernels(struct gpu_acc *a, const struct gpu_join *j)
{
	cJSON *o = cJSON_CreateObject();
	double other = 0;

	qsort(a->k, a->nk, sizeof(*a->k), by_ns);
	for (size_t i = 0; i < a->nk; i++) {
		char key[160], buf[1024];
		const char *name = a->k[i].kind == GPU_ITEM_MEMCPY ? "memcpy" :
				   a->k[i].kind == GPU_ITEM_MEMSET ? "memset" :
				   gpu_join__name(j, a->k[i].name);
		const char *dm = name && a->k[i].kind == GPU_ITEM_KERNEL ?
				 demangle__full(name, buf, sizeof(buf)) : NULL;
		cJSON *had;

		if (i >= GPU_SPANS_TOP) {
			other += (double)a->k[i].ns;
			continue;
		}
		if (!name)
			snprintf(key, sizeof(key), "kernel #%u (no name seen)", a->k[i].name);
		else
			snprintf(key, sizeof(key), "%s", dm ? dm : name);
		had = cJSON_GetObjectItemCaseSensitive(o, key);	/* one name, several ids */
		if (had)
			cJSON_SetNumberHelper(had, had->valuedouble + (double)a->k[i].ns);
		else
			cJSON_AddNumberToObject(o, key, (double)a->k[i].ns);
	}
	if (other > 0)
		cJSON_AddNumberToObject(o, "other", other);
	cJSON_DeleteItemFromObjectCaseSensitive(a->sp->attrs, "gpu_kernels");
	cJSON_AddItemToObject(a->sp->attrs, "gpu_kernels", o);
}

static bool bound_known(const struct gpu_acc *a, const struct gpu_spans *g)
{
	return a->last_launch && g->sync_entry >= a->last_launch && g->sync_return > a->start;
}

static void write_bound(struct gpu_acc *a, const struct gpu_spans *g, const struct gpu_source *src);

static void write_cupti(struct gpu_acc *a, const struct gpu_spans *g, const struct gpu_source *src,
			uint64_t dur)
{
	cJSON *at = a->sp->attrs;
	/* the share of its calls with records: of the calls the companion saw in it when it was
	 * on all along (the probes' counts of a span made after the fact may span other
	 * times), else of what the probes counted (calls before the companion was on too) */
	uint64_t den = (a->all_seen && a->calls) || a->counted < a->calls ? a->calls : a->counted;
	double cov = den ? (double)a->calls_with_work / (double)den : 0;

	if (cov > 1)
		cov = 1;
	if (!a->calls_with_work) {	/* nothing measured: no number that reads as one */
		if (!den)
			return;
		if (bound_known(a, g))	/* the bound, then, labelled as one */
			write_bound(a, g, src);
		json__set_num(at, "gpu_time_coverage", 0);
		json__set_str(at, "gpu_time_note", src->note ? src->note : a->cut_short ?
			"its records had not come when the observer left" :
			"none of its launches has a record (made before the companion was on, "
			"or lost)");
		return;
	}
	json__set_str(at, "gpu_time_source", "cupti");
	json__set_num(at, "gpu_busy_ns", (double)gpu_union__busy(&a->u));
	json__set_num(at, "gpu_ns", (double)(a->u.last_end - a->u.first_start));
	json__set_num(at, "gpu_time_coverage", (double)(int)(cov * 10000 + 0.5) / 10000);
	if (a->share && dur)
		json__set_num(at, "gpu_busy_share",
			(double)(int)((double)gpu_union__busy(&a->u) / (double)dur * 10000 + 0.5) /
			10000);
	if (a->top && a->nk && src->join)
		top_kernels(a, src->join);
}

static void write_bound(struct gpu_acc *a, const struct gpu_spans *g, const struct gpu_source *src)
{
	cJSON *at = a->sp->attrs;

	if (!bound_known(a, g)) {
		json__set_str(at, "gpu_time_note", "no synchronize call after its last launch: no bound");
		return;
	}
	json__set_str(at, "gpu_time_source", "launch_to_sync");
	json__set_num(at, "gpu_ns_upper", (double)(g->sync_return - a->start));
	if (src->note)
		json__set_str(at, "gpu_time_note", src->note);
}

static bool ready(const struct gpu_acc *a, const struct gpu_spans *g, uint64_t watermark,
		  uint64_t now)
{
	if (a->mode == MODE_CUPTI)
		return (watermark >= a->end && (a->calls_with_work || !a->last_launch ||
						g->sync_entry >= a->last_launch)) ||
		       now > a->closed_at + 2 * GPU_JOIN_GIVE_UP_NS;
	return g->sync_entry >= a->last_launch || now > a->closed_at + GPU_SPANS_BOUND_WAIT_NS;
}

void gpu_spans__settle(struct gpu_spans *g, const struct gpu_source *src, uint64_t watermark,
		       uint64_t now, bool final, void (*release)(void *ctx, struct span *sp),
		       void *ctx)
{
	uint64_t horizon = watermark > GPU_SPANS_FOLD_SLACK_NS ?
			   watermark - GPU_SPANS_FOLD_SLACK_NS : 0;

	for (size_t i = 0; i < g->n;) {
		struct gpu_acc *a = &g->v[i];
		struct span *sp = a->sp;

		gpu_union__fold(&a->u, horizon);
		if (a->end == UINT64_MAX) {	/* open: what it has so far */
			if (src->join && a->calls_with_work)
				write_cupti(a, g, src, now > a->start ? now - a->start : 0);
			i++;
			continue;
		}
		if (!final && !ready(a, g, watermark, now)) {
			i++;
			continue;
		}
		a->cut_short = final && watermark < a->end;
		if (a->mode == MODE_CUPTI)
			write_cupti(a, g, src, a->end - a->start);
		else
			write_bound(a, g, src);
		drop(g, i);
		g->released++;
		release(ctx, sp);
	}
}

void gpu_spans__forget(struct gpu_spans *g, struct span *sp)
{
	size_t i;

	if (find(g, sp, &i))
		drop(g, i);
}

void gpu_spans__free(struct gpu_spans *g)
{
	while (g->n)
		drop(g, g->n - 1);
	free(g->v);
	free(g->window);
	memset(g, 0, sizeof(*g));
}
