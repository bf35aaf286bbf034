/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_WATCH_H
#define __CIRRON_WATCH_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "cirron.h"
#include "probedefs/probe_set.h"
#include "proc/procfs.h"
#include "agent/watch_queue.h"

struct bpf_link;

/* `watch`: which processes the node agent traces. A process is wanted when it maps
 * executable a library whose file name holds a hint (the file hints of the probes/ groups
 * that give a session: torch's libraries, the CUDA runtime, NCCL) and its command line
 * passes --match. It is looked at when its dynamic linker says its link map changed
 * (EV_WATCH_LOAD: program start, dlopen), from a probe on each ld.so in every process. */
struct ulink;

struct watch_ldso {
	dev_t dev;		/* of the file as stat(2) sees it here */
	ino_t ino;
	struct ulink *link;	/* attach/ulink.h */
};

#define WATCH_MAX_HINTS 16
#define WATCH_EXECS	64	/* traced processes that exec'd, not found again yet */

/* A traced process exec'd: its new image, once found, is a session of its own, with an id
 * of its own (the pid and start time stay the same). */
struct watch_exec {
	int pid;
	uint64_t start_ticks;	/* of the process: a reused pid is another one */
	uint64_t id_ticks;	/* for the new image's session id */
};

struct watch {
	const char *hints[WATCH_MAX_HINTS];	/* owned by the probe set */
	size_t nhints;
	const struct probe_def *ldso;	/* the ld.so probe (action dl_state) of probes/ */
	const char *ldso_hint;		/* its file hint: "ld-linux" */
	struct watch_ldso ldsos[CIRRON_WATCH_LDSO];
	size_t nldsos;
	regex_t match;
	bool has_match;
	uint64_t looked_at;	/* link-map changes looked at in processes not traced */
	uint64_t wanted;	/* processes traced */
	uint64_t ignored;	/* processes that map a library but fail --match */
	struct watch_queue queue;	/* processes to look at next; lost events; health */
	struct watch_exec execs[WATCH_EXECS];	/* a ring: the oldest goes first */
	size_t next_exec;
};

/* Returns 0, or -EINVAL (no ld.so probe in probes/, or a bad REGEX; logged). */
int watch__init(struct watch *w, const struct probe_set *ps, const char *match);
/* Frees the regex; the ld.so links are destroyed by the caller. */
void watch__free(struct watch *w);
/* Does the file's name (the part after the last '/') hold a hint? */
bool watch__file_wanted(const struct watch *w, const char *path);
/* Is m a dynamic linker's mapping (by the ld.so probe's file hint)? */
bool watch__is_ldso(const struct watch *w, const struct proc_map *m);
/* Does the process map a wanted file executable? A process gone before it could be read is
 * counted in queue.vanished. */
bool watch__maps_wanted(struct watch *w, int pid);
/* Does the process's command line pass --match? False when it cannot be read (gone). */
bool watch__process_wanted(const struct watch *w, int pid);

/* A traced process exec'd: remember the id ticks for the session of its new image. */
void watch__note_exec(struct watch *w, int pid, uint64_t start_ticks, uint64_t id_ticks);
/* The id ticks noted for this process (and forgotten now), or 0. */
uint64_t watch__take_exec(struct watch *w, int pid, uint64_t start_ticks);

/* The agent's own counters, one line on stderr (-v) when it stops. */
void watch__summary(const struct watch *w);

/* One pass over /proc at start: on_process for every process (not self) that maps a
 * wanted file, oldest first (a parent before its forks), on_ldso for each executable
 * mapping of a dynamic linker (self's too). Returns the number of wanted processes, or
 * -errno (-ENOMEM: none was reported). */
struct watch_scan_ops {
	void (*on_process)(void *ctx, int pid);
	void (*on_ldso)(void *ctx, int pid, const struct proc_map *m);
	void *ctx;
};
int watch__scan(const struct watch *w, int self, const struct watch_scan_ops *ops);

#endif
