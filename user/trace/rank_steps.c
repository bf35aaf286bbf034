// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A rank's steps streamed out of its batches (rank_steps.h): each span's phase times go up
// to its parent as it completes, then what is under it goes.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "trace/rank_steps.h"
#include "read/tree_stream.h"

struct rank_steps {
	struct spool_view *v;
	struct rsession *s;
	struct tstream *t;
	size_t next;		/* the next batch file */
	bool finished;		/* every batch read, the stream finished */
	int err;
	struct step_times *q;	/* closed steps, q[head..n) */
	size_t head, n, cap;
	struct step_times popped;
};

struct ppay {
	uint64_t phase[PH__COUNT], waited[PH__COUNT];
};

static struct ppay *pay(struct tnode *n)
{
	if (!n->out)
		n->out = calloc(1, sizeof(struct ppay));
	return n->out;
}

static void free_out(struct tnode *n)
{
	free(n->out);
	n->out = NULL;
}

static uint64_t dur(const struct tnode *n)
{
	return n->sp.end_ns > n->sp.start_ns ? n->sp.end_ns - n->sp.start_ns : 0;
}

static void enqueue(struct rank_steps *r, const struct tnode *n, const struct ppay *p)
{
	if (r->head && r->head == r->n)
		r->head = r->n = 0;
	if (r->n == r->cap) {
		if (r->head) {
			memmove(r->q, r->q + r->head, (r->n - r->head) * sizeof(*r->q));
			r->n -= r->head;
			r->head = 0;
		} else {
			size_t cap = r->cap ? r->cap * 2 : 256;
			struct step_times *q = reallocarray(r->q, cap, sizeof(*q));

			if (!q) {
				r->err = -ENOMEM;
				return;
			}
			r->q = q;
			r->cap = cap;
		}
	}
	r->q[r->n] = (struct step_times){ .index = n->sp.index, .total = dur(n) };
	if (p) {
		memcpy(r->q[r->n].phase, p->phase, sizeof(r->q[r->n].phase));
		memcpy(r->q[r->n].waited, p->waited, sizeof(r->q[r->n].waited));
	}
	r->n++;
}

static void on_complete(struct tstream *t, struct tnode *n)
{
	struct rank_steps *r = tstream__ctx(t);
	struct ppay *p = pay(n), *pp = n->parent ? pay(n->parent) : NULL;
	int ph = n->kind < PH__COUNT ? n->kind : -1;

	/* phases under a step, wherever they sit (collective_wait inside backward) */
	if (pp && p) {
		for (int i = 0; i < PH__COUNT; i++) {
			pp->phase[i] += p->phase[i];
			pp->waited[i] += p->waited[i];
		}
		if (ph >= 0)
			pp->phase[ph] += dur(n);
		if (ph >= 0 && ph != PH_COLLECTIVE)	/* the waits under it, at any depth */
			pp->waited[ph] += p->phase[PH_COLLECTIVE];
	}
	if (n->kind == TK_STEP && n->sp.status == SPAN_OK)
		enqueue(r, n, p);
	tstream__drop_summed(t, n);	/* all of it is in its parent's numbers now */
}

static const struct tstream_ops ops = {
	.complete = on_complete,
	.flush = tstream__drop_complete_kids,
	.free_out = free_out,
};

struct rank_steps *rank_steps__new(struct spool_view *v, struct rsession *s)
{
	struct rank_steps *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->v = v;
	r->s = s;
	r->t = tstream__new(&ops, r);
	if (!r->t || (s->has_root && tstream__set_root(r->t, &s->root))) {
		rank_steps__free(r);
		return NULL;
	}
	return r;
}

const struct rsession *rank_steps__session(const struct rank_steps *r)
{
	return r->s;
}

/* One more batch, or the end. */
static void read_one(struct rank_steps *r)
{
	struct batch b;

	while (r->next < r->s->files->nfiles) {
		if (spool_src__read(&r->v->src, r->s->files, r->next++, &b))
			continue;
		if (tstream__batch(r->t, &b))
			r->err = -ENOMEM;
		batch__free(&b);
		return;
	}
	if (tstream__finish(r->t))
		r->err = -ENOMEM;
	r->finished = true;
}

int rank_steps__past(struct rank_steps *r, long idx)
{
	while (!r->finished && !r->err && (r->head == r->n || r->q[r->n - 1].index <= idx))
		read_one(r);
	return r->err;
}

bool rank_steps__has_more(const struct rank_steps *r)
{
	return r->head < r->n || !r->finished;
}

const struct step_times *rank_steps__at(const struct rank_steps *r, long idx)
{
	for (size_t i = r->head; i < r->n && r->q[i].index <= idx; i++)	/* index order */
		if (r->q[i].index == idx)
			return &r->q[i];
	return NULL;
}

const struct step_times *rank_steps__pop_upto(struct rank_steps *r, long idx)
{
	if (r->head == r->n || r->q[r->head].index > idx)
		return NULL;
	r->popped = r->q[r->head++];
	return &r->popped;
}

void rank_steps__free(struct rank_steps *r)
{
	if (!r)
		return;
	tstream__free(r->t);
	free(r->q);
	free(r);
}
