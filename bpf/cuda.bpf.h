/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* The CUDA calls tier: per-process totals of runtime and driver calls (launches per kernel,
 * copies, allocations, synchronize time), counted in maps, and --cuda-calls sampled windows. */
#ifndef __CIRRON_CUDA_BPF_H
#define __CIRRON_CUDA_BPF_H

#include "arch.bpf.h"
#include "maps.bpf.h"

static __always_inline struct cuda_counts *cuda_counts_of(__u32 tgid)
{
	struct cuda_counts *c = bpf_map_lookup_elem(&cuda_totals, &tgid);
	struct cuda_counts zero = {};

	if (c)
		return c;
	bpf_map_update_elem(&cuda_totals, &tgid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&cuda_totals, &tgid);
}

static __always_inline void count_kernel(__u32 tgid, __u64 func)
{
	struct kernel_key key = { .tgid = tgid, .func = func };
	__u64 one = 1, *n = bpf_map_lookup_elem(&kernel_launches, &key);

	if (n) {
		__sync_fetch_and_add(n, 1);
		return;
	}
	if (bpf_map_update_elem(&kernel_launches, &key, &one, BPF_NOEXIST) == -17 /* EEXIST */) {
		n = bpf_map_lookup_elem(&kernel_launches, &key);
		if (n)
			__sync_fetch_and_add(n, 1);
	} else if (!bpf_map_lookup_elem(&kernel_launches, &key)) {
		count(&stats, STAT_KERNEL_KEYS_FULL);
	}
}

static __always_inline void add_memcpy_bytes(struct cuda_counts *c, __u64 bytes, __u64 kind)
{
	switch (kind) {	/* cudaMemcpyKind */
	case 1: __sync_fetch_and_add(&c->memcpy_bytes_h2d, bytes); break;
	case 2: __sync_fetch_and_add(&c->memcpy_bytes_d2h, bytes); break;
	case 3: __sync_fetch_and_add(&c->memcpy_bytes_d2d, bytes); break;
	default: __sync_fetch_and_add(&c->memcpy_bytes_other, bytes); break;
	}
}

/* Whether a sampled or driver CUDA call goes uncounted: its process's window is closed, or
 * (driver) the runtime made it. Entry probes sit at the first instruction (or just after
 * endbr64), so the return address (x86-64: [sp]; arm64: x30) is the immediate caller. */
static __always_inline bool cuda_call_left_out(struct pt_regs *ctx, const struct probe_spec *spec,
					       __u32 tgid)
{
	if (spec->flags & PROBE_F_SAMPLED) {
		struct cuda_window *w = bpf_map_lookup_elem(&cuda_windows, &tgid);

		if (!w || (w->state != CW_COUNTING && w->state != CW_CLOSING &&
			   w->state != CW_TIMED))
			return true;
	}
	if (spec->flags & PROBE_F_DRIVER) {
		struct code_ranges *r = bpf_map_lookup_elem(&cuda_runtime_text, &tgid);
		__u64 ra;

		if (!r)
			return false;
		ra = arch_entry_return_address(ctx);
		for (int i = 0; i < CIRRON_RUNTIME_RANGES; i++) {
			if (ra >= r->start[i] && ra < r->end[i]) {
				count(&stats, STAT_DRIVER_FROM_RUNTIME);
				return true;
			}
		}
	}
	return false;
}

/* A progress call (anchor, synchronize) opens or closes the process's armed or closing
 * CUDA window, and counts inside it. */
static __always_inline void cuda_window_progress(__u32 tgid)
{
	struct cuda_window *w = bpf_map_lookup_elem(&cuda_windows, &tgid);

	if (!w)
		return;
	if (w->state == CW_ARMED) {
		w->state = CW_COUNTING;
	} else if (w->state == CW_COUNTING) {
		__sync_fetch_and_add(&w->progress, 1);
	} else if (w->state == CW_CLOSING) {
		__sync_fetch_and_add(&w->progress, 1);
		w->state = CW_CLOSED;
	}
}

