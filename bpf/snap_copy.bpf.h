/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* --snapshots: the copy of a small model's parameters and grads where a training loop seems
 * to end (bpf/snap.h). It runs in the job's thread, in the uprobe of the DataLoader __next__
 * (or grad-mode switch) that tells the loop's end, before that call runs: the state is the
 * one the job has there, whole, with no update under way in that thread. Only where the
 * loader made a plan (a model of at most SNAP_COPY_BYTES with its grads), once per epoch. */
#ifndef __CIRRON_SNAP_COPY_BPF_H
#define __CIRRON_SNAP_COPY_BPF_H

#include "maps.bpf.h"
#include "snap.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, SNAP_COPY_PROCS);
	__type(key, __u32);
	__type(value, struct snap_copy_plan);
} snap_copy_plans SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, SNAP_COPY_PROCS * SNAP_COPY_SLOTS);
	__type(key, __u32);
	__type(value, struct snap_copy);
} snap_copies SEC(".maps") __weak;

static __always_inline __u64 snap_copy_ptr(__u64 at)
{
	__u64 v = 0;

	if (!at || bpf_probe_read_user(&v, sizeof(v), (const void *)at))
		return 0;
	return v;
}

/* A subprogram of its own, not inlined: its loops are verified once, apart from the probe's
 * body. */
static __noinline int snap_copy_take(__u32 tgid)
{
	struct snap_copy_plan *pl = bpf_map_lookup_elem(&snap_copy_plans, &tgid);
	struct snap_state *st = bpf_map_lookup_elem(&snap_states, &tgid);
	__u64 k, t0 = bpf_ktime_get_ns();
	struct snap_copy *c;
	__u32 slot;

	if (!pl || !st || !pl->ntensors)
		return 0;
	/* counted before the slot is written (the loader checks the count after its read);
	 * the fetching atomics are Linux 5.12's, this the older add: one loop thread copies */
	__sync_fetch_and_add(&st->copies, 1);
	k = st->copies;
	slot = pl->slot0 + (__u32)(k % SNAP_COPY_SLOTS);
	c = bpf_map_lookup_elem(&snap_copies, &slot);
	if (!c)
		return 0;
	c->begun = k;
	c->updates = st->updates;
	c->steps = st->steps;
	c->step_updates = st->step_updates;
	c->gen = pl->gen;
	/* each grad where it is now (set to None and made again, it moves) */
	for (__u32 i = 0; i < SNAP_COPY_TENSORS; i++) {
		__u64 meta, g, sto, data;
		__s64 soff = 0, numel = 0;

		if (i >= pl->ntensors)
			break;
		c->grad_data[i] = 0;
		c->grad_numel[i] = 0;
		meta = snap_copy_ptr(pl->t[i].impl + pl->autograd_meta);
		g = meta ? snap_copy_ptr(meta + pl->grad) : 0;
		sto = g ? snap_copy_ptr(g + pl->storage) : 0;
		data = sto ? snap_copy_ptr(sto + pl->storage_data) : 0;
		if (!data ||
		    bpf_probe_read_user(&soff, sizeof(soff), (const void *)(g + pl->storage_offset)) ||
		    bpf_probe_read_user(&numel, sizeof(numel), (const void *)(g + pl->numel)))
			continue;
		c->grad_data[i] = data + (__u64)soff * pl->t[i].elem_size;
		c->grad_numel[i] = (__u64)numel;
	}
	for (__u32 i = 0; i < SNAP_COPY_SEGS; i++) {
		const struct snap_copy_seg *s;
		__u32 len, dst, ti;
		__u64 src;

		if (i >= pl->nsegs)
			break;
		s = &pl->seg[i];
		ti = s->tensor & (SNAP_COPY_TENSORS - 1);
		src = s->grad ? c->grad_data[ti] : pl->t[ti].data;
		len = s->len;
		if (!src || len > SNAP_COPY_CHUNK)
			continue;
		dst = s->dst_off & (SNAP_COPY_BYTES - 1);
		bpf_probe_read_user(&c->data[dst], len, (const void *)(src + s->src_off));
	}
	c->ns = bpf_ktime_get_ns() - t0;
	c->done = k;
	return 1;
}

#endif /* __CIRRON_SNAP_COPY_BPF_H */
