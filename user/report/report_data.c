// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// report's numbers of a session, streamed (report_data.h): each span's phase times go up to
// its parent as it completes; a step adds a point to each series, a span with steps a row.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "report/report_data.h"
#include "trace/step_sum.h"
#include "read/tree_stream.h"
#include "tree/clock.h"

struct rpay {
	double phase[PH__COUNT];	/* seconds under it, per phase */
	struct step_sum *steps;		/* its kids that are steps */
};

static struct rpay *pay(struct tnode *n)
{
	if (!n->out)
		n->out = calloc(1, sizeof(struct rpay));
	return n->out;
}

static void free_out(struct tnode *n)
{
	struct rpay *p = n->out;

	if (p->steps) {
		step_sum__free(p->steps);
		free(p->steps);
	}
	free(p);
	n->out = NULL;
}

static double secs(const struct tnode *n)
{
	return n->sp.end_ns > n->sp.start_ns ? (double)(n->sp.end_ns - n->sp.start_ns) / 1e9 : 0;
}

static void html(struct sbuf *b, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': sbuf__puts(b, "&lt;"); break;
		case '>': sbuf__puts(b, "&gt;"); break;
		case '&': sbuf__puts(b, "&amp;"); break;
		case '"': sbuf__puts(b, "&quot;"); break;
		default: sbuf__add(b, s, 1);
		}
	}
}

/* Each numeric field of each mark ("loss", "eval.acc"), a series of its own. */
static void marks(struct report_data *d, const cJSON *marks)
{
	const cJSON *m, *fld;

	cJSON_ArrayForEach(m, marks) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(m, "name");

		if (!cJSON_IsString(name))
			continue;
		cJSON_ArrayForEach(fld, m) {
			char key[128];
			size_t k;

			if (!cJSON_IsNumber(fld) || !strcmp(fld->string, "ts_ns") ||
			    !strcmp(fld->string, "tid"))
				continue;
			snprintf(key, sizeof(key), "%s%s%s", name->valuestring,
				 strcmp(fld->string, "value") ? "." : "",
				 strcmp(fld->string, "value") ? fld->string : "");
			for (k = 0; k < d->nmarks && strcmp(d->marks[k].name, key) != 0; k++)
				;
			if (k == d->nmarks) {
				if (d->nmarks == MARK_SERIES_MAX || downsample__init(&d->marks[k].d))
					continue;
				snprintf(d->marks[k].name, sizeof(d->marks[k].name), "%s", key);
				d->nmarks++;
			}
			downsample__add(&d->marks[k].d, fld->valuedouble);
		}
	}
}

/* A span with steps under it: a row of the epochs table. */
static void epoch_row(struct report_data *d, const struct tnode *n, struct step_sum *st)
{
	char name[192], dur[32], a[32], b[32], c[32], m[32];
	struct sbuf *r = &d->epochs;

	sbuf__puts(r, "<tr><td>");
	html(r, span__format_name(&n->sp, name, sizeof(name)));
	sbuf__printf(r, "</td><td>%s</td><td>%llu</td>",
		     n->sp.end_ns ? clock__fmt_duration(n->sp.end_ns - n->sp.start_ns, dur,
							 sizeof(dur)) : "open",
		     (unsigned long long)st->steps);
	sbuf__printf(r, "<td>%s%s</td><td>%s%s</td><td>%s%s</td><td>%s</td>",
		     pctl__approx(&st->time) ? "~" : "",
		     clock__fmt_duration(pctl__pct(&st->time, 50), a, sizeof(a)),
		     pctl__approx(&st->time) ? "~" : "",
		     clock__fmt_duration(pctl__pct(&st->time, 90), b, sizeof(b)),
		     pctl__approx(&st->time) ? "~" : "",
		     clock__fmt_duration(pctl__pct(&st->time, 99), c, sizeof(c)),
		     clock__fmt_duration(st->time.max, m, sizeof(m)));
	sbuf__printf(r, "<td>%.1f%%</td><td>", st->step_ns > 0 ?
		     (double)(100 * st->data_ns / st->step_ns) : 0.0);
	for (size_t k = 0; k < st->nmarks; k++) {
		sbuf__puts(r, k ? "; " : "");
		html(r, st->marks[k].name);
		sbuf__printf(r, " %.4g &rarr; %.4g", st->marks[k].first, st->marks[k].last);
	}
	sbuf__puts(r, "</td></tr>\n");
	d->nepochs++;
}

static void on_complete(struct tstream *t, struct tnode *n)
{
	struct report_data *d = tstream__ctx(t);
	struct rpay *p = pay(n), *pp = n->parent ? pay(n->parent) : NULL;
	int ph = n->kind < PH__COUNT ? n->kind : -1;

	if (p && pp) {
		for (int i = 0; i < PH__COUNT; i++)
			pp->phase[i] += p->phase[i];
		if (ph >= 0)
			pp->phase[ph] += secs(n);
	}
	marks(d, n->sp.marks);
	if (p && n->kind == TK_STEP && n->sp.status == SPAN_OK && n->sp.end_ns) {
		double total = secs(n);

		d->steps++;
		downsample__add(&d->total, total);
		for (int i = 0; i < PH__COUNT; i++)
			downsample__add(&d->phase[i], p->phase[i]);
		downsample__add(&d->stall, total > 0 ? p->phase[PH_DATA] / total : 0);
		if (pp && !pp->steps)
			pp->steps = calloc(1, sizeof(*pp->steps));
		if (pp && pp->steps)
			step_sum__add(pp->steps, n->sp.end_ns - n->sp.start_ns,
				      (uint64_t)(p->phase[PH_DATA] * 1e9 + 0.5), n->sp.marks);
	}
	if (p && p->steps && p->steps->steps)
		epoch_row(d, n, p->steps);
	tstream__drop_summed(t, n);	/* all of it is in its parent's numbers now */
}

static const struct tstream_ops ops = {
	.complete = on_complete,
	.flush = tstream__drop_complete_kids,
	.free_out = free_out,
};

int report_data__read(struct report_data *d, struct spool_view *v, struct rsession *s)
{
	struct tstream *t;
	int err = downsample__init(&d->total) ?: downsample__init(&d->stall);

	for (int i = 0; i < PH__COUNT && !err; i++)
		err = downsample__init(&d->phase[i]);
	d->ex.want_hangs = true;
	if (s->has_root)
		marks(d, s->root.marks);	/* its newest copy's: written before any epoch */
	t = err ? NULL : tstream__new(&ops, d);
	if (!t)
		return -ENOMEM;
	err = s->has_root ? tstream__set_root(t, &s->root) : 0;
	if (!err)
		err = view__pass(v, s, t, &d->ex);
	tstream__free(t);
	return err;
}

void report_data__free(struct report_data *d)
{
	downsample__free(&d->total);
	downsample__free(&d->stall);
	for (int i = 0; i < PH__COUNT; i++)
		downsample__free(&d->phase[i]);
	for (size_t k = 0; k < d->nmarks; k++)
		downsample__free(&d->marks[k].d);
	sbuf__free(&d->epochs);
	pass_extras__free(&d->ex);
}
