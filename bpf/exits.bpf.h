/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* Exits of C++ functions an exception may leave (PROBE_F_EXITS): never a uretprobe. */
#ifndef __CIRRON_EXITS_BPF_H
#define __CIRRON_EXITS_BPF_H

#include <bpf/bpf_tracing.h>
#include "maps.bpf.h"

/* A call of a PROBE_F_EXITS function: kept by (thread, probe id, stack pointer) in both
 * modes, so that its exit probe, which sees the same stack pointer at the function's ret or
 * tail jump (the return address still on the stack on x86-64; restored on arm64), finds exactly
 * this call (recursion included). A call an exception left keeps its state until the LRU
 * drops it: no exit, and the loader closes its span like any span left open. */
static __always_inline void exits_save_call(struct pt_regs *ctx, __u32 id,
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
