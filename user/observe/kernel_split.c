// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Launches per kernel on steps and requests: BPF counts every launch again under the
// anchor interval it was made in (span_kernels, keyed by process, the process's kernel_seq
// and the kernel); an anchor event carries the seq it began, so a span opened at seq a and
// closed at seq b made the launches of a..b-1. Here that map is read into each target's
// store (traced/span_kernels.h): intervals two anchors old are deleted from BPF and kept
// final, newer ones re-read each time. A read happens when a span closes on an event newer
// than the last read (one read serves every span a ring-buffer round closes), and at every
// flush, so the map holds a few intervals a process.

#include <bpf/bpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attach/observer.h"
#include "common/bpf_maps.h"
#include "common/log.h"
#include "observe/kernel_split.h"
#include "traced/target.h"
#include "tree/clock.h"

#define SPAN_KERNELS_TOP 5	/* kernels a span names; the rest go in "other" */

struct kvec {
	struct span_kernel_count *v;
	size_t n, cap;
};

static int push(struct kvec *k, uint64_t seq, uint64_t func, uint64_t count)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 64;
		struct span_kernel_count *v = realloc(k->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		k->v = v;
		k->cap = cap;
	}
	k->v[k->n++] = (struct span_kernel_count){ .seq = seq, .func = func, .count = count };
	return 0;
}

void kernel_split__read(struct target *t)
{
	struct span_kernels *k = &t->cuda.span_kernels;
	struct span_kernel_key *keys;
	struct kvec done = { 0 }, live = { 0 };
	struct cuda_counts c;
	uint64_t now;
	size_t n;

	if (k->map_fd < 0)
		return;
	now = clock__mono_ns();
	if (bpf_map_lookup_elem(k->totals_fd, &t->pid, &c))
		return;	/* no CUDA call yet: nothing counted */
	keys = bpf_maps__pid_keys(k->map_fd, sizeof(*keys), t->pid, &n);
	for (size_t i = 0; i < n; i++) {
		__u64 count;

		if (bpf_map_lookup_elem(k->map_fd, &keys[i], &count))
			continue;
		/* Two anchors on: no launch of it can still be under way (a launch reads the seq
		 * and adds to its entry in one run of its probe). Read first, then delete. */
		if ((uint64_t)keys[i].seq + 2 <= (uint32_t)c.kernel_seq) {
			if (push(&done, keys[i].seq, keys[i].func, count))
				break;
			bpf_map_delete_elem(k->map_fd, &keys[i]);
		} else if (push(&live, keys[i].seq, keys[i].func, count)) {
			break;
		}
	}
	free(keys);
	if (span_kernels__add_done(k, done.v, done.n))
		elog("pid %d: launches per kernel of %zu intervals not kept: out of memory",
		     t->pid, done.n);
	free(done.v);
	span_kernels__set_live(k, live.v, live.n);
	k->read_ns = now;
}

static void add_num(cJSON *o, const char *name, double v)
{
	cJSON *had = cJSON_GetObjectItemCaseSensitive(o, name);

	if (had && cJSON_IsNumber(had))
		cJSON_SetNumberHelper(had, had->valuedouble + v);
	else
		cJSON_AddNumberToObject(o, name, v);
}

/* session.h's kernels_fn: the span's top kernels by name, the rest as "other". */
void kernel_split__attrs(void *ctx, struct span *sp, uint64_t from_seq, uint64_t to_seq)
{
	struct target *t = ctx;
	struct span_kernel_count *v;
	cJSON *all, *top, *graphs, *it;
	double other = 0;
	long n;
	int kept = 0, count = 0;

	if (t->cuda.span_kernels.map_fd < 0)
		return;
	if (!t->cuda.span_kernels.read_ns || t->anchor.mono_ns >= t->cuda.span_kernels.read_ns)
		kernel_split__read(t);
	n = span_kernels__sum(&t->cuda.span_kernels, from_seq, to_seq, &v);
	if (n == -1) {
		cJSON_AddStringToObject(sp->attrs, "cuda.kernels_lost",
					"closed too long after it began: its intervals were dropped");
		return;
	}
	if (n <= 0)
		return;
	/* by name first: keys that name one kernel (a handle, its CUfunction) add up */
	all = cJSON_CreateObject();
	graphs = cJSON_CreateObject();
	for (long i = 0; i < n; i++) {
		char buf[64];

		if (v[i].func & KERNEL_KEY_GRAPH) {
			snprintf(buf, sizeof(buf), "graph 0x%llx",
				 (unsigned long long)(v[i].func & ~KERNEL_KEY_GRAPH));
			add_num(graphs, buf, (double)v[i].count);
			continue;
		}
		add_num(all, target__kernel_name(t, v[i].func, buf, sizeof(buf)),
			(double)v[i].count);
	}
	free(v);
	top = cJSON_CreateObject();
	while (all->child && kept < SPAN_KERNELS_TOP) {	/* the most launched first */
		cJSON *best = all->child;

		cJSON_ArrayForEach(it, all)
			if (it->valuedouble > best->valuedouble)
				best = it;
		cJSON_DetachItemViaPointer(all, best);
		cJSON_AddItemToObject(top, best->string, best);
		kept++;
	}
	count = kept;
	cJSON_ArrayForEach(it, all) {
		other += it->valuedouble;
		count++;
	}
	cJSON_Delete(all);
	if (other > 0)
		cJSON_AddNumberToObject(top, "other", other);
	if (top->child) {
		cJSON_AddItemToObject(sp->attrs, "cuda.kernels", top);
		cJSON_AddNumberToObject(sp->attrs, "cuda.kernels_count", count);
	} else {
		cJSON_Delete(top);
	}
	if (graphs->child)
		cJSON_AddItemToObject(sp->attrs, "cuda.graphs", graphs);
	else
		cJSON_Delete(graphs);
}

