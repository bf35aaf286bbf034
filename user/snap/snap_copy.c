// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots: BPF's copy of a small model at a training loop's end (bpf/snap.h).
//
// An epoch of a few ms that goes straight on into the next leaves the loader no moment to
// read the state after its last step (the job never waits): the next update begins within a
// __next__. So the loader hands BPF a plan, made from a read of the models (which parameters,
// where their bytes lie, where torch keeps a parameter's grad); where a loop seems to end
// after an optimizer step, BPF copies those bytes, in the job's thread, into one of the
// target's few slots; the loader takes the copy of an epoch's end back and makes its record
// from it as from a read of the target (snap_tensors.c), the tensors' shapes and names read
// from the target as usual (a parameter's do not change).
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/log.h"
#include "snap/snap_copy.h"
#include "snap/snap_env.h"

void snap_copy__plan_begin(struct snap_copy_plan *pl, const struct torch_layout *l)
{
	memset(pl, 0, sizeof(*pl));
	pl->autograd_meta = (uint64_t)l->autograd_meta;
	pl->grad = (uint64_t)l->grad;
	pl->storage = (uint64_t)l->storage;
	pl->storage_data = (uint64_t)l->storage_data;
	pl->storage_offset = (uint64_t)l->storage_offset;
	pl->numel = (uint64_t)l->numel;
}

/* A dense view: its elements fill its span, no gaps, no overlaps. */
static bool dense(const struct tensor_desc *d)
{
	for (int i = 0; i < d->dim; i++)
		if (d->strides[i] < 0)
			return false;
	return torch_tensor__span_bytes(d) == (uint64_t)d->numel * (uint64_t)d->elem_size;
}

static bool same_view(const struct tensor_desc *a, const struct tensor_desc *b)
{
	if (a->dim != b->dim || a->numel != b->numel || a->elem_size != b->elem_size)
		return false;
	for (int i = 0; i < a->dim; i++)
		if (a->sizes[i] != b->sizes[i] || (a->sizes[i] > 1 && a->strides[i] != b->strides[i]))
			return false;
	return true;
}

static uint32_t segs_for(uint64_t bytes)
{
	return (uint32_t)((bytes + SNAP_COPY_CHUNK - 1) / SNAP_COPY_CHUNK);
}

bool snap_copy__plan_add(struct snap_copy_plan *pl, const struct tensor_desc *w,
			 const struct tensor_desc *g)
{
	uint64_t bytes = (uint64_t)w->numel * (uint64_t)w->elem_size, off = 0;
	struct snap_copy_tensor *t;

	if (w->device_type != 0 || w->td == TD_OTHER)
		return true;	/* listed, never read: nothing to copy */
	if (pl->ntensors >= SNAP_COPY_TENSORS || !dense(w) || (g && !same_view(w, g)) || !bytes)
		return false;
	if (pl->ntensors) {
		t = &pl->t[pl->ntensors - 1];
		off = (uint64_t)t->off + 2ull * t->bytes;
		off = (off + 7) & ~7ull;
	}
	if (off + 2 * bytes > SNAP_COPY_BYTES || pl->nsegs + 2 * segs_for(bytes) > SNAP_COPY_SEGS)
		return false;
	t = &pl->t[pl->ntensors];
	*t = (struct snap_copy_tensor){
		.impl = w->impl,
		.data = w->data + (uint64_t)w->storage_offset * (uint64_t)w->elem_size,
		.bytes = (uint32_t)bytes, .off = (uint32_t)off, .elem_size = (uint32_t)w->elem_size,
	};
	for (int grad = 0; grad < 2; grad++)
		for (uint64_t at = 0; at < bytes; at += SNAP_COPY_CHUNK)
			pl->seg[pl->nsegs++] = (struct snap_copy_seg){
				.dst_off = (uint32_t)(off + (grad ? bytes : 0) + at),
				.src_off = (uint32_t)at,
				.len = (uint16_t)(bytes - at < SNAP_COPY_CHUNK ? bytes - at
									   : SNAP_COPY_CHUNK),
				.tensor = (uint8_t)pl->ntensors, .grad = (uint8_t)grad,
			};
	pl->ntensors++;
	return true;
}

/* The slots handed out: SNAP_COPY_PROCS targets at once (the loop's thread only). */
static bool slot_used[SNAP_COPY_PROCS];

