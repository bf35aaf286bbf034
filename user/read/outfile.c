// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "read/outfile.h"

int outfile__open(struct outfile *o, const char *path)
{
	char *copy = strdup(path), *base;
	int fd, err;

	*o = (struct outfile){ .path = path };
	if (!copy)
		return -ENOMEM;
	base = basename(copy);
	if (asprintf(&o->tmp, "%.*s.%s.XXXXXX", (int)(strlen(path) - strlen(base)), path,
		     base) < 0) {
		o->tmp = NULL;
		free(copy);
		return -ENOMEM;
	}
	free(copy);
	fd = mkstemp(o->tmp);
	if (fd >= 0 && (o->f = fdopen(fd, "w"))) {
		fchmod(fd, 0644);
		return 0;
	}
	err = -errno;
	if (fd >= 0) {
		close(fd);
		unlink(o->tmp);
	}
	free(o->tmp);
	o->tmp = NULL;
	return err;
}

int outfile__commit(struct outfile *o)
{
	int err = 0;

	if (ferror(o->f) || fflush(o->f) || fsync(fileno(o->f)))
		err = errno ? -errno : -EIO;
	if (fclose(o->f) && !err)
		err = -errno;
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err)
		unlink(o->tmp);
	free(o->tmp);
	o->tmp = NULL;
	o->f = NULL;
	return err;
}
