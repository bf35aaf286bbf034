/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TARGET_H
#define __CIRRON_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "marks/marks.h"
#include "probedefs/probe_set.h"
#include "proc/func_exits.h"
#include "proc/mapped_file.h"
#include "proc/sym_cache.h"
#include "pyobj/py_tier.h"
#include "traced/kernel_names.h"
#include "traced/span_kernels.h"
#include "tree/hang.h"
#include "infer/infer_tree.h"
#include "tree/clock.h"
#include "tree/session.h"
#include "tftree/tf_tree.h"
#include "tree/torch_tree.h"

struct bpf_link;
struct snap_ctl;	/* snap/snap_ctl.h: private to the snapshots */

/* One probe of a matched group in this target: what resolved, what attached. */
struct ulink;

struct probe_result {
	const struct probe_group *group;
	const struct probe_def *def;
	size_t file;		/* index in target.files */
	char *symbol;		/* resolved name (prefix queries resolve to one symbol) */
	uint64_t file_offset;
	int arch;		/* enum probe_arch of its file: which of def's "args" apply */
	uint32_t id;		/* BPF cookie, 0 if not attached */
	uint64_t addr;		/* no cookies: the entry's address in probe_addrs, or 0 */
	bool sampled;		/* Python tier at --python-frames sampled: linked in samples only */
	struct ulink *entry, *ret;	/* attach/ulink.h: shared by a batch, or one each */
	/* "return": "exits" (PROBE_F_EXITS): the function's exit instructions, their links (a
	 * uprobe_multi link is shared: one reference per offset), and without cookies their
	 * addresses in probe_addrs */
	uint64_t exit_offsets[FUNC_EXITS_MAX];
	struct ulink *exit_links[FUNC_EXITS_MAX];
	uint64_t exit_addrs[FUNC_EXITS_MAX];
	unsigned int nexits;
	char *why;		/* why it did not resolve, where strerror(err) would not say */
	int err;		/* 0, or -errno of resolution (-ENOENT) or attach */
	bool not_asked;		/* left out by an option (--cuda-calls off): not a failure */
	uint64_t ref_ctr_offset;	/* a USDT semaphore the uprobe raises (ACT_GPU_BATCH), or 0 */
};

/* Marks: the hook on the write path that serves a target (attach/write_hook.c). */
enum write_hook_kind {
	WRITE_HOOK_NONE,
	WRITE_HOOK_FENTRY,	/* fentry on ksys_write, shared by every target */
	WRITE_HOOK_UPROBE,	/* a uprobe on libc's write() in this target */
	WRITE_HOOK_TRACEPOINT,	/* the raw syscall-entry tracepoint, shared */
};

/* The hook on the write path that copies its writes (attach/write_hook.c). */
struct write_hook_ref {
	enum write_hook_kind kind;
	void *link;		/* WRITE_HOOK_UPROBE: its bpf_link on libc's write() */
};

struct gpu_time;

/* What its CUDA calls say (observe/events.c, observe/attrs.c, observe/kernel_split.c). */
struct target_cuda {
	long count;		/* -1 until cudaGetDeviceCount is seen */
	bool count_from_files;	/* count: GPUs found open (proc/gpus.h) */
	bool count_no_runtime;	/* count 0: torch with no libcudart mapped */
	bool gpus_found;	/* the session says which GPUs it holds open */
	struct kernel_names kernel_names;	/* what its launches are called */
	struct span_kernels span_kernels;	/* launches per kernel by anchor interval */
	bool launch_layer_driver;	/* launches counted at the driver (attach/launch_layer.c) */
	struct gpu_time *gpu;	/* GPU time on its spans (observe/gpu_time.c), or NULL */
};

/* The anchor event being handled (observe/events.c): its counters, its time, and dynamo's
 * compile as its wait counters tell it. */
struct target_anchor {
	uint64_t counters[CIRRON_NCOUNTERS];	/* CUDA counters BPF copied into it */
	uint64_t mono_ns;	/* its BPF time (CLOCK_MONOTONIC) */
	uint32_t compile_tid;	/* dynamo's compile, told by its wait counters */
	int compile_depth;	/* counters open in it; 0: no compile */
};

