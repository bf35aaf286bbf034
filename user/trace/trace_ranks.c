// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `trace --ranks`: the ranks of a distributed job side by side, step by step. In a
// synchronous job every rank's step takes about as long (they wait for each other in the
// gradient all-reduce), so a straggler shows in what it does with the time: more data_load,
// forward, backward or optimizer_step, and less collective_wait, than the other ranks.
// Each rank's steps come from a stream of its batches (rank_steps.c); rows are printed as
// every rank has passed them, into a temporary file, since the header counts them.
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "trace/pctl.h"
#include "read/phases.h"
#include "trace/rank_steps.h"
#include "trace/trace_ranks.h"
#include "read/view.h"
#include "tree/clock.h"

#define RANKS_MAX 1024
#define RANK_EXACT_MAX 4096	/* values kept per median (ten a rank): then a histogram */
#define STRAGGLER_SHARE 0.6	/* slower in at least this share of the steps ... */
#define STRAGGLER_MIN_NS 1000000	/* ... by at least 1 ms of busy time ... */
#define STRAGGLER_RATIO 1.2	/* ... and 20% over the other ranks' median */

struct rank {
	struct rank_steps *rs;
	struct pctl med[PH__COUNT + 1];	/* per phase, and busy (PH__COUNT) */
	struct pctl own[PH_COLLECTIVE];	/* per phase, less the collective waits inside it */
	size_t steps, slower;
};

static bool is_rank(const struct rsession *s)
{
	const cJSON *role = view__root_attr(s, "role");

	return cJSON_IsString(role) && role->valuestring && !strcmp(role->valuestring, "rank");
}

