// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The one file that includes the generated skeleton: open, load and attach the BPF
// object (tracepoints), and hand the maps and programs to the observer.
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <string.h>
#include "attach/observer.h"
#include "cirron.skel.h"
#include "common/exit_codes.h"
#include "common/log.h"

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	if (level == LIBBPF_DEBUG && log_verbosity < 2)
		return 0;
	if (level == LIBBPF_INFO && log_verbosity < 1)
		return 0;
	return vfprintf(stderr, fmt, args);
}

int bpf_object__load_all(struct observer *o, ring_buffer_event_fn handle_event)
{
	int err;

	libbpf_set_print(libbpf_print);
	o->skel = cirron_bpf__open();
	if (!o->skel) {
		err = -errno;
		goto fail;
	}
	err = bpf_map__set_max_entries(o->skel->maps.events, (__u32)o->opts->ringbuf_kb << 10);
	/* Only the node agent looks at every exec */
	if (!err)
		err = bpf_program__set_autoload(o->skel->progs.on_exec_watch,
						o->opts->cmd == CMD_WATCH);
	if (!err)
		err = cirron_bpf__load(o->skel);
	if (err)
		goto fail;
	err = cirron_bpf__attach(o->skel);	/* the exec/fork/exit tracepoints */
	if (err)
		goto fail;
	o->prog_entry = o->skel->progs.handle_entry;
	o->prog_return = o->skel->progs.handle_return;
	o->specs_fd = bpf_map__fd(o->skel->maps.probe_specs);
	o->hits_fd = bpf_map__fd(o->skel->maps.hits);
	o->stats_fd = bpf_map__fd(o->skel->maps.stats);
	o->targets_fd = bpf_map__fd(o->skel->maps.targets);
	o->cuda_fd = bpf_map__fd(o->skel->maps.cuda_totals);
	o->py_verdicts_fd = bpf_map__fd(o->skel->maps.py_verdicts);
	o->py_stacks_fd = bpf_map__fd(o->skel->maps.py_stacks);
	o->kernels_fd = bpf_map__fd(o->skel->maps.kernel_launches);
	o->cuda_windows_fd = bpf_map__fd(o->skel->maps.cuda_windows);
	o->runtime_text_fd = bpf_map__fd(o->skel->maps.cuda_runtime_text);
	o->rb = ring_buffer__new(bpf_map__fd(o->skel->maps.control), handle_event, o, NULL);
	if (!o->rb || ring_buffer__add(o->rb, bpf_map__fd(o->skel->maps.events), handle_event, o)) {
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
	elog("failed to load BPF programs: %s", strerror(-err));
	return EXIT_FAILURE_RUNTIME;
}

void bpf_object__unload_all(struct observer *o)
{
	ring_buffer__free(o->rb);
	o->rb = NULL;
	cirron_bpf__destroy(o->skel);
	o->skel = NULL;
}
