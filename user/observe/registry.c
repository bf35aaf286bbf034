// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The traced processes: the list, what BPF knows of each (followed, held, armed), and their
// removal (their probes and BPF's entries go). A leaf of observe/: it calls no file of its
// own stage.
#include <bpf/bpf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include "attach/attach.h"
#include "attach/observer.h"
#include "common/bpf_maps.h"
#include "common/log.h"
#include "observe/gpu_time.h"
#include "observe/registry.h"
#include "proc/procfs.h"
#include "snap/snapshots.h"

struct target *registry__find(struct observer *o, int pid)
{
	for (struct target *t = o->targets; t; t = t->next)
		if (t->pid == pid)
			return t;
	return NULL;
}

struct target *registry__add(struct observer *o, int pid)
{
	struct target *t = target__new(pid);

	if (!t)
		return NULL;
	t->start_ticks = procfs__start_ticks(pid);
	t->clock = o->clock;
	span_kernels__init(&t->cuda.span_kernels, o->span_kernels_fd, o->cuda_fd);
	t->next = o->targets;
	o->targets = t;
	watchdog__trace(&o->watchdog, pid, true);
	return t;
}

/* Alive, and still the process we found: its pid reused by a new process (a wraparound
 * while its exit event was lost to a full control ring) is another job. An exec keeps the
 * start time: the same process. */
bool registry__alive(const struct target *t)
{
	uint64_t ticks;

	if (procfs__alive(t->pid) <= 0)
		return false;
	ticks = procfs__start_ticks(t->pid);
	return !t->start_ticks || !ticks || ticks == t->start_ticks;
}

void registry__remove(struct observer *o, struct target *t)
{
	struct target **pp;

	for (pp = &o->targets; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	if (!registry__find(o, t->pid))	/* not another image of it, traced on */
		watchdog__trace(&o->watchdog, t->pid, false);
	bpf_map_delete_elem(o->targets_fd, &t->pid);
	/* Its probes first, then its counts: a probe left in place meanwhile would count an
	 * exec'd image's calls into totals that image's session then starts from. */
	attach__detach(o, t);
	bpf_map_delete_elem(o->cuda_fd, &t->pid);
	bpf_map_delete_elem(o->exits_fd, &t->pid);
	bpf_maps__forget_pid(o->kernels_fd, sizeof(struct kernel_key), t->pid);
	bpf_maps__forget_pid(o->span_kernels_fd, sizeof(struct span_kernel_key), t->pid);
	bpf_maps__forget_pid(o->allocs_fd, sizeof(struct alloc_key), t->pid);
	snapshots__end(&o->snap, t);	/* none left when its session ended: only here when it never did */
	snapshots__free(t);
	gpu_time__free(t);
	target__free(t);
}

/* Counted for health (signals_sent). */
void registry__resume(struct observer *o, int pid)
{
	struct target *t = registry__find(o, pid);

	if (kill(pid, SIGCONT) && errno != ESRCH)
		wlog("pid %d: cannot resume: %s", pid, strerror(errno));
	else if (t)
		t->signals_sent++;
}

static __u32 target_flags(const struct target *t)
{
	if (!t->follow)
		return TARGET_F_TRACED;
	return TARGET_F_FOLLOW | (t->stop_on_load ? TARGET_F_STOP_ON_EXEC : 0);
}

/* Tells BPF how to treat the target; armed: all its probes are in, let its events flow
 * (set once after attaching, so a scope's enter and exit start together). */
int registry__track(struct observer *o, struct target *t, bool armed)
{
	struct target_info ti = { .flags = target_flags(t) | (armed ? TARGET_F_ARMED : 0) };

	return bpf_map_update_elem(o->targets_fd, &t->pid, &ti, BPF_ANY) ? -errno : 0;
}
