/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* Ring-buffer records: probe events (the events ring) and control events (the control ring:
 * exec, fork, exit, link map, device count, return sites). */
#ifndef __CIRRON_EMIT_BPF_H
#define __CIRRON_EMIT_BPF_H

#include "maps.bpf.h"
#include "snap.bpf.h"
#include "spec_str.bpf.h"

/* Ring-buffer records: every bpf_ringbuf_reserve is followed at once by its one NULL check,
 * and every path after it ends in a submit. Older verifiers (6.1 and 5.10, checked in the
 * kernel matrix) do not know that a reservation that passed the check is not NULL: checked
 * a second time (a helper that returns NULL on failure, then its caller), they walk a "NULL"
 * path that never releases it and reject the program ("Unreleased reference"). */
static __always_inline void event_init(struct event *e)
{
	__u64 id = bpf_get_current_pid_tgid();

	__builtin_memset(e, 0, sizeof(*e));
	e->pid = id >> 32;
	e->tid = (__u32)id;
	e->ts_ns = bpf_ktime_get_ns();
}

static __always_inline void emit_control_flags(__u32 type, __u32 pid, __u64 arg0, __u64 rb_flags)
{
	struct event *e = bpf_ringbuf_reserve(&control, sizeof(*e), 0);

	if (!e) {
		count(&stats, STAT_CONTROL_DROPS);
		return;
	}
	event_init(e);
	e->type = type;
	e->pid = pid;
	e->args[0] = arg0;
	bpf_get_current_comm(e->str, sizeof(e->str));
	bpf_ringbuf_submit(e, rb_flags);
}

static __always_inline void emit_control(__u32 type, __u32 pid, __u64 arg0)
{
	emit_control_flags(type, pid, arg0, 0);
}

static __always_inline void emit_link_map(__u32 id, __u64 stopped)
{
	struct event *e = bpf_ringbuf_reserve(&control, sizeof(*e), 0);

	if (!e) {
		count(&stats, STAT_CONTROL_DROPS);
		return;
	}
	event_init(e);
	e->type = EV_LINK_MAP;
	e->probe_id = id;
	e->args[0] = stopped;
	bpf_ringbuf_submit(e, 0);
}

/* cudaGetDeviceCount returned ret; count_ptr is its int *count */
static __always_inline void emit_device_count(__u32 id, __u64 count_ptr, __u64 ret)
{
	struct event *e;
	int n = -1;

	bpf_probe_read_user(&n, sizeof(n), (void *)count_ptr);
	e = bpf_ringbuf_reserve(&control, sizeof(*e), 0);
	if (!e) {
		count(&stats, STAT_CONTROL_DROPS);
		return;
	}
	event_init(e);
	e->type = EV_DEVICE_COUNT;
	e->probe_id = id;
	e->args[0] = (__u64)(__s64)n;
	e->ret = ret;
	bpf_ringbuf_submit(e, 0);
}

/* Waking the loader costs the traced thread an IPI per event; the loader polls at least
 * every 100 ms anyway. Wake it only when the buffer is an eighth full. */
static __always_inline __u64 wakeup_flags(void)
{
	if (bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) >
	    bpf_ringbuf_query(&events, BPF_RB_RING_SIZE) / 8)
		return BPF_RB_FORCE_WAKEUP;
	return BPF_RB_NO_WAKEUP;
}

/* A kernel's name or handle made (enum kernel_name_call): once per kernel and process.
 * arg: for the calls that name a key, the name's address in the process (copied here);
 * for the others, the key this one stands for. */
static __always_inline void emit_kernel_name(__u32 id, __u64 call, __u64 key, __u64 arg)
{
	struct kname_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	bool named = call == KN_REGISTER || call == KN_MODULE_FUNCTION ||
		     call == KN_LIBRARY_KERNEL;

	if (!e) {
		count(&stats, STAT_KERNEL_NAMES_LOST);
		return;
	}
	e->type = EV_KERNEL_NAME;
	e->probe_id = id;
	e->pid = bpf_get_current_pid_tgid() >> 32;
	e->call = (__u32)call;
	e->key = key;
	e->alias = named ? 0 : arg;
	e->name[0] = 0;
	if (named && bpf_probe_read_user_str(e->name, sizeof(e->name), (void *)arg) < 0)
		e->name[0] = 0;
	bpf_ringbuf_submit(e, wakeup_flags());
}

