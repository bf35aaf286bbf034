// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The one file that includes the generated skeleton: open, load and attach the BPF
// object (tracepoints), and hand the maps and programs to the observer.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>
#include "attach/libbpf_log.h"
#include "attach/observer.h"
#include "attach/skel.h"
#include "attach/ulink.h"
#include "cirron.skel.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "common/test_hooks.h"

/* CIRRON_TEST_CONTROL_RING_KB: a control ring that small, for the tests that make it
 * overflow (docs/usage.md). */
static int control_ring_for_tests(struct observer *o)
{
	long kb = test_hooks__get()->control_ring_kb;

	return kb ? bpf_map__set_max_entries(o->skel->maps.control, (__u32)kb << 10) : 0;
}

/* Every uprobe link holds two fds until the reaper has closed it (link_reaper.h): an agent
 * that sees many jobs end at once needs more than the usual soft limit of 1024. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* The path per kernel feature (kernel_features.c), set before load: rodata the verifier
 * prunes by, and which programs load. Only the node agent looks at every exec. */
static int configure(struct observer *o)
{
	enum bpf_attach_type multi = (enum bpf_attach_type)ULINK_ATTACH_UPROBE_MULTI;
	struct cirron_bpf *s = o->skel;
	bool watch = o->opts->cmd == CMD_WATCH;
	int err;

	s->rodata->use_cookie = o->kf.cookie;
	/* one pair of entry and return programs: for uprobe_multi links, or for perf links */
	err = bpf_program__set_autoload(s->progs.handle_entry, !o->kf.uprobe_multi);
	if (!err)
		err = bpf_program__set_autoload(s->progs.handle_return, !o->kf.uprobe_multi);
	if (!err)
		err = bpf_program__set_autoload(s->progs.handle_entry_multi, o->kf.uprobe_multi);
	if (!err)
		err = bpf_program__set_autoload(s->progs.handle_return_multi, o->kf.uprobe_multi);
	if (!err && o->kf.uprobe_multi)
		err = bpf_program__set_expected_attach_type(s->progs.handle_entry_multi, multi);
	if (!err && o->kf.uprobe_multi)
		err = bpf_program__set_expected_attach_type(s->progs.handle_return_multi, multi);
	/* and the exit program of "return": "exits" probes, the same way */
	if (!err)
		err = bpf_program__set_autoload(s->progs.handle_exit, !o->kf.uprobe_multi);
	if (!err)
		err = bpf_program__set_autoload(s->progs.handle_exit_multi, o->kf.uprobe_multi);
	if (!err && o->kf.uprobe_multi)
		err = bpf_program__set_expected_attach_type(s->progs.handle_exit_multi, multi);
	if (!err)
		err = bpf_program__set_autoload(s->progs.on_exec_watch, watch && o->kf.find_vma);
	if (!err)
		err = bpf_program__set_autoload(s->progs.on_exec_watch_exe,
						watch && !o->kf.find_vma);
	if (!err)
		err = bpf_program__set_autoload(s->progs.handle_dl_watch, watch && !o->kf.cookie);
	return err;
}

/* Opens the skeleton, sets it up for this kernel and the options, and loads it. */
static int open_and_load(struct observer *o)
{
	int err;

	o->skel = cirron_bpf__open();
	if (!o->skel)
		return -errno;
	err = bpf_map__set_max_entries(o->skel->maps.events, (__u32)o->opts->ringbuf_kb << 10);
	if (!err)
		err = control_ring_for_tests(o);
	if (!err)
		err = configure(o);
	/* BPF's copies of small models at loops' ends (bpf/snap.h): 8 MiB of map memory, kept
	 * to one slot where no snapshot is taken */
	if (!err && o->opts->snapshots == SNAP_OFF)
		err = bpf_map__set_max_entries(o->skel->maps.snap_copies, 1);
	/* Marks: libc's write() per target, or (no libc) the syscall-entry tracepoint; fentry
	 * comes in an object of its own (write_hook.c) */
	if (!err)
		err = bpf_program__set_autoload(o->skel->progs.on_write_tp,
						o->opts->marks == MARKS_ON);
	/* attached while a target needs it (write_hook.c), not with the skeleton */
	bpf_program__set_autoattach(o->skel->progs.on_write_tp, false);
	if (!err)
		err = bpf_program__set_autoload(o->skel->progs.on_write_uprobe,
						o->opts->marks != MARKS_OFF);
	if (!err)
		err = cirron_bpf__load(o->skel);
	return err;
}

#define LOAD_ATTEMPTS 10

