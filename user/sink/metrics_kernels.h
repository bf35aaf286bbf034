/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_METRICS_KERNELS_H
#define __CIRRON_METRICS_KERNELS_H

/* --metrics: launches per kernel, a bounded number of series per session. A kernel joins the
 * exported set when it is among the most launched at a flush and stays in it, so every series
 * (the "other" one too: the launches of kernels outside the set) only ever goes up, as a
 * Prometheus counter must. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <cjson/cJSON.h>

#define KERNEL_TOP_N 10
/* Bytes of a name kept in its label: a longer one (a deep template) is cut and ends in
 * "~<hash>", so that two cut alike stay two series. */
#define KERNEL_LABEL_MAX 200

struct kernel_top {
	struct {
		char name[KERNEL_LABEL_MAX + 16];	/* the label value, escaped, cut */
		uint64_t hash;				/* of the whole name */
		double launches;
	} k[KERNEL_TOP_N];
	int n;
	double total;		/* launches of every kernel */
	bool seen;		/* the session had a cuda.kernels object */
};

/* From the root span's cuda.kernels ({"name": launches, ...}). */
void kernel_top__update(struct kernel_top *t, const cJSON *kernels);

/* The lines of one session (its labels): NAME{labels,kernel="..."} launches. */
void kernel_top__render(FILE *f, const char *metric, const char *labels,
			const struct kernel_top *t);

#endif
