/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_FSUTIL_H
#define __CIRRON_FSUTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Errors of our own beyond errno's range (Linux errnos end at 4095): fs__strerror names them. */
#define FS_ERR_OTHERS_WRITE	4097	/* a directory others may write, without the sticky bit */
#define FS_ERR_FOREIGN_OWNER	4098	/* a directory we write into, of another user */
#define FS_ERR_FOREIGN_LINK	4099	/* a symbolic link of another user on the way */

#define FS_DIR_CREATE	1u	/* make the missing levels (mode; umask applies) */
#define FS_DIR_OWNED	2u	/* we write there: ours or root's, not group- or world-writable */

/* Opens the directory path, one level at a time from / (or the working directory, for a
 * relative path) with openat(O_NOFOLLOW | O_DIRECTORY), as systemd-tmpfiles does, and checks
 * each level before anything is opened or created in it: a directory others may write (no
 * sticky bit) is refused, so is a symbolic link owned by a user other than root or us (ours
 * and root's are followed, level by level too). With FS_DIR_CREATE a missing level is made in
 * its checked parent; the last level must pass FS_DIR_OWNED when asked. Then nothing can be
 * swapped under what we write: work relative to the fd returned (O_DIRECTORY, close-on-exec).
 * Returns it, or -errno or -FS_ERR_*; where (if not NULL) gets the level refused. */
int fs__open_dir(const char *path, unsigned int flags, mode_t mode, char *where, size_t wsize);
/* The check of one level: others may not write the directory fd unless it is sticky; owned:
 * ours or root's, and its group may not write it either. Returns 0, -errno or -FS_ERR_*. */
int fs__check_fd(int fd, bool owned);
/* mkdir -p through fs__open_dir(FS_DIR_CREATE). Returns 0 or -errno / -FS_ERR_*. */
int fs__mkdir_p(const char *path, mode_t mode);
/* fs__open_dir(FS_DIR_OWNED): may this (root) process write into path without another user
 * being able to swap or plant names in it? Returns 0, -errno or -FS_ERR_*. */
int fs__check_dir(const char *path);
/* strerror for -errno and -FS_ERR_* values. */
const char *fs__strerror(int err);
/* Creates ".PREFIX.<12 random characters>.tmp" in dirfd with O_CREAT | O_EXCL | O_NOFOLLOW
 * and the mode given: a name no one can guess, never a file or link planted before. Its name
 * goes to name. Returns the fd (O_WRONLY, close-on-exec) or -errno. */
int fs__create_temp_at(int dirfd, const char *prefix, mode_t mode, char *name, size_t size);
/* The same in the directory dir; buf gets "DIR/name". */
int fs__create_temp(const char *dir, const char *prefix, mode_t mode, char *buf, size_t size);

#endif
