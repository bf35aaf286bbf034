/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TARGET_H
#define __CIRRON_TARGET_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "target/func_exits.h"
#include "target/kernel_names.h"
#include "target/span_kernels.h"
#include "target/probe_defs.h"
#include "target/pytypes.h"
#include "target/sym_cache.h"
#include "tree/hang.h"
#include "tree/infer_tree.h"
#include "tree/marks.h"
#include "tree/session.h"
#include "tree/torch_tree.h"

struct bpf_link;
struct snap_ctl;	/* observe/snapshots.c */

/* --python-frames sampled: where a target is in its cycle of sampled steps. */
struct py_sample {
	bool on;		/* the Python-tier probes are attached */
	uint64_t on_since_ns;	/* wall clock: when they were in */
	uint64_t accept_from_ns, accept_until_ns;	/* wall clock: the window of calls used */
	long steps;		/* the tree's step_index when the probes came / the window began */
	bool scheduled;		/* next_step is set */
	long next_step;		/* sample again once the tree's step_index reaches this */
	long samples;		/* windows so far */
	uint64_t ended_mono_ns;	/* when the last window ended */
};

struct sym_table;

/* Who switches grad mode in this target (grad_caller.h): the binding of
 * torch._C._set_grad_enabled once found, and the return addresses told apart so far. */
#define GRAD_CALLER_CACHE 16
struct grad_callers {
	int tries;		/* lookups of the binding so far (the target may not have it yet) */
	bool found;
	uint64_t start, end;	/* the binding's code, as mapped in the target */
	uint64_t addr[GRAD_CALLER_CACHE];
	int verdict[GRAD_CALLER_CACHE];	/* enum grad_caller */
	int n;
};

/* An ELF file the target maps executable. The fd keeps it readable after the target
 * exits (kernel names are resolved from its symbols at the last flush). */
struct mapped_file {
	dev_t dev;
	ino_t ino;
	char *path;		/* as the target sees it */
	char *host_path;	/* /proc/PID/root/... */
	int fd;
	uint64_t map_start, map_end;	/* lowest and highest address of its mappings */
	uint64_t bias;		/* runtime address = bias + ELF vaddr */
	struct sym_table *syms;	/* loaded on first address lookup */
};

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
};

/* Marks: the hook on the write path that serves a target (attach/write_hook.c). */
enum write_hook_kind {
	WRITE_HOOK_NONE,
	WRITE_HOOK_FENTRY,	/* fentry on ksys_write, shared by every target */
	WRITE_HOOK_UPROBE,	/* a uprobe on libc's write() in this target */
	WRITE_HOOK_TRACEPOINT,	/* the raw syscall-entry tracepoint, shared */
};

struct target {
	int pid;
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
	struct session *session;	/* NULL until a non-loader probe group matches */
	struct torch_tree tree;		/* training structure, fed by the torch anchors */
	struct infer_tree infer;	/* requests of an inference process (infer_tree.h) */
	struct py_types py_types;	/* --python-frames: classes of called objects */
	struct py_calls py_calls;
	struct py_sample py_sample;	/* --python-frames sampled */
	struct grad_callers grad_callers;	/* who switches grad mode (grad_caller.h) */
	char py_why[160];		/* why the CPython tier could not attach, or "" */
	bool framework_found;		/* framework= names one from sys.modules */
	bool framework_unsupported;	/* a CPython whose sys.modules we cannot read */
	uint64_t modules_used;		/* sys.modules' size when no framework was in it */
	struct hang_watch hang;		/* how long spans usually take; the last hang told */
	cJSON *hangs;			/* hang records for the next spool batch, or NULL */
	cJSON *sys;			/* --sys-interval samples for the next batch, or NULL */
	bool sys_sampled;		/* its session has a sample */
	long closed_since_flush;	/* spans closed since the last batch */
	long steps_at_base;		/* health: steps and hits when steps were first seen */
	uint64_t hits_at_base;
	struct mapped_file *files;
	size_t nfiles;
	struct probe_result *probes;
	size_t nprobes;
	struct kernel_names kernel_names;	/* what its launches are called */
	uint64_t events;
	long cuda_count;	/* -1 until cudaGetDeviceCount is seen */
	bool cuda_count_from_files;	/* cuda_count: GPUs found open (target/gpus.h) */
	bool cuda_count_no_runtime;	/* cuda_count 0: torch with no libcudart mapped */
	bool gpus_found;	/* the session says which GPUs it holds open */
	uint64_t event_counters[CIRRON_NCOUNTERS];	/* of the anchor event being handled */
	uint64_t event_mono_ns;		/* its BPF time (CLOCK_MONOTONIC) */
	uint32_t compile_counter_tid;	/* dynamo's compile, told by its wait counters */
	int compile_counter_depth;	/* counters open in it; 0: no compile */
	struct span_kernels span_kernels;	/* launches per kernel by anchor interval */
	int exit_status;	/* wait(2)-style, valid when exited */
	bool exited;
	bool exit_unseen;	/* gone without an exit event (lost): its status is unknown */
	uint64_t exec_ns;	/* BPF time of its exec: later events are the new image's */
	/* marks from its writes to fds 1 and 2 (observe/writes.c) */
	struct marks_stream marks_streams[2];
	struct marks_counts marks_counts;
	uint64_t writes, write_bytes, writes_over_bound;
	void *write_link;	/* WRITE_HOOK_UPROBE: its bpf_link on libc's write() */
	struct target *next;
	/* --snapshots (observe/snapshots.c) */
	uint64_t model_obj;	/* the outermost forward's Module (Python frames), 0: unknown */
	uint64_t snap_main_dict;	/* __main__'s globals once found, 0: not yet */
	cJSON *snapshots;	/* snapshot records for the next batch, or NULL */
	struct snap_ctl *snap;	/* reads, the models, the epoch ends waiting for theirs */
	long snapshots_skipped_busy;	/* epochs whose end came before their state was read */
	long snapshots_taken;	/* records */
	long snap_reads, snap_reads_torn;	/* reads made (every one costs), torn ones */
	uint64_t snap_wakeups;	/* loader wakeups BPF forced for them */
	enum write_hook_kind write_hook;	/* which hook copies its writes (marks) */
	uint64_t snap_bytes_last, snap_bytes_total;	/* target memory read */
	double snap_ms_last, snap_ms_total;
	uint32_t snap_seen;	/* the update count (bpf/snap.h) the last anchor event carried */
	bool snap_seen_valid;
	bool snap_refused;	/* the torch layout failed its checks: no more snapshots */
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
