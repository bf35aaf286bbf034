// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A session's span tree rebuilt while its batches stream by (tree_stream.h). Each batch is
// taken in four steps: every copy updates or makes its node (a later copy wins), new nodes
// are linked to their parents (found in this batch or earlier; a loop is cut where it
// closes), nodes whose copy ended and whose kids all completed complete, upwards; at the
// batch's end the reader renders what completed, open nodes keep copies of their attributes,
// and started nodes flush.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "read/tree_stream.h"

#define PTR_SIZE sizeof(void *)

struct tstream {
	const struct tstream_ops *ops;
	void *ctx;
	struct tnode **table;	/* by id, chained */
	size_t table_cap, count, peak;
	struct tnode *root;
	struct tnode **tops;
	size_t ntops, tops_cap;
	struct tnode *touched, *touched_tail;	/* this batch's, by lnext */
	struct tnode **done;	/* completed in this batch, in order */
	size_t ndone, done_cap;
	struct tnode **dropped;
	size_t ndropped, dropped_cap;
	struct tnode **fresh;	/* made in this batch, in order */
	size_t nfresh, fresh_cap;
	struct span_names names;	/* every name once */
	struct tnode *spare;	/* freed nodes, by lnext: a stream makes and frees one a span */
	size_t nspare;
};

#define SPARE_MAX 4096

static struct tnode *node_alloc(struct tstream *t)
{
	struct tnode *n = t->spare;

	if (!n)
		return calloc(1, sizeof(*n));
	t->spare = n->lnext;
	t->nspare--;
	memset(n, 0, sizeof(*n));
	return n;
}

static void node_release(struct tstream *t, struct tnode *n)
{
	if (t->nspare >= SPARE_MAX) {
		free(n);
		return;
	}
	n->lnext = t->spare;
	t->spare = n;
	t->nspare++;
}

static size_t slot(uint64_t id, size_t cap)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static struct tnode *find(const struct tstream *t, uint64_t id)
{
	struct tnode *n;

	for (n = t->table[slot(id, t->table_cap)]; n; n = n->hnext)
		if (n->sp.id == id)
			return n;
	return NULL;
}

static int table_grow(struct tstream *t)
{
	size_t cap = t->table_cap * 2;
	struct tnode **tab = calloc(cap, PTR_SIZE);

	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < t->table_cap; i++) {
		for (struct tnode *n = t->table[i], *next; n; n = next) {
			size_t s = slot(n->sp.id, cap);

			next = n->hnext;
			n->hnext = tab[s];
			tab[s] = n;
		}
	}
	free(t->table);
	t->table = tab;
	t->table_cap = cap;
	return 0;
}

static int table_put(struct tstream *t, struct tnode *n)
{
	size_t s;

	if (t->count + 1 > t->table_cap && table_grow(t))
		return -ENOMEM;
	s = slot(n->sp.id, t->table_cap);
	n->hnext = t->table[s];
	t->table[s] = n;
	if (++t->count > t->peak)
		t->peak = t->count;
	return 0;
}

static void table_del(struct tstream *t, struct tnode *n)
{
	struct tnode **p = &t->table[slot(n->sp.id, t->table_cap)];

	for (; *p; p = &(*p)->hnext) {
		if (*p == n) {
			*p = n->hnext;
			t->count--;
			return;
		}
	}
}

static int push(struct tnode ***a, size_t *n, size_t *cap, struct tnode *x)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 16;
		struct tnode **b = reallocarray(*a, c, PTR_SIZE);

		if (!b)
			return -ENOMEM;
		*a = b;
		*cap = c;
	}
	(*a)[(*n)++] = x;
	return 0;
}

struct tstream *tstream__new(const struct tstream_ops *ops, void *ctx)
{
	struct tstream *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->ops = ops;
	t->ctx = ctx;
	t->table_cap = 256;
	t->table = calloc(t->table_cap, PTR_SIZE);
	if (!t->table) {
		free(t);
		return NULL;
	}
	return t;
}

void *tstream__ctx(const struct tstream *t)
{
	return t->ctx;
}

struct tnode *tstream__root(const struct tstream *t)
{
	return t->root;
}

size_t tstream__peak(const struct tstream *t)
{
	return t->peak;
}

static void drop_json(struct tnode *n)
{
	if (n->flags & TN_OWNS_JSON) {
		cJSON_Delete(n->sp.attrs);
		cJSON_Delete(n->sp.marks);
	}
	n->sp.attrs = n->sp.marks = NULL;
	n->flags &= ~TN_OWNS_JSON;
}

