/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* Which probe fired (its cookie, or its address without cookies), whether it counts in this
 * process image, and the entry state a return probe finds. */
#ifndef __CIRRON_PROBE_IDS_BPF_H
#define __CIRRON_PROBE_IDS_BPF_H

#include <bpf/bpf_tracing.h>
#include "maps.bpf.h"

/* The probe that fired: its cookie, or (no cookies) the loader's entry for the address. */
static __always_inline __u32 entry_probe_id(struct pt_regs *ctx, __u32 tgid)
{
	struct probe_addr_key key = { .tgid = tgid, .addr = PT_REGS_IP(ctx) };
	__u32 *id;

	if (use_cookie)
		return bpf_get_attach_cookie(ctx);
	id = bpf_map_lookup_elem(&probe_addrs, &key);
	return id ? *id : 0;
}

/* Entry state for the return probe: keyed by probe id, or (no cookies) by stack pointer. */
static __always_inline void save_call(struct pt_regs *ctx, __u32 id, const __u64 args[CIRRON_NARGS])
{
	struct call_key key = { .tid = (__u32)bpf_get_current_pid_tgid() };
	struct call_state st = { .ts_ns = bpf_ktime_get_ns(), .probe_id = id };

	if (use_cookie)
		key.probe_id = id;
	else
		key.sp = PT_REGS_SP(ctx);
	for (int i = 0; i < CIRRON_NARGS; i++)
		st.args[i] = args[i];
	bpf_map_update_elem(&calls, &key, &st, BPF_ANY);
}

/* A probe linked in an image the process has since left by exec (PROBE_F_IMAGE). */
static __always_inline bool other_image(const struct probe_spec *spec, __u32 tgid)
{
	__u32 *n;

	if (!(spec->flags & PROBE_F_IMAGE))
		return false;
	n = bpf_map_lookup_elem(&images, &tgid);
	return (n ? *n : 0) != spec->image;
}

#endif /* __CIRRON_PROBE_IDS_BPF_H */
