// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --python-frames sampled: CPython's slot_tp_call is probed during one training step in
// every N, so those steps get an exact forward (and module class) while the others pay
// only for the torch anchors. A uprobe costs its hits, not its existence in BPF, so the
// probes are really attached and detached (the ids stay reserved).
//
// The loader sees events up to ~100 ms after they happened, many steps behind a fast loop,
// and a call that began before the probes came may be under way. So Python calls count
// only between the first two optimizer steps' ends after the probes were in: one whole
// training step. (Loops without an optimizer scope: two quiet points, where a data_load,
// backward or optimizer step ended, two steps apart.)

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attach/observer.h"
#include "attach/py_sample.h"
#include "attach/windows.h"
#include "common/log.h"
#include "tree/clock.h"
#include "tree/torch_tree.h"

#define PY_SAMPLE_MIN_GAP_NS 1000000000ull

/* Forget the per-thread call stacks BPF keeps for this process: calls that were open when
 * the probes went never returned through them. */
static void clear_bpf_stacks(struct observer *o, int pid)
{
	char dir[64];
	struct dirent *de;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/task", pid);
	d = opendir(dir);
	if (!d)
		return;
	while ((de = readdir(d))) {
		__u32 tid = (__u32)strtoul(de->d_name, NULL, 10);

		if (tid)
			bpf_map_delete_elem(o->py_stacks_fd, &tid);
	}
	closedir(d);
}

static void start_sample(struct observer *o, struct target *t)
{
	struct py_sample *s = &t->py.sample;
	int n;

	clear_bpf_stacks(o, t->pid);
	t->py.calls.depth = t->py.calls.module_depth = 0;
	s->attach_ns = clock_map__now(&t->clock);
	n = windows__python_sample(o, t, true);
	if (n <= 0) {
		s->next_step = LONG_MAX;	/* said once by windows__python_sample */
		return;
	}
	s->on = true;
	s->on_since_ns = clock_map__now(&t->clock);
	s->accept_from_ns = 0;
	s->accept_until_ns = UINT64_MAX;
	dlog("pid %d: Python frames on at step %ld", t->pid, t->tree.step_index);
}

static void end_sample(struct observer *o, struct target *t)
{
	struct py_sample *s = &t->py.sample;

	windows__python_sample(o, t, false);
	s->on = false;
	s->samples++;
	s->on_ns += clock_map__now(&t->clock) - s->attach_ns;
	s->ended_mono_ns = clock__mono_ns();
	/* later calls still queued are left out: the last of them may not have returned */
	s->accept_until_ns = t->tree.quiet_ns;
	s->next_step = t->tree.step_index + o->opts->sample_every - 1;
	if (t->py.calls.module_depth) {	/* not at a real quiet point: end it here */
		struct tree_event te = { .kind = TI_FORWARD_EXIT, .ts_ns = t->tree.quiet_ns,
					 .tid = t->tree.tid };

		torch_tree__feed(&t->tree, &te);
	}
	t->py.calls.depth = t->py.calls.module_depth = 0;
	dlog("pid %d: Python frames off at step %ld", t->pid, t->tree.step_index);
}

void py_sample__after_event(struct observer *o, struct target *t)
{
	struct py_sample *s = &t->py.sample;
	const struct torch_tree *tr = &t->tree;

	if (o->opts->python_frames != PYF_SAMPLED)
		return;
	if (!s->on) {
		if (!s->scheduled) {	/* the first after a warm-up: lazy loads, first-call paths */
			s->scheduled = true;
			s->next_step = tr->step_index + o->opts->sample_every - 1;
		}
		/* at most one window a second: attaching and detaching cost the loader (and so
		 * a small machine's target) tens of ms of kernel time each */
		if (tr->step_index >= s->next_step &&
		    clock__mono_ns() - s->ended_mono_ns >= PY_SAMPLE_MIN_GAP_NS)
			start_sample(o, t);
		return;
	}
	/* Loops without an optimizer scope: quiet points two steps apart */
	bool no_optimizer = !tr->optimizer_end_ns;
	uint64_t mark = no_optimizer ? tr->quiet_ns : tr->optimizer_end_ns;

	if (!s->accept_from_ns) {
		if (mark >= s->on_since_ns) {
			s->accept_from_ns = mark;
			s->steps = tr->step_index;
		}
		return;
	}
	if (mark > s->accept_from_ns && (!no_optimizer || tr->step_index >= s->steps + 2))
		end_sample(o, t);
}

bool py_sample__accepts(const struct observer *o, const struct target *t, uint64_t ts_ns)
{
	const struct py_sample *s = &t->py.sample;

	if (o->opts->python_frames != PYF_SAMPLED)
		return true;
	return s->accept_from_ns && ts_ns >= s->accept_from_ns && ts_ns <= s->accept_until_ns;
}

bool py_sample__active(const struct observer *o)
{
	for (const struct target *t = o->targets; t; t = t->next)
		if (t->py.sample.on)
			return true;
	return false;
}
