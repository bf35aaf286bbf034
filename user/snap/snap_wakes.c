// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots, BPF's side (bpf/snap.h): which probes mark updates, and when BPF wakes the
// loader (at the end of the optimizer steps that may end an epoch).
#include <bpf/bpf.h>
#include <errno.h>
#include <string.h>
#include "snap.h"
#include "common/log.h"
#include "snap/snap_ctl.h"
#include "snap/snap_wakes.h"
#include "snap/snap_env.h"
#include "traced/target.h"
#include "tree/clock.h"

void snap_wakes__set(const struct snap_env *e, struct target *t, uint64_t every, uint64_t base)
{
	struct snap_ctl *c = t->snap;
	__u32 pid = (__u32)t->pid;

	if (c->wake.every == every && c->wake.base == base && c->wake.flags)
		return;
	c->wake.every = every;
	c->wake.base = base;
	c->wake.flags = SNAP_W_LOOP_END | SNAP_W_TRAINING;
	if (bpf_map_update_elem(e->wakes_fd, &pid, &c->wake, BPF_ANY))
		dlog("pid %d: snapshots: cannot set wakeups: %s", t->pid, strerror(errno));
	else
		dlog("pid %d: snapshots: wakeups every %llu steps from %llu", t->pid,
		     (unsigned long long)every, (unsigned long long)base);
}

static __u32 role_of(const struct probe_result *r)
{
	if (r->def->action != ACT_EMIT)
		return SNAP_ROLE_NONE;
	switch (r->def->meaning) {
	case MEAN_SCOPE_ENTER: return SNAP_ROLE_SCOPE_ENTER;
	case MEAN_SCOPE_EXIT: return SNAP_ROLE_SCOPE_EXIT;
	case MEAN_BACKWARD: return SNAP_ROLE_BACKWARD;
	case MEAN_GRAD_MODE: return SNAP_ROLE_GRAD_MODE;
	default: return SNAP_ROLE_NONE;
	}
}

void snap_wakes__roles(const struct snap_env *e, struct target *t, bool clear)
{
	for (size_t i = 0; i < t->nprobes; i++) {
		__u32 id = t->probes[i].id, role = clear ? 0 : role_of(&t->probes[i]);

		if (id)
			bpf_map_update_elem(e->roles_fd, &id, &role, BPF_ANY);
	}
}

void snap_wakes__plan(const struct snap_env *e, struct target *t, long end_step)
{
	struct snap_ctl *c = t->snap;
	struct snap_wake_plan w = snap_plan__wakeups(&c->pace, c->ended_epoch_id != 0,
						     end_step - c->prev_end_steps, end_step,
						     c->steps_offset, t->tree.optimizer_steps,
						     clock__mono_ns(), c->read_ms_last);

	if (w.set)
		snap_wakes__set(e, t, w.every, w.base);
}
