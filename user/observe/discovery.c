// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The node agent's discovery (`watch`): a process whose link map changed, a new dynamic
// linker, the jobs already running at start. Which processes are wanted is agent/watch.c's.
#include <bpf/bpf.h>
#include <errno.h>
#include <inttypes.h>
#include <string.h>
#include <unistd.h>
#include "attach/ldso_watch.h"
#include "attach/observer.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "observe/discovery.h"
#include "observe/registry.h"
#include "observe/sessions.h"
#include "observe/targets.h"
#include "proc/procfs.h"

/* A child of a traced process with its parent's command line: forked, not exec'd (a
 * DataLoader worker), so it runs its parent's job, not one of its own. BPF marks such forks
 * as they happen; this finds those that were there before their parent was traced. */
static bool fork_of_target(struct observer *o, int pid)
{
	char state, cmd[4096], parent_cmd[4096];
	struct target *p;
	int ppid;

	if (procfs__stat(pid, &state, &ppid) || !(p = registry__find(o, ppid)) || !p->session)
		return false;
	return !procfs__cmdline(pid, cmd, sizeof(cmd)) &&
	       !procfs__cmdline(ppid, parent_cmd, sizeof(parent_cmd)) && !strcmp(cmd, parent_cmd);
}

/* A process whose link map changed (its ld.so said so), or found running at start
 * (mid_run): traced if it maps a library to trace and passes --match. */
void discovery__process(struct observer *o, int pid, bool mid_run)
{
	struct target_info ignored = { .flags = TARGET_F_IGNORED }, ti;
	struct target *t = registry__find(o, pid);

	if (t && registry__alive(t)) {	/* a load before its own ld.so probe was in */
		targets__scan(o, t);
		return;
	}
	if (t)	/* its pid is another process's now: the one we traced is gone */
		targets__vanished(o, t);
	/* events sent before BPF knew it was ignored */
	if (!bpf_map_lookup_elem(o->targets_fd, &pid, &ti) && (ti.flags & TARGET_F_IGNORED))
		return;
	o->watch.looked_at++;
	if (pid == getpid() || !watch__maps_wanted(&o->watch, pid))
		return;	/* nothing of interest (yet): most processes end here */
	if (fork_of_target(o, pid)) {
		bpf_map_update_elem(o->targets_fd, &pid, &ignored, BPF_NOEXIST);
		if (!procfs__alive(pid))
			bpf_map_delete_elem(o->targets_fd, &pid);
		dlog("pid %d: a fork of a traced process (same command line): part of its job", pid);
		return;
	}
	if (!watch__process_wanted(&o->watch, pid)) {
		/* BPF tells nothing more of it until it execs */
		bpf_map_update_elem(o->targets_fd, &pid, &ignored, BPF_NOEXIST);
		if (!procfs__alive(pid))	/* its exit went by: the entry would stay */
			bpf_map_delete_elem(o->targets_fd, &pid);
		o->watch.ignored++;
		dlog("pid %d: command line does not match --match: ignored", pid);
		return;
	}
	t = registry__add(o, pid);
	if (!t)
		return;
	t->mid_run = mid_run;
	t->id_ticks = watch__take_exec(&o->watch, pid, t->start_ticks);
	o->watch.wanted++;
	if (registry__track(o, t, false)) {
		wlog("pid %d: cannot follow: %s", pid, strerror(errno));
		registry__remove(o, t);
		return;
	}
	targets__scan(o, t);
}

static void watch_ldso(void *ctx, int pid, const struct proc_map *m)
{
	int err = ldso_watch__add(ctx, pid, m);

	if (err < 0)
		wlog("cannot probe %s (mapped by pid %d) in every process: %s; the processes "
		     "it serves are not watched", m->path, pid, strerror(-err));
}

/* The first exec through a dynamic linker not probed yet (a new container image): probe
 * it, then look at that process, whose libraries may have loaded before the probe. */
void discovery__new_ldso(struct observer *o, const struct event *e)
{
	struct proc_maps maps;

	if (procfs__read_maps((int)e->pid, &maps))
		return;
	for (size_t i = 0; i < maps.n; i++)
		if ((!e->args[0] ||	/* no bpf_find_vma: whichever ld.so it maps */
		     (maps.v[i].start <= e->args[0] && e->args[0] < maps.v[i].end)) &&
		    watch__is_ldso(&o->watch, &maps.v[i]))
			watch_ldso(o, (int)e->pid, &maps.v[i]);
	procfs__free_maps(&maps);
	watch_queue__note(&o->watch.queue, (int)e->pid);
}

static void watch_running(void *ctx, int pid)
{
	discovery__process(ctx, pid, true);
}

/* Jobs running now (after a restart of the agent, say) are found in /proc, once, with the
 * dynamic linkers in use; BPF reports the rest as it happens. */
int discovery__start(struct observer *o)
{
	struct watch_scan_ops ops = { .on_process = watch_running, .on_ldso = watch_ldso,
				      .ctx = o };
	int n = watch__scan(&o->watch, getpid(), &ops);

	if (n < 0) {
		elog("cannot list processes in /proc: %s", strerror(-n));
		return EXIT_FAILURE_RUNTIME;
	}
	sessions__tag_launchers(o);
	ilog("watching for processes that load torch, TensorFlow or the CUDA runtime (%zu dynamic linkers "
	     "probed); %d running now", o->watch.nldsos, n);
	return 0;
}

static void watch_noted(void *ctx, int pid)
{
	discovery__process(ctx, pid, false);
}

/* Found by a pass over /proc after lost events: traced now, it had been missed. */
static void watch_rescanned(void *ctx, int pid)
{
	struct observer *o = ctx;
	uint64_t before = o->watch.wanted;

	discovery__process(o, pid, true);
	if (o->watch.wanted > before) {
		o->watch.queue.recovered++;
		wlog("pid %d: found by a rescan of /proc after lost events", pid);
	}
}

/* Once per round, after the rings are drained and exits handled: control events lost to a
 * full ring make every process (and every target's maps) be looked at again, held targets
 * are let go; then the processes whose link map changed are looked at. */
void discovery__round(struct observer *o)
{
	struct watch_scan_ops ops = { .on_process = watch_rescanned, .on_ldso = watch_ldso,
				      .ctx = o };
	uint64_t lost = watch_queue__lost_since(&o->watch.queue, o->stats_fd);

	if (lost) {
		char state;
		int ppid;

		wlog("%" PRIu64 " control events lost (ring full): looking at every process again",
		     lost);
		for (struct target *t = o->targets; t; t = t->next) {
			targets__scan(o, t);
			if (t->stop_on_load && !procfs__stat(t->pid, &state, &ppid) && state == 'T')
				registry__resume(o, t->pid);
		}
		if (o->opts->cmd == CMD_WATCH) {
			o->watch.queue.rescans++;
			int n = watch__scan(&o->watch, getpid(), &ops);

			if (n < 0)
				wlog("cannot list processes in /proc: %s", strerror(-n));
		}
	}
	watch_queue__drain(&o->watch.queue, watch_noted, o);
}
