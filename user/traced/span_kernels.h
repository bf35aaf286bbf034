/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* A process's launches per kernel split by the anchor interval they were made in (BPF's
 * span_kernels, bpf/cirron.h), as observe/kernel_split.c reads them: kept for a window of
 * recent intervals, so that a step or request closing on seqs from..to-1 can be given what it
 * launched, kernel by kernel. Pure data: no BPF here. */
#ifndef __CIRRON_SPAN_KERNELS_H
#define __CIRRON_SPAN_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#define SPAN_KERNELS_WINDOW	1024u	/* intervals kept below the newest (~100 steps) */
#define SPAN_KERNELS_MAX	262144u	/* entries kept a process, the oldest dropped first */

struct span_kernel_count {
	uint64_t seq;
	uint64_t func;		/* as BPF keys it (KERNEL_KEY_GRAPH: a graph) */
	uint64_t count;
};

struct span_kernels {
	int map_fd, totals_fd;	/* BPF's span_kernels and cuda_totals; -1: none */
	struct span_kernel_count *done;	/* read and deleted from BPF: final, by seq */
	size_t ndone, capdone;
	struct span_kernel_count *live;	/* still in BPF when last read: counts so far */
	size_t nlive, caplive;
	uint64_t kept_from;	/* intervals below this one were dropped */
	uint64_t read_ns;	/* CLOCK_MONOTONIC when BPF was last read (0: never) */
};

void span_kernels__init(struct span_kernels *k, int map_fd, int totals_fd);
void span_kernels__free(struct span_kernels *k);
/* A read's final entries (any order; their seqs at or above every earlier read's), kept in
 * seq order and pruned to the window. 0 or -ENOMEM. */
int span_kernels__add_done(struct span_kernels *k, struct span_kernel_count *v, size_t n);
/* A read's entries still in BPF: they replace the last read's. Takes v (malloc'd). */
void span_kernels__set_live(struct span_kernels *k, struct span_kernel_count *v, size_t n);
/* Launches per func made in seqs from..to-1, one entry per func (seq 0), most launched
 * first, in *out (malloc'd; NULL when none). Returns how many, or -1 when some of those
 * intervals are no longer kept, or -ENOMEM. */
long span_kernels__sum(const struct span_kernels *k, uint64_t from, uint64_t to,
		       struct span_kernel_count **out);

#endif /* __CIRRON_SPAN_KERNELS_H */
