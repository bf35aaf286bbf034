/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * The maps and settings every BPF file of the object shares. Each .bpf.c that includes this
 * header defines them __weak; `bpftool gen object` links the definitions into one map each.
 */
#ifndef __CIRRON_MAPS_BPF_H
#define __CIRRON_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "cirron.h"

/* Set by the loader before load (user/kernel_features.c). Without attach cookies (before
 * 5.15) a probe is told by the address it hit in its process (probe_addrs), and a return by
 * the stack pointer its entry saw (calls); the verifier prunes the branch not taken, so a
 * kernel without bpf_get_attach_cookie never sees that call. */
const volatile bool use_cookie __weak = true;

/* High-rate events: may drop under overload (counted in STAT_RB_DROPS). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} events SEC(".maps") __weak;

/* Rare events that must not be lost behind high-rate ones: exec, fork, exit, link map.
 * Should it fill up all the same (a burst of process starts), the drop is counted in
 * STAT_CONTROL_DROPS and the loader looks at /proc again. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 << 10);
} control SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CIRRON_MAX_PROBES);
	__type(key, __u32);
	__type(value, struct probe_spec);
} probe_specs SEC(".maps") __weak;

/* Hits per probe: [2*id] entries, [2*id+1] returns. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 2 * CIRRON_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u64);
} hits SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct target_info);
} targets SEC(".maps") __weak;

/* Traced processes' execs so far (absent: none), for PROBE_F_IMAGE. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u32);
} images SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct cuda_counts);
} cuda_totals SEC(".maps") __weak;

/* The wait status of each traced process that exited, also sent as EV_EXIT: kept here for
 * the loader in case that event is lost to a full control ring (it deletes what it read). */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u32);
} exits SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct kernel_key);
	__type(value, __u64);
} kernel_launches SEC(".maps") __weak;

/* The same launches split by the anchor interval they were made in; the loader reads and
 * deletes intervals two anchors old, so this holds a few intervals per process. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct span_kernel_key);
	__type(value, __u64);
} span_kernels SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, struct py_type_key);
	__type(value, struct py_verdict_val);
} py_verdicts SEC(".maps") __weak;

/* Set by a call of a class seen for the first time (python.bpf.h): the event that reports it
 * wakes the loader, which judges the class (and, for a module, finds its `training`) at once
 * instead of at its next poll, so that the class's next calls carry their mode. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} py_wake SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct py_stack);
} py_stacks SEC(".maps") __weak;

/* watch: the dynamic linkers already told to the loader (EV_NEW_LDSO once per file) */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct file_key);
	__type(value, __u8);
} ldso_seen SEC(".maps") __weak;

/* No attach cookies: (process, probed address) -> probe id, filled by the loader. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_PROBES);
	__type(key, struct probe_addr_key);
	__type(value, __u32);
} probe_addrs SEC(".maps") __weak;

/* Signals the BPF programs sent to each process (SIGSTOP holds, `run` only), for health. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u64);
} signals SEC(".maps") __weak;

/* watch without bpf_find_vma: the executables already told to the loader, which finds
 * their dynamic linker itself (EV_NEW_LDSO with no address) */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, struct file_key);
	__type(value, __u8);
} exe_seen SEC(".maps") __weak;

/* With cookies: (thread, probe id). Without: (thread, stack pointer at entry), which the
 * return sees 8 bytes higher; the entry's probe id is then kept in the state. */
struct call_key {
	__u32 tid;
	__u32 probe_id;
	__u64 sp;
};

struct call_state {
	__u64 ts_ns;
	__u64 args[CIRRON_NARGS];
	__u32 probe_id;
	__u32 pad;
};

/* Live device allocations (cudaMalloc, cuMemAlloc, ...) by process and address: their size,
 * so a free can say how much it gave back (cuda.reserved_bytes). Allocations are few (torch's
 * caching allocator keeps its segments); a full map is counted (STAT_ALLOCS_FULL). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 32768);
	__type(key, struct alloc_key);
	__type(value, __u64);
} cuda_allocs SEC(".maps") __weak;

/* Per tgid, where libcudart's code is mapped: driver calls made from there are left out. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct code_ranges);
} cuda_runtime_text SEC(".maps") __weak;

/* Per tgid, where its kernel launches are counted (enum cuda_layer; absent: the runtime). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, __u32);
} cuda_layer SEC(".maps") __weak;

/* Per thread: a runtime launch probe counted the launch under way (runtime layer), so its
 * driver call is left out even if the process moves to the driver layer meanwhile. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32);
	__type(value, __u8);
} runtime_launch_marks SEC(".maps") __weak;

/* Entry state of calls that also have a return probe. LRU: a lost return cannot leak. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, struct call_key);
	__type(value, struct call_state);
} calls SEC(".maps") __weak;
static __always_inline void count(void *map, __u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(map, &idx);

	if (v)
		(*v)++;
}

/* The current process has one thread: a hold (SIGSTOP) can then interrupt no blocking call
 * of another thread. Read in the process's own thread, it cannot change under the program
 * (only this thread could create another). */
static __always_inline bool single_threaded(void)
{
	struct task_struct *task = (struct task_struct *)bpf_get_current_task();

	return BPF_CORE_READ(task, signal, live.counter) == 1;
}

/* The only signal the BPF programs send: SIGSTOP to the current process, to hold it while the
 * loader attaches (`run`, while it has one thread). Counted for health's signals_sent. */
static __always_inline void hold_current(__u32 tgid)
{
	__u64 one = 1, *n = bpf_map_lookup_elem(&signals, &tgid);

	bpf_send_signal(19 /* SIGSTOP */);
	if (n)
		__sync_fetch_and_add(n, 1);
	else
		bpf_map_update_elem(&signals, &tgid, &one, BPF_NOEXIST);
}

static __always_inline bool armed(__u32 tgid)
{
	struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);

	return t && (t->flags & TARGET_F_ARMED);
}

#endif /* __CIRRON_MAPS_BPF_H */
