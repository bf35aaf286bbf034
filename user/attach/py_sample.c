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
//
// --cuda-calls sampled uses the same schedule (one step in --sample-every, at most one
// window a second) for the per-call CUDA probes. Their counts need no step alignment: BPF
// counts only while the process's gate is open (cuda_windows), the gate opens after every
// probe is in and closes before any goes, and the totals are scaled by span / gate time.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "attach/observer.h"
#include "attach/py_sample.h"
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
	struct py_sample *s = &t->py_sample;
	int n;

	clear_bpf_stacks(o, t->pid);
	t->py_calls.depth = t->py_calls.module_depth = 0;
	n = attach__python_sample(o, t, true);
	if (n <= 0) {
		s->next_step = LONG_MAX;	/* said once by attach__python_sample */
		return;
	}
	s->on = true;
	s->on_since_ns = clock__wall_ns();
	s->accept_from_ns = 0;
	s->accept_until_ns = UINT64_MAX;
	dlog("pid %d: Python frames on at step %ld", t->pid, t->tree.step_index);
}

static void end_sample(struct observer *o, struct target *t)
{
	struct py_sample *s = &t->py_sample;

	attach__python_sample(o, t, false);
	s->on = false;
	s->samples++;
	s->ended_mono_ns = clock__mono_ns();
	/* later calls still queued are left out: the last of them may not have returned */
	s->accept_until_ns = t->tree.quiet_ns;
	s->next_step = t->tree.step_index + o->opts->sample_every - 1;
	if (t->py_calls.module_depth) {	/* not at a real quiet point: end it here */
		struct tree_event te = { .kind = TI_FORWARD_EXIT, .ts_ns = t->tree.quiet_ns,
					 .tid = t->tree.tid };

		torch_tree__feed(&t->tree, &te);
	}
	t->py_calls.depth = t->py_calls.module_depth = 0;
	dlog("pid %d: Python frames off at step %ld", t->pid, t->tree.step_index);
}

void py_sample__after_event(struct observer *o, struct target *t)
{
	struct py_sample *s = &t->py_sample;
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
	const struct py_sample *s = &t->py_sample;

	if (o->opts->python_frames != PYF_SAMPLED)
		return true;
	return s->accept_from_ns && ts_ns >= s->accept_from_ns && ts_ns <= s->accept_until_ns;
}

bool py_sample__active(const struct observer *o)
{
	for (const struct target *t = o->targets; t; t = t->next)
		if (t->py_sample.on)
			return true;
	return false;
}

#define CUDA_WINDOW_MIN_NS	20000000ull	/* 20 ms */
#define CUDA_WINDOW_PROGRESS	4		/* progress calls at least, in a window */
#define CUDA_WINDOW_MAX_NS	2000000000ull	/* a step that never ends (a hang): stop */
#define CUDA_ARMED_MAX_NS	100000000ull	/* no progress call as long: count by time */
#define CUDA_GAP_FACTOR		20	/* gap >= 20 x (linking time + window) */
#define CUDA_HEAD_NS		1000000000ull	/* the exact head: the first second, */
#define CUDA_HEAD_CALLS		20000		/* or this many per-call probe hits */

/* Calls of the probes that mark progress (anchors, synchronize), exact. */
static uint64_t progress_hits(const struct observer *o, const struct target *t)
{
	int ncpu = libbpf_num_possible_cpus();
	__u64 *v = ncpu > 0 ? calloc((size_t)ncpu, sizeof(*v)) : NULL;
	uint64_t sum = 0;

	for (size_t i = 0; v && i < t->nprobes; i++) {
		const struct probe_result *r = &t->probes[i];
		__u32 key = 2 * r->id;

		if (!r->id || !r->progress || bpf_map_lookup_elem(o->hits_fd, &key, v))
			continue;
		for (int c = 0; c < ncpu; c++)
			sum += v[c];
	}
	free(v);
	return sum;
}

static void cuda_window_open(struct observer *o, struct target *t, uint64_t now)
{
	struct cuda_sample *c = &t->cuda_sample;
	int n = attach__cuda_sample(o, t, true);

	/* Linking takes ~35 ms on an idle VM, a second on a loaded one, and unlinking as
	 * long, the hot probes trapping all along: the next window waits that much more. */
	c->link_ns = clock__mono_ns() - now;

	if (n <= 0) {
		attach__cuda_sample(o, t, false);	/* what did link goes again */
		c->ended_ns = now;
		return;
	}
	c->on = true;
	c->opened_ns = c->phase_ns = clock__mono_ns();
	c->step_at_open = t->tree.step_index;
	c->windows++;
	dlog("pid %d: CUDA window %ld on at step %ld", t->pid, c->windows, t->tree.step_index);
}

