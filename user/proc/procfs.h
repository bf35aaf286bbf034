/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PROCFS_H
#define __CIRRON_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One line of /proc/PID/maps that maps a file. */
struct proc_map {
	uint64_t start, end, offset;
	bool exec;
	dev_t dev;
	ino_t ino;
	char *path;		/* as the target sees it (inside its root) */
};

struct proc_maps {
	struct proc_map *v;
	size_t n;
};

/* Parses /proc/PID/maps (file-backed lines only). Returns 0 or -errno. */
int procfs__read_maps(int pid, struct proc_maps *maps);
void procfs__free_maps(struct proc_maps *maps);
/* Parses one maps line; returns 0 if it maps a file, -EINVAL otherwise. Exposed for tests. */
int procfs__parse_maps_line(const char *line, struct proc_map *m);

/* Returns 1 if the process runs (a thread of it), 0 if it is gone or a zombie. */
int procfs__alive(int pid);
/* State letter (R, S, T, Z, ...) and parent pid from /proc/PID/stat. Returns 0 or -errno. */
int procfs__stat(int pid, char *state, int *ppid);
/* Whether a SIGSTOP is sent to pid and not yet taken (ShdPnd or SigPnd of
 * /proc/PID/status): it stops the process when its thread next returns to user space. */
bool procfs__stop_pending(int pid);
/* Children, grandchildren... of pid as they are now (at most max). Returns how many. */
int procfs__descendants(int pid, int *out, int max);
/* Reads len bytes at addr in the target's memory. Returns true if all were read. */
bool procfs__read_mem(int pid, uint64_t addr, void *buf, size_t len);
/* A path from which this process can open the file a target maps, checked by device and
 * inode: the maps path itself (the same root; a chroot shows host paths), else
 * /proc/PID/root/PATH (another mount namespace: containers), else /proc/PID/map_files/.
 * Returns 0 or -ENOENT. */
int procfs__host_path(int pid, const struct proc_map *m, char *buf, size_t size);
/* Reads an integer variable from /proc/PID/environ; def when unset or not a number. */
long procfs__env_long(int pid, const char *name, long def);
/* Same, from a raw NUL-separated environ block. Exposed for tests. */
long procfs__env_long_from(const char *env, size_t len, const char *name, long def);
/* name's value in a raw environ block (not NUL-terminated where the block ends), its length
 * in *vlen; NULL when unset. */
const char *procfs__env_find(const char *env, size_t len, const char *name, size_t *vlen);
int procfs__comm(int pid, char *buf, size_t size);
/* The arguments joined by spaces (cut at size). Returns 0, or -errno (-ESRCH: none, a zombie
 * or a kernel thread). */
int procfs__cmdline(int pid, char *buf, size_t size);
/* Start time in clock ticks since boot (field 22 of stat); 0 on error. */
uint64_t procfs__start_ticks(int pid);

#endif
