// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `trace --ranks`: the ranks of a distributed job side by side, step by step. In a
// synchronous job every rank's step takes about as long (they wait for each other in the
// gradient all-reduce), so a straggler shows in what it does with the time: more data_load,
// forward, backward or optimizer_step, and less collective_wait, than the other ranks.
#include <stdlib.h>
#include <string.h>
#include "read/trace_ranks.h"
#include "read/view.h"
#include "tree/clock.h"

enum phase { PH_DATA, PH_FORWARD, PH_BACKWARD, PH_OPTIMIZER, PH_COLLECTIVE, PH__COUNT };
static const char *const phase_names[PH__COUNT] = {
	"data_load", "forward", "backward", "optimizer_step", "collective_wait",
};

#define RANKS_MAX 1024
#define STRAGGLER_SHARE 0.6	/* slower in at least this share of the steps ... */
#define STRAGGLER_MIN_NS 1000000	/* ... by at least 1 ms of busy time ... */
#define STRAGGLER_RATIO 1.2	/* ... and 20% over the other ranks' median */

struct step_times {
	long index;
	uint64_t total, phase[PH__COUNT];
};

struct rank_steps {
	const struct rsession *s;
	struct step_times *v;
	size_t n;
};

static bool is_rank(const struct rsession *s)
{
	const struct rspan *root = s->ntops ? s->tops[0] : NULL;
	const cJSON *role = root ? cJSON_GetObjectItemCaseSensitive(root->sp.attrs, "role") : NULL;

	if (!role || !cJSON_IsString(role) || !role->valuestring)
		return false;
	return !strcmp(role->valuestring, "rank");
}

static uint64_t dur(const struct rspan *r)
{
	return r->sp.end_ns > r->sp.start_ns ? r->sp.end_ns - r->sp.start_ns : 0;
}

/* Phase times under a step; collective_wait counted wherever it sits (inside backward). */
static void add_phases(struct step_times *st, const struct rspan *r, int depth)
{
	for (size_t i = 0; i < r->nkids && depth < VIEW_MAX_DEPTH; i++) {
		const struct rspan *k = r->kids[i];

		for (int p = 0; p < PH__COUNT; p++)
			if (!strcmp(k->sp.name, phase_names[p]))
				st->phase[p] += dur(k);
		add_phases(st, k, depth + 1);
	}
}

static void collect(const struct rspan *r, struct rank_steps *rs, int depth)
{
	if (!strcmp(r->sp.name, "step") && r->sp.status == SPAN_OK) {
		struct step_times *v = realloc(rs->v, (rs->n + 1) * sizeof(*v));

		if (!v)
			return;
		rs->v = v;
		memset(&v[rs->n], 0, sizeof(v[0]));
		v[rs->n].index = r->sp.index;
		v[rs->n].total = dur(r);
		add_phases(&v[rs->n], r, 0);
		rs->n++;
		return;
	}
	for (size_t i = 0; i < r->nkids && depth < VIEW_MAX_DEPTH; i++)
		collect(r->kids[i], rs, depth + 1);
}

static const struct step_times *step_of(const struct rank_steps *rs, long index)
{
	for (size_t i = 0; i < rs->n; i++)
		if (rs->v[i].index == index)
			return &rs->v[i];
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static uint64_t busy(const struct step_times *st)
{
	return st->total > st->phase[PH_COLLECTIVE] ? st->total - st->phase[PH_COLLECTIVE] : 0;
}

/* Median over the steps of one rank: a phase, or busy time (p = PH__COUNT). */
static uint64_t rank_median(const struct rank_steps *rs, int p)
{
	uint64_t *v = calloc(rs->n ? rs->n : 1, sizeof(*v)), m;

	if (!v)
		return 0;
	for (size_t i = 0; i < rs->n; i++)
		v[i] = p == PH__COUNT ? busy(&rs->v[i]) : rs->v[i].phase[p];
	m = median(v, rs->n);
	free(v);
	return m;
}

/* The other ranks' median for step index (p as in rank_median). */
static uint64_t others_median(const struct rank_steps *rs, size_t n, size_t skip, long index,
			      int p)
{
	uint64_t v[RANKS_MAX];
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		const struct step_times *st = i == skip ? NULL : step_of(&rs[i], index);

		if (st)
			v[k++] = p == PH__COUNT ? busy(st) : st->phase[p];
	}
	return median(v, k);
}