static void free_node(struct tstream *t, struct tnode *n)
{
	if (n->out && t->ops->free_out)
		t->ops->free_out(n);
	drop_json(n);
	free(n->kids);
	node_release(t, n);
}

static struct tnode *new_node(struct tstream *t, const struct span *sp)
{
	struct tnode *n = node_alloc(t);
	const struct span_name *name = span_names__get(&t->names, sp->name);

	if (!n || !name) {
		free(n);
		return NULL;
	}
	n->sp = *sp;
	n->sp.prev = n->sp.next = NULL;
	n->sp.name = (char *)name->s;	/* the stream's: never freed by a node */
	n->kind = name->kind;
	if (table_put(t, n)) {
		node_release(t, n);
		return NULL;
	}
	return n;
}

int tstream__set_root(struct tstream *t, const struct span *root)
{
	struct tnode *n = new_node(t, root);

	if (!n)
		return -ENOMEM;
	n->sp.attrs = cJSON_Duplicate(root->attrs, true);
	n->sp.marks = cJSON_Duplicate(root->marks, true);
	n->flags = TN_STARTED | TN_ROOT | TN_OWNS_JSON;
	t->root = n;
	return n->sp.attrs && n->sp.marks ? 0 : -ENOMEM;
}

static void touch(struct tstream *t, struct tnode *n)
{
	if (n->flags & TN_TOUCHED)
		return;
	n->flags |= TN_TOUCHED;
	n->lnext = NULL;
	if (t->touched_tail)
		t->touched_tail->lnext = n;
	else
		t->touched = n;
	t->touched_tail = n;
}

/* Whether a copy sorts before b: by start, then id. */
static bool before(const struct tnode *a, const struct tnode *b)
{
	if (a->sp.start_ns != b->sp.start_ns)
		return a->sp.start_ns < b->sp.start_ns;
	return a->sp.id < b->sp.id;
}

/* Into p's kids by start; copies come about in start order, so from the end. */
static int add_kid(struct tnode *p, struct tnode *k)
{
	size_t i;

	if (p->nkids == p->kids_cap) {
		if (p->first > p->kids_cap / 2) {	/* handed-over kids leave room at the front */
			memmove(p->kids, p->kids + p->first, (p->nkids - p->first) * PTR_SIZE);
			p->nkids -= p->first;
			p->first = 0;
		} else {
			size_t cap = p->kids_cap ? p->kids_cap * 2 : 4;
			struct tnode **a = reallocarray(p->kids, cap, PTR_SIZE);

			if (!a)
				return -ENOMEM;
			p->kids = a;
			p->kids_cap = cap;
		}
	}
	for (i = p->nkids; i > p->first && before(k, p->kids[i - 1]); i--)
		;
	memmove(p->kids + i + 1, p->kids + i, (p->nkids - i) * PTR_SIZE);
	p->kids[i] = k;
	p->nkids++;
	k->parent = p;
	k->depth = p->depth + 1;
	return 0;
}

static void remove_kid(struct tnode *p, struct tnode *k)
{
	size_t i;

	if (p->first < p->nkids && p->kids[p->first] == k) {
		p->first++;
		if (p->first == p->nkids)
			p->first = p->nkids = 0;
		return;
	}
	for (i = p->nkids; i-- > p->first;) {
		if (p->kids[i] == k) {
			memmove(p->kids + i, p->kids + i + 1, (p->nkids - i - 1) * PTR_SIZE);
			p->nkids--;
			return;
		}
	}
}

/* n and what is under it, out of the table, to be freed at the batch's end. */
static void drop_tree(struct tstream *t, struct tnode *n)
{
	for (size_t i = n->first; i < n->nkids; i++) {
		n->kids[i]->parent = NULL;
		drop_tree(t, n->kids[i]);
	}
	n->first = n->nkids = 0;
	if (!(n->flags & TN_GAP))
		table_del(t, n);
	n->flags |= TN_DROPPED;
	n->parent = NULL;
	if (push(&t->dropped, &t->ndropped, &t->dropped_cap, n))
		free_node(t, n);	/* out of memory: now (it is in no list the batch walks) */
}

void tstream__drop(struct tstream *t, struct tnode *n)
{
	if (n->flags & TN_DROPPED)
		return;
	if (n->parent) {
		remove_kid(n->parent, n);
		if (!(n->flags & TN_COMPLETE) && n->parent->waiting)
			n->parent->waiting--;
	}
	drop_tree(t, n);
}

