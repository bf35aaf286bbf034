/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* The dynamic linker's link-map hook (_dl_debug_state): libraries loaded. */
#ifndef __CIRRON_LDSO_BPF_H
#define __CIRRON_LDSO_BPF_H

#include "arch.bpf.h"
#include "emit.bpf.h"

#define RT_CONSISTENT 0

/* ld.so's r_debug.r_state at r_state is RT_CONSISTENT: the libraries are in. */
static __always_inline bool link_map_consistent(__u64 r_state)
{
	int state = -1;

	return !bpf_probe_read_user(&state, sizeof(state), (void *)r_state) &&
	       state == RT_CONSISTENT;
}

/* A probe on ld.so's _dl_debug_state fired (ACT_DL_WATCH, ACT_DL_STATE): tell the loader once
 * the new libraries are in. */
static __always_inline void ldso_link_map_changed(struct pt_regs *ctx, __u32 id,
						  const struct probe_spec *spec, __u32 tgid)
{
	bool hold;

	if (spec->action == ACT_DL_WATCH) {
		struct target_info *t = bpf_map_lookup_elem(&targets, &tgid);

		/* traced processes have their own ld.so probe; ignored ones are not wanted */
		if ((t && (t->flags & (TARGET_F_TRACED | TARGET_F_IGNORED))) ||
		    !link_map_consistent(PT_REGS_IP(ctx) + spec->aux))
			return;
		/* Every process start on the node comes here: waking the loader for each cost it
		 * ~150 us (a crowd of shell commands); it drains the ring every 100 ms anyway */
		emit_control_flags(EV_WATCH_LOAD, tgid, 0, BPF_RB_NO_WAKEUP);
		return;
	}
	if (!link_map_consistent(spec->aux))
		return;
	/* `run` holds the process while the loader attaches to what it loaded, only while it has
	 * one thread: then no other thread's blocking call can end in EINTR. Stop first, then
	 * tell: the loader's SIGCONT must come after the SIGSTOP. */
	hold = (spec->flags & PROBE_F_STOP_ON_LOAD) && single_threaded();
	if (hold)
		hold_current(tgid);
	emit_link_map(id, hold);
}

#endif /* __CIRRON_LDSO_BPF_H */
