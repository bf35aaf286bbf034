/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* The union of GPU intervals, for a span's gpu_busy_ns: time the GPU ran at least one piece of
 * the span's work (kernels on several streams that overlap count once). Intervals come in
 * any order; those that can no longer meet a new one (all of them end before a horizon the
 * caller knows: no later record can start before it) are folded into a sum, so a long span
 * (an epoch, the session) keeps only the last few. Pure: no I/O. */
#ifndef __CIRRON_GPU_UNION_H
#define __CIRRON_GPU_UNION_H

#include <stddef.h>
#include <stdint.h>

struct gpu_union {
	uint64_t folded_ns;	/* busy time of the intervals folded away */
	struct gpu_interval { uint64_t start, end; } *v;	/* disjoint, by start */
	size_t n, cap;
	uint64_t first_start, last_end;	/* over everything added (0, 0: nothing yet) */
	uint64_t added;		/* intervals added */
};

/* Adds [start, end) (end < start is taken as empty at start). 0 or -ENOMEM. */
int gpu_union__add(struct gpu_union *u, uint64_t start, uint64_t end);
/* Folds the intervals that end at or before horizon. */
void gpu_union__fold(struct gpu_union *u, uint64_t horizon);
/* The busy time: folded and kept intervals. */
uint64_t gpu_union__busy(const struct gpu_union *u);
void gpu_union__free(struct gpu_union *u);

#endif
