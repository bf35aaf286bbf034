// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gputime/gpu_union.h"

/* The first interval whose end is at or after start (it may meet [start, end)). */
static size_t first_meeting(const struct gpu_union *u, uint64_t start)
{
	size_t lo = 0, hi = u->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (u->v[mid].end < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int gpu_union__add(struct gpu_union *u, uint64_t start, uint64_t end)
{
	size_t i, j;

	if (end < start)
		end = start;
	if (!u->added || start < u->first_start)
		u->first_start = start;
	if (end > u->last_end)
		u->last_end = end;
	u->added++;
	if (end == start)
		return 0;
	i = first_meeting(u, start);
	/* merge with every interval it touches: i .. j-1 */
	for (j = i; j < u->n && u->v[j].start <= end; j++) {
		if (u->v[j].start < start)
			start = u->v[j].start;
		if (u->v[j].end > end)
			end = u->v[j].end;
	}
	if (j > i) {
		u->v[i] = (struct gpu_interval){ start, end };
		memmove(u->v + i + 1, u->v + j, (u->n - j) * sizeof(u->v[0]));
		u->n -= j - i - 1;
		return 0;
	}
	if (u->n == u->cap) {
		size_t cap = u->cap ? 2 * u->cap : 16;
		struct gpu_interval *v = realloc(u->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		u->v = v;
		u->cap = cap;
	}
	memmove(u->v + i + 1, u->v + i, (u->n - i) * sizeof(u->v[0]));
	u->v[i] = (struct gpu_interval){ start, end };
	u->n++;
	return 0;
}

void gpu_union__fold(struct gpu_union *u, uint64_t horizon)
{
	size_t k = 0;

	while (k < u->n && u->v[k].end <= horizon) {
		u->folded_ns += u->v[k].end - u->v[k].start;
		k++;
	}
	if (!k)
		return;
	memmove(u->v, u->v + k, (u->n - k) * sizeof(u->v[0]));
	u->n -= k;
}

uint64_t gpu_union__busy(const struct gpu_union *u)
{
	uint64_t busy = u->folded_ns;

	for (size_t i = 0; i < u->n; i++)
		busy += u->v[i].end - u->v[i].start;
	return busy;
}

void gpu_union__free(struct gpu_union *u)
{
	free(u->v);
	memset(u, 0, sizeof(*u));
}
