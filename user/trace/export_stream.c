// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// trace's JSON, CSV and --name output, rendered as spans complete (export_stream.h).
#include <stdlib.h>
#include <string.h>
#include "trace/export.h"
#include "trace/export_stream.h"
#include "read/view.h"

struct xpay {
	char *text;		/* the span and what is under it, when complete */
	size_t held;		/* bytes its complete kids hold (texts, nodes) */
	char *late;		/* begun early: what comes after its kids */
	size_t emitted;		/* begun: kids written */
};

static struct xpay *pay(struct tnode *n)
{
	if (!n->out)
		n->out = calloc(1, sizeof(struct xpay));
	return n->out;
}

static void free_out(struct tnode *n)
{
	struct xpay *p = n->out;

	free(p->text);
	free(p->late);
	free(p);
	n->out = NULL;
}

static bool flat(const struct export_stream *x)
{
	return x->mode >= EXPORT_FLAT_TEXT;
}

static bool matches(const struct export_stream *x, const struct tnode *n)
{
	return !x->name || !strcmp(x->name, n->sp.name);
}

/* The span's own output: a row, a line, a flat item (empty if it is not one asked for). */
static void own(struct sbuf *b, const struct export_stream *x, const struct tnode *n)
{
	char line[4096];

	switch (x->mode) {
	case EXPORT_CSV:
	case EXPORT_FLAT_CSV:
		if (matches(x, n))
			export__csv_row(b, x->sid, x->rank, &n->sp);
		break;
	case EXPORT_FLAT_TEXT:
		if (matches(x, n)) {
			sbuf__puts(b, span__format_line(&n->sp, line, sizeof(line)));
			sbuf__add(b, "\n", 1);
		}
		break;
	case EXPORT_FLAT_JSON:
		if (matches(x, n)) {
			export__span_json_open(b, &n->sp, x->sid, x->rank);
			sbuf__add(b, "}", 1);
		}
		break;
	case EXPORT_JSON:
		export__span_json_open(b, &n->sp, NULL, 0);
		break;
	}
}

/* Kids' texts after what b holds: JSON items with commas, flat JSON items with ",\n". */
static void join(struct sbuf *b, const struct export_stream *x, const char *text, size_t *n)
{
	if (!text || !*text)
		return;
	if (*n && x->mode == EXPORT_JSON)
		sbuf__add(b, ",", 1);
	else if (*n && x->mode == EXPORT_FLAT_JSON)
		sbuf__add(b, ",\n", 2);
	sbuf__puts(b, text);
	(*n)++;
}

static void on_complete(struct tstream *t, struct tnode *n)
{
	struct export_stream *x = tstream__ctx(t);
	struct xpay *p = pay(n);
	struct sbuf b = {};

	if (!p || !(n->flags & TN_STARTED))
		return;
	/* begun early: what follows its kids, from its copy now */
	if (x->mode == EXPORT_JSON) {
		struct sbuf f = {};

		export__span_json_open(&f, &n->sp, NULL, 0);
		sbuf__add(&b, "]", 1);
		if (f.p && f.n > 1) {
			sbuf__add(&b, ",", 1);
			sbuf__add(&b, f.p + 1, f.n - 1);	/* its keys, after "children" */
		}
		sbuf__add(&b, "}", 1);
		sbuf__free(&f);
	} else {
		own(&b, x, n);
	}
	p->late = sbuf__take(&b);
}

static void on_render(struct tstream *t, struct tnode *n)
{
	struct export_stream *x = tstream__ctx(t);
	struct xpay *p = pay(n), *pp;
	struct sbuf b = {};
	size_t items = 0;

	if (!p || (n->flags & TN_STARTED))
		return;
	own(&b, x, n);
	if (flat(x) && b.n)
		items = 1;
	if (x->mode == EXPORT_JSON)
		sbuf__puts(&b, ",\"children\":[");
	while (n->first < n->nkids) {
		struct tnode *k = n->kids[n->first];
		struct xpay *kp = k->out;

		if (x->mode != EXPORT_JSON || n->depth < TSTREAM_MAX_DEPTH - 1)
			join(&b, x, kp ? kp->text : NULL, &items);
		tstream__drop(t, k);
	}
	if (x->mode == EXPORT_JSON)
		sbuf__puts(&b, "]}");
	p->text = sbuf__take(&b);
	/* what keeping it costs its parent: its text and its node */
	if (n->parent && (pp = pay(n->parent)))
		pp->held += (p->text ? strlen(p->text) : 0) + sizeof(*n) + sizeof(*p);
}

