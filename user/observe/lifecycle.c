// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// exec and fork in traced processes (from BPF's tracepoints): an exec'd image starts over as
// a new session, a forked child is followed.
#include <bpf/libbpf.h>
#include <time.h>
#include <unistd.h>
#include "attach/observer.h"
#include "observe/lifecycle.h"
#include "observe/registry.h"
#include "observe/targets.h"
#include "proc/procfs.h"

/* The third part of a session id for an image exec'd now: the time since boot in clock
 * ticks, like a process's start time, and never the id the old image had. */
static uint64_t exec_ticks(const struct target *old)
{
	uint64_t prev = old->id_ticks ? old->id_ticks : procfs__start_ticks(old->pid);
	long clk_tck = sysconf(_SC_CLK_TCK);
	uint64_t hz = clk_tck > 0 ? (uint64_t)clk_tck : 100, now;
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	now = (uint64_t)ts.tv_sec * hz + (uint64_t)ts.tv_nsec / (1000000000ull / hz);
	return now > prev ? now : prev + 1;
}

void lifecycle__exec(struct observer *o, const struct event *e)
{
	struct target *t = registry__find(o, (int)e->pid);
	bool held = e->args[0], follow, stop, root;
	uint64_t ticks, signals;

	if (!t)
		return;
	/* What the old image sent just before its exec still waits in the events ring, which
	 * is drained after this (control) one: taken in now, before its session ends. */
	t->exec_ns = e->ts_ns;
	ring_buffer__consume(o->events_rb);
	/* The old image is gone: its session (if any) ends; a followed process starts over. */
	follow = t->follow;
	stop = t->stop_on_load;
	root = t->root_child;
	signals = t->signals_sent;	/* the process's, whatever image it runs */
	/* Same pid, same start time: the new image's session needs an id of its own */
	ticks = exec_ticks(t);
	if (t->session) {
		t->exited = true;
		t->exit_status = 0;
		targets__end(o, t, "exec");
	} else {
		registry__remove(o, t);
	}
	if (!follow) {	/* watch: the new image is looked at when it loads a library */
		if (o->opts->cmd == CMD_WATCH)
			watch__note_exec(&o->watch, (int)e->pid, procfs__start_ticks((int)e->pid),
					 ticks);
		return;
	}
	t = registry__add(o, (int)e->pid);
	if (!t)
		return;
	t->follow = true;
	t->stop_on_load = stop;
	t->root_child = root;
	t->id_ticks = ticks;
	t->signals_sent = signals;
	registry__track(o, t, false);
	targets__scan(o, t);
	if (held)
		registry__resume(o, t->pid);
}

void lifecycle__fork(struct observer *o, const struct event *e)
{
	struct target *parent = registry__find(o, (int)e->pid), *t;

	if (!parent || !parent->follow || registry__find(o, (int)e->args[0]))
		return;
	/* A forked child shares its parent's image (DataLoader workers): it becomes a
	 * session only if it execs. BPF already follows it. */
	t = registry__add(o, (int)e->args[0]);
	if (t) {
		t->follow = true;
		t->stop_on_load = parent->stop_on_load;
		t->forked_from = parent->pid;	/* a helper of its job if it ever is a session */
	}
}
