/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OUTFILE_H
#define __CIRRON_OUTFILE_H

#include <stdio.h>

/* -o FILE of `trace --format perfetto` and `report`: written to a temporary file beside it,
 * renamed into place whole on success, removed on failure. Its directory is opened level by
 * level first (fs__open_dir), and both files are made in that directory. */
struct outfile {
	FILE *f;
	int dirfd;
	char tmp[256], name[256];	/* in dirfd */
	char refused[4096];		/* the level of the way refused, if one was */
	const char *path;
};

/* Returns 0 or -errno / -FS_ERR_*. */
int outfile__open(struct outfile *o, const char *path);
/* Flushes, syncs and renames (0), or removes the temporary file (-errno). */
int outfile__commit(struct outfile *o);
/* Removes the temporary file (an error on the way). */
void outfile__abort(struct outfile *o);
/* Why outfile__open or commit failed, with the level refused. */
const char *outfile__strerror(const struct outfile *o, int err);

#endif
