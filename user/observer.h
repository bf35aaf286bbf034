/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVER_H
#define __CIRRON_OBSERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cirron.h"
#include "cli.h"
#include "clock.h"
#include "kernel_features.h"
#include "probe_defs.h"
#include "spool.h"
#include "sym_cache.h"
#include "target.h"
#include "watch.h"
#include "watchdog.h"

struct cirron_bpf;
struct ring_buffer;
struct bpf_program;

struct probe_slot {
	struct target *target;	/* NULL: the id is free */
	size_t probe;		/* index in target->probes */
};

struct observer {
	const struct options *opts;
	bool dry_run;		/* doctor: resolve, never attach */
	struct cirron_bpf *skel;
	struct ring_buffer *rb;
	struct bpf_program *prog_entry, *prog_return;
	struct bpf_program *prog_dl_watch;	/* watch's ld.so probes without cookies */
	struct kernel_features kf;	/* probed in bpf_object__load_all */
	int probe_addrs_fd;
	int specs_fd, hits_fd, stats_fd, targets_fd, cuda_fd, kernels_fd;
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

/* events.c: a probe's event in a target with a session */
void events__device_count(struct target *t, const struct event *e);
void events__cuda_detail(struct observer *o, struct target *t, const struct probe_result *r,
			 const struct event *e);
void events__anchor(struct observer *o, struct target *t, const struct probe_result *r,
		    const struct event *e);

/* bpf_object.c: load the BPF object, attach its tracepoints, set up the ring buffers
 * (events go to handle_event). Returns 0 or an exit code. */
typedef int (*ring_buffer_event_fn)(void *ctx, void *data, size_t size);
int bpf_object__load_all(struct observer *o, ring_buffer_event_fn handle_event);
void bpf_object__unload_all(struct observer *o);

/* session_attrs.c: the root span's attributes and each batch's health. */
void attrs__set_num(cJSON *o, const char *key, double v);
void attrs__set_str(cJSON *o, const char *key, const char *v);
void attrs__device(struct target *t);		/* device, cuda_count */
void attrs__libraries(const struct observer *o, struct target *t);	/* + python_frames */
void attrs__cuda(struct observer *o, struct target *t);	/* CUDA totals, launches per kernel */
/* The per-kernel launch map's keys of one process (malloc'd, *n of them; NULL if none). */
struct kernel_key *attrs__kernel_keys(const struct observer *o, int pid, size_t *n);
cJSON *attrs__health(struct observer *o, struct target *t);

/* observer.c: attach, run and watch commands. Returns the process exit code. */
int observer__main(const struct options *opts);
/* doctor.c */
int doctor__main(const struct options *opts);
/* Shared setup: probe definitions, symbol cache, host name. Returns 0 or an exit code. */
int observer__init_common(struct observer *o, const struct options *opts);
void observer__free_common(struct observer *o);

#endif
