// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// watch: the queue of processes to look at, and the check for lost control events.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdlib.h>
#include <string.h>
#include "common/bpf_maps.h"
#include "cirron.h"
#include "agent/watch_queue.h"

void watch_queue__note(struct watch_queue *d, int pid)
{
	for (size_t i = 0; i < d->npending; i++)
		if (d->pending[i] == pid)
			return;
	if (d->npending == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 64;
		int *v = realloc(d->pending, cap * sizeof(*v));

		if (!v) {	/* looked at by the next rescan instead */
			d->control_lost++;
			return;
		}
		d->pending = v;
		d->cap = cap;
	}
	d->pending[d->npending++] = pid;
}

void watch_queue__drain(struct watch_queue *d, void (*look)(void *ctx, int pid), void *ctx)
{
	/* look may note more pids (it does not today); they wait for the next round */
	size_t n = d->npending;

	if (!n)
		return;
	for (size_t i = 0; i < n; i++)
		look(ctx, d->pending[i]);
	memmove(d->pending, d->pending + n, (d->npending - n) * sizeof(*d->pending));
	d->npending -= n;
	/* a crowd made the queue large once: give the memory back */
	if (!d->npending && d->cap > 1024) {
		free(d->pending);
		d->pending = NULL;
		d->cap = 0;
	}
}

uint64_t watch_queue__lost_since(struct watch_queue *d, int stats_fd)
{
	uint64_t sum = bpf_maps__percpu_sum(stats_fd, STAT_CONTROL_DROPS), lost;

	lost = sum > d->drops_seen ? sum - d->drops_seen : 0;
	d->drops_seen = sum;
	d->control_lost += lost;
	return lost;
}

void watch_queue__free(struct watch_queue *d)
{
	free(d->pending);
	memset(d, 0, sizeof(*d));
}
