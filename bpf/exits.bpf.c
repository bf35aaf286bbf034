// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Exits of C++ functions an exception may leave (PROBE_F_RET_SITE): entry-style uprobes, never
// a uretprobe (docs/probe-exits.md). The entry side is in exits.bpf.h.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "cirron.h"
#include "arch.bpf.h"
#include "maps.bpf.h"
#include "emit.bpf.h"
#include "probe_ids.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

/* PROBE_F_RET_SITE: an entry-style uprobe on an instruction a probed function returns to
 * (its cookie, or its probe_addrs entry, is the function's probe id). The function's frame
 * is gone: the stack pointer is ARCH_RETURN_SP_DELTA above the entry's. */
SEC("uprobe")
int handle_ret_site(struct pt_regs *ctx)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid(),
				.sp = PT_REGS_SP(ctx) - ARCH_RETURN_SP_DELTA };
	const struct probe_spec *spec;
	struct call_state *st;

	key.probe_id = entry_probe_id(ctx, tgid);
	if (!key.probe_id)
		return 0;
	st = bpf_map_lookup_elem(&calls, &key);
	spec = bpf_map_lookup_elem(&probe_specs, &key.probe_id);
	if (!st || !spec)
		return 0;	/* reached without that call (a jump target), or not armed then */
	count(&hits, 2 * key.probe_id + 1);
	if (spec->action == ACT_EMIT)
		emit(EV_RETURN, key.probe_id, spec, st->args, PT_REGS_RC(ctx),
		     bpf_ktime_get_ns() - st->ts_ns);
	bpf_map_delete_elem(&calls, &key);
	return 0;
}