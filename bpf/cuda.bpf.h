/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* The CUDA calls tier: per-process totals of runtime and driver calls (launches per kernel,
 * copies, allocations and what they hold, synchronize time, NCCL collectives), every call
 * counted in maps at its entry, no event per call. */
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

/* One more under key in a map of counts; false when the map is full. */
static __always_inline bool count_one(void *map, const void *key)
{
	__u64 one = 1, *n = bpf_map_lookup_elem(map, key);

	if (n) {
		__sync_fetch_and_add(n, 1);
		return true;
	}
	if (bpf_map_update_elem(map, key, &one, BPF_NOEXIST) == -17 /* EEXIST */) {
		n = bpf_map_lookup_elem(map, key);
		if (n)
			__sync_fetch_and_add(n, 1);
		return true;
	}
	return bpf_map_lookup_elem(map, key) != NULL;
}

static __always_inline void count_kernel(__u32 tgid, __u64 func)
{
	struct kernel_key key = { .tgid = tgid, .func = func };

	if (!count_one(&kernel_launches, &key))
		count(&stats, STAT_KERNEL_KEYS_FULL);
}

/* The launch again, under the anchor interval it was made in (span_kernels): a full map
 * leaves it out of that split only, counted in kernels_unsplit. */
static __always_inline void count_span_kernel(struct cuda_counts *c, __u32 tgid, __u64 func)
{
	struct span_kernel_key key = { .tgid = tgid, .seq = (__u32)c->kernel_seq, .func = func };

	if (!count_one(&span_kernels, &key))
		__sync_fetch_and_add(&c->kernels_unsplit, 1);
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

/* Whether a driver call was made by a mapped CUDA runtime (libcudart). Entry probes sit at
 * the first instruction (or just after endbr64), so the return address (x86-64: [sp];
 * arm64: x30) is the immediate caller. */
static __always_inline bool cuda_call_from_runtime(struct pt_regs *ctx, __u32 tgid)
{
	struct code_ranges *r = bpf_map_lookup_elem(&cuda_runtime_text, &tgid);
	__u64 ra;

	if (!r)
		return false;
	ra = arch_entry_return_address(ctx);
	for (int i = 0; i < CIRRON_RUNTIME_RANGES; i++)
		if (ra >= r->start[i] && ra < r->end[i])
			return true;
	return false;
}

static __always_inline bool launches_at_driver(__u32 tgid)
{
	__u32 *layer = bpf_map_lookup_elem(&cuda_layer, &tgid);

	return layer && *layer == CUDA_LAYER_DRIVER;
}

/* A runtime launch probe counted this thread's launch under way (runtime layer). */
static __always_inline void mark_runtime_launch(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u8 one = 1;

	bpf_map_update_elem(&runtime_launch_marks, &tid, &one, BPF_ANY);
}

static __always_inline bool take_runtime_launch_mark(void)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	return bpf_map_delete_elem(&runtime_launch_marks, &tid) == 0;
}

/* A driver call the runtime made: true when it goes uncounted (the runtime's probe counted
 * it). A launch is counted here instead in the driver layer, where the runtime's launch
 * probes are out (one trap per launch), unless the runtime's probe had counted it before the
 * process moved to that layer (its mark). */
static __always_inline bool cuda_call_left_out(const struct probe_spec *spec, __u32 tgid)
{
	if (spec->action == ACT_CUDA_LAUNCH && launches_at_driver(tgid) &&
	    !take_runtime_launch_mark())
		return false;
	if (spec->action == ACT_CUDA_LAUNCH)
		take_runtime_launch_mark();
	count(&stats, STAT_DRIVER_FROM_RUNTIME);
	return true;
}

/* Bytes per element of an ncclDataType_t (nccl.h: int8, uint8, int32, uint32, int64, uint64,
 * float16, float32, float64, bfloat16, float8e4m3, float8e5m2); 0: not known. */
static __always_inline __u64 nccl_type_size(__u64 t)
{
	switch (t) {
	case 0: case 1: case 10: case 11: return 1;
	case 6: case 9: return 2;
	case 2: case 3: case 7: return 4;
	case 4: case 5: case 8: return 8;
	}
	return 0;
}

/* An NCCL collective: arg0 elements of type arg1. */
static __always_inline void count_nccl(__u32 tgid, const __u64 args[CIRRON_NARGS])
{
	struct cuda_counts *c = cuda_counts_of(tgid);

	if (!c)
		return;
	__sync_fetch_and_add(&c->nccl_calls, 1);
	__sync_fetch_and_add(&c->nccl_bytes, args[0] * nccl_type_size(args[1] & 0xffffffff));
}

/* A free of ptr: what its allocation held leaves reserved_bytes (an allocation made before
 * the attach, or not seen, is not known: only its call counts). */
