// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Percentiles, exact, then from a histogram (pctl.h).
#include <errno.h>
#include <stdlib.h>
#include "trace/pctl.h"

#define SUB (1u << PCTL_SUB_BITS)

/* Values below SUB are their own bucket (doubling 0 holds 0..1023); above, the doubling of
 * the top bit and the next PCTL_SUB_BITS bits. */
static void bucket_of(uint64_t v, unsigned *oct, unsigned *sub)
{
	unsigned e;

	if (v < SUB) {
		*oct = 0;
		*sub = (unsigned)v;
		return;
	}
	e = 63u - (unsigned)__builtin_clzll(v);
	*oct = e - PCTL_SUB_BITS + 1;
	*sub = (unsigned)(v >> (e - PCTL_SUB_BITS)) & (SUB - 1);
}

/* The middle of a bucket. */
static uint64_t bucket_value(unsigned oct, unsigned sub)
{
	unsigned shift;
	uint64_t lo;

	if (!oct)
		return sub;
	shift = oct - 1;
	lo = (uint64_t)(SUB + sub) << shift;
	return lo + ((uint64_t)1 << shift) / 2;
}

static int hist_add(struct pctl *p, uint64_t v)
{
	unsigned oct, sub;

	bucket_of(v, &oct, &sub);
	if (!p->oct[oct] && !(p->oct[oct] = calloc(SUB, sizeof(uint32_t))))
		return -ENOMEM;
	p->oct[oct][sub]++;
	return 0;
}

int pctl__add(struct pctl *p, uint64_t v)
{
	if (!p->hist && p->n == (p->exact_max ? p->exact_max : PCTL_EXACT_MAX)) {
		for (size_t i = 0; i < p->n; i++)
			if (hist_add(p, p->v[i]))
				return -ENOMEM;
		free(p->v);
		p->v = NULL;
		p->n = p->cap = 0;
		p->hist = true;
	}
	if (p->hist) {
		if (hist_add(p, v))
			return -ENOMEM;
	} else {
		if (p->n == p->cap) {
			size_t cap = p->cap ? p->cap * 2 : 64;
			uint64_t *a = reallocarray(p->v, cap, sizeof(*a));

			if (!a)
				return -ENOMEM;
			p->v = a;
			p->cap = cap;
		}
		p->v[p->n++] = v;
		p->sorted = false;
	}
	if (!p->count || v < p->min)
		p->min = v;
	if (!p->count || v > p->max)
		p->max = v;
	p->count++;
	p->sum += v;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

uint64_t pctl__kth(struct pctl *p, uint64_t k)
{
	uint64_t seen = 0;

	if (!p->count)
		return 0;
	if (k >= p->count)
		k = p->count - 1;
	if (!p->hist) {
		if (!p->sorted)
			qsort(p->v, p->n, sizeof(*p->v), cmp_u64);
		p->sorted = true;
		return p->v[k];
	}
	if (k == 0)
		return p->min;
	if (k == p->count - 1)
		return p->max;
	for (unsigned o = 0; o < 64; o++) {
		if (!p->oct[o])
			continue;
		for (unsigned s = 0; s < SUB; s++) {
			seen += p->oct[o][s];
			if (seen > k) {
				uint64_t v = bucket_value(o, s);

				return v < p->min ? p->min : v > p->max ? p->max : v;
			}
		}
	}
	return p->max;
}

uint64_t pctl__pct(struct pctl *p, double pct)
{
	uint64_t k = (uint64_t)((pct / 100.0) * (double)p->count + 0.999999);

	return pctl__kth(p, k ? k - 1 : 0);
}

uint64_t pctl__median(struct pctl *p)
{
	return pctl__kth(p, p->count / 2);
}

bool pctl__approx(const struct pctl *p)
{
	return p->hist;
}

void pctl__free(struct pctl *p)
{
	free(p->v);
	for (unsigned o = 0; o < 64; o++)
		free(p->oct[o]);
	*p = (struct pctl){ .exact_max = p->exact_max };
}