/* The process's CUDA totals that a span takes the difference of (enum cuda_counter) */
static __always_inline void fill_counters(__u64 *v, const struct cuda_counts *c)
{
	v[CC_LAUNCHES] = c->launches;
	v[CC_MEMCPY_BYTES] = c->memcpy_bytes_h2d + c->memcpy_bytes_d2h + c->memcpy_bytes_d2d +
			     c->memcpy_bytes_other;
	v[CC_MEMCPY_NS] = c->memcpy_ns;
	v[CC_SYNC_NS] = c->sync_ns;
	v[CC_MALLOC_BYTES] = c->malloc_bytes;
	v[CC_LAUNCHES_DRIVER] = c->launches_driver;
	v[CC_GRAPH_LAUNCHES] = c->graph_launches;
	v[CC_MEMCPY_CALLS] = c->memcpy_calls;
	v[CC_MEMCPY_BYTES_H2D] = c->memcpy_bytes_h2d;
	v[CC_MEMCPY_BYTES_D2H] = c->memcpy_bytes_d2h;
	v[CC_MEMCPY_BYTES_D2D] = c->memcpy_bytes_d2d;
	v[CC_MALLOC_CALLS] = c->malloc_calls;
	v[CC_FREE_CALLS] = c->free_calls;
	v[CC_SYNC_CALLS] = c->sync_calls;
	v[CC_NCCL_CALLS] = c->nccl_calls;
	v[CC_NCCL_BYTES] = c->nccl_bytes;
	v[CC_KERNEL_SEQ] = c->kernel_seq;
	v[CC_KERNELS_UNSPLIT] = c->kernels_unsplit;
	v[CC_LAST_LAUNCH_NS] = c->last_launch_ns;
	v[CC_SYNC_ENTRY_NS] = c->sync_entry_ns;
	v[CC_SYNC_RETURN_NS] = c->sync_return_ns;
}

static __always_inline void emit(__u32 type, __u32 probe_id, const struct probe_spec *spec,
				 const __u64 args[CIRRON_NARGS], __u64 ret, __u64 dur_ns)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct target_info *ti = spec->action == ACT_EMIT ? bpf_map_lookup_elem(&targets, &tgid)
							  : NULL;
	struct event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	__u64 wake = 0;

	/* A gap in a process's anchors breaks the pairing of scope enters and exits: the
	 * next anchor that gets through says how many went missing before it. */
	if (!e) {
		count(&stats, STAT_RB_DROPS);
		if (ti)
			__sync_fetch_and_add(&ti->lost, 1);
		snap_sent(tgid);
		return;
	}
	event_init(e);
	if (ti && ti->lost) {
		__u32 lost = ti->lost;

		e->lost_before = lost;
		__sync_fetch_and_add(&ti->lost, -lost);
	}
	e->type = type;
	e->probe_id = probe_id;
	e->ret = ret;
	e->dur_ns = dur_ns;
	for (int i = 0; i < CIRRON_NARGS; i++)
		e->args[i] = args[i];
	if (type == EV_CALL)
		spec_str(e->str, CIRRON_STR_LEN, spec, args);
	if (spec->action == ACT_EMIT) {
		struct cuda_counts *c = bpf_map_lookup_elem(&cuda_totals, &tgid);

		wake = snap_stamp(tgid, &e->snap_updates);

		if (c) {
			/* launches from here on are the next interval's (span_kernels) */
			__sync_fetch_and_add(&c->kernel_seq, 1);
			fill_counters(e->counters, c);
		}
	}
	if (spec->flags & PROBE_F_PY_CALL) {	/* only a Python call's event can carry it */
		__u32 zero = 0, *py = bpf_map_lookup_elem(&py_wake, &zero);

		if (py && *py) {	/* python.bpf.h: a class first seen */
			*py = 0;
			wake = BPF_RB_FORCE_WAKEUP;
		}
	}
	bpf_ringbuf_submit(e, wake ? wake : wakeup_flags());
	snap_sent(tgid);
}

#endif /* __CIRRON_EMIT_BPF_H */