void tstream__start(struct tstream *t, struct tnode *n)
{
	(void)t;
	n->flags |= TN_STARTED;
}

struct tnode *tstream__gap(struct tstream *t, struct tnode *n, uint64_t count)
{
	struct tnode *g = calloc(1, sizeof(*g)), *p = n->parent;

	if (!g || !p) {
		free(g);
		return NULL;
	}
	g->sp.name = n->sp.name;
	g->kind = n->kind;
	g->sp.start_ns = n->sp.start_ns;
	g->sp.id = n->sp.id;
	g->sp.index = -1;
	g->flags = TN_GAP | TN_FINAL | TN_COMPLETE | TN_RENDERED;
	g->count = count;
	g->parent = p;
	g->depth = n->depth;
	for (size_t i = p->first; i < p->nkids; i++)
		if (p->kids[i] == n)
			p->kids[i] = g;
	if (!(n->flags & TN_COMPLETE) && p->waiting)
		p->waiting--;
	drop_tree(t, n);
	return g;
}

/* Whether linking n under p would close a loop (or go past the depth a spool can hold). */
static bool loops(const struct tnode *n, const struct tnode *p)
{
	for (int d = 0; p; p = p->parent, d++)
		if (p == n || d > TSTREAM_MAX_DEPTH)
			return true;
	return false;
}

static int complete(struct tstream *t, struct tnode *n)
{
	while (n && !(n->flags & (TN_COMPLETE | TN_ROOT | TN_DROPPED)) && (n->flags & TN_FINAL) &&
	       !n->waiting) {
		struct tnode *p = n->parent;

		n->flags |= TN_COMPLETE;
		if (push(&t->done, &t->ndone, &t->done_cap, n))
			return -ENOMEM;
		if (t->ops->complete)
			t->ops->complete(t, n);	/* may drop n, or gap it: its parent still waited */
		if (p && p->waiting)
			p->waiting--;
		n = p;
	}
	return 0;
}

/* A copy of a span this batch: updates its node or makes one. */
static int take_copy(struct tstream *t, const struct span *sp)
{
	struct tnode *n = find(t, sp->id);

	if (n && (n->flags & (TN_COMPLETE | TN_ROOT)))
		return 0;	/* the root's copy is the newest already; an ended one stays */
	if (!n) {
		n = new_node(t, sp);
		if (!n)
			return -ENOMEM;
		if (push(&t->fresh, &t->nfresh, &t->fresh_cap, n))
			return -ENOMEM;
	} else {
		drop_json(n);
		if (strcmp(n->sp.name, sp->name) != 0) {
			const struct span_name *name = span_names__get(&t->names, sp->name);

			if (!name)
				return -ENOMEM;
			n->sp.name = (char *)name->s;	/* the stream's: never freed by a node */
			n->kind = name->kind;
		}
		n->sp.index = sp->index;
		n->sp.start_ns = sp->start_ns;
		n->sp.end_ns = sp->end_ns;
		n->sp.status = sp->status;
	}
	n->sp.attrs = sp->attrs;
	n->sp.marks = sp->marks;
	if (sp->status != SPAN_OPEN)
		n->flags |= TN_FINAL;
	touch(t, n);
	return 0;
}

static int link(struct tstream *t, struct tnode *n)
{
	struct tnode *p = n->sp.parent_id ? find(t, n->sp.parent_id) : NULL;

	if (p && !(p->flags & (TN_COMPLETE | TN_DROPPED)) && !loops(n, p)) {
		if (add_kid(p, n))
			return -ENOMEM;
		p->waiting++;
		return 0;
	}
	n->depth = 0;
	return push(&t->tops, &t->ntops, &t->tops_cap, n);
}

static void free_dropped(struct tstream *t)
{
	for (size_t i = 0; i < t->ndropped; i++)
		free_node(t, t->dropped[i]);
	t->ndropped = 0;
}

/* Started nodes flush, depth first: a started kid flushes its own kids. */
static void flush(struct tstream *t, struct tnode *s, bool finishing)
{
	if (t->ops->flush)
		t->ops->flush(t, s, finishing);
}

static void flush_started(struct tstream *t, bool finishing)
{
	if (t->root)
		flush(t, t->root, finishing);
}

