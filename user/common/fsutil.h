/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_FSUTIL_H
#define __CIRRON_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Errors of our own beyond errno's range (Linux errnos end at 4095): fs__strerror names them. */
#define FS_ERR_OTHERS_WRITE	4097	/* a directory others may write, without the sticky bit */
#define FS_ERR_FOREIGN_OWNER	4098	/* a directory (or a link to it) of another user */

/* mkdir -p; the directories it creates get mode (0700 or 0750; umask applies). Returns 0 or
 * -errno. */
int fs__mkdir_p(const char *path, mode_t mode);
/* Is path a directory this (root) process may write into without another user being able to
 * swap or plant names in it? Refused: a directory writable by others (group or world)
 * without the sticky bit, one owned by a user other than us or root, and a symbolic link
 * owned by such a user. Returns 0, -errno (-ENOTDIR...), -FS_ERR_OTHERS_WRITE or
 * -FS_ERR_FOREIGN_OWNER. */
int fs__check_dir(const char *path);
/* strerror for -errno and -FS_ERR_* values. */
const char *fs__strerror(int err);
/* Creates "DIR/.PREFIX.<12 random characters>.tmp" with O_CREAT | O_EXCL | O_NOFOLLOW and
 * the mode given: a name no one can guess, never a file or link planted before. Its path
 * goes to buf. Returns the fd (O_WRONLY, close-on-exec) or -errno. */
int fs__create_temp(const char *dir, const char *prefix, mode_t mode, char *buf, size_t size);
/* True if this process may load BPF and attach uprobes: root, or CAP_BPF + CAP_PERFMON
 * (or CAP_SYS_ADMIN) in the effective set. */
bool fs__have_bpf_caps(void);

#endif