static uint64_t busy(const struct step_times *st)
{
	return st->total > st->phase[PH_COLLECTIVE] ? st->total - st->phase[PH_COLLECTIVE] : 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The upper median of v (sorted here). */
static uint64_t median(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	qsort(v, n, sizeof(*v), cmp_u64);
	return v[n / 2];
}

static void account(struct rank *r, const struct step_times *st)
{
	for (int p = 0; p < PH__COUNT; p++)
		pctl__add(&r->med[p], st->phase[p]);
	for (int p = 0; p < PH_COLLECTIVE; p++)
		pctl__add(&r->own[p], st->phase[p] > st->waited[p] ?
				      st->phase[p] - st->waited[p] : 0);
	pctl__add(&r->med[PH__COUNT], busy(st));
	r->steps++;
}

/* One row: each rank's step of this index, if it has one; the straggler counts. */
static void row(FILE *f, struct rank *rk, size_t n, long idx, uint64_t *tmp)
{
	const struct step_times *at[RANKS_MAX];
	char d[32];

	fprintf(f, "%4ld", idx);
	for (size_t i = 0; i < n; i++) {
		at[i] = rank_steps__at(rk[i].rs, idx);
		fprintf(f, "  %14s", at[i] ? clock__fmt_duration(at[i]->total, d, sizeof(d)) : "-");
	}
	fputc('\n', f);
	for (size_t i = 0; i < n && n >= 2; i++) {
		uint64_t b, o;
		size_t m = 0;

		if (!at[i])
			continue;
		b = busy(at[i]);
		for (size_t j = 0; j < n; j++)	/* the others' busy time at this step */
			if (j != i && at[j])
				tmp[m++] = busy(at[j]);
		o = median(tmp, m);
		rk[i].slower += b > o + STRAGGLER_MIN_NS && (double)b > STRAGGLER_RATIO * (double)o;
	}
}

static void print_medians(FILE *f, struct rank *rk, size_t n)
{
	char d[32];

	fprintf(f, "median per step:\n%-16s", "");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %10s%-4ld", "rank ", rank_steps__session(rk[i].rs)->rank);
	fputc('\n', f);
	for (int p = 0; p <= PH__COUNT; p++) {
		fprintf(f, "%-16s", p == PH__COUNT ? "busy (no wait)" : phase_names[p]);
		for (size_t i = 0; i < n; i++) {
			char cell[40];

			snprintf(cell, sizeof(cell), "%s%s", pctl__approx(&rk[i].med[p]) ? "~" : "",
				 clock__fmt_duration(pctl__median(&rk[i].med[p]), d, sizeof(d)));
			fprintf(f, "  %14s", cell);
		}
		fputc('\n', f);
	}
}

/* A rank busy well past the others in most steps; the phase that makes the difference. */
static void print_straggler(FILE *f, struct rank *rk, size_t n)
{
	size_t worst = n;
	double worst_share = 0;
	int phase = -1;
	int64_t gap = 0;
	char d[32];

	for (size_t i = 0; i < n && n >= 2; i++) {
		double share = rk[i].steps ? (double)rk[i].slower / (double)rk[i].steps : 0;

		if (rk[i].steps && share >= STRAGGLER_SHARE && share > worst_share) {
			worst = i;
			worst_share = share;
		}
	}
	if (worst == n) {
		fprintf(f, "straggler: none (no rank busy %.0f%% longer than the others in %.0f%% of "
			"its steps)\n", (STRAGGLER_RATIO - 1) * 100, STRAGGLER_SHARE * 100);
		return;
	}
	/* busy time only: a rank that waits in backward for the others' all-reduce is not
	 * slow in backward */
	for (int p = 0; p < PH_COLLECTIVE; p++) {
		uint64_t v[RANKS_MAX];
		size_t k = 0;
		int64_t g;

		for (size_t i = 0; i < n; i++)
			if (i != worst)
				v[k++] = pctl__median(&rk[i].own[p]);
		g = (int64_t)pctl__median(&rk[worst].own[p]) - (int64_t)median(v, k);
		if (phase < 0 || g > gap) {
			phase = p;
			gap = g;
		}
	}
	fprintf(f, "straggler: rank %ld, busy longer than the other ranks in %.0f%% of its steps; ",
		rank_steps__session(rk[worst].rs)->rank, worst_share * 100);
	if (gap > 0)
		fprintf(f, "%s takes %s more (median per step, its collective waits left out)\n",
			phase_names[phase], clock__fmt_duration((uint64_t)gap, d, sizeof(d)));
	else	/* slower in its steps, no phase's median slower: outside the phases */
		fprintf(f, "no phase's median is longer: the time is outside them or spread\n");
}

/* Where each rank is now (its newest batch): the one not waiting in a collective, or the
 * furthest behind, is the one the others wait for. */
static void print_open_ranks(FILE *f, struct spool_view *v, struct rank *rk, size_t n)
{
	size_t behind = n, waiting = 0, open = 0;
	long least = -1;

	for (size_t i = 0; i < n; i++) {
		struct rsession *s = (struct rsession *)rank_steps__session(rk[i].rs);
		const struct span *inner = NULL;
		long step = -1;

		if (spool_view__state(v, s))
			continue;	/* out of memory: that rank's state is left out */
		for (size_t j = 0; j < s->nstate; j++) {
			const struct span *sp = &s->state[j];

			if (sp->status != SPAN_OPEN || !sp->parent_id)
				continue;
			if (!inner || sp->start_ns >= inner->start_ns)
				inner = sp;
			if (!strcmp(sp->name, "step") && sp->index > step)
				step = sp->index;
		}
		if (!inner)
			continue;
		if (!open++)
			fprintf(f, "open now:\n");
		fprintf(f, "  rank %ld: step[%ld] > %s\n", s->rank, step, inner->name);
		if (!strcmp(inner->name, "collective_wait"))
			waiting++;
		else if (behind == n || step < least)
			behind = i, least = step;
	}
	if (open >= 2 && waiting && behind < n)
		fprintf(f, "behind: rank %ld (the others wait in a collective)\n",
			rank_steps__session(rk[behind].rs)->rank);
}

static int by_rank(const void *a, const void *b)
{
	const struct rsession *x = rank_steps__session(((const struct rank *)a)->rs);
	const struct rsession *y = rank_steps__session(((const struct rank *)b)->rs);

	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

/* The rows, 0 to the highest step index, each once every rank's stream is past it. */
static int rows(FILE *f, struct rank *rk, size_t n, long *max_index)
{
	uint64_t *tmp = calloc(n, sizeof(*tmp));
	const struct step_times *st;
	int err = 0;

	if (!tmp)
		return -ENOMEM;
	*max_index = -1;
	for (long idx = 0;; idx++) {
		bool more = false;

		for (size_t i = 0; i < n && !err; i++) {
			err = rank_steps__past(rk[i].rs, idx);
			more |= rank_steps__has_more(rk[i].rs);
		}
		if (err || !more)
			break;
		row(f, rk, n, idx, tmp);
		*max_index = idx;
		for (size_t i = 0; i < n; i++)	/* what this row showed, and older leftovers */
			while ((st = rank_steps__pop_upto(rk[i].rs, idx)))
				account(&rk[i], st);
	}
	free(tmp);
	return err;
}

/* The session's job (its root's "job"), or "" for a spool of an older writer. */
static const char *job_of(const struct rsession *s)
{
	const char *j = s->has_root ? cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(s->root.attrs, "job")) : NULL;

	return j ? j : "";
}

static const char *job_source_of(const struct rsession *s)
{
	const char *j = s->has_root ? cJSON_GetStringValue(
		cJSON_GetObjectItemCaseSensitive(s->root.attrs, "job_source")) : NULL;

	return j ? j : "?";
}

/* One job's ranks. */
static int print_job(FILE *f, struct spool_view *v, const struct options *o, const char *job)
{
	struct rank *rk = calloc(RANKS_MAX, sizeof(*rk));
	size_t n = 0;
	long max_index = -1;
	FILE *table = NULL;
	int err = 0;
	char buf[65536];
	size_t got;

	if (!rk)
		return -ENOMEM;
	for (size_t i = 0; i < v->nsessions && n < RANKS_MAX && !err; i++) {
		struct rsession *s = v->sessions[i];

		if (!view__wanted(o, s) || !is_rank(s) || strcmp(job_of(s), job) != 0)
			continue;
		for (size_t j = 0; j < n; j++)
			if (rank_steps__session(rk[j].rs)->rank == s->rank)
				goto next;	/* an older run's rank: the newest is kept */
		rk[n].rs = rank_steps__new(v, s);
		for (int p = 0; p <= PH__COUNT; p++)
			rk[n].med[p].exact_max = RANK_EXACT_MAX;
		for (int p = 0; p < PH_COLLECTIVE; p++)
			rk[n].own[p].exact_max = RANK_EXACT_MAX;
		if (!rk[n].rs)
			err = -ENOMEM;
		else
			n++;
next:;
	}
	if (n > 1)
		qsort(rk, n, sizeof(*rk), by_rank);
	if (!n && !err) {
		fprintf(f, "no ranks of a distributed job (sessions with role=rank) here\n");
		goto out;
	}
	table = tmpfile();	/* one row a step: on disk, not in memory */
	if (!table) {
		err = -errno;
		fprintf(f, "cannot make a temporary file for the table: %s\n", strerror(errno));
	}
	if (!err) {
		fprintf(table, "step");
		for (size_t i = 0; i < n; i++)
			fprintf(table, "  %10s%-4ld", "rank ", rank_steps__session(rk[i].rs)->rank);
		fputc('\n', table);
		err = rows(table, rk, n, &max_index);
	}
	if (!err) {
		fprintf(f, "%zu ranks (world size %ld), %ld steps\n", n,
			rank_steps__session(rk[0].rs)->world_size, max_index + 1);
		if (*job)
			fprintf(f, "job %s (from %s)\n", job,
				job_source_of(rank_steps__session(rk[0].rs)));
		rewind(table);
		while ((got = fread(buf, 1, sizeof(buf), table)) > 0)
			fwrite(buf, 1, got, f);
		print_medians(f, rk, n);
		print_straggler(f, rk, n);
		print_open_ranks(f, v, rk, n);
	}
out:
	if (table)
		fclose(table);
	for (size_t i = 0; i < n; i++) {
		for (int p = 0; p <= PH__COUNT; p++)
			pctl__free(&rk[i].med[p]);
		for (int p = 0; p < PH_COLLECTIVE; p++)
			pctl__free(&rk[i].own[p]);
		rank_steps__free(rk[i].rs);
	}
	free(rk);
	return err;
}

/* A table per job (the sessions' job identity), newest job first; --job: that one only. */
int trace_ranks__print(FILE *f, struct spool_view *v, const struct options *o)
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
