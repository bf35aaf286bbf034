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
#define SNAP_S_LOADING		(1u << 6)	/* a DataLoader __next__ was seen */

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
	__u64 step_updates;	/* updates as the last optimizer step ended */
	__u64 copies;		/* copies begun (bpf/snap_copy.bpf.h): copy k goes to slot
				 * k % SNAP_COPY_SLOTS of the process's */
};

#define SNAP_W_LOOP_END		(1u << 0)	/* wake where a training loop seems to end */
#define SNAP_W_TRAINING		(1u << 1)	/* wake at the first backward, and at the first
						 * DataLoader __next__ (the models exist by then,
						 * mostly: a look begins a step earlier) */

/* The loader's, per process (snap_wakes): which wakeups it wants. */
struct snap_wake {
	__u64 every;		/* wake at the end of optimizer step n (counted in */
	__u64 base;		/* snap_state.steps) when (n - base) % every == 0; 0: never */
	__u32 flags;		/* SNAP_W_* */
	__u32 pad;
};

/*
 * The copy at a loop's end (bpf/snap_copy.bpf.h). An epoch of a few ms that goes straight on
 * into the next leaves the loader no time to read its state after its last step: the next
 * update begins within a __next__. So where a training loop seems to end right after an
 * optimizer step (no update begun since), BPF copies a small model's parameters and grads,
 * in the job's thread, into a slot the loader reads later: once per epoch, never per step.
 * The loader names what to copy (a plan per process: the parameters' bytes, which do not
 * move, and their TensorImpls, from which each grad is found at the copy: a grad set to None
 * and made again by the next backward moves).
 */
#define SNAP_COPY_TENSORS	64
#define SNAP_COPY_SEGS		256	/* pieces of up to SNAP_COPY_CHUNK bytes */
#define SNAP_COPY_CHUNK		4096
#define SNAP_COPY_BYTES		(128u << 10)	/* a copy's bytes, parameters and grads */
#define SNAP_COPY_SLOTS		16	/* copies kept per process: the loader may come to an
					 * epoch's end 15 epochs late (a flush, a busy CPU) */
#define SNAP_COPY_PROCS		4	/* processes copied for at once */

/* One parameter: its bytes are at data (dense, bytes long), copied to off in the copy; its
 * grad's (the same size) to off + bytes. */
struct snap_copy_tensor {
	__u64 impl;		/* its TensorImpl */
	__u64 data;		/* its first element */
	__u32 bytes;
	__u32 off;
	__u32 elem_size;
	__u32 pad;
};

/* A piece to copy: bytes [src_off, src_off + len) of tensor `tensor` (its grad's if grad) to
 * dst_off in the copy's data. */
struct snap_copy_seg {
	__u32 dst_off;
	__u32 src_off;
	__u16 len;		/* up to SNAP_COPY_CHUNK (4096 fits) */
	__u8 tensor;
	__u8 grad;
};

/* The loader's, per process (snap_copy_plans). */
struct snap_copy_plan {
	__u32 gen;		/* the loader's number for this plan (copies carry it) */
	__u32 slot0;		/* the process's slots: snap_copies[slot0, slot0 + SLOTS) */
	__u32 ntensors, nsegs;
	/* where a parameter's grad is: TensorImpl -> AutogradMeta -> grad's TensorImpl ->
	 * StorageImpl -> data (the loader's torch layout) */
	__u64 autograd_meta, grad, storage, storage_data, storage_offset, numel;
	struct snap_copy_tensor t[SNAP_COPY_TENSORS];
	struct snap_copy_seg seg[SNAP_COPY_SEGS];
};

/* BPF's, one slot (snap_copies): whole when begun == done and the process's copies counter
 * had not passed begun + SNAP_COPY_SLOTS - 1 when the loader finished reading it. */
struct snap_copy {
	__u64 begun;		/* this copy's number (1, 2, ...) */
	__u64 updates;		/* the update count of the state copied (no update under way) */
	__u64 steps;		/* optimizer steps begun then */
	__u64 step_updates;	/* the count as the last optimizer step ended */
	__u32 gen;		/* the plan's */
	__u32 pad;
	__u64 ns;		/* what the copy took, in the job's thread */
	__u64 grad_data[SNAP_COPY_TENSORS];	/* each grad's first element, 0: none */
	__u64 grad_numel[SNAP_COPY_TENSORS];
	__u64 done;		/* set to begun once the bytes are in */
	__u8 data[SNAP_COPY_BYTES + SNAP_COPY_CHUNK];
};

#endif /* __CIRRON_SNAP_H */
