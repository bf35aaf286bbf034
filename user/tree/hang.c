// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A span open far longer than spans of its name usually take means the job is stuck
// there: the loader checks the open path of each session every round (the target sends
// nothing while it hangs, so this cannot wait for an event).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tree/clock.h"
#include "tree/hang.h"

#define PATH_MAX_DEPTH (SESSION_MAX_DEPTH + 1)

void hang__init(struct hang_watch *w, double factor, double min_seconds)
{
	memset(w, 0, sizeof(*w));
	w->factor = factor;
	w->min_ns = (uint64_t)(min_seconds * 1e9);
}

static struct hang_history *history(struct hang_watch *w, const char *name, bool add)
{
	for (int i = 0; i < w->nnames; i++)
		if (!strcmp(w->names[i].name, name))
			return &w->names[i];
	if (!add || w->nnames == HANG_NAMES || strlen(name) >= sizeof(w->names[0].name))
		return NULL;
	snprintf(w->names[w->nnames].name, sizeof(w->names[0].name), "%s", name);
	return &w->names[w->nnames++];
}

void hang__span_closed(struct hang_watch *w, const struct span *sp)
{
	struct hang_history *h;

	if (sp->status != SPAN_OK || sp->end_ns < sp->start_ns || !(h = history(w, sp->name, true)))
		return;
	h->dur_ns[h->next] = sp->end_ns - sp->start_ns;
	h->next = (h->next + 1) % HANG_HISTORY;
	if (h->n < HANG_HISTORY)
		h->n++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t hang__median(const struct hang_watch *w, const char *name)
{
	uint64_t v[HANG_HISTORY];
	const struct hang_history *h = history((struct hang_watch *)w, name, false);

	if (!h || h->n < HANG_MIN_SAMPLES)
		return 0;
	memcpy(v, h->dur_ns, (size_t)h->n * sizeof(v[0]));
	qsort(v, (size_t)h->n, sizeof(v[0]), cmp_u64);
	return v[h->n / 2];
}

/* The open path, root first: from the open span that started last (the innermost: an open
 * span's children start after it), or extra when it started later still, up through its
 * parents. Returns its length. */
static int open_path(const struct session *s, const struct span *extra,
		     const struct span *path[PATH_MAX_DEPTH])
{
	const struct span *inner = NULL, *sp;
	int n = 0;

	for (sp = s->live; sp; sp = sp->next)
		if (sp->status == SPAN_OPEN && sp != s->root &&
		    (!inner || sp->start_ns >= inner->start_ns))
			inner = sp;
	if (extra && (!inner || extra->start_ns >= inner->start_ns))
		inner = extra;
	for (sp = inner; sp && sp != s->root && n < PATH_MAX_DEPTH - 1; ) {
		const struct span *parent = NULL;

		path[n++] = sp;
		for (const struct span *p = s->live; p && sp->parent_id; p = p->next)
			if (p->id == sp->parent_id)
				parent = p;
		sp = parent;
	}
	path[n++] = s->root;
	for (int i = 0; i < n / 2; i++) {	/* root first */
		const struct span *t = path[i];

		path[i] = path[n - 1 - i];
		path[n - 1 - i] = t;
	}
	return n;
}

static cJSON *path_json(const struct span *const *path, int n)
{
	cJSON *a = cJSON_CreateArray();

	for (int i = 0; i < n; i++) {
		cJSON *o = cJSON_CreateObject();

		if (path[i]->id)
			json__add_u64(o, "span_id", path[i]->id);
		else
			cJSON_AddBoolToObject(o, "pending", true);
		cJSON_AddStringToObject(o, "name", path[i]->name);
		if (path[i]->index >= 0)
			cJSON_AddNumberToObject(o, "index", (double)path[i]->index);
		json__add_u64(o, "start_ns", path[i]->start_ns);
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

/* The root's last CUDA calls (--cuda-detail marks), newest last: what it was doing. */
static void add_last_cuda_calls(cJSON *rec, const struct session *s)
{
	const cJSON *marks = s->root->marks;
	int n = cJSON_GetArraySize(marks), from = n > 8 ? n - 8 : 0;
	cJSON *a;

	if (!n)
		return;
	a = cJSON_AddArrayToObject(rec, "last_cuda_calls");
	for (int i = from; i < n; i++)
		cJSON_AddItemToArray(a, cJSON_Duplicate(cJSON_GetArrayItem(marks, i), true));
}

/* "rank 0: no progress for 5.2s in cirron.session > epoch[0] > step[3] > data_load
 * (usually 120us): the job looks hung" */
static void format_line(const struct session *s, const struct span *const *path, int n,
			uint64_t open_ns, uint64_t median_ns, char *buf, int size)
{
	char open[32], median[32], name[96];
	int len;

	len = snprintf(buf, (size_t)size, "rank %ld: no progress for %s in ", s->rank,
		       clock__fmt_duration(open_ns, open, sizeof(open)));
	for (int i = 0; i < n && len < size; i++)
		len += snprintf(buf + len, (size_t)(size - len), "%s%s", i ? " > " : "",
				span__format_name(path[i], name, sizeof(name)));
	if (len < size)
		snprintf(buf + len, (size_t)(size - len), " (usually %s): the job looks hung",
			 clock__fmt_duration(median_ns, median, sizeof(median)));
}

void hang__progress(struct hang_watch *w, uint64_t ts_ns)
{
	if (ts_ns > w->last_input_ns)
		w->last_input_ns = ts_ns;
}

cJSON *hang__check(struct hang_watch *w, const struct session *s, const struct span *extra,
		   uint64_t now_ns, char *line, int size)
{
	const struct span *path[PATH_MAX_DEPTH], *stuck = NULL;
	uint64_t median = 0, threshold = 0, since = 0;
	cJSON *rec;
	int n, stuck_at = 0;

	if (w->factor <= 0 || s->ended)
		return NULL;
	n = open_path(s, extra, path);
	/* The innermost span whose name has a history and which is far past it */
	for (int i = n - 1; i >= 1 && !stuck; i--) {
		median = hang__median(w, path[i]->name);
		threshold = (uint64_t)(w->factor * (double)median);
		if (threshold < w->min_ns)
			threshold = w->min_ns;
		since = path[i]->start_ns > w->last_input_ns ? path[i]->start_ns : w->last_input_ns;
		if (median && now_ns > since && now_ns - since > threshold) {
			stuck = path[i];
			stuck_at = i;
		}
	}
	if (!stuck || (stuck->id == w->reported_id && stuck->start_ns == w->reported_start_ns))
		return NULL;
	w->reported_id = stuck->id;
	w->reported_start_ns = stuck->start_ns;
	rec = cJSON_CreateObject();
	json__add_u64(rec, "detected_ns", now_ns);
	if (stuck->id)
		json__add_u64(rec, "span_id", stuck->id);
	else
		cJSON_AddBoolToObject(rec, "pending", true);
	cJSON_AddStringToObject(rec, "name", stuck->name);
	if (stuck->index >= 0)
		cJSON_AddNumberToObject(rec, "index", (double)stuck->index);
	json__add_u64(rec, "open_ns", now_ns - stuck->start_ns);
	json__add_u64(rec, "no_progress_ns", now_ns - since);
	json__add_u64(rec, "median_ns", median);
	json__add_u64(rec, "threshold_ns", threshold);
	cJSON_AddNumberToObject(rec, "rank", (double)s->rank);
	cJSON_AddItemToObject(rec, "open_path", path_json(path, n));
	add_last_cuda_calls(rec, s);
	format_line(s, path, stuck_at + 1, now_ns - since, median, line, size);
	return rec;
}
