/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PCTL_H
#define __CIRRON_PCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Percentiles of a stream of values in bounded memory: exact up to PCTL_EXACT_MAX values
 * (they are kept; exact_max, when set, lowers that: trace --ranks keeps six a rank), then
 * from a histogram of 1024 buckets per doubling (4 KiB per doubling
 * used), whose bucket middles are within 0.05% of any value in them: pctl__approx says so,
 * and the views mark such numbers with "~".
 */
#define PCTL_EXACT_MAX 65536
#define PCTL_SUB_BITS 10

struct pctl {
	uint64_t *v;		/* exact values, n of them, while not hist */
	size_t n, cap;
	uint32_t *oct[64];	/* histogram: per doubling, 1024 buckets */
	bool hist;
	bool sorted;		/* v is */
	size_t exact_max;	/* 0: PCTL_EXACT_MAX */
	uint64_t count, min, max;
	long double sum;
};

/* Returns 0 or -ENOMEM (the value is then left out). */
int pctl__add(struct pctl *p, uint64_t v);
/* The k-th smallest value (0-based, k < count). */
uint64_t pctl__kth(struct pctl *p, uint64_t k);
/* Nearest rank: the smallest value with at least pct% of the values at or below it. */
uint64_t pctl__pct(struct pctl *p, double pct);
/* The upper median, v[n/2] of the sorted values. */
uint64_t pctl__median(struct pctl *p);
bool pctl__approx(const struct pctl *p);
void pctl__free(struct pctl *p);

#endif