/* Writes text into begun node s's output. */
static void put(struct export_stream *x, struct tnode *s, const char *text)
{
	struct xpay *sp = pay(s);

	if (!text || !*text || !sp)
		return;
	if (x->mode == EXPORT_FLAT_JSON) {
		if (!*x->flat_first)
			fputs(",\n", x->out);
		*x->flat_first = false;
	} else if (x->mode == EXPORT_JSON && sp->emitted) {
		fputc(',', x->out);
	}
	fputs(text, x->out);
	sp->emitted++;
}

/* Hands over s's kids in order (the newest TSTREAM_SETTLE held back until the end), begins
 * a long open one early. Returns whether all of them are out. */
static bool flush_kids(struct tstream *t, struct tnode *s, bool finishing)
{
	struct export_stream *x = tstream__ctx(t);

	while (s->first < s->nkids) {
		struct tnode *k = s->kids[s->first];
		struct xpay *kp = pay(k);

		if (!kp)
			return false;
		if (k->flags & TN_STARTED) {
			if (!flush_kids(t, k, finishing || (k->flags & TN_COMPLETE)) ||
			    !(k->flags & TN_COMPLETE))
				return false;
			if (x->mode == EXPORT_FLAT_JSON && kp->late && *kp->late) {
				if (!*x->flat_first)
					fputs(",\n", x->out);
				*x->flat_first = false;
			}
			if (kp->late)
				fputs(kp->late, x->out);
			tstream__drop(t, k);
			continue;
		}
		if (!(k->flags & TN_COMPLETE)) {
			if (finishing || kp->held < EXPORT_EARLY_BYTES)
				return false;
			/* a long one still open: begun now, its kids stream */
			if (x->mode == EXPORT_JSON)
				put(x, s, "{\"children\":[");
			else if (pay(s))
				pay(s)->emitted++;
			tstream__start(t, k);
			continue;
		}
		if (!finishing && s->nkids - s->first <= TSTREAM_SETTLE)
			return false;
		put(x, s, kp->text);
		tstream__drop(t, k);
	}
	return true;
}

static void on_flush(struct tstream *t, struct tnode *s, bool finishing)
{
	struct export_stream *x = tstream__ctx(t);

	if (flush_kids(t, s, finishing) && finishing && (s->flags & TN_ROOT))
		export_stream__end_root(x, t);
}

static void on_top(struct tstream *t, struct tnode *n)
{
	struct export_stream *x = tstream__ctx(t);
	struct xpay *p = n->out;

	if (!p || !p->text || !*p->text)
		return;
	if (x->mode == EXPORT_JSON && x->spans_out)
		fputc(',', x->out);
	if (x->mode == EXPORT_FLAT_JSON) {
		if (!*x->flat_first)
			fputs(",\n", x->out);
		*x->flat_first = false;
	}
	fputs(p->text, x->out);
	x->spans_out++;
}

const struct tstream_ops export_stream__ops = {
	.complete = on_complete,
	.render = on_render,
	.flush = on_flush,
	.top = on_top,
	.free_out = free_out,
};

void export_stream__begin_root(struct export_stream *x, struct tstream *t)
{
	struct tnode *root = tstream__root(t);
	struct sbuf b = {};

	if (!root)
		return;
	own(&b, x, root);
	if (x->mode == EXPORT_JSON)
		sbuf__puts(&b, ",\"children\":[");
	if (b.p) {
		if (x->mode == EXPORT_FLAT_JSON) {
			if (!*x->flat_first)
				fputs(",\n", x->out);
			*x->flat_first = false;
		}
		fputs(b.p, x->out);
	}
	sbuf__free(&b);
	x->spans_out++;
}

void export_stream__end_root(struct export_stream *x, struct tstream *t)
{
	if (tstream__root(t) && x->mode == EXPORT_JSON)
		fputs("]}", x->out);
}
