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
#include "target/probe_defs.h"
#include "target/sym_cache.h"
#include "target/target.h"
#include "target/watch.h"
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
	struct kernel_features kf;	/* probed in bpf_object__load_all */
	int probe_addrs_fd;
	int signals_fd;		/* signals BPF sent per process (`run`'s holds) */
	struct bpf_program *prog_write;	/* --marks uprobe */
	int specs_fd, hits_fd, stats_fd, targets_fd, cuda_fd, kernels_fd, exits_fd;
	int span_kernels_fd;	/* launches per kernel by anchor interval (observe/span_kernels.c) */
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
	int images_fd;		/* execs per traced process (PROBE_F_IMAGE) */
	int snap_states_fd, snap_wakes_fd, snap_roles_fd;	/* --snapshots (bpf/snap.h) */
};

/* attach.c */
/* Scans the target's maps and attaches the probes of files not seen before.
 * Returns the number of probes attached, or -ESRCH if the target is gone. */
int attach__scan(struct observer *o, struct target *t);
void attach__detach(struct observer *o, struct target *t);
/* --python-frames sampled: links (on) or unlinks the target's Python-tier probes; their ids
 * stay reserved. Returns the number linked, or -errno. */
int attach__python_sample(struct observer *o, struct target *t, bool on);

/* watch: probes the dynamic linker that pid maps at m in every process (ACT_DL_WATCH).
 * Returns 0, 1 if that file is probed already, or -errno. */
int attach__ldso_watch(struct observer *o, int pid, const struct proc_map *m);
void attach__ldso_unwatch(struct observer *o);
/* write_hook.c: marks. Gives t a hook on the write path (the first target attaches a
 * shared one), or takes it away (the last target detaches a shared one). */
int write_hook__attach(struct observer *o, struct target *t);
void write_hook__detach(struct observer *o, struct target *t);
void write_hook__free(struct observer *o);
const char *write_hook__name(enum write_hook_kind k);

/* bpf_object.c: load the BPF object, attach its tracepoints, set up the ring buffers
 * (events go to handle_event: observe/dispatch.c). Returns 0 or an exit code. */
typedef int (*ring_buffer_event_fn)(void *ctx, void *data, size_t size);
int bpf_object__load_all(struct observer *o, ring_buffer_event_fn handle_event);
/* While quiet, libbpf's messages show at -vv only (a load that may fail, with a fallback
 * that says so in a line of ours). */
void bpf_object__quiet_libbpf(bool quiet);
void bpf_object__unload_all(struct observer *o);

#endif
