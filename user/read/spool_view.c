// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Each session's newest state from its newest batch (spool_view.h).
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "read/spool_view.h"

#define PTR_SIZE sizeof(void *)

int rspan__copy(struct span *dst, const struct span *src)
{
	*dst = *src;
	dst->prev = dst->next = NULL;
	dst->name = strdup(src->name);
	dst->attrs = cJSON_Duplicate(src->attrs, true);
	dst->marks = cJSON_Duplicate(src->marks, true);
	if (!dst->name || !dst->attrs || !dst->marks) {
		rspan__free(dst);
		return -ENOMEM;
	}
	return 0;
}

void rspan__free(struct span *sp)
{
	free(sp->name);
	cJSON_Delete(sp->attrs);
	cJSON_Delete(sp->marks);
	sp->name = NULL;
	sp->attrs = sp->marks = NULL;
}

/* The root of a batch: a span without parent, the session's own first, lowest id first. */
static bool better_root(const struct span *sp, const struct span *cur, bool have)
{
	bool named = !strcmp(sp->name, "cirron.session"), cur_named;

	if (sp->parent_id)
		return false;
	if (!have)
		return true;
	cur_named = !strcmp(cur->name, "cirron.session");
	if (named != cur_named)
		return named;
	return sp->id < cur->id;
}

static int take_root(struct rsession *s, const struct span *sp)
{
	if (s->has_root)
		rspan__free(&s->root);
	s->has_root = false;
	if (rspan__copy(&s->root, sp))
		return -ENOMEM;
	s->has_root = true;
	return 0;
}

static struct span *state_find(struct rsession *s, uint64_t id)
{
	for (size_t i = 0; i < s->nstate; i++)
		if (s->state[i].id == id)
			return &s->state[i];
	return NULL;
}

