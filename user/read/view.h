/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_VIEW_H
#define __CIRRON_VIEW_H

#include <stdbool.h>
#include <stdio.h>
#include "common/options.h"
#include "read/spool_reader.h"

#define VIEW_MAX_DEPTH 1024	/* the writer caps depth at 64; deeper is a corrupt spool */

/* Loads and builds the spool under o->path. Returns 0 or an exit code (reported). */
int view__load(const struct options *o, struct spool_view *v);
/* Whether --session / --rank keep this session. */
bool view__wanted(const struct options *o, const struct rsession *s);
/* "session ID: host H, pid P, rank R (local L, world W), final" */
void view__print_header(FILE *f, const struct rsession *s);
/* The job in v that s is a helper of (role=helper, helper_of its pid on its host: inductor's
 * compile helpers, DataLoader and multiprocessing workers, tools it runs), or NULL. */
const struct rsession *view__job_of(const struct spool_view *v, const struct rsession *s);
/* job's helpers: a line of kinds and pids, then one per helper (lifetime, CPU). */
void view__print_helpers(FILE *f, const struct spool_view *v, const struct rsession *job);

/* The session's launches per kernel (the root's cuda.kernels), most launched first: a
 * malloc'd array of its members (free it; NULL when there are none), their count, their
 * launches in all, how many are named. */
struct kernel_list {
	const cJSON **k;
	size_t n, named;
	double launches;
};
bool view__kernels(const struct rsession *s, struct kernel_list *out);

#endif