static void print_table(FILE *f, const struct rank_steps *rs, size_t n, long max_index)
{
	char d[32];

	fprintf(f, "step");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %10s%-4ld", "rank ", rs[i].s->rank);
	fputc('\n', f);
	for (long idx = 0; idx <= max_index; idx++) {
		fprintf(f, "%4ld", idx);
		for (size_t i = 0; i < n; i++) {
			const struct step_times *st = step_of(&rs[i], idx);

			fprintf(f, "  %14s", st ? clock__fmt_duration(st->total, d, sizeof(d)) : "-");
		}
		fputc('\n', f);
	}
	fprintf(f, "median per step:\n%-16s", "");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %10s%-4ld", "rank ", rs[i].s->rank);
	fputc('\n', f);
	for (int p = 0; p <= PH__COUNT; p++) {
		fprintf(f, "%-16s", p == PH__COUNT ? "busy (no wait)" : phase_names[p]);
		for (size_t i = 0; i < n; i++)
			fprintf(f, "  %14s", clock__fmt_duration(rank_median(&rs[i], p), d, sizeof(d)));
		fputc('\n', f);
	}
}

/* A rank busy well past the others in most steps; the phase that makes the difference. */
static void print_straggler(FILE *f, const struct rank_steps *rs, size_t n)
{
	size_t worst = n;
	double worst_share = 0;

	for (size_t i = 0; i < n && n >= 2; i++) {
		size_t slower = 0;

		for (size_t j = 0; j < rs[i].n; j++) {
			uint64_t b = busy(&rs[i].v[j]);
			uint64_t o = others_median(rs, n, i, rs[i].v[j].index, PH__COUNT);

			slower += b > o + STRAGGLER_MIN_NS && (double)b > STRAGGLER_RATIO * (double)o;
		}
		if (rs[i].n && (double)slower / (double)rs[i].n >= STRAGGLER_SHARE &&
		    (double)slower / (double)rs[i].n > worst_share) {
			worst = i;
			worst_share = (double)slower / (double)rs[i].n;
		}
	}
	if (worst == n) {
		fprintf(f, "straggler: none (no rank busy %.0f%% longer than the others in %.0f%% of "
			"its steps)\n", (STRAGGLER_RATIO - 1) * 100, STRAGGLER_SHARE * 100);
		return;
	}
	int phase = -1;
	int64_t gap = 0;
	char d[32];

	for (int p = 0; p < PH_COLLECTIVE; p++) {
		uint64_t v[RANKS_MAX];
		size_t k = 0;

		for (size_t i = 0; i < n; i++)
			if (i != worst)
				v[k++] = rank_median(&rs[i], p);
		int64_t g = (int64_t)rank_median(&rs[worst], p) - (int64_t)median(v, k);

		if (phase < 0 || g > gap) {
			phase = p;
			gap = g;
		}
	}
	fprintf(f, "straggler: rank %ld, busy longer than the other ranks in %.0f%% of its steps; "
		"%s takes %s more (median per step)\n", rs[worst].s->rank, worst_share * 100,
		phase_names[phase], clock__fmt_duration(gap > 0 ? (uint64_t)gap : 0, d, sizeof(d)));
}

/* Where each rank is now (sessions still open): the one not waiting in a collective, or
 * the furthest behind, is the one the others wait for. */
