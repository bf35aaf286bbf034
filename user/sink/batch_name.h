/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_BATCH_NAME_H
#define __CIRRON_BATCH_NAME_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* "<session_id>.<seq>.json", seq of 8 or more digits: the session id's length, or 0 for any
 * other name (temp files, foreign files). The spool and its cap agree on it. */
size_t batch_name__id_len(const char *name);

/* A batch file found in a spool directory. */
struct batch_file {
	char *name;
	uint64_t bytes;
	struct timespec mtime;
};

/* The batch files in the directory dirfd (regular files only; dirfd itself stays open),
 * oldest first (same tick: by name, so by seq within a session). *out holds what was found
 * even on an error (-errno, -ENOMEM); free it with batch_name__free_files. */
int batch_name__list(int dirfd, struct batch_file **out, size_t *n);
void batch_name__free_files(struct batch_file *a, size_t n);

#endif