static __always_inline void count_free(struct cuda_counts *c, __u32 tgid, __u64 ptr)
{
	struct alloc_key key;
	__u64 *size, n;

	/* cudaFree(0), a no-op that creates the context, finds nothing: no allocation is kept
	 * at 0. (No test of ptr here: 6.18's verifier took the lookup below for dead code, as
	 * if ptr were the 0 of read_arg's unknown-source path.) */
	__builtin_memset(&key, 0, sizeof(key));
	key.tgid = tgid;
	key.ptr = ptr;
	size = bpf_map_lookup_elem(&cuda_allocs, &key);
	if (!size)
		return;
	n = *size;
	__sync_fetch_and_add(&c->free_bytes, n);
	__sync_fetch_and_add(&c->reserved_bytes, -n);
	bpf_map_delete_elem(&cuda_allocs, &key);
}

/* An allocation returned: ret 0 (cudaSuccess, CUDA_SUCCESS) put its address at *ptr_out.
 * The peak is updated without a lock: allocations are rare, and two racing ones may leave
 * it short by the smaller (kernels before 5.12 have no atomic fetch in BPF). */
static __always_inline void count_alloc(__u32 tgid, __u64 bytes, __u64 ptr_out, __u64 ret)
{
	struct alloc_key key;
	struct cuda_counts *c;
	__u64 now;

	__builtin_memset(&key, 0, sizeof(key));
	key.tgid = tgid;
	if ((__u32)ret != 0 || !ptr_out || !bytes)
		return;
	if (bpf_probe_read_user(&key.ptr, sizeof(key.ptr), (void *)ptr_out) || !key.ptr)
		return;
	c = cuda_counts_of(tgid);
	if (!c)
		return;
	if (bpf_map_update_elem(&cuda_allocs, &key, &bytes, BPF_ANY)) {
		count(&stats, STAT_ALLOCS_FULL);
		return;
	}
	__sync_fetch_and_add(&c->reserved_bytes, bytes);
	now = c->reserved_bytes;
	if (now > c->reserved_peak_bytes)
		c->reserved_peak_bytes = now;
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
		c->last_launch_ns = bpf_ktime_get_ns();
		__sync_fetch_and_add(&c->launches, 1);
		count_kernel(tgid, args[0]);	/* the CUfunction: named by the calls that made it */
		count_span_kernel(c, tgid, args[0]);
		if (drv)
			__sync_fetch_and_add(&c->launches_driver, 1);
		break;
	case ACT_CUDA_GRAPH_LAUNCH:
		c->last_launch_ns = bpf_ktime_get_ns();
		__sync_fetch_and_add(&c->graph_launches, 1);
		count_kernel(tgid, args[0] | KERNEL_KEY_GRAPH);	/* the cudaGraphExec_t */
		count_span_kernel(c, tgid, args[0] | KERNEL_KEY_GRAPH);
		if (drv)
			__sync_fetch_and_add(&c->graph_launches_driver, 1);
		break;
	case ACT_CUDA_MEMCPY:
		c->last_launch_ns = bpf_ktime_get_ns();
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
		count_free(c, tgid, args[0]);
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
		c->last_launch_ns = bpf_ktime_get_ns();
		__sync_fetch_and_add(&c->launches, 1);
		count_kernel(tgid, args[0]);
		count_span_kernel(c, tgid, args[0]);
		break;
	case ACT_CUDA_MEMCPY:
		c = cuda_counts_of(tgid);
		if (!c)
			return false;
		c->last_launch_ns = bpf_ktime_get_ns();
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
		count_free(c, tgid, args[0]);
		break;
	}
	return true;
}

/* A CUDA call with a return probe returned after dur_ns: what an allocation holds, copy
 * time, or time blocked in a synchronize. */
static __always_inline void cuda_count_return(const struct probe_spec *spec, __u32 tgid,
					      const __u64 args[CIRRON_NARGS], __u64 ret,
					      __u64 dur_ns)
{
	struct cuda_counts *c;

	if (spec->action == ACT_CUDA_MALLOC) {
		count_alloc(tgid, args[0], args[1], ret);
		return;
	}
	if (spec->action != ACT_CUDA_MEMCPY && spec->action != ACT_CUDA_SYNC)
		return;
	c = cuda_counts_of(tgid);
	if (!c)
		return;
	if (spec->action == ACT_CUDA_SYNC) {
		__u64 now = bpf_ktime_get_ns();

		__sync_fetch_and_add(&c->sync_calls, 1);
		__sync_fetch_and_add(&c->sync_ns, dur_ns);
		c->sync_entry_ns = now - dur_ns;	/* what was launched before it is done */
		c->sync_return_ns = now;
	} else {
		__sync_fetch_and_add(&c->memcpy_ns, dur_ns);
	}
}

#endif /* __CIRRON_CUDA_BPF_H */
