/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_COPY_H
#define __CIRRON_SNAP_COPY_H

/* --snapshots: BPF's copy of a small model where a training loop seems to end (bpf/snap.h):
 * the plan the loader hands BPF, and a copy taken back for an epoch's record. */
#include <stdbool.h>
#include <stdint.h>
#include "snap.h"
#include "pyobj/torch_tensor.h"

struct snap_env;

/* A copy taken back: what a read takes the tensors' bytes from (snap_tensors.c). */
struct snap_copy_src {
	struct snap_copy_plan plan;	/* the plan it was made with */
	struct snap_copy *copy;		/* heap: the slot as read */
	uint32_t slot0;			/* the target's slots, where has_slot */
	bool has_slot;
	bool plan_set;			/* BPF holds plan */
};

/* A plan for the models' parameters, one at a time: begin, then add each parameter (w) with
 * its grad (g, NULL: none now). add returns false where the model cannot be copied (a CUDA
 * tensor, one not dense, more than BPF copies): no plan then. Pure (tests/unit). */
void snap_copy__plan_begin(struct snap_copy_plan *pl, const struct torch_layout *l);
bool snap_copy__plan_add(struct snap_copy_plan *pl, const struct tensor_desc *w,
			 const struct tensor_desc *g);

/* Hands pid's plan to BPF when it changed (a slot of the few is taken the first time).
 * Returns false when none is free or the map refused it. */
bool snap_copy__set_plan(const struct snap_env *e, int pid, struct snap_copy_src *s,
			 const struct snap_copy_plan *pl);
/* The copy BPF made at the end whose update count was end_seq (the state at a loop's end, or
 * right after the step that ended there), whole: into s->copy; *seq gets the update count of
 * the state it holds (end_seq, or a later one where zero_grad ran before the loop's end).
 * Returns false where there is none (none made, another overwrote it, a plan since). */
bool snap_copy__take(const struct snap_env *e, int pid, struct snap_copy_src *s,
		     uint32_t end_seq, uint32_t *seq);
/* A parameter's bytes in the copy (its view's span from its first element), and its grad's:
 * w as read from the target now (a parameter's place does not change), *g made from it where
 * the copy holds a grad (*has_grad). NULL where the copy does not hold w. */
const uint8_t *snap_copy__bytes(const struct snap_copy_src *s, const struct tensor_desc *w,
				struct tensor_desc *g, bool *has_grad, const uint8_t **grad);
/* pid's plan taken back from BPF (e NULL: BPF is gone), its slots free again. */
void snap_copy__drop(const struct snap_env *e, int pid, struct snap_copy_src *s);

#endif