int skel__load(struct observer *o, ring_buffer_event_fn handle_event)
{
	int err;

	const char *missing;

	libbpf_log__install();
	if (o->opts->cmd == CMD_WATCH)
		raise_fd_limit();
	kernel_features__probe(&o->kf);
	missing = kernel_features__missing(&o->kf);
	if (missing) {
		elog("this kernel (%s) lacks %s, which cirron-probe needs", o->kf.release, missing);
		return EXIT_KERNEL_UNSUPPORTED;
	}
	/* The verifier gives up with EAGAIN when a signal comes to the loading process: a
	 * job-control stop and continue (Ctrl-Z, bg) during the load, say. Load again. */
	for (int attempt = 1;; attempt++) {
		err = open_and_load(o);
		if (err != -EAGAIN || attempt == LOAD_ATTEMPTS)
			break;
		cirron_bpf__destroy(o->skel);
		o->skel = NULL;
		wlog("loading the BPF programs was interrupted (a signal came): loading again");
	}
	if (err)
		goto fail;
	err = cirron_bpf__attach(o->skel);	/* the exec/fork/exit tracepoints */
	if (err)
		goto fail;
	o->prog_entry = o->kf.uprobe_multi ? o->skel->progs.handle_entry_multi :
					     o->skel->progs.handle_entry;
	o->prog_return = o->kf.uprobe_multi ? o->skel->progs.handle_return_multi :
					      o->skel->progs.handle_return;
	o->prog_exit = o->kf.uprobe_multi ? o->skel->progs.handle_exit_multi :
					    o->skel->progs.handle_exit;
	o->prog_dl_watch = o->skel->progs.handle_dl_watch;
	o->probe_addrs_fd = bpf_map__fd(o->skel->maps.probe_addrs);
	o->signals_fd = bpf_map__fd(o->skel->maps.signals);
	o->prog_write = o->skel->progs.on_write_uprobe;
	o->specs_fd = bpf_map__fd(o->skel->maps.probe_specs);
	o->hits_fd = bpf_map__fd(o->skel->maps.hits);
	o->stats_fd = bpf_map__fd(o->skel->maps.stats);
	o->targets_fd = bpf_map__fd(o->skel->maps.targets);
	o->cuda_fd = bpf_map__fd(o->skel->maps.cuda_totals);
	o->exits_fd = bpf_map__fd(o->skel->maps.exits);
	o->py_verdicts_fd = bpf_map__fd(o->skel->maps.py_verdicts);
	o->py_stacks_fd = bpf_map__fd(o->skel->maps.py_stacks);
	o->kernels_fd = bpf_map__fd(o->skel->maps.kernel_launches);
	o->span_kernels_fd = bpf_map__fd(o->skel->maps.span_kernels);
	o->allocs_fd = bpf_map__fd(o->skel->maps.cuda_allocs);
	o->runtime_text_fd = bpf_map__fd(o->skel->maps.cuda_runtime_text);
	o->cuda_layer_fd = bpf_map__fd(o->skel->maps.cuda_layer);
	o->images_fd = bpf_map__fd(o->skel->maps.images);
	o->snap = (struct snap_env){
		.opts = o->opts,
		.syms = o->syms,
		.probes = &o->probes,
		.states_fd = bpf_map__fd(o->skel->maps.snap_states),
		.wakes_fd = bpf_map__fd(o->skel->maps.snap_wakes),
		.roles_fd = bpf_map__fd(o->skel->maps.snap_roles),
		.copy_plans_fd = bpf_map__fd(o->skel->maps.snap_copy_plans),
		.copies_fd = bpf_map__fd(o->skel->maps.snap_copies),
		.stats_fd = o->stats_fd,
	};
	o->rb = ring_buffer__new(bpf_map__fd(o->skel->maps.control), handle_event, o, NULL);
	o->events_rb = ring_buffer__new(bpf_map__fd(o->skel->maps.events), handle_event, o, NULL);
	if (!o->rb || !o->events_rb ||
	    ring_buffer__add(o->rb, bpf_map__fd(o->skel->maps.events), handle_event, o)) {
		err = -errno;
		goto fail;
	}
	return 0;
fail:
	if (err == -EPERM) {
		elog("no permission to load BPF programs: run as root, or grant CAP_BPF, "
		     "CAP_PERFMON and CAP_SYS_PTRACE");
		return EXIT_NO_PERMISSION;
	}
	elog("failed to load BPF programs: %s (kernel %s; -vv shows the verifier's log)",
	     strerror(-err), o->kf.release);
	return EXIT_FAILURE_RUNTIME;
}

void skel__unload(struct observer *o)
{
	ring_buffer__free(o->rb);
	ring_buffer__free(o->events_rb);
	o->rb = o->events_rb = NULL;
	cirron_bpf__destroy(o->skel);
	o->skel = NULL;
}