static int state_put(struct rsession *s, const struct span *sp)
{
	struct span *have = state_find(s, sp->id), *a;

	if (have) {
		rspan__free(have);
		return rspan__copy(have, sp);
	}
	a = reallocarray(s->state, s->nstate + 1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	s->state = a;
	if (rspan__copy(&a[s->nstate], sp))
		return -ENOMEM;
	s->nstate++;
	return 0;
}

static void state_drop(struct rsession *s, uint64_t id)
{
	struct span *have = state_find(s, id);

	if (!have)
		return;
	rspan__free(have);
	*have = s->state[--s->nstate];
}

/* A batch that carries every open span: the spans not ok in it, with their parents there. */
static int state_from_batch(struct rsession *s, const struct batch *b)
{
	bool more = true;

	for (size_t k = 0; k < b->nsp; k++)
		if (b->sp[k].status != SPAN_OK && state_put(s, &b->sp[k]))
			return -ENOMEM;
	/* parents of what is kept, whatever their status (a span made incomplete by lost
	 * events sits under a step that ended) */
	while (more) {
		more = false;
		for (size_t k = 0; k < b->nsp; k++) {
			const struct span *up = &b->sp[k];

			if (state_find(s, up->id))
				continue;
			for (size_t i = 0; i < s->nstate; i++) {
				if (s->state[i].parent_id != up->id)
					continue;
				if (state_put(s, up))
					return -ENOMEM;
				more = true;
				break;
			}
		}
	}
	return 0;
}

static int add_seq(uint64_t **a, size_t *n, uint64_t seq)
{
	uint64_t *b;

	for (size_t i = 0; i < *n; i++)
		if ((*a)[i] == seq)
			return 0;
	b = reallocarray(*a, *n + 1, sizeof(**a));
	if (!b)
		return -ENOMEM;
	*a = b;
	(*a)[(*n)++] = seq;
	return 0;
}

/* An older writer's spool (no all_open): read through once for the root's newest copy and
 * the spans not ok at the end, and note the batches with hang records. */
static int scan_all(struct spool_view *v, struct rsession *s)
{
	int err = 0;

	for (size_t k = 0; k < s->files->nfiles && !err; k++) {
		struct batch b;

		if (spool_src__read(&v->src, s->files, k, &b))
			continue;
		s->final |= b.final;
		if (cJSON_GetArraySize(b.hangs))
			err = add_seq(&s->hang_seqs, &s->nhang_seqs, b.seq);
		for (size_t i = 0; i < b.nsp && !err; i++) {
			const struct span *sp = &b.sp[i];

			if (better_root(sp, &s->root, s->has_root) ||
			    (s->has_root && sp->id == s->root.id))
				err = take_root(s, sp);	/* a later copy wins */
			if (!err && sp->status == SPAN_OK)
				state_drop(s, sp->id);
			else if (!err)
				err = state_put(s, sp);
		}
		batch__free(&b);
	}
	return err;
}

static int index_session(struct spool_view *v, struct ssession *ss, struct rsession **out)
{
	struct rsession *s = calloc(1, sizeof(*s));
	struct batch b = {};
	struct span best = {};
	const cJSON *js;
	bool have = false;
	size_t k;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->files = ss;
	for (k = ss->nfiles; k-- > 0;)
		if (!spool_src__read(&v->src, ss, k, &b))
			break;
	if (!b.json) {	/* nothing readable: no session to show */
		free(s);
		return 0;
	}
	s->id = strdup(b.id);
	s->host = strdup(b.host);
	s->health = cJSON_Duplicate(b.health, true);
	if (!s->id || !s->host || !s->health)
		goto oom;
	s->pid = b.pid;
	s->rank = b.rank;
	s->local_rank = b.local_rank;
	s->world_size = b.world_size;
	s->final = b.final;
	s->last_seq = b.seq;
	s->written_ns = b.written_ns;
	s->start_ns = b.written_ns;
	for (size_t i = 0; i < b.nsp; i++) {
		if (b.sp[i].start_ns < s->start_ns)
			s->start_ns = b.sp[i].start_ns;
		if (better_root(&b.sp[i], &best, have)) {
			best = b.sp[i];
			have = true;
		}
	}
	if (have && take_root(s, &best))
		goto oom;
	if (b.all_open) {
		s->state_known = true;
		cJSON_ArrayForEach(js, b.hang_batches) {
			if (cJSON_IsNumber(js) && js->valuedouble >= 0 &&
			    add_seq(&s->hang_seqs, &s->nhang_seqs, (uint64_t)js->valuedouble))
				goto oom;
		}
		if (cJSON_GetArraySize(b.hangs) && add_seq(&s->hang_seqs, &s->nhang_seqs, b.seq))
			goto oom;
		if (state_from_batch(s, &b))
			goto oom;
	} else {
		/* an older writer's: the open state needs a pass over every batch, made when a view
		 * asks for it (spool_view__state); only a missing root is looked for now, since
		 * the order of sessions and their roles come from it */
		batch__free(&b);
		if (!s->has_root) {
			s->state_known = true;
			if (scan_all(v, s))
				goto oom;
		}
	}
	if (b.json)
		batch__free(&b);
	if (s->has_root)
		s->start_ns = s->root.start_ns;
	*out = s;
	return 0;
oom:
	batch__free(&b);
	*out = s;	/* freed by the caller with the rest */
	return -ENOMEM;
}

static int newest_first(const void *a, const void *b)
{
	const struct rsession *x = *(struct rsession *const *)a, *y = *(struct rsession *const *)b;

	if (x->start_ns != y->start_ns)
		return x->start_ns > y->start_ns ? -1 : 1;
	return strcmp(x->id, y->id);
}

int spool_view__index(struct spool_view *v, struct spool_src *src)
{
	int err = 0;

	*v = (struct spool_view){ .src = *src };
	*src = (struct spool_src){};
	v->sessions = calloc(v->src.nsessions + 1, PTR_SIZE);
	if (!v->sessions)
		return -ENOMEM;
	for (size_t i = 0; i < v->src.nsessions && !err; i++) {
		struct rsession *s;

		err = index_session(v, &v->src.sessions[i], &s);
		if (s)
			v->sessions[v->nsessions++] = s;
	}
	if (v->nsessions > 1)
		qsort(v->sessions, v->nsessions, PTR_SIZE, newest_first);
	return err;
}

static int by_seq(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The file of seq in the session's listing, or -1. */
static long file_of(const struct ssession *ss, uint64_t seq)
{
	size_t lo = 0, hi = ss->nfiles;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ss->files[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < ss->nfiles && ss->files[lo].seq == seq ? (long)lo : -1;
}

int spool_view__state(struct spool_view *v, struct rsession *s)
{
	int err = 0;

	if (!s->state_known) {
		s->state_known = true;
		err = scan_all(v, s);
	}
	return err;
}

const cJSON *spool_view__hangs(struct spool_view *v, struct rsession *s)
{
	const cJSON *js;

	spool_view__state(v, s);	/* an older writer's spool: the batches are found by it */
	if (s->hangs || !s->nhang_seqs)
		return s->hangs;
	qsort(s->hang_seqs, s->nhang_seqs, sizeof(uint64_t), by_seq);
	s->hangs = cJSON_CreateArray();
	for (size_t i = 0; s->hangs && i < s->nhang_seqs; i++) {
		long k = file_of(s->files, s->hang_seqs[i]);
		struct batch b;

		if (k < 0 || spool_src__read(&v->src, s->files, (size_t)k, &b))
			continue;	/* removed by --max-spool-mb, or reported */
		cJSON_ArrayForEach(js, b.hangs) {
			if (cJSON_IsObject(js))
				cJSON_AddItemToArray(s->hangs, cJSON_Duplicate(js, true));
		}
		batch__free(&b);
	}
	return s->hangs;
}

const cJSON *spool_view__sys_last(struct spool_view *v, struct rsession *s)
{
	const cJSON *js, *best = NULL;
	uint64_t ts, best_ts = 0;

	if (s->sys_looked)
		return s->sys_last;
	s->sys_looked = true;
	for (size_t k = s->files->nfiles; k-- > 0 && !s->sys_last;) {
		struct batch b;

		if (spool_src__read(&v->src, s->files, k, &b))
			continue;
		best = NULL;
		cJSON_ArrayForEach(js, b.sys) {
			if (cJSON_IsObject(js) && batch__u64(js, "ts_ns", &ts) &&
			    (!best || ts > best_ts)) {
				best = js;
				best_ts = ts;
			}
		}
		if (best)
			s->sys_last = cJSON_Duplicate(best, true);
		batch__free(&b);
	}
	return s->sys_last;
}

static void free_session(struct rsession *s)
{
	if (s->has_root)
		rspan__free(&s->root);
	for (size_t i = 0; i < s->nstate; i++)
		rspan__free(&s->state[i]);
	free(s->state);
	free(s->hang_seqs);
	cJSON_Delete(s->health);
	cJSON_Delete(s->hangs);
	cJSON_Delete(s->sys_last);
	free(s->id);
	free(s->host);
	free(s);
}

void spool_view__free(struct spool_view *v)
{
	for (size_t i = 0; i < v->nsessions; i++)
		free_session(v->sessions[i]);
	free(v->sessions);
	spool_src__free(&v->src);
	*v = (struct spool_view){};
}
