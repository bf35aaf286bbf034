// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "common/fsutil.h"
#include "read/outfile.h"

int outfile__open(struct outfile *o, const char *path)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char dir[4096];
	int fd;

	*o = (struct outfile){ .path = path, .dirfd = -1 };
	if (!*base || strlen(base) >= sizeof(o->name) - 32)
		return *base ? -ENAMETOOLONG : -EISDIR;
	if (!slash)
		strcpy(dir, ".");
	else if (slash == path)
		strcpy(dir, "/");
	else if ((size_t)(slash - path) < sizeof(dir))
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	else
		return -ENAMETOOLONG;
	strcpy(o->name, base);
	/* every level on the way checked: no link of another user, no directory others may
	 * write without the sticky bit; the file is made and renamed in the directory opened */
	o->dirfd = fs__open_dir(dir, 0, 0, o->refused, sizeof(o->refused));
	if (o->dirfd < 0) {
		fd = o->dirfd;
		o->dirfd = -1;
		return fd;
	}
	fd = fs__create_temp_at(o->dirfd, base, 0644, o->tmp, sizeof(o->tmp));
	if (fd >= 0 && (o->f = fdopen(fd, "w")))
		return 0;
	fd = fd < 0 ? fd : -errno;
	outfile__abort(o);
	return fd;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (ferror(o->f) || fflush(o->f) || fsync(fileno(o->f)))
		err = errno ? -errno : -EIO;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	if (!err && renameat(o->dirfd, o->tmp, o->dirfd, o->name))
		err = -errno;
	if (err)
		unlinkat(o->dirfd, o->tmp, 0);
	close(o->dirfd);
	o->dirfd = -1;
	return err;
}

void outfile__abort(struct outfile *o)
{
	if (o->f) {
		fclose(o->f);
		o->f = NULL;
		unlinkat(o->dirfd, o->tmp, 0);
	}
	if (o->dirfd >= 0)
		close(o->dirfd);
	o->dirfd = -1;
}

const char *outfile__strerror(const struct outfile *o, int err)
{
	static char buf[4096 + 128];

	if (!o->refused[0])
		return fs__strerror(err);
	snprintf(buf, sizeof(buf), "%s: %s", o->refused, fs__strerror(err));
	return buf;
}
