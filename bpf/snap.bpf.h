/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* --snapshots (bpf/snap.h): the update count every anchor event carries, and the few
 * wakeups of the loader around the end of an epoch's last optimizer step. Only processes
 * the loader named in snap_wakes are looked at. */
#ifndef __CIRRON_SNAP_BPF_H
#define __CIRRON_SNAP_BPF_H

#include "maps.bpf.h"
#include "snap.h"
#include "spec_str.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct snap_state);
} snap_states SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CIRRON_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct snap_wake);
} snap_wakes SEC(".maps") __weak;

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CIRRON_MAX_PROBES);
	__type(key, __u32);
	__type(value, __u32);	/* enum snap_role */
} snap_roles SEC(".maps") __weak;

#include "snap_copy.bpf.h"	/* uses snap_states */

/* The update an event announces is counted once the event is in the ring (snap_sent):
 * another thread's event stamped with the new count then comes after it, so a loader that
 * has seen that count has seen the event too. Kept here from snap_note to emit's submit
 * (a uprobe's program runs on one CPU, start to end). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} snap_pending SEC(".maps") __weak;

static __always_inline void snap_update_begins(void)
{
	__u32 zero = 0, *p = bpf_map_lookup_elem(&snap_pending, &zero);

	if (p)
		*p = 1;
}

#define SNAP_NAME_LEN 24

static __always_inline bool snap_prefix(const char *s, const char *prefix, int n)
{
	for (int i = 0; i < n && i < SNAP_NAME_LEN; i++)
		if (s[i] != prefix[i])
			return false;
	return true;
}

/* A loop seems to end: after an optimizer step, a second DataLoader __next__ with no
 * backward between, or grad disabled after a __next__ (validation, the epoch's end). Once
 * per step; only where the loader asked. */
static __always_inline bool snap_loop_end(struct snap_state *st, const struct snap_wake *w)
{
	if (!(w->flags & SNAP_W_LOOP_END) ||
	    (st->flags & (SNAP_S_STEPPED | SNAP_S_WOKE)) != SNAP_S_STEPPED || !st->nexts)
		return false;
	st->flags |= SNAP_S_WOKE | SNAP_S_WAKE_PENDING;
	return true;
}

/* Returns whether a loop seems to end here. */
static __always_inline bool snap_scope_enter(struct snap_state *st, const struct snap_wake *w,
					     const struct probe_spec *spec,
					     const __u64 args[CIRRON_NARGS], __u32 tid)
{
	char name[SNAP_NAME_LEN] = {};
	bool end;

	spec_str(name, SNAP_NAME_LEN, spec, args);
	if (snap_prefix(name, "enumerate(DataLoader)#", 22)) {
		if (!(st->flags & SNAP_S_LOADING) && (w->flags & SNAP_W_TRAINING))
			st->flags |= SNAP_S_LOADING | SNAP_S_WAKE_PENDING;
		end = snap_loop_end(st, w);
		st->nexts++;
		return end;
	}
	if ((st->flags & SNAP_S_IN_STEP) && st->tid == tid)
		st->depth++;
	if (!snap_prefix(name, "Optimizer.", 10))
		return false;
	snap_update_begins();	/* a step, or zero_grad */
	if (!snap_prefix(name + 10, "step#", 5) || (st->flags & SNAP_S_IN_STEP))
		return false;
	st->flags |= SNAP_S_IN_STEP;
	st->tid = tid;
	st->depth = 1;
	st->steps++;
	return false;
}

static __always_inline void snap_scope_exit(struct snap_state *st, const struct snap_wake *w,
					    __u32 tid)
{
	if (!(st->flags & SNAP_S_IN_STEP) || st->tid != tid || --st->depth)
		return;
	st->flags &= ~(SNAP_S_IN_STEP | SNAP_S_WOKE | SNAP_S_BACKWARD);
	st->flags |= SNAP_S_STEPPED;
	st->nexts = 0;
	st->step_updates = st->updates;
	if (w->every && st->steps >= w->base && (st->steps - w->base) % w->every == 0)
		st->flags |= SNAP_S_WAKE_PENDING;
}

/* An anchor event of a process the loader snapshots, before it is sent. */
static __always_inline void snap_note(__u32 id, const struct probe_spec *spec, __u32 tgid,
				      const __u64 args[CIRRON_NARGS])
{
	__u32 *role = bpf_map_lookup_elem(&snap_roles, &id);
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	struct snap_state *st, zero = {};
	struct snap_wake *w;
	bool end = false;

	if (!role || !*role)
		return;
	w = bpf_map_lookup_elem(&snap_wakes, &tgid);
	if (!w)
		return;	/* the loader does not snapshot this process */
	st = bpf_map_lookup_elem(&snap_states, &tgid);
	if (!st) {
		bpf_map_update_elem(&snap_states, &tgid, &zero, BPF_NOEXIST);
		st = bpf_map_lookup_elem(&snap_states, &tgid);
		if (!st)
			return;
	}
	switch (*role) {
	case SNAP_ROLE_SCOPE_ENTER:
		end = snap_scope_enter(st, w, spec, args, tid);
		break;
	case SNAP_ROLE_SCOPE_EXIT:
		snap_scope_exit(st, w, tid);
		break;
	case SNAP_ROLE_BACKWARD:
		if (!(st->flags & SNAP_S_TRAINING) && (w->flags & SNAP_W_TRAINING))
			st->flags |= SNAP_S_TRAINING | SNAP_S_WAKE_PENDING;
		snap_update_begins();
		st->flags = (st->flags | SNAP_S_BACKWARD) & ~SNAP_S_STEPPED;
		st->nexts = 0;
		break;
	case SNAP_ROLE_GRAD_MODE:
		if (args[0] & 1)
			break;
		if (!(st->flags & SNAP_S_IN_STEP) && (st->flags & SNAP_S_BACKWARD)) {
			snap_update_begins();	/* maybe an update by hand */
			st->flags &= ~SNAP_S_BACKWARD;
		}
		if (!(st->flags & SNAP_S_IN_STEP))
			end = snap_loop_end(st, w);
		break;
	}
	if (end)	/* the state after the epoch's last step, while it is still there */
		snap_copy_take(tgid);
}

/* emit(), once the event is submitted (or dropped): the update it announces counts. */
static __always_inline void snap_sent(__u32 tgid)
{
	__u32 zero = 0, *p = bpf_map_lookup_elem(&snap_pending, &zero);
	struct snap_state *st;

	if (!p || !*p)
		return;
	*p = 0;
	st = bpf_map_lookup_elem(&snap_states, &tgid);
	if (st)
		__sync_fetch_and_add(&st->updates, 1);
}

/* emit(): the update count for the event (its own update not in it yet), and
 * BPF_RB_FORCE_WAKEUP when snap_note asked for a wakeup (0: the ring's usual flags). */
static __always_inline __u64 snap_stamp(__u32 tgid, __u32 *updates)
{
	struct snap_state *st = bpf_map_lookup_elem(&snap_states, &tgid);

	if (!st)
		return 0;
	*updates = (__u32)st->updates;
	if (!(st->flags & SNAP_S_WAKE_PENDING))
		return 0;
	st->flags &= ~SNAP_S_WAKE_PENDING;
	__sync_fetch_and_add(&st->wakes, 1);
	return BPF_RB_FORCE_WAKEUP;
}

#endif /* __CIRRON_SNAP_BPF_H */
