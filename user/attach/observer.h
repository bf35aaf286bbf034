/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVER_H
#define __CIRRON_OBSERVER_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "attach/kernel_features.h"
#include "attach/watchdog.h"
#include "cirron.h"
#include "common/options.h"
#include "sink/spool.h"
#include "snap/snapshots.h"
#include "probedefs/probe_set.h"
#include "proc/sym_cache.h"
#include "traced/target.h"
#include "agent/watch.h"
#include "tree/clock.h"

struct cirron_bpf;
struct ring_buffer;
struct bpf_program;
struct metrics;
struct ship_outputs;
struct write_fentry_bpf;
struct bpf_link;

/* Marks: the shared hooks on the write path, attached while some target uses them. */
struct write_hooks {
	struct write_fentry_bpf *fentry;
	unsigned int fentry_users;
	bool fentry_failed;	/* refused here: per-process uprobes instead */
	struct bpf_link *tp_link;
	unsigned int tp_users;
};

/* The loader's state: the BPF object and which probe id is attached where, the traced
 * processes, the sinks and the node agent's filter. It is declared at this stage, the first
 * that needs all of it (attaching hands out probe ids and reads the options); the stages
 * above add behaviour, not state. */

struct probe_slot {
	struct target *target;	/* NULL: the id is free, once reaping is 0 too */
	size_t probe;		/* index in target->probes */
	atomic_uint reaping;	/* links of a detached probe still being destroyed (link_reaper) */
};

struct observer {
	const struct options *opts;
	bool dry_run;		/* doctor: resolve, never attach */
	struct cirron_bpf *skel;
	struct ring_buffer *rb;
	/* The events ring alone (rb holds it too; they share its consumer position): drained
	 * from a control event's handler, before a session ends at exec */
	struct ring_buffer *events_rb;
	struct bpf_program *prog_entry, *prog_return;
	struct bpf_program *prog_exit;	/* "return": "exits" probes' exit instructions */
	struct bpf_program *prog_dl_watch;	/* watch's ld.so probes without cookies */
	struct kernel_features kf;	/* probed in skel__load */
	int probe_addrs_fd;
	int signals_fd;		/* signals BPF sent per process (`run`'s holds) */
	struct bpf_program *prog_write;	/* --marks uprobe */
	int specs_fd, hits_fd, stats_fd, targets_fd, cuda_fd, kernels_fd, exits_fd;
	int span_kernels_fd;	/* launches per kernel by anchor interval (observe/kernel_split.c) */
	int py_verdicts_fd, py_stacks_fd;
	struct probe_set probes;
	struct sym_cache *syms;
	struct clock_map clock;
	struct spool spool;
	char host[64];
	struct target *targets;
	struct probe_slot slots[CIRRON_MAX_PROBES];
	uint32_t next_free_id;
	pid_t child;		/* run: the command's pid */
	bool any_session;	/* some process was traced */
	int child_status;	/* run: wait status of the command */
	bool child_reaped;
	struct watchdog watchdog;	/* run: resumes held targets if we die */
	struct watch watch;		/* watch: which processes to trace */
	struct marks_regex marks_rx;	/* --marks-regex, compiled at the first write */
	struct metrics *metrics;	/* --metrics: the /metrics endpoint, or NULL */
	struct ship_outputs *ship;	/* --output s3://, otlp: their shippers, or NULL */
	struct write_hooks writes;	/* marks */
	int allocs_fd, runtime_text_fd;	/* live device allocations; libcudart code */
	int cuda_layer_fd;	/* where launches count, per process (attach/launch_layer.c) */
	int images_fd;		/* execs per traced process (PROBE_F_IMAGE) */
	struct snap_env snap;	/* --snapshots: the options, caches and BPF maps they use */
};

#endif