/* w: the window as BPF left it; its progress calls count when it ended on one (CLOSED). */
static void cuda_window_close(struct observer *o, struct target *t, const struct cuda_window *w,
			      uint64_t now)
{
	struct cuda_sample *c = &t->cuda_sample;

	attach__cuda_sample(o, t, false);
	if (w->state == CW_TIMED)
		c->timed_ns += now - c->phase_ns;
	else if (w->state == CW_CLOSED || w->state == CW_CLOSING)
		c->window_progress += w->progress;
	c->on = false;
	c->ended_ns = clock__mono_ns();
	c->last_window_ns = c->ended_ns - c->opened_ns;
	c->window_ns += c->last_window_ns;
	c->next_step = t->tree.step_index + o->opts->sample_every - 1;
	dlog("pid %d: CUDA window %ld off at step %ld", t->pid, c->windows, t->tree.step_index);
}

static void set_window_state(struct observer *o, struct target *t, struct cuda_window *w,
			     enum cuda_window_state st, uint64_t now)
{
	__u32 pid = (__u32)t->pid;

	w->state = st;
	bpf_map_update_elem(o->cuda_windows_fd, &pid, w, BPF_ANY);
	t->cuda_sample.phase_ns = now;
}

/* An open window's next state: counting by progress calls until there are enough of them
 * (and one training step passed), by time where none come. */
static void cuda_window_step(struct observer *o, struct target *t, uint64_t now)
{
	struct cuda_sample *c = &t->cuda_sample;
	struct cuda_window w = { .state = CW_CLOSED };
	__u32 pid = (__u32)t->pid;
	bool steps = t->tree.step_index > 0;
	uint64_t in_state = now - c->phase_ns;

	bpf_map_lookup_elem(o->cuda_windows_fd, &pid, &w);
	switch (w.state) {
	case CW_ARMED:
		if (in_state >= CUDA_ARMED_MAX_NS)
			set_window_state(o, t, &w, CW_TIMED, now);
		return;
	case CW_COUNTING:
		if ((in_state >= CUDA_WINDOW_MIN_NS && w.progress >= CUDA_WINDOW_PROGRESS &&
		     (!steps || t->tree.step_index >= c->step_at_open + 2)) ||
		    in_state >= CUDA_WINDOW_MAX_NS)
			set_window_state(o, t, &w, CW_CLOSING, now);
		return;
	case CW_CLOSING:
		if (in_state >= CUDA_WINDOW_MAX_NS)	/* no progress call to end on */
			cuda_window_close(o, t, &w, now);
		return;
	case CW_TIMED:
		if (in_state >= CUDA_WINDOW_MIN_NS)
			cuda_window_close(o, t, &w, now);
		return;
	default:
		cuda_window_close(o, t, &w, now);
	}
}

static uint64_t head_calls(const struct cuda_counts *c)
{
	return c->launches + c->memcpy_calls + c->malloc_calls + c->free_calls + c->graph_launches;
}

void cuda_sample__head(struct observer *o, struct target *t)
{
	struct cuda_sample *c = &t->cuda_sample;
	struct cuda_window w = { .state = CW_TIMED };
	__u32 pid = (__u32)t->pid;

	if (o->opts->cuda_calls != CUDA_CALLS_SAMPLED || !c->any || c->head_on || c->head_done ||
	    c->on)
		return;
	/* linked with the gate armed, then open at once: the process is held (run) or was
	 * just found (attach), so no call falls between the two */
	if (attach__cuda_sample(o, t, true) <= 0 ||
	    bpf_map_update_elem(o->cuda_windows_fd, &pid, &w, BPF_ANY)) {
		attach__cuda_sample(o, t, false);
		c->head_done = true;	/* windows only, as before */
		return;
	}
	c->head_on = true;
	c->head_opened_ns = clock__mono_ns();
	dlog("pid %d: CUDA exact head on", t->pid);
}

/* The launches per kernel BPF has counted for this process so far. */
static void keep_head_kernels(struct observer *o, struct target *t)
{
	struct cuda_sample *c = &t->cuda_sample;
	struct kernel_key key, next;
	bool first = true;
	__u64 n;

	while (!bpf_map_get_next_key(o->kernels_fd, first ? NULL : &key, &next)) {
		struct cuda_head_kernel *v;

		first = false;
		key = next;
		if (next.tgid != (__u32)t->pid || bpf_map_lookup_elem(o->kernels_fd, &next, &n))
			continue;
		v = realloc(c->head_kernels, (c->nhead_kernels + 1) * sizeof(*v));
		if (!v)
			break;
		c->head_kernels = v;
		v[c->nhead_kernels++] = (struct cuda_head_kernel){ next.func, n };
	}
}

