// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The process's launch layer (launch_layer.h). The move is exact: BPF switches layer per
// process in one map update; a runtime launch its probe counted just before leaves a mark on
// its thread, so the driver call that follows is left out (bpf/cuda.bpf.h), and a runtime
// probe hit after the move counts nothing (the driver does). For a comparison of costs only,
// CIRRON_EXPERIMENT_LAUNCH_LAYER=runtime keeps the runtime's launch probes (two traps).
#include <bpf/bpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "attach/launch_layer.h"
#include "attach/probe_links.h"
#include "common/log.h"

static bool kept_at_runtime(void)
{
	const char *v = getenv("CIRRON_EXPERIMENT_LAUNCH_LAYER");

	return v && !strcmp(v, "runtime");
}

static bool runtime_launch(const struct probe_def *d)
{
	return d->action == ACT_CUDA_LAUNCH && !d->driver;
}

bool launch_layer__skips(const struct target *t, const struct probe_def *d)
{
	return t->cuda.launch_layer_driver && runtime_launch(d);
}

void launch_layer__before_group(struct observer *o, struct target *t)
{
	__u32 pid = (__u32)t->pid;

	if (!t->cuda.launch_layer_driver && !o->dry_run)
		bpf_map_delete_elem(o->cuda_layer_fd, &pid);
}

void launch_layer__after_group(struct observer *o, struct target *t)
{
	__u32 pid = (__u32)t->pid, layer = CUDA_LAYER_DRIVER;
	bool driver_in = false;
	int moved = 0;

	if (t->cuda.launch_layer_driver || o->dry_run || kept_at_runtime())
		return;
	for (size_t i = 0; i < t->nprobes && !driver_in; i++)
		driver_in = t->probes[i].id && t->probes[i].def->action == ACT_CUDA_LAUNCH &&
			    t->probes[i].def->driver;
	if (!driver_in)
		return;
	if (bpf_map_update_elem(o->cuda_layer_fd, &pid, &layer, BPF_ANY)) {
		wlog("pid %d: launches stay counted at the runtime (two traps each): %s", t->pid,
		     strerror(errno));
		return;
	}
	t->cuda.launch_layer_driver = true;
	for (size_t i = 0; i < t->nprobes; i++) {
		struct probe_result *r = &t->probes[i];

		if (!r->id || !runtime_launch(r->def))
			continue;
		probe_links__unlink_async(o, r);
		probe_links__release(o, r);
		r->err = -ENOENT;
		r->not_asked = true;	/* counted at the driver: not a failure */
		moved++;
	}
	dlog("pid %d: launches counted at the driver (%d runtime launch probes out)", t->pid,
	     moved);
}
