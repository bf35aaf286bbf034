// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The traced processes: the list, what BPF knows of each (followed, held, armed), scanning
// one for libraries to probe, and ending one (its session closes, its probes go).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "attach/py_sample.h"
#include "common/log.h"
#include "observe/gpu_time.h"
#include "observe/observe.h"
#include "target/procfs.h"
#include "target/versions.h"

struct target *targets__find(struct observer *o, int pid)
{
	for (struct target *t = o->targets; t; t = t->next)
		if (t->pid == pid)
			return t;
	return NULL;
}

struct target *targets__add(struct observer *o, int pid)
{
	struct target *t = target__new(pid);

	if (!t)
		return NULL;
	t->start_ticks = procfs__start_ticks(pid);
	span_kernels__init(&t->span_kernels, o->span_kernels_fd, o->cuda_fd);
	t->next = o->targets;
	o->targets = t;
	watchdog__trace(&o->watchdog, pid, true);
	return t;
}

void *targets__map_keys(int fd, size_t key_size, int pid, size_t *n)
{
	char key[32] = { 0 }, next[32], *mine = NULL, *grown;
	size_t cap = 0;
	bool first = true;

	*n = 0;
	if (key_size > sizeof(key))
		return NULL;
	while (!bpf_map_get_next_key(fd, first ? NULL : key, next)) {
		first = false;
		memcpy(key, next, key_size);
		if (*(const __u32 *)next != (__u32)pid)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			grown = realloc(mine, cap * key_size);
			if (!grown)
				break;
			mine = grown;
		}
		memcpy(mine + (*n)++ * key_size, next, key_size);
	}
	return mine;
}

/* A map's entries of this pid (launches per kernel, live device allocations, launches per
 * kernel and interval): an exec'd image or a later process of the pid starts with none.
 * The walk first, then the deletes: a walk that deletes as it goes restarts each time. */
static void forget_pid(int fd, size_t key_size, int pid)
{
	size_t n;
	char *keys = targets__map_keys(fd, key_size, pid, &n);

	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, keys + i * key_size);
	free(keys);
}

/* Alive, and still the process we found: its pid reused by a new process (a wraparound
 * while its exit event was lost to a full control ring) is another job. An exec keeps the
 * start time: the same process. */
bool targets__alive(const struct target *t)
{
	uint64_t ticks;

	if (procfs__alive(t->pid) <= 0)
		return false;
	ticks = procfs__start_ticks(t->pid);
	return !t->start_ticks || !ticks || ticks == t->start_ticks;
}

void targets__remove(struct observer *o, struct target *t)
{
	struct target **pp;

	for (pp = &o->targets; *pp; pp = &(*pp)->next) {
		if (*pp == t) {
			*pp = t->next;
			break;
		}
	}
	if (!targets__find(o, t->pid))	/* not another image of it, traced on */
		watchdog__trace(&o->watchdog, t->pid, false);
	bpf_map_delete_elem(o->targets_fd, &t->pid);
	/* Its probes first, then its counts: a probe left in place meanwhile would count an
	 * exec'd image's calls into totals that image's session then starts from. */
	attach__detach(o, t);
	bpf_map_delete_elem(o->cuda_fd, &t->pid);
	bpf_map_delete_elem(o->exits_fd, &t->pid);
	forget_pid(o->kernels_fd, sizeof(struct kernel_key), t->pid);
	forget_pid(o->span_kernels_fd, sizeof(struct span_kernel_key), t->pid);
	forget_pid(o->allocs_fd, sizeof(struct alloc_key), t->pid);
	snapshots__end(o, t);	/* none left when its session ended: only here when it never did */
	gpu_time__free(t);
	target__free(t);
}

/* The only signal the loader sends a traced process: SIGCONT after `run`'s holds. Counted
 * for health (signals_sent). */
void targets__resume(struct observer *o, int pid)
{
	struct target *t = targets__find(o, pid);

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
int targets__track(struct observer *o, struct target *t, bool armed)
{
	struct target_info ti = { .flags = target_flags(t) | (armed ? TARGET_F_ARMED : 0) };

	return bpf_map_update_elem(o->targets_fd, &t->pid, &ti, BPF_ANY) ? -errno : 0;
}

void targets__arm(struct observer *o, struct target *t)
{
	snapshots__arm(o, t);	/* before its events flow */
	if (targets__track(o, t, true))
		wlog("pid %d: cannot arm probes: %s", t->pid, strerror(errno));
	/* Said only now: whoever waits for this line (a test that lets its job finish, a
	 * user) knows that what the job does next is seen. Said before, the job could end
	 * its work while the loader was still on its way here (a busy node preempts it). */
	if (t->session && t->unannounced) {
		t->unannounced = false;
		ilog("pid %d: session %s started", t->pid, t->session->id);
	}
	if (write_hook__attach(o, t))
		ilog("pid %d: no hook on its writes for marks (yet)", t->pid);
}

void targets__scan(struct observer *o, struct target *t)
{
	uint64_t start_ns = clock__wall_ns();
	int n = attach__scan(o, t);

	if (n < 0 && n != -ESRCH)
		wlog("pid %d: scanning for libraries failed: %s", t->pid, strerror(-n));
	if (n > 0 && !t->session && target__has_signal_source(t) && sessions__start(o, t, start_ns))
		elog("pid %d: out of memory starting a session", t->pid);
	else if (n > 0 && t->session) {
		versions__detect(o->syms, t);
		attrs__libraries(o, t);
	}
	if (n > 0)
		targets__arm(o, t);
}

void targets__end(struct observer *o, struct target *t, const char *cause)
{
	if (t->session)
		sessions__end(o, t, cause);
	targets__remove(o, t);
}

/* Gone, and its EV_EXIT did not come (lost to a full control ring): the status BPF kept,
 * else none is made up. */
void targets__vanished(struct observer *o, struct target *t)
{
	__u32 status;

	if (!t->exited && !bpf_map_lookup_elem(o->exits_fd, &t->pid, &status)) {
		t->exited = true;
		t->exit_status = (int)status;
	}
	t->exit_unseen = !t->exited;
	targets__exited(o, t, 0);
}

void targets__exited(struct observer *o, struct target *t, int status)
{
	if (!t->exited) {
		t->exited = true;
		t->exit_status = status;
	}
	/* Drain what the target sent before it died, then close its spans. Never from a
	 * ring-buffer callback: libbpf would hand the same record over again, endlessly. */
	ring_buffer__consume(o->rb);
	targets__end(o, t, WIFSIGNALED(t->exit_status) ? "signal" : "exit");
}