/* The head ends after a second or CUDA_HEAD_CALLS calls (a launch-bound job pays a probe
 * hit per call while it lasts), or with the process. */
static void cuda_head_step(struct observer *o, struct target *t, uint64_t now)
{
	struct cuda_sample *c = &t->cuda_sample;
	struct cuda_counts counts = {};

	bpf_map_lookup_elem(o->cuda_fd, &t->pid, &counts);
	if (t->exited) {	/* the whole run was counted call by call */
		c->head_on = false;
		c->head_ns = now - c->head_opened_ns;
		c->until_ns = now;
		return;
	}
	if (now - c->head_opened_ns < CUDA_HEAD_NS && head_calls(&counts) < CUDA_HEAD_CALLS)
		return;
	attach__cuda_sample(o, t, false);	/* the gate closes before a probe goes */
	bpf_map_lookup_elem(o->cuda_fd, &t->pid, &counts);
	c->head = counts;
	c->head_progress = progress_hits(o, t);
	keep_head_kernels(o, t);
	c->head_on = false;
	c->head_done = true;
	c->ended_ns = clock__mono_ns();
	c->head_ns = c->ended_ns - c->head_opened_ns;
	c->link_ns = c->last_window_ns = 0;
	dlog("pid %d: CUDA exact head off after %llu calls", t->pid,
	     (unsigned long long)head_calls(&counts));
}

void cuda_sample__tick(struct observer *o)
{
	if (o->opts->cuda_calls != CUDA_CALLS_SAMPLED)
		return;
	for (struct target *t = o->targets; t; t = t->next) {
		struct cuda_sample *c = &t->cuda_sample;
		bool steps = t->tree.step_index > 0;
		uint64_t now = clock__mono_ns();

		if (!c->any || c->until_ns)
			continue;
		if (c->head_on) {
			cuda_head_step(o, t, now);
			continue;
		}
		if (t->exited) {
			if (c->on)
				cuda_window_step(o, t, now);
			if (c->on) {	/* cut short: what it counted is left in, uncovered */
				struct cuda_window w = { .state = CW_CLOSING };

				cuda_window_close(o, t, &w, now);
			}
			c->until_ns = now;
			continue;
		}
		if (c->on) {
			cuda_window_step(o, t, now);
			continue;
		}
		if (now - c->ended_ns < PY_SAMPLE_MIN_GAP_NS ||
		    now - c->ended_ns < CUDA_GAP_FACTOR * (c->link_ns + c->last_window_ns))
			continue;
		if (steps && !c->scheduled) {
			c->scheduled = true;
			c->next_step = t->tree.step_index + o->opts->sample_every - 1;
		}
		if (!steps || t->tree.step_index >= c->next_step)
			cuda_window_open(o, t, now);
	}
}

bool cuda_sample__active(const struct observer *o)
{
	for (const struct target *t = o->targets; t; t = t->next)
		if (t->cuda_sample.on || t->cuda_sample.head_on)
			return true;
	return false;
}

double cuda_sample__scale(const struct observer *o, const struct target *t,
			  struct cuda_scale *s)
{
	const struct cuda_sample *c = &t->cuda_sample;
	uint64_t end = c->until_ns ? c->until_ns : clock__mono_ns();

	memset(s, 0, sizeof(*s));
	s->window_ns = c->window_ns + (c->on ? end - c->opened_ns : 0);
	s->span_ns = end - c->since_ns;
	s->head_ns = c->head_on ? end - c->head_opened_ns : c->head_ns;
	s->progress = progress_hits(o, t);
	s->window_progress = c->window_progress;
	s->exact = c->head_on || (c->head_ns && !c->head_done);
	if (s->exact)
		return 1;
	if (!c->head_done) {	/* no head (its probes could not be linked): windows only */
		s->by_progress = s->window_progress > 0;
		if (s->by_progress)
			return (double)s->progress / (double)s->window_progress;
		return c->timed_ns ? (double)s->span_ns / (double)c->timed_ns : 0;
	}
	/* After the head: windows stand for the rest of the run; with none yet, the head
	 * stands for all of it */
	s->by_progress = s->window_progress > 0 || (!c->timed_ns && c->head_progress > 0);
	if (s->window_progress > 0)
		return (double)(s->progress - c->head_progress) / (double)s->window_progress;
	if (c->timed_ns)
		return (double)(s->span_ns - c->head_ns) / (double)c->timed_ns;
	s->head_only = true;
	if (c->head_progress > 0)
		return (double)s->progress / (double)c->head_progress;
	return c->head_ns ? (double)s->span_ns / (double)c->head_ns : 0;
}
