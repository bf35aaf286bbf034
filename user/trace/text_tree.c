// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// trace's text tree, rendered as spans complete, long runs elided as they grow (text_tree.h).
#include <stdlib.h>
#include <string.h>
#include "read/phases.h"
#include "common/sbuf.h"
#include "trace/step_sum.h"
#include "trace/text_tree.h"
#include "read/view.h"

/* Entries a run keeps whole behind its newest: its last 2, and room for late ones. */
#define KEEP (TSTREAM_SETTLE + 2)

struct tpay {
	char *text;		/* the span's lines and those of its kids */
	char *oneline;		/* a span with steps: its line and its steps' summary */
	uint64_t data_ns;	/* data_load time in it and under it */
	bool oneline_only;	/* in a long run's middle: its summary line is all it shows */
	struct step_sum *steps;	/* its kids that are steps */
	/* a started node's flush: the run being handed out */
	const char *run_name;	/* the stream's copy of its name */
	uint64_t run_pos, gap;
};

static struct tpay *pay(struct tnode *n)
{
	if (!n->out)
		n->out = calloc(1, sizeof(struct tpay));
	return n->out;
}

static void free_out(struct tnode *n)
{
	struct tpay *p = n->out;

	free(p->text);
	free(p->oneline);
	if (p->steps) {
		step_sum__free(p->steps);
		free(p->steps);
	}
	free(p);
	n->out = NULL;
}

static uint64_t dur(const struct tnode *n)
{
	return n->sp.end_ns > n->sp.start_ns ? n->sp.end_ns - n->sp.start_ns : 0;
}

static uint64_t count_of(const struct tnode *n)
{
	return n->flags & TN_GAP ? n->count : 1;
}

static bool summed(const struct tnode *n)
{
	const struct tpay *p = n->out;

	return p && p->steps && p->steps->steps;
}

/* "  epoch[0] - 142us {loss=0.5} (2 marks)", without the newline */
static void line(struct sbuf *b, const struct span *sp, int depth)
{
	char text[4096];
	int marks = cJSON_GetArraySize(sp->marks);

	span__format_line(sp, text, sizeof(text));
	sbuf__indent(b, depth * 2);
	sbuf__puts(b, text + strlen(SPAN_LINE_PREFIX));
	if (marks)
		sbuf__printf(b, " (%d marks)", marks);
}

void text_tree__root_line(FILE *f, const struct span *root)
{
	struct sbuf b = {};

	line(&b, root, 0);
	if (b.p)
		fprintf(f, "%s\n", b.p);
	sbuf__free(&b);
}

static void make_oneline(struct tnode *n)
{
	struct tpay *p = pay(n);
	struct sbuf b = {};
	char sum[1024];

	if (!p || p->oneline || !summed(n))
		return;
	line(&b, &n->sp, n->depth);
	sbuf__printf(&b, "; %s\n", step_sum__format(p->steps, sum, sizeof(sum)));
	p->oneline = sbuf__take(&b);
}

static void gap_line(struct sbuf *b, const struct tnode *parent, struct tpay *pp)
{
	if (!pp->gap)
		return;
	sbuf__indent(b, parent->depth * 2 + 2);
	sbuf__printf(b, "... %llu more %s spans ...\n", (unsigned long long)pp->gap,
		     pp->run_name ? pp->run_name : "?");
	pp->gap = 0;
}

/* Hands out parent's kids from its first on, each whole, as a one-line summary, or counted,
 * as far as their place in their run is known (all of it when finishing); drops each. */
static void run_emit(struct tstream *t, struct tnode *parent, struct sbuf *b, bool finishing)
{
	struct text_tree *tt = tstream__ctx(t);
	struct tpay *pp = pay(parent);

	if (!pp)
		return;
	while (parent->first < parent->nkids) {
		size_t i = parent->first, j;
		struct tnode *k = parent->kids[i];
		const char *name = k->sp.name;
		uint64_t seen, pos;
		bool ended, full;

		if (!(k->flags & TN_COMPLETE) || (!finishing && parent->nkids - i <= TSTREAM_SETTLE))
			break;
		if (pp->run_name != name) {
			gap_line(b, parent, pp);
			pp->run_name = name;	/* the stream's copy: one per name */
			pp->run_pos = 0;
		}
		seen = pos = pp->run_pos;
		for (j = i; j < parent->nkids && parent->kids[j]->sp.name == name; j++)
			seen += count_of(parent->kids[j]);
		ended = finishing || j < parent->nkids;
		if (tt->all || pos < 3)
			full = true;
		else if (ended)
			full = seen <= TRACE_ELIDE_RUN || pos >= seen - 2;
		else if (seen > TRACE_ELIDE_RUN && pos + KEEP < seen)
			full = false;
		else
			break;	/* its place is not known yet */
		if (k->flags & TN_GAP) {
			pp->gap += k->count;
		} else if (full) {
			gap_line(b, parent, pp);
			if (k->out && ((struct tpay *)k->out)->text)
				sbuf__puts(b, ((struct tpay *)k->out)->text);
		} else if (summed(k)) {
			gap_line(b, parent, pp);
			make_oneline(k);
			if (((struct tpay *)k->out)->oneline)
				sbuf__puts(b, ((struct tpay *)k->out)->oneline);
		} else {
			pp->gap++;
		}
		pp->run_pos += count_of(k);
		tstream__drop(t, k);
	}
	if (finishing)
		gap_line(b, parent, pp);
}

/* A long run's middle, once its place there is sure: a span with steps keeps its summary
 * line only, the others become a count. */