static bool same_plan(const struct snap_copy_plan *a, const struct snap_copy_plan *b)
{
	return a->ntensors == b->ntensors && a->nsegs == b->nsegs &&
	       !memcmp(a->t, b->t, sizeof(a->t[0]) * a->ntensors) &&
	       a->autograd_meta == b->autograd_meta && a->grad == b->grad;
}

bool snap_copy__set_plan(const struct snap_env *e, int pid, struct snap_copy_src *s,
			 const struct snap_copy_plan *pl)
{
	__u32 key = (__u32)pid;
	uint32_t gen = s->plan.gen;

	if (s->plan_set && same_plan(&s->plan, pl))
		return true;
	for (int i = 0; i < SNAP_COPY_PROCS && !s->has_slot; i++)
		if (!slot_used[i]) {
			slot_used[i] = s->has_slot = true;
			s->slot0 = (uint32_t)i * SNAP_COPY_SLOTS;
		}
	if (!s->has_slot) {
		dlog("pid %d: snapshots: no copy slot free (%d targets copy at once)", pid,
		     SNAP_COPY_PROCS);
		return false;
	}
	if (!s->copy && !(s->copy = malloc(sizeof(*s->copy))))
		return false;
	s->plan = *pl;
	s->plan.gen = gen + 1;
	s->plan.slot0 = s->slot0;
	if (bpf_map_update_elem(e->copy_plans_fd, &key, &s->plan, BPF_ANY)) {
		dlog("pid %d: snapshots: cannot hand BPF the copy plan: %s", pid, strerror(errno));
		s->plan_set = false;
		return false;
	}
	s->plan_set = true;
	dlog("pid %d: snapshots: BPF copies %u tensors at a loop's end", pid, pl->ntensors);
	return true;
}

bool snap_copy__take(const struct snap_env *e, int pid, struct snap_copy_src *s,
		     uint32_t end_seq, uint32_t *seq)
{
	const struct snap_copy *c = s->copy;
	struct snap_state st;
	__u32 key = (__u32)pid;
	uint64_t newest;

	if (!s->plan_set || !c || bpf_map_lookup_elem(e->states_fd, &key, &st))
		return false;
	/* newest first: an epoch's end is mostly the last copy made (a slot is 517 KiB) */
	for (newest = st.copies; st.copies && newest + SNAP_COPY_SLOTS > st.copies && newest;
	     newest--) {
		__u32 slot = s->slot0 + (__u32)(newest % SNAP_COPY_SLOTS);

		if (bpf_map_lookup_elem(e->copies_fd, &slot, s->copy) ||
		    bpf_map_lookup_elem(e->states_fd, &key, &st))
			return false;
		/* whole: done as begun, and no later copy began on this slot before it was read */
		if (c->begun != newest || c->done != newest || c->gen != s->plan.gen ||
		    st.copies >= newest + SNAP_COPY_SLOTS)
			continue;
		if ((uint32_t)c->updates != end_seq && (uint32_t)c->step_updates != end_seq)
			continue;
		*seq = (uint32_t)c->updates;
		return true;
	}
	return false;
}

const uint8_t *snap_copy__bytes(const struct snap_copy_src *s, const struct tensor_desc *w,
				struct tensor_desc *g, bool *has_grad, const uint8_t **grad)
{
	const struct snap_copy_plan *pl = &s->plan;

	*has_grad = false;
	*grad = NULL;
	for (uint32_t i = 0; i < pl->ntensors; i++) {
		const struct snap_copy_tensor *t = &pl->t[i];

		if (t->impl != w->impl || t->data != w->data + (uint64_t)w->storage_offset *
							       (uint64_t)w->elem_size)
			continue;
		if (s->copy->grad_data[i] && s->copy->grad_numel[i] == (uint64_t)w->numel) {
			*g = *w;
			g->impl = 0;
			g->data = s->copy->grad_data[i];
			g->storage_offset = 0;
			g->grad_impl = 0;
			*has_grad = true;
			*grad = s->copy->data + t->off + t->bytes;
		}
		return s->copy->data + t->off;
	}
	return NULL;
}

void snap_copy__drop(const struct snap_env *e, int pid, struct snap_copy_src *s)
{
	__u32 key = (__u32)pid;

	if (s->plan_set && e)
		bpf_map_delete_elem(e->copy_plans_fd, &key);
	if (s->has_slot)
		slot_used[s->slot0 / SNAP_COPY_SLOTS] = false;
	free(s->copy);
	memset(s, 0, sizeof(*s));
}
