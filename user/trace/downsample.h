/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_DOWNSAMPLE_H
#define __CIRRON_DOWNSAMPLE_H

#include <stddef.h>
#include <stdint.h>

/*
 * A chart's series over the whole job in bounded memory. Values come one by one (steps in
 * order) into at most DOWNSAMPLE_FINE buckets of the same width, a power of two values each:
 * when they are full, neighbours merge and the width doubles. Drawn as m points (the
 * series' length, at most the chart's): point b is the mean of the values in buckets
 * [b * nb / m, (b + 1) * nb / m), a run of consecutive values. Up to DOWNSAMPLE_FINE values
 * each bucket is one value, and point b is the mean of values [b * n / m, (b + 1) * n / m)
 * exactly; beyond, the runs' ends fall on bucket edges (each run within a bucket's width of
 * n / m long), every point still the exact mean of its run.
 */
#define DOWNSAMPLE_FINE 4096

struct downsample {
	double *sum;
	uint64_t *n;
	size_t nb;		/* buckets used */
	uint64_t width;		/* values a full bucket holds */
	uint64_t count;		/* values in all */
	double max;		/* of the values themselves (a chart's scale) */
};

/* Returns 0 or -ENOMEM. */
int downsample__init(struct downsample *d);
void downsample__add(struct downsample *d, double v);
/* At most max_points means into out (room for max_points); returns how many. */
size_t downsample__points(const struct downsample *d, size_t max_points, double *out);
void downsample__free(struct downsample *d);

#endif
