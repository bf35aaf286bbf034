// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/fsutil.h"

#define MAX_LINKS 40	/* as the kernel's own path walk (ELOOP) */

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

/* A directory we walk through: others may not write it unless it is sticky (/tmp). One we
 * write into (owned): ours or root's, and not writable by its group either. */
int fs__check_fd(int fd, bool owned)
{
	struct stat st;

	if (fstat(fd, &st))
		return -errno;
	if (owned && !trusted_owner(st.st_uid))
		return -FS_ERR_FOREIGN_OWNER;
	if (st.st_mode & S_ISVTX)
		return 0;
	if ((st.st_mode & S_IWOTH) || (owned && (st.st_mode & S_IWGRP)))
		return -FS_ERR_OTHERS_WRITE;
	return 0;
}

static void note_where(char *where, size_t size, const char *done, const char *name)
{
	if (!where || !size)
		return;
	if (!name)
		snprintf(where, size, "%s", done);
	else
		snprintf(where, size, "%s%s%s", done, done[strlen(done) - 1] == '/' ? "" : "/",
			 name);
}

/* done += "/" name, for messages: the path as walked (links resolved). */
static int append(char *done, size_t size, const char *name)
{
	size_t len = strlen(done);
	int n = snprintf(done + len, size - len, "%s%s", done[len - 1] == '/' ? "" : "/", name);

	return n < 0 || (size_t)n >= size - len ? -ENAMETOOLONG : 0;
}

/* The next component of *rest (skipping empty ones and "."), NUL-terminated in place;
 * NULL at the end. */
static char *next_name(char **rest)
{
	char *p = *rest, *name;

	for (;;) {
		while (*p == '/')
			p++;
		if (!*p) {
			*rest = p;
			return NULL;
		}
		name = p;
		while (*p && *p != '/')
			p++;
		if (*p)
			*p++ = 0;
		if (strcmp(name, ".") != 0)
			break;
	}
	*rest = p;
	return name;
}

/* name in dir fd is a link: its target, then what was left, become the path to walk. */
static int follow_link(int fd, const char *name, char *todo, char *rest, int *links)
{
	char target[PATH_MAX], joined[PATH_MAX];
	struct stat st;
	ssize_t n;
	int len;

	if (fstatat(fd, name, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (!S_ISLNK(st.st_mode))
		return -ENOTDIR;
	if (!trusted_owner(st.st_uid))
		return -FS_ERR_FOREIGN_LINK;
	if (++*links > MAX_LINKS)
		return -ELOOP;
	n = readlinkat(fd, name, target, sizeof(target) - 1);
	if (n < 0)
		return -errno;
	target[n] = 0;
	len = snprintf(joined, sizeof(joined), "%s/%s", target, rest);
	if (len < 0 || (size_t)len >= sizeof(joined))
		return -ENAMETOOLONG;
	memcpy(todo, joined, (size_t)len + 1);
	return 0;
}

int fs__open_dir(const char *path, unsigned int flags, mode_t mode, char *where, size_t wsize)
{
	char todo[PATH_MAX], done[PATH_MAX], *rest = todo, *name;
	int fd, nfd, err, links = 0;

	if (!*path)
		return -ENOENT;
	if (strlen(path) >= sizeof(todo))
		return -ENAMETOOLONG;
	strcpy(todo, path);
	strcpy(done, *path == '/' ? "/" : ".");
	fd = open(done, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	err = fs__check_fd(fd, false);
	if (err) {
		note_where(where, wsize, done, NULL);
		goto fail;
	}
	while ((name = next_name(&rest))) {
		nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (nfd < 0 && errno == ENOENT && (flags & FS_DIR_CREATE)) {
			/* made here, in a directory already checked; EEXIST: made meanwhile */
			if (mkdirat(fd, name, mode) && errno != EEXIST) {
				err = -errno;
				note_where(where, wsize, done, name);
				goto fail;
			}
			nfd = openat(fd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		}
		if (nfd < 0 && (errno == ELOOP || errno == ENOTDIR)) {
			err = follow_link(fd, name, todo, rest, &links);
			if (err) {
				note_where(where, wsize, done, name);
				goto fail;
			}
			rest = todo;
			if (*todo == '/') {	/* an absolute target: from the top again */
				close(fd);
				strcpy(done, "/");
				fd = open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
				if (fd < 0)
					return -errno;
			}
			continue;
		}
		if (nfd < 0) {
			err = -errno;
			note_where(where, wsize, done, name);
			goto fail;
		}
		close(fd);
		fd = nfd;
		err = append(done, sizeof(done), name);
		if (!err)
			err = fs__check_fd(fd, false);
		if (err) {
			note_where(where, wsize, done, NULL);
			goto fail;
		}
	}
	err = fs__check_fd(fd, flags & FS_DIR_OWNED);
	if (err) {
		note_where(where, wsize, done, NULL);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return err;
}

int fs__mkdir_p(const char *path, mode_t mode)
{
	int fd = fs__open_dir(path, FS_DIR_CREATE, mode, NULL, 0);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int fs__check_dir(const char *path)
{
	int fd = fs__open_dir(path, FS_DIR_OWNED, 0, NULL, 0);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

const char *fs__strerror(int err)
{
	switch (-err) {
	case FS_ERR_OTHERS_WRITE:
		return "other users may write there (no sticky bit): refusing to write there";
	case FS_ERR_FOREIGN_OWNER:
		return "owned by another user: refusing to write there";
	case FS_ERR_FOREIGN_LINK:
		return "a symbolic link owned by another user: refusing to follow it";
	}
	return strerror(-err);
}

int fs__create_temp_at(int dirfd, const char *prefix, mode_t mode, char *name, size_t size)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char rnd[12];
		char suffix[sizeof(rnd) + 1];
		int fd, n;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -EIO;
		for (size_t i = 0; i < sizeof(rnd); i++)
			suffix[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		suffix[sizeof(rnd)] = 0;
		n = snprintf(name, size, ".%s.%s.tmp", prefix, suffix);
		if (n < 0 || (size_t)n >= size)
			return -ENAMETOOLONG;
		fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0) {
			fchmod(fd, mode);	/* whatever the umask */
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

int fs__create_temp(const char *dir, const char *prefix, mode_t mode, char *buf, size_t size)
{
	char name[NAME_MAX + 1];
	int dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, n;

	if (dirfd < 0)
		return -errno;
	fd = fs__create_temp_at(dirfd, prefix, mode, name, sizeof(name));
	n = snprintf(buf, size, "%s/%s", dir, name);
	if (fd >= 0 && (n < 0 || (size_t)n >= size)) {
		unlinkat(dirfd, name, 0);
		close(fd);
		fd = -ENAMETOOLONG;
	}
	close(dirfd);
	return fd;
}