/* Driver API calls and graph launches: the totals, and the source=driver part. */
static __always_inline void count_cuda_call(const struct probe_spec *spec, __u32 tgid,
					    const __u64 args[CIRRON_NARGS])
{
	struct cuda_counts *c = cuda_counts_of(tgid);
	bool drv = spec->flags & PROBE_F_DRIVER;

	if (!c)
		return;
	switch (spec->action) {
	case ACT_CUDA_LAUNCH:
		__sync_fetch_and_add(&c->launches, 1);
		if (drv)
			__sync_fetch_and_add(&c->launches_driver, 1);
		break;
	case ACT_CUDA_GRAPH_LAUNCH:
		__sync_fetch_and_add(&c->graph_launches, 1);
		if (drv)
			__sync_fetch_and_add(&c->graph_launches_driver, 1);
		break;
	case ACT_CUDA_MEMCPY:
		__sync_fetch_and_add(&c->memcpy_calls, 1);
		add_memcpy_bytes(c, args[0], drv ? spec->aux : args[1]);
		if (drv)
			__sync_fetch_and_add(&c->memcpy_calls_driver, 1);
		break;
	case ACT_CUDA_MALLOC:
		__sync_fetch_and_add(&c->malloc_calls, 1);
		__sync_fetch_and_add(&c->malloc_bytes, args[0]);
		if (drv)
			__sync_fetch_and_add(&c->malloc_calls_driver, 1);
		break;
	case ACT_CUDA_FREE:
		__sync_fetch_and_add(&c->free_calls, 1);
		if (drv)
			__sync_fetch_and_add(&c->free_calls_driver, 1);
		break;
	}
}

/* A runtime call's entry (launch, copy, allocation, free) into its process's totals; false
 * when the totals could not be had (a full map): the call is then not counted at all. */
static __always_inline bool cuda_count_entry(const struct probe_spec *spec, __u32 tgid,
					     const __u64 args[CIRRON_NARGS])
{
	struct cuda_counts *c;

	switch (spec->action) {
	case ACT_CUDA_LAUNCH:
		c = cuda_counts_of(tgid);
		if (!c)
			return false;
		__sync_fetch_and_add(&c->launches, 1);
		count_kernel(tgid, args[0]);
		break;
	case ACT_CUDA_MEMCPY:
		c = cuda_counts_of(tgid);
		if (!c)
			return false;
		__sync_fetch_and_add(&c->memcpy_calls, 1);
		add_memcpy_bytes(c, args[0], args[1]);
		break;
	case ACT_CUDA_MALLOC:
		c = cuda_counts_of(tgid);
		if (!c)
			return false;
		__sync_fetch_and_add(&c->malloc_calls, 1);
		__sync_fetch_and_add(&c->malloc_bytes, args[0]);
		break;
	case ACT_CUDA_FREE:
		c = cuda_counts_of(tgid);
		if (!c)
			return false;
		__sync_fetch_and_add(&c->free_calls, 1);
		break;
	}
	return true;
}

/* A timed runtime call returned after dur_ns: copy time, or time blocked in a synchronize. */
static __always_inline void cuda_count_return(const struct probe_spec *spec, __u32 tgid,
					      __u64 dur_ns)
{
	struct cuda_counts *c;

	if (spec->action != ACT_CUDA_MEMCPY && spec->action != ACT_CUDA_SYNC)
		return;
	c = cuda_counts_of(tgid);
	if (!c)
		return;
	if (spec->action == ACT_CUDA_SYNC) {
		__sync_fetch_and_add(&c->sync_calls, 1);
		__sync_fetch_and_add(&c->sync_ns, dur_ns);
	} else {
		__sync_fetch_and_add(&c->memcpy_ns, dur_ns);
	}
}

#endif /* __CIRRON_CUDA_BPF_H */
