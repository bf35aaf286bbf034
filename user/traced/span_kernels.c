// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "traced/span_kernels.h"

void span_kernels__init(struct span_kernels *k, int map_fd, int totals_fd)
{
	memset(k, 0, sizeof(*k));
	k->map_fd = map_fd;
	k->totals_fd = totals_fd;
}

void span_kernels__free(struct span_kernels *k)
{
	free(k->done);
	free(k->live);
	k->done = k->live = NULL;
	k->ndone = k->nlive = k->capdone = k->caplive = 0;
}

static int by_seq(const void *a, const void *b)
{
	const struct span_kernel_count *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Drops intervals below the window, and the oldest beyond SPAN_KERNELS_MAX entries. */
static void prune(struct span_kernels *k)
{
	size_t cut = 0;
	uint64_t newest;

	if (!k->ndone)
		return;
	newest = k->done[k->ndone - 1].seq;
	while (cut < k->ndone && (newest - k->done[cut].seq > SPAN_KERNELS_WINDOW ||
				  k->ndone - cut > SPAN_KERNELS_MAX))
		cut++;
	if (!cut)
		return;
	/* whole intervals only: a sum over a cut one would be short */
	while (cut < k->ndone && k->done[cut].seq == k->done[cut - 1].seq)
		cut++;
	k->kept_from = cut < k->ndone ? k->done[cut].seq : k->done[cut - 1].seq + 1;
	memmove(k->done, k->done + cut, (k->ndone - cut) * sizeof(*k->done));
	k->ndone -= cut;
}

int span_kernels__add_done(struct span_kernels *k, struct span_kernel_count *v, size_t n)
{
	if (!n)
		return 0;
	if (k->ndone + n > k->capdone) {
		size_t cap = (k->ndone + n) * 2;
		struct span_kernel_count *d = realloc(k->done, cap * sizeof(*d));

		if (!d)
			return -ENOMEM;
		k->done = d;
		k->capdone = cap;
	}
	qsort(v, n, sizeof(*v), by_seq);
	memcpy(k->done + k->ndone, v, n * sizeof(*v));
	k->ndone += n;
	/* a read that raced a late launch of an older interval (bpf/cirron.h): keep order */
	if (k->ndone > n && k->done[k->ndone - n - 1].seq > v[0].seq)
		qsort(k->done, k->ndone, sizeof(*k->done), by_seq);
	prune(k);
	return 0;
}

void span_kernels__set_live(struct span_kernels *k, struct span_kernel_count *v, size_t n)
{
	free(k->live);
	k->live = v;
	k->nlive = n;
	k->caplive = n;
}

static int by_func(const void *a, const void *b)
{
	const struct span_kernel_count *x = a, *y = b;

	return x->func < y->func ? -1 : x->func > y->func;
}

static int by_count_desc(const void *a, const void *b)
{
	const struct span_kernel_count *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return by_func(a, b);
}

static size_t first_at(const struct span_kernels *k, uint64_t seq)
{
	size_t lo = 0, hi = k->ndone;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (k->done[mid].seq < seq)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

long span_kernels__sum(const struct span_kernels *k, uint64_t from, uint64_t to,
		       struct span_kernel_count **out)
{
	struct span_kernel_count *v = NULL;
	size_t n = 0, m = 0, i;

	*out = NULL;
	if (from >= to)
		return 0;
	if (from < k->kept_from)
		return -1;
	for (i = first_at(k, from); i < k->ndone && k->done[i].seq < to; i++)
		n++;
	for (i = 0; i < k->nlive; i++)
		n += k->live[i].seq >= from && k->live[i].seq < to;
	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = first_at(k, from); i < k->ndone && k->done[i].seq < to; i++)
		v[m++] = k->done[i];
	for (i = 0; i < k->nlive; i++)
		if (k->live[i].seq >= from && k->live[i].seq < to)
			v[m++] = k->live[i];
	qsort(v, m, sizeof(*v), by_func);
	n = 0;
	for (i = 0; i < m; i++) {
		if (n && v[n - 1].func == v[i].func) {
			v[n - 1].count += v[i].count;
			continue;
		}
		v[n] = v[i];
		v[n++].seq = 0;
	}
	qsort(v, n, sizeof(*v), by_count_desc);
	*out = v;
	return (long)n;
}
