// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A series drawn as the means of consecutive runs, whatever its length (downsample.h).
#include <errno.h>
#include <stdlib.h>
#include "trace/downsample.h"

int downsample__init(struct downsample *d)
{
	*d = (struct downsample){ .width = 1 };
	d->sum = calloc(DOWNSAMPLE_FINE, sizeof(*d->sum));
	d->n = calloc(DOWNSAMPLE_FINE, sizeof(*d->n));
	if (!d->sum || !d->n) {
		downsample__free(d);
		return -ENOMEM;
	}
	return 0;
}

/* Every two neighbours into one: half the buckets, twice as wide. */
static void halve(struct downsample *d)
{
	size_t i;

	for (i = 0; i < d->nb / 2; i++) {
		d->sum[i] = d->sum[2 * i] + d->sum[2 * i + 1];
		d->n[i] = d->n[2 * i] + d->n[2 * i + 1];
	}
	if (d->nb % 2) {
		d->sum[i] = d->sum[d->nb - 1];
		d->n[i] = d->n[d->nb - 1];
		i++;
	}
	d->nb = i;
	d->width *= 2;
}

void downsample__add(struct downsample *d, double v)
{
	if (!d->sum)
		return;
	if (!d->count || v > d->max)
		d->max = v;
	d->count++;
	if (!d->nb || d->n[d->nb - 1] == d->width) {
		if (d->nb == DOWNSAMPLE_FINE)
			halve(d);
		if (!d->nb || d->n[d->nb - 1] == d->width) {
			d->sum[d->nb] = 0;
			d->n[d->nb] = 0;
			d->nb++;
		}
	}
	d->sum[d->nb - 1] += v;
	d->n[d->nb - 1]++;
}

size_t downsample__points(const struct downsample *d, size_t max_points, double *out)
{
	size_t m = d->nb < max_points ? d->nb : max_points;

	for (size_t b = 0; b < m; b++) {
		size_t from = b * d->nb / m, to = (b + 1) * d->nb / m;
		double sum = 0;
		uint64_t n = 0;

		for (size_t i = from; i < to; i++) {
			sum += d->sum[i];
			n += d->n[i];
		}
		out[b] = n ? sum / (double)n : 0;
	}
	return m;
}

void downsample__free(struct downsample *d)
{
	free(d->sum);
	free(d->n);
	*d = (struct downsample){};
}
