// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// trace --last N from the newest batches only (trace_last.h): a heap of the N spans that
// ended last, each rendered when it enters.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "trace/export.h"
#include "trace/trace_last.h"
#include "read/view.h"

struct cand {
	uint64_t end, id;
	const struct rsession *s;
	char *text;
};

struct heap {
	struct cand *a;		/* a min-heap by (end, id): a[0] is the oldest kept */
	size_t n, cap, max;
};

static bool older(const struct cand *x, const struct cand *y)
{
	if (x->end != y->end)
		return x->end < y->end;
	if (x->id != y->id)
		return x->id < y->id;
	return strcmp(x->s->id, y->s->id) < 0;
}

static void sift_down(struct heap *h, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct cand t;

		if (l < h->n && older(&h->a[l], &h->a[m]))
			m = l;
		if (r < h->n && older(&h->a[r], &h->a[m]))
			m = r;
		if (m == i)
			return;
		t = h->a[i];
		h->a[i] = h->a[m];
		h->a[m] = t;
		i = m;
	}
}

static void sift_up(struct heap *h, size_t i)
{
	while (i && older(&h->a[i], &h->a[(i - 1) / 2])) {
		struct cand t = h->a[i];

		h->a[i] = h->a[(i - 1) / 2];
		h->a[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static bool held(const struct heap *h, const struct rsession *s, uint64_t id)
{
	for (size_t i = 0; i < h->n; i++)
		if (h->a[i].id == id && h->a[i].s == s)
			return true;
	return false;
}

static char *render(const struct options *o, const struct rsession *s, const struct span *sp)
{
	struct sbuf b = {};
	char line[4096];

	if (o->format == FORMAT_CSV) {
		export__csv_row(&b, s->id, s->rank, sp);
	} else if (o->format == FORMAT_JSON) {
		export__span_json_open(&b, sp, s->id, s->rank);
		sbuf__add(&b, "}", 1);
	} else {
		sbuf__puts(&b, span__format_line(sp, line, sizeof(line)));
		sbuf__add(&b, "\n", 1);
	}
	if (b.oom) {
		sbuf__free(&b);
		return NULL;
	}
	return sbuf__take(&b);
}

/* Offers a span; returns -ENOMEM or 0. */
static int offer(struct heap *h, const struct options *o, const struct rsession *s,
		 const struct span *sp)
{
	struct cand c = { .end = sp->end_ns, .id = sp->id, .s = s };

	if (h->n && h->n == h->max && !older(&h->a[0], &c))
		return 0;
	if (h->max <= 4096 && held(h, s, sp->id))
		return 0;	/* a copy from a newer batch is in already */
	c.text = render(o, s, sp);
	if (!c.text)
		return -ENOMEM;
	if (h->n == h->cap && h->n < h->max) {
		size_t cap = h->cap ? h->cap * 2 : 64;
		struct cand *a = reallocarray(h->a, cap < h->max ? cap : h->max, sizeof(*a));

		if (!a) {
			free(c.text);
			return -ENOMEM;
		}
		h->a = a;
		h->cap = cap < h->max ? cap : h->max;
	}
	if (h->n == h->max) {
		free(h->a[0].text);
		h->a[0] = c;
		sift_down(h, 0);
	} else {
		h->a[h->n++] = c;
		sift_up(h, h->n - 1);
	}
	return 0;
}

static int by_end(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	return older(x, y) ? -1 : older(y, x);
}

/* One session, its batches newest first, until the older ones can hold nothing newer. */
static int session(struct heap *h, struct spool_view *v, struct rsession *s,
		   const struct options *o)
{
	int err = 0;

	for (size_t k = s->files->nfiles; k-- > 0 && !err;) {
		uint64_t newest = 0;
		struct batch b;

		if (spool_src__read(&v->src, s->files, k, &b))
			continue;
		for (size_t i = 0; i < b.nsp && !err; i++) {
			const struct span *sp = &b.sp[i];

			if (!sp->end_ns || (o->name && strcmp(o->name, sp->name) != 0))
				continue;
			if (sp->end_ns > newest)
				newest = sp->end_ns;
			err = offer(h, o, s, sp);
		}
		batch__free(&b);
		if (h->n && h->n == h->max && newest < h->a[0].end)
			break;
	}
	return err;
}

int trace_last__print(FILE *f, struct spool_view *v, const struct options *o)
{
	struct heap h = { .max = (size_t)o->last };
	int err = 0;

	if (!h.max)
		return 0;

	for (size_t i = 0; i < v->nsessions && !err; i++)
		if (view__wanted(o, v->sessions[i]))
			err = session(&h, v, v->sessions[i], o);
	if (h.n > 1)
		qsort(h.a, h.n, sizeof(*h.a), by_end);
	if (o->format == FORMAT_JSON)
		fputc('[', f);
	if (o->format == FORMAT_CSV)
		export__csv_header(f);
	for (size_t i = 0; i < h.n; i++) {
		if (o->format == FORMAT_JSON && i)
			fputs(",\n", f);
		fputs(h.a[i].text, f);
	}
	if (o->format == FORMAT_JSON)
		fputs("]\n", f);
	for (size_t i = 0; i < h.n; i++)
		free(h.a[i].text);
	free(h.a);
	return err;
}
