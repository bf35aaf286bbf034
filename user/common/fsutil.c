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

int fs__mkdir_p(const char *path, mode_t mode)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

static bool trusted_owner(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

int fs__check_dir(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return -errno;
	if (S_ISLNK(st.st_mode) && !trusted_owner(st.st_uid))
		return -FS_ERR_FOREIGN_OWNER;
	if (stat(path, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (!trusted_owner(st.st_uid))
		return -FS_ERR_FOREIGN_OWNER;
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
		return -FS_ERR_OTHERS_WRITE;
	return 0;
}

const char *fs__strerror(int err)
{
	switch (-err) {
	case FS_ERR_OTHERS_WRITE:
		return "other users may write there (no sticky bit): refusing to write as root";
	case FS_ERR_FOREIGN_OWNER:
		return "owned by another user: refusing to write there";
	}
	return strerror(-err);
}

int fs__create_temp(const char *dir, const char *prefix, mode_t mode, char *buf, size_t size)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

	for (int tries = 0; tries < 100; tries++) {
		unsigned char rnd[12];
		char name[sizeof(rnd) + 1];
		int fd, n;

		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return -EIO;
		for (size_t i = 0; i < sizeof(rnd); i++)
			name[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		name[sizeof(rnd)] = 0;
		n = snprintf(buf, size, "%s/.%s.%s.tmp", dir, prefix, name);
		if (n < 0 || (size_t)n >= size)
			return -ENAMETOOLONG;
		fd = open(buf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
		if (fd >= 0) {
			fchmod(fd, mode);	/* whatever the umask */
			return fd;
		}
		if (errno != EEXIST)
			return -errno;
	}
	return -EEXIST;
}

bool fs__have_bpf_caps(void)
{
	unsigned long long eff = 0;
	char line[256];
	FILE *f;

	if (geteuid() == 0)
		return true;
	f = fopen("/proc/self/status", "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	/* CAP_SYS_ADMIN 21, CAP_PERFMON 38, CAP_BPF 39 */
	return (eff & (1ull << 21)) || ((eff & (1ull << 38)) && (eff & (1ull << 39)));
}
