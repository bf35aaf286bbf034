// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Exits of C++ functions an exception may leave (PROBE_F_EXITS): entry-style uprobes on the
// function's own exit instructions, never a uretprobe (docs/probe-exits.md). The entry side
// is in exits.bpf.h.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cirron.h"
#include "arch.bpf.h"
#include "maps.bpf.h"
#include "emit.bpf.h"
#include "probe_ids.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* PROBE_F_EXITS: an entry-style uprobe on one of a probed function's exit instructions (a ret,
 * or a jump out of it with its frame torn down: a tail call), found by the loader by
 * disassembling the function (user/proc/func_exits.c); its cookie (or its probe_addrs entry)
 * is the function's probe id. The stack pointer is the one the entry saw, so a hit that is no
 * exit of a recorded call finds nothing. */
static __always_inline int on_exit_insn(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid(), .sp = PT_REGS_SP(ctx) };
	const struct probe_spec *spec;
	struct call_state *st;

	key.probe_id = entry_probe_id(ctx, tgid);
	if (!key.probe_id)
		return 0;
	st = bpf_map_lookup_elem(&calls, &key);
	spec = bpf_map_lookup_elem(&probe_specs, &key.probe_id);
	if (!st || !spec)
		return 0;	/* not an exit of a recorded call (not armed then, or a frameless jump) */
	count(&hits, 2 * key.probe_id + 1);
	if (spec->action == ACT_EMIT)
		emit(EV_RETURN, key.probe_id, spec, st->args, PT_REGS_RC(ctx),
		     bpf_ktime_get_ns() - st->ts_ns);
	bpf_map_delete_elem(&calls, &key);
	return 0;
}

/* One copy per attach type, as for the entry programs (probes.bpf.c). */
SEC("uprobe")
int handle_exit(struct pt_regs *ctx)
{
	return on_exit_insn(ctx);
}

SEC("uprobe")
int handle_exit_multi(struct pt_regs *ctx)
{
	return on_exit_insn(ctx);
}