static void render_done(struct tstream *t)
{
	for (size_t i = 0; i < t->ndone; i++) {
		struct tnode *n = t->done[i];

		if (n->flags & TN_DROPPED)
			continue;
		if (!(n->flags & TN_RENDERED) && t->ops->render) {
			t->ops->render(t, n);
			n->flags |= TN_RENDERED;
		}
		drop_json(n);	/* what the reader needed of it is in its output now */
	}
	t->ndone = 0;
}

/* The batch's end: renders, copies open nodes' attributes out of the batch, flushes. */
static int batch_end(struct tstream *t)
{
	int err = 0;

	render_done(t);
	for (struct tnode *n = t->touched, *next; n; n = next) {
		next = n->lnext;
		n->flags &= ~TN_TOUCHED;
		if (n->flags & (TN_DROPPED | TN_COMPLETE | TN_OWNS_JSON))
			continue;
		n->sp.attrs = cJSON_Duplicate(n->sp.attrs, true);
		n->sp.marks = cJSON_Duplicate(n->sp.marks, true);
		n->flags |= TN_OWNS_JSON;
		if (!n->sp.attrs || !n->sp.marks)
			err = -ENOMEM;
	}
	t->touched = t->touched_tail = NULL;
	flush_started(t, false);
	free_dropped(t);
	return err;
}

int tstream__batch(struct tstream *t, const struct batch *b)
{
	int err = 0;

	t->nfresh = 0;
	for (size_t i = 0; i < b->nsp && !err; i++)
		err = take_copy(t, &b->sp[i]);
	/* a node keeps the parent of its first copy: the writer never moves a span */
	for (size_t i = 0; !err && i < t->nfresh; i++)
		err = link(t, t->fresh[i]);
	for (struct tnode *n = t->touched; !err && n; n = n->lnext)
		if (!(n->flags & TN_DROPPED))
			err = complete(t, n);
	return batch_end(t) ?: err;
}

/* The stream ended: n and what is under it complete as they stand (kids first). */
static int force(struct tstream *t, struct tnode *n)
{
	size_t nk = n->nkids - n->first;
	struct tnode **kids = nk ? malloc(nk * PTR_SIZE) : NULL;
	int err = 0;

	if (nk && !kids)
		return -ENOMEM;
	if (nk)
		memcpy(kids, n->kids + n->first, nk * PTR_SIZE);
	for (size_t i = 0; i < nk && !err; i++)
		if (!(kids[i]->flags & (TN_COMPLETE | TN_DROPPED)))
			err = force(t, kids[i]);
	free(kids);
	if (err || (n->flags & (TN_COMPLETE | TN_ROOT | TN_DROPPED)))
		return err;
	if (!(n->flags & TN_FINAL))
		n->flags |= TN_FINAL | TN_OPEN_AT_END;
	n->waiting = 0;
	return complete(t, n);
}

static int by_start(const void *a, const void *b)
{
	const struct tnode *x = *(struct tnode *const *)a, *y = *(struct tnode *const *)b;

	return before(x, y) ? -1 : before(y, x);
}

int tstream__finish(struct tstream *t)
{
	int err = 0;

	if (t->root)
		err = force(t, t->root);
	for (size_t i = 0; i < t->ntops && !err; i++)
		err = force(t, t->tops[i]);
	render_done(t);
	if (t->root)
		flush(t, t->root, true);
	if (t->ntops > 1)
		qsort(t->tops, t->ntops, PTR_SIZE, by_start);
	for (size_t i = 0; i < t->ntops; i++)
		if (!(t->tops[i]->flags & TN_DROPPED) && t->ops->top)
			t->ops->top(t, t->tops[i]);
	free_dropped(t);
	return err;
}

static void free_tree(struct tstream *t, struct tnode *n)
{
	for (size_t i = n->first; i < n->nkids; i++)
		free_tree(t, n->kids[i]);
	free_node(t, n);
}

void tstream__free(struct tstream *t)
{
	if (!t)
		return;
	free_dropped(t);
	if (t->root)
		free_tree(t, t->root);
	for (size_t i = 0; i < t->ntops; i++)
		if (!(t->tops[i]->flags & TN_DROPPED))
			free_tree(t, t->tops[i]);
	free_dropped(t);
	free(t->tops);
	free(t->done);
	free(t->dropped);
	free(t->fresh);
	free(t->table);
	while (t->spare) {
		struct tnode *n = t->spare;

		t->spare = n->lnext;
		free(n);
	}
	span_names__free(&t->names);
	free(t);
}
