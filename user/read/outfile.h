/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OUTFILE_H
#define __CIRRON_OUTFILE_H

#include <stdio.h>

/* -o FILE of `trace --format perfetto` and `report`: written to a temporary file beside it,
 * renamed into place whole on success, removed on failure. */
struct outfile {
	FILE *f;
	char *tmp;
	const char *path;
};

/* Returns 0 or -errno. */
int outfile__open(struct outfile *o, const char *path);
/* Flushes, syncs and renames (0), or removes the temporary file (-errno). */
int outfile__commit(struct outfile *o);

#endif