static void print_open_ranks(FILE *f, const struct rank_steps *rs, size_t n)
{
	size_t behind = n, waiting = 0, open = 0;
	long least = -1;

	for (size_t i = 0; i < n; i++) {
		const struct rsession *s = rs[i].s;
		const struct rspan *inner = NULL;
		long step = -1;

		for (size_t j = 0; j < s->nspans; j++) {
			const struct rspan *r = s->spans[j];

			if (r->sp.status != SPAN_OPEN || !r->parent)
				continue;
			if (!inner || r->sp.start_ns >= inner->sp.start_ns)
				inner = r;
			if (!strcmp(r->sp.name, "step") && r->sp.index > step)
				step = r->sp.index;
		}
		if (!inner)
			continue;
		if (!open++)
			fprintf(f, "open now:\n");
		fprintf(f, "  rank %ld: step[%ld] > %s\n", s->rank, step, inner->sp.name);
		if (!strcmp(inner->sp.name, "collective_wait"))
			waiting++;
		else if (behind == n || step < least)
			behind = i, least = step;
	}
	if (open >= 2 && waiting && behind < n)
		fprintf(f, "behind: rank %ld (the others wait in a collective)\n", rs[behind].s->rank);
}

/* The session's job (its root's "job"), or "" for a spool of an older writer. */
static const char *job_of(const struct rsession *s)
{
	const struct rspan *root = s->ntops ? s->tops[0] : NULL;
	const char *j = root ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(root->sp.attrs,
											 "job")) : NULL;

	return j ? j : "";
}

static const char *job_source_of(const struct rsession *s)
{
	const struct rspan *root = s->ntops ? s->tops[0] : NULL;
	const char *j = root ? cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
						root->sp.attrs, "job_source")) : NULL;

	return j ? j : "?";
}

/* One job's ranks. */
static int print_job(FILE *f, const struct spool_view *v, const struct options *o,
		     const char *job)
{
	struct rank_steps rs[RANKS_MAX];
	size_t n = 0;
	long max_index = -1;

	for (size_t i = 0; i < v->nsessions && n < RANKS_MAX; i++) {
		const struct rsession *s = v->sessions[i];

		if (!view__wanted(o, s) || !is_rank(s) || strcmp(job_of(s), job) != 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (rs[j].s->rank == s->rank)
				goto next;	/* an older run's rank: the newest is kept */
		rs[n] = (struct rank_steps){ .s = s };
		for (size_t j = 0; j < s->ntops; j++)
			collect(s->tops[j], &rs[n], 0);
		for (size_t j = 0; j < rs[n].n; j++)
			if (rs[n].v[j].index > max_index)
				max_index = rs[n].v[j].index;
		n++;
next:;
	}
	/* by rank */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && rs[j].s->rank < rs[j - 1].s->rank; j--) {
			struct rank_steps t = rs[j];

			rs[j] = rs[j - 1];
			rs[j - 1] = t;
		}
	if (!n) {
		fprintf(f, "no ranks of a distributed job (sessions with role=rank) here\n");
	} else {
		fprintf(f, "%zu ranks (world size %ld), %ld steps\n", n, rs[0].s->world_size,
			max_index + 1);
		if (*job)
			fprintf(f, "job %s (from %s)\n", job, job_source_of(rs[0].s));
		print_table(f, rs, n, max_index);
		print_straggler(f, rs, n);
		print_open_ranks(f, rs, n);
	}
	for (size_t i = 0; i < n; i++)
		free(rs[i].v);
	return 0;
}

/* A table per job (the sessions' job identity), newest job first; --job: that one only. */
int trace_ranks__print(FILE *f, const struct spool_view *v, const struct options *o)
{
	const char *jobs[RANKS_MAX];
	size_t njobs = 0;
	int rc = 0;

	for (size_t i = 0; i < v->nsessions && njobs < RANKS_MAX; i++) {
		const char *j = job_of(v->sessions[i]);
		size_t k;

		if (!is_rank(v->sessions[i]) || !view__wanted(o, v->sessions[i]) ||
		    (o->job && strcmp(o->job, j) != 0))
			continue;
		for (k = 0; k < njobs && strcmp(jobs[k], j) != 0; k++)
			;
		if (k == njobs)
			jobs[njobs++] = j;
	}
	if (!njobs)
		return print_job(f, v, o, o->job ? o->job : "");
	for (size_t k = 0; k < njobs && !rc; k++) {
		if (k)
			fputc('\n', f);
		rc = print_job(f, v, o, jobs[k]);
	}
	return rc;
}
