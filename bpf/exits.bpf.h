/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* Exits of C++ functions an exception may leave (PROBE_F_RET_SITE): never a uretprobe. */
#ifndef __CIRRON_EXITS_BPF_H
#define __CIRRON_EXITS_BPF_H

#include <bpf/bpf_tracing.h>
#include "arch.bpf.h"
#include "emit.bpf.h"

/* PROBE_F_RET_SITE entry: whether this call is recorded, telling the loader about a return
 * address first seen. A call is recorded when its exit will be seen: the loader has probed
 * where it returns, or it is the call that tells the loader and the process is held until
 * that address is probed (stop first, then tell; PROBE_F_STOP_ON_LOAD, set in every mode: see
 * docs/probe-exits.md for why that is still open). Without the flag, a call to a return
 * address not probed yet goes unrecorded rather than open with no exit (so does one while
 * another thread's call is telling). */
static __always_inline bool site_ready(struct pt_regs *ctx, __u32 tgid, __u32 id,
				       const struct probe_spec *spec)
{
	struct ret_site_key site = { .tgid = tgid };
	bool stop = spec->flags & PROBE_F_STOP_ON_LOAD;
	struct event *e;
	__u32 *v;

	site.addr = arch_entry_return_address(ctx);
	if (!site.addr)
		return false;
	v = bpf_map_lookup_elem(&ret_sites, &site);
	if (v)
		return *v & RET_SITE_PROBED;
	if (bpf_map_update_elem(&ret_sites, &site, &id, BPF_NOEXIST))
		return false;	/* another thread told it just now */
	e = bpf_ringbuf_reserve(&control, sizeof(*e), 0);
	if (!e) {
		count(&stats, STAT_CONTROL_DROPS);
		bpf_map_delete_elem(&ret_sites, &site);	/* the next call tells again */
		return false;
	}
	if (stop)
		bpf_send_signal(SIGSTOP);
	event_init(e);
	e->type = EV_RET_SITE;
	e->probe_id = id;
	e->pid = tgid;
	e->tid = (__u32)bpf_get_current_pid_tgid();
	e->args[0] = site.addr;
	e->args[1] = stop;
	bpf_ringbuf_submit(e, 0);
	return stop;
}

/* A recorded PROBE_F_RET_SITE call: keyed by (thread, probe id, stack pointer) in both modes,
 * so that the return-site probe, which sees the stack 8 bytes higher, finds exactly this call
 * (recursion included; a jump to that instruction finds nothing). A call an exception left
 * keeps its state until the LRU drops it. */
static __always_inline void save_site_call(struct pt_regs *ctx, __u32 id,
					   const __u64 args[CIRRON_NARGS])
{
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid(), .probe_id = id,
				.sp = PT_REGS_SP(ctx) };
	struct call_state st = { .ts_ns = bpf_ktime_get_ns(), .probe_id = id };

	for (int i = 0; i < CIRRON_NARGS; i++)
		st.args[i] = args[i];
	bpf_map_update_elem(&calls, &key, &st, BPF_ANY);
}

#endif /* __CIRRON_EXITS_BPF_H */
