// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A traced process's life: scanning it for libraries to probe (its session starts at the
// first that gives one), arming it, ending it (its session closes, the registry lets it go).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "attach/attach.h"
#include "attach/observer.h"
#include "attach/py_sample.h"
#include "attach/write_hook.h"
#include "common/bpf_maps.h"
#include "common/log.h"
#include "observe/attrs.h"
#include "observe/registry.h"
#include "observe/sessions.h"
#include "observe/targets.h"
#include "proc/procfs.h"
#include "snap/snapshots.h"
#include "traced/versions.h"

void targets__arm(struct observer *o, struct target *t)
{
	snapshots__arm(&o->snap, t);	/* before its events flow */
	if (registry__track(o, t, true))
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
	uint64_t start_mono_ns = clock__mono_ns();
	int n = attach__scan(o, t);

	if (n < 0 && n != -ESRCH)
		wlog("pid %d: scanning for libraries failed: %s", t->pid, strerror(-n));
	if (n > 0 && !t->session && target__has_signal_source(t) &&
	    sessions__start(o, t, start_mono_ns))
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
	registry__remove(o, t);
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
