/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * --snapshots: types shared by bpf/snap.bpf.h and the loader (user/snap/).
 * Per process, BPF counts the updates of parameters and gradients that began (an optimizer
 * step or zero_grad entered, a backward entered, grad disabled after a backward: a possible
 * update by hand) and stamps every anchor event with that count, so the loader knows whether
 * anything began between the last event it has seen and the end of a read. It wakes the
 * loader, once, at the end of the optimizer steps the loader asks for and where a training
 * loop seems to end.
 */
#ifndef __CIRRON_SNAP_H
#define __CIRRON_SNAP_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* What a probe is to the snapshots (snap_roles, by probe id; set by the loader) */
enum snap_role {
	SNAP_ROLE_NONE = 0,
	SNAP_ROLE_SCOPE_ENTER,	/* record_function enter: Optimizer.step#, Optimizer.zero_grad#,
				 * enumerate(DataLoader)#, others */
	SNAP_ROLE_SCOPE_EXIT,	/* record_function exit (no name: pairs last-in first-out) */
	SNAP_ROLE_BACKWARD,	/* autograd Engine::execute entered */
	SNAP_ROLE_GRAD_MODE,	/* GradMode::set_enabled(arg0) */
};

#define SNAP_S_IN_STEP		(1u << 0)	/* inside an optimizer step (tid) */
#define SNAP_S_STEPPED		(1u << 1)	/* an optimizer step ended, no backward since */
#define SNAP_S_WOKE		(1u << 2)	/* the loop-end wakeup was given since that step */
#define SNAP_S_BACKWARD		(1u << 3)	/* a backward since the last step or grad-off */
#define SNAP_S_WAKE_PENDING	(1u << 4)	/* the event being sent wakes the loader */
#define SNAP_S_TRAINING		(1u << 5)	/* a backward was seen: training began */

/* BPF's, per process (snap_states): made by BPF for processes the loader named in
 * snap_wakes; the loader only reads it. */
struct snap_state {
	__u64 updates;		/* updates begun, each counted once its event is in the ring
				 * (wraps; events carry the low 32 bits) */
	__u64 steps;		/* optimizer steps begun */
	__u64 wakes;		/* wakeups given */
	__u32 flags;		/* SNAP_S_* */
	__u32 tid;		/* the thread of the open optimizer step */
	__u32 depth;		/* record_function depth on that thread inside the step */
	__u32 nexts;		/* DataLoader __next__ calls since the last step or backward */
};

#define SNAP_W_LOOP_END		(1u << 0)	/* wake where a training loop seems to end */
#define SNAP_W_TRAINING		(1u << 1)	/* wake at the first backward */

/* The loader's, per process (snap_wakes): which wakeups it wants. */
struct snap_wake {
	__u64 every;		/* wake at the end of optimizer step n (counted in */
	__u64 base;		/* snap_state.steps) when (n - base) % every == 0; 0: never */
	__u32 flags;		/* SNAP_W_* */
	__u32 pad;
};

#endif /* __CIRRON_SNAP_H */
