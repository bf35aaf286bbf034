/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* GPU time on spans. With the CUPTI companion: each span gets the GPU work of the calls made
 * while it was open (gputime/gpu_join.h's items, placed by the call's time, as the CUDA counts
 * are), as gpu_busy_ns (the union of its work's intervals), gpu_ns (its first start to its
 * last end, what a pair of CUDA events around it would measure), gpu_busy_share (steps,
 * epochs, the session, requests), gpu_time_coverage (the share of its launches and copies
 * that have their records: work launched before an attach has none) and, on steps and
 * requests, gpu_kernels (its five kernels with the most GPU time). A span that closed is held
 * until every call made before its end has its records (the watermark), then released.
 *
 * Without the companion: a bound, gpu_ns_upper, from the span's start to the return of the
 * first synchronize call that began after its last launch (the work it launched was done by
 * then, on the stream that call waited for), labelled as a bound; nothing where no such
 * call came. Never a value that reads as measured, never a zero for a span that launched.
 * Pure: no I/O, no BPF. */
#ifndef __CIRRON_GPU_SPANS_H
#define __CIRRON_GPU_SPANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gputime/gpu_join.h"
#include "gputime/gpu_union.h"
#include "tree/span.h"

#define GPU_SPANS_WINDOW_NS	5000000000ull	/* items kept for spans made after the fact */
#define GPU_SPANS_WINDOW_MAX	(1u << 18)
#define GPU_SPANS_BOUND_WAIT_NS	10000000000ull	/* a bound waits this long for a synchronize */
#define GPU_SPANS_TOP		5		/* kernels a step names */
#define GPU_SPANS_FOLD_SLACK_NS	1000000ull	/* clock mapping's room below the watermark */

struct gpu_acc;

struct gpu_spans {
	struct gpu_acc *v;	/* open spans, and closed ones not yet released */
	size_t n, cap;
	struct gpu_item *window;	/* recent items by call time */
	size_t nwin, capwin;
	uint64_t sync_entry, sync_return;	/* the last synchronize that returned (mono) */
	uint64_t held, released;	/* spans held for their GPU time so far, released */
};

/* What the spans are measured from, at the time of a call. */
struct gpu_source {
	const struct gpu_join *join;	/* NULL: no companion in the process */
	bool cupti;		/* the companion is on (records flow) */
	uint64_t active_since;	/* since when (mono): a span begun after it has every call's
				 * record, and counts its calls itself */
	const char *note;	/* why there are no records, when there are none (or NULL) */
};

/* Every span, at its open (start: CLOCK_MONOTONIC ns; may be in the past). */
int gpu_spans__open(struct gpu_spans *g, struct span *sp, uint64_t start);
/* At its close (end: mono); counters: the process's CUDA counters then (NULL: none). True:
 * hold it (its GPU time is still to come), gpu_spans__settle releases it. */
bool gpu_spans__close(struct gpu_spans *g, struct span *sp, uint64_t end,
		      const uint64_t *counters, const struct gpu_source *src, uint64_t now);
/* New items (any order) onto the spans they belong to. */
void gpu_spans__items(struct gpu_spans *g, const struct gpu_item *items, size_t n);
/* The process's last synchronize (cuda_counts' sync_entry_ns, sync_return_ns). */
void gpu_spans__sync(struct gpu_spans *g, uint64_t entry, uint64_t ret);
/* Writes the GPU time of the held spans that are complete (watermark: gpu_join__watermark),
 * or waited long enough, or all of them when final, and gives each to release. Open spans
 * get what they have so far (not released: they are not held). */
void gpu_spans__settle(struct gpu_spans *g, const struct gpu_source *src, uint64_t watermark,
		       uint64_t now, bool final, void (*release)(void *ctx, struct span *sp),
		       void *ctx);
/* Forgets sp (freed elsewhere without a close: the session ended). */
void gpu_spans__forget(struct gpu_spans *g, struct span *sp);
void gpu_spans__free(struct gpu_spans *g);

#endif
