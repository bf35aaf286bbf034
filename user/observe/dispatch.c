// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// One ring-buffer event to the handler of its kind: process lifecycle, discovery, library
// loads, and probe events of traced processes.
#include <stdlib.h>
#include <unistd.h>
#include "attach/observer.h"
#include "attach/py_sample.h"
#include "common/log.h"
#include "common/test_hooks.h"
#include "observe/discovery.h"
#include "observe/dispatch.h"
#include "observe/events.h"
#include "observe/gpu_time.h"
#include "observe/lifecycle.h"
#include "observe/registry.h"
#include "observe/sessions.h"
#include "observe/targets.h"
#include "observe/writes.h"

#define FLUSH_AFTER_SPANS 4096	/* closed spans held before an early batch */

/* CIRRON_TEST_HOLD_MS=N: `run` keeps a process held at a library load N ms longer, so that
 * a test can kill the observer then (the watchdog must resume the process). */
static void test_hold(__u32 pid)
{
	long ms = test_hooks__get()->hold_ms;

	if (ms <= 0)
		return;
	ilog("pid %u: held at a library load (CIRRON_TEST_HOLD_MS=%ld)", pid, ms);
	usleep((useconds_t)ms * 1000);
}

int dispatch__event(void *ctx, void *data, size_t size)
{
	struct observer *o = ctx;
	const struct event *e = data;
	struct target *t;

	if (size >= sizeof(__u32) && e->type == EV_WRITE)	/* shorter than an event */
		return writes__event(o, data, size);
	if (size >= sizeof(__u32) && e->type == EV_GPU_BATCH)	/* a target's CUPTI records */
		return gpu_time__event(registry__find(o, gpu_time__pid(data, size)), data, size);
	if (size >= sizeof(struct kname_event) && e->type == EV_KERNEL_NAME) {
		const struct kname_event *k = data;

		if (k->probe_id < CIRRON_MAX_PROBES && (t = o->slots[k->probe_id].target))
			events__kernel_name(t, k);
		return 0;
	}
	if (size < sizeof(*e))
		return 0;
	switch (e->type) {
	case EV_EXEC:
		lifecycle__exec(o, e);
		return 0;
	case EV_FORK:
		lifecycle__fork(o, e);
		return 0;
	case EV_EXIT:
		t = registry__find(o, (int)e->pid);
		/* The command `run` started is reaped instead: waitpid has its exact status.
		 * Others end in check_alive, after this callback (see targets__exited). */
		if (t && t->pid != o->child && !t->exited) {
			t->exited = true;
			t->exit_status = (int)e->args[0];
		}
		return 0;
	case EV_WATCH_LOAD:	/* looked at after this round's exits (agent/watch_queue.h) */
		watch_queue__note(&o->watch.queue, (int)e->pid);
		return 0;
	case EV_NEW_LDSO:
		discovery__new_ldso(o, e);
		return 0;
	case EV_LINK_MAP:
		t = registry__find(o, (int)e->pid);
		if (t)
			targets__scan(o, t);
		if (e->args[0]) {	/* held for it (`run`, one thread): probed, it runs on */
			test_hold(e->pid);
			registry__resume(o, (int)e->pid);
		}
		return 0;
	case EV_CALL:
	case EV_RETURN:
	case EV_DEVICE_COUNT:
		break;
	default:
		dlog("unknown event type %u", e->type);
		return 0;
	}
	if (e->probe_id >= CIRRON_MAX_PROBES || !(t = o->slots[e->probe_id].target))
		return 0;	/* from a probe detached since */
	if (t->exec_ns && e->ts_ns > t->exec_ns)
		return 0;	/* the new image hit the old image's probes (see lifecycle__exec) */
	t->report.events++;
	const struct probe_result *r = &t->probes[o->slots[e->probe_id].probe];

	if (e->type == EV_DEVICE_COUNT)
		events__device_count(t, e);
	else if (t->session && r->def->action == ACT_EMIT) {
		events__anchor(o, t, r, e);
		py_sample__after_event(o, t);
		/* A fast loop closes thousands of spans a second: write them out before the
		 * flush interval, so the loader's memory stays bounded */
		if (t->report.closed_since_flush >= FLUSH_AFTER_SPANS)
			sessions__flush(o, t, false);
	}
	else if (e->type == EV_CALL && t->session)
		events__cuda_detail(o, t, r, e);
	return 0;
}