/* What its batches carry beside spans, and health's bases (observe/sessions.c, attrs.c). */
struct target_report {
	struct hang_watch hang;	/* how long spans usually take; the last hang told */
	cJSON *hangs;		/* hang records for the next spool batch, or NULL */
	cJSON *sys;		/* --sys-interval samples for the next batch, or NULL */
	bool sys_sampled;	/* its session has a sample */
	long closed_since_flush;	/* spans closed since the last batch */
	long steps_at_base;	/* health: steps and hits when steps were first seen */
	uint64_t hits_at_base;
	uint64_t events;	/* events handled */
};

/* A traced process. Its identity and life are here; each other concern is a part, owned by
 * the stage named beside it. */
struct target {
	int pid;
	struct target *next;
	/* who it is, and its life (observe/: registry.c, targets.c, lifecycle.c, sessions.c) */
	bool follow;		/* run mode: forks and execs are followed */
	bool stop_on_load;	/* run mode: held at exec and at each library load while we attach */
	bool root_child;	/* the command `run` started */
	bool print_spans;	/* the stdout sink */
	bool ranked;		/* RANK is in its environment: one rank of a distributed job */
	bool launcher;		/* tagged role=launcher: it started ranks */
	bool helper;		/* tagged role=helper: a job's helper process (inductor's) */
	int forked_from;	/* a fork seen (not exec'd since): its parent's pid, else 0 */
	bool mid_run;		/* found running (attach, watch's first scan), not at its start */
	bool unannounced;	/* its session started and is not armed yet: not logged yet */
	uint64_t start_ticks;	/* its start time (/proc): a later process with its pid is not it */
	uint64_t signals_sent;	/* SIGCONTs the loader sent it (health adds BPF's SIGSTOPs) */
	uint64_t id_ticks;	/* session id part after an exec; 0: the process start time */
	uint64_t exec_ns;	/* BPF time of its exec: later events are the new image's */
	int exit_status;	/* wait(2)-style, valid when exited */
	bool exited;
	bool exit_unseen;	/* gone without an exit event (lost): its status is unknown */
	/* what it maps (proc/), what resolved and attached there (attach/) */
	struct mapped_file *files;
	size_t nfiles;
	struct probe_result *probes;
	size_t nprobes;
	/* its trees (tree/) */
	struct clock_map clock;		/* its events' wall clock: the observer's at its session's
					 * start (tree/clock.h) */
	int64_t clock_step_ns;		/* how far the wall clock stepped since then */
	struct session *session;	/* NULL until a non-loader probe group matches */
	struct torch_tree tree;		/* training structure, fed by the torch anchors */
	struct infer_tree infer;	/* requests of an inference process (infer_tree.h) */
	struct tf_tree tf;		/* a TensorFlow job's training (tf_tree.h) */
	/* the parts */
	struct target_anchor anchor;	/* observe/events.c */
	struct target_cuda cuda;
	struct target_report report;
	struct py_tier py;		/* pyobj/py_tier.h */
	struct marks_feed marks;	/* marks/marks.h */
	struct write_hook_ref hook;	/* attach/write_hook.c */
	struct snap_ctl *snap;		/* snap/: private to the snapshots */
};


struct target *target__new(int pid);
void target__free(struct target *t);
/* Runtime address -> function name, from the target's mapped files. NULL if unknown. */
const char *target__symbolize(struct target *t, uint64_t addr);
/* A launch's key (a host stub, a kernel handle, a CUfunction) -> the kernel's name: learnt
 * from the calls that made the key (kernel_names.h), else the symbol at a host stub, else
 * "0x<key> (unnamed: why)" written into buf. */
const char *target__kernel_name(struct target *t, uint64_t key, char *buf, size_t size);
/* Names the group (for health) or NULL when no probe of that group attached. */
bool target__has_signal_source(const struct target *t);

#endif
