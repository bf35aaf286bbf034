/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_VIEW_H
#define __CIRRON_VIEW_H

#include <stdbool.h>
#include <stdio.h>
#include "common/options.h"
#include "read/spool_view.h"
#include "read/tree_stream.h"

#define VIEW_MAX_DEPTH TSTREAM_MAX_DEPTH

/* Lists and indexes the spool under o->path. Returns 0 or an exit code (reported). */
int view__load(const struct options *o, struct spool_view *v);
/* The same for an in-memory source (tests, the fuzzer): src is taken over. */
int view__load_src(struct spool_view *v, struct spool_src *src);
/* Whether --session / --rank keep this session. */
bool view__wanted(const struct options *o, const struct rsession *s);
/* "session ID: host H, pid P, rank R (local L, world W), final" */
void view__print_header(FILE *f, const struct rsession *s);
/* An attribute of the session's root (its newest copy), or NULL. */
const cJSON *view__root_attr(const struct rsession *s, const char *key);
/* The job in v that s is a helper of (role=helper, helper_of its pid on its host: inductor's
 * compile helpers, DataLoader and multiprocessing workers, tools it runs), or NULL. */
struct rsession *view__job_of(const struct spool_view *v, const struct rsession *s);
/* job's helpers: a line of kinds and pids, then one per helper (lifetime, CPU). */
void view__print_helpers(FILE *f, struct spool_view *v, const struct rsession *job);

/* The session's launches per kernel (the root's cuda.kernels), most launched first: a
 * malloc'd array of its members (free it; NULL when there are none), their count, their
 * launches in all, how many are named. */
struct kernel_list {
	const cJSON **k;
	size_t n, named;
	double launches;
};
bool view__kernels(const struct rsession *s, struct kernel_list *out);

/* What a pass over a session's batches gathers beside its spans. */
struct pass_extras {
	cJSON *sys_first, *sys_last;	/* --sys-interval: oldest and newest sample */
	size_t nsys;
	double sys_rss_max, sys_threads_max;
	uint64_t *snap_seqs;		/* batches with --snapshots records */
	size_t nsnap;
	cJSON *hangs;			/* want_hangs: every batch's hang records */
	bool want_hangs;
};

/* The session's batches, oldest first, into t (then tstream__finish). Returns 0 or
 * -ENOMEM. */
int view__pass(struct spool_view *v, struct rsession *s, struct tstream *t,
	       struct pass_extras *ex);
/* Each --snapshots record the pass saw, in order. */
void view__snapshots(struct spool_view *v, struct rsession *s, const struct pass_extras *ex,
		     void (*fn)(const cJSON *rec, void *ctx), void *ctx);
void pass_extras__free(struct pass_extras *ex);

#endif