static void compress(struct tstream *t, struct tnode *parent, struct tnode *n)
{
	struct tpay *pp = parent->out;
	size_t s, e, i;
	uint64_t seen, pos;

	for (i = parent->nkids; i-- > parent->first && parent->kids[i] != n;)
		;
	if (i < parent->first || i >= parent->nkids)
		return;
	for (s = i; s > parent->first && parent->kids[s - 1]->sp.name == n->sp.name; s--)
		;
	for (e = i; e < parent->nkids && parent->kids[e]->sp.name == n->sp.name; e++)
		;
	pos = s == parent->first && pp && pp->run_name == n->sp.name ? pp->run_pos : 0;
	seen = pos;
	for (i = s; i < e; i++)
		seen += count_of(parent->kids[i]);
	if (seen <= TRACE_ELIDE_RUN)
		return;
	for (i = s; i < e && pos + KEEP < seen;) {
		struct tnode *k = parent->kids[i];
		struct tpay *kp = k->out;
		uint64_t c = count_of(k);

		if (pos < 3 || (k->flags & TN_GAP) || !(k->flags & TN_COMPLETE) ||
		    (kp && kp->oneline_only)) {
			pos += c;
			i++;
			continue;
		}
		if (summed(k)) {
			make_oneline(k);	/* from its copy, or kept beside its lines */
			free(kp->text);
			kp->text = NULL;
			kp->oneline_only = true;
			pos += c;
			i++;
		} else if (i > s && (parent->kids[i - 1]->flags & TN_GAP)) {
			parent->kids[i - 1]->count += c;
			tstream__drop(t, k);
			e--;
			pos += c;
		} else {
			tstream__gap(t, k, c);
			pos += c;
			i++;
		}
	}
}

static void on_complete(struct tstream *t, struct tnode *n)
{
	struct text_tree *tt = tstream__ctx(t);
	struct tpay *p = pay(n), *pp;
	struct tnode *parent = n->parent;

	if (!p)
		return;
	if (n->kind == PH_DATA)
		p->data_ns += dur(n);
	if (!parent)
		return;
	pp = pay(parent);
	if (!pp)
		return;
	pp->data_ns += p->data_ns;
	if (n->kind == TK_STEP && n->sp.status == SPAN_OK && n->sp.end_ns) {
		if (!pp->steps)
			pp->steps = calloc(1, sizeof(*pp->steps));
		if (pp->steps)
			step_sum__add(pp->steps, dur(n), p->data_ns, n->sp.marks);
	}
	if (n->kind == TK_REQUEST && (parent->flags & TN_ROOT)) {
		tt->req.all++;
		if (n->sp.status == SPAN_OK && n->sp.end_ns) {
			const cJSON *v;

			pctl__add(&tt->req.latency, dur(n));
			v = cJSON_GetObjectItemCaseSensitive(n->sp.attrs, "ttft_ns");
			if (cJSON_IsNumber(v) && v->valuedouble >= 0)
				pctl__add(&tt->req.ttft, (uint64_t)v->valuedouble);
			else if (cJSON_IsRaw(v) && v->valuestring)
				pctl__add(&tt->req.ttft, strtoull(v->valuestring, NULL, 10));
			v = cJSON_GetObjectItemCaseSensitive(n->sp.attrs, "decode_tokens_per_s");
			if (cJSON_IsNumber(v) && v->valuedouble >= 0)	/* tokens/s x 1000: exact */
				pctl__add(&tt->req.rate, (uint64_t)(v->valuedouble * 1000 + 0.5));
		}
	}
	if (!tt->all)
		compress(t, parent, n);
}

static void on_render(struct tstream *t, struct tnode *n)
{
	struct tpay *p = pay(n);
	struct sbuf b = {};
	char sum[1024];

	if (!p)
		return;
	if (p->oneline_only) {	/* what is under it is not shown */
		while (n->first < n->nkids)
			tstream__drop(t, n->kids[n->first]);
		return;
	}
	line(&b, &n->sp, n->depth);
	sbuf__puts(&b, "\n");
	if (summed(n)) {
		step_sum__format(p->steps, sum, sizeof(sum));
		sbuf__indent(&b, n->depth * 2 + 2);
		sbuf__printf(&b, "%s\n", sum);
		make_oneline(n);
	}
	if (n->first < n->nkids && n->depth >= TSTREAM_MAX_DEPTH) {
		sbuf__indent(&b, n->depth * 2 + 2);
		sbuf__puts(&b, "... deeper spans not shown ...\n");
		while (n->first < n->nkids)
			tstream__drop(t, n->kids[n->first]);
	}
	run_emit(t, n, &b, true);
	p->text = sbuf__take(&b);
}

static void on_flush(struct tstream *t, struct tnode *s, bool finishing)
{
	struct text_tree *tt = tstream__ctx(t);
	struct sbuf b = {};

	run_emit(t, s, &b, finishing);
	if (b.p)
		fputs(b.p, tt->out);
	sbuf__free(&b);
}

static void on_top(struct tstream *t, struct tnode *n)
{
	struct text_tree *tt = tstream__ctx(t);
	struct tpay *p = n->out;

	if (p && p->text)
		fputs(p->text, tt->out);
}

const struct tstream_ops text_tree__ops = {
	.complete = on_complete,
	.render = on_render,
	.flush = on_flush,
	.top = on_top,
	.free_out = free_out,
};

void text_tree__free(struct text_tree *tt)
{
	pctl__free(&tt->req.latency);
	pctl__free(&tt->req.ttft);
	pctl__free(&tt->req.rate);
}
