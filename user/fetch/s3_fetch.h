/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_S3_FETCH_H
#define __CIRRON_S3_FETCH_H

#include <stddef.h>

/* trace, health, report: s3://BUCKET/PREFIX read back. Every object under PREFIX is listed
 * (ListObjectsV2, page by page) and each host's batches (PREFIX/<host>/<batch file>) are
 * fetched into one new temporary directory, DIR/spool: the ranks of a job that ran on several
 * nodes then read as one spool, by the same readers as a local one (session ids carry the
 * host, so hosts' files never share a name). An object of another shape, one that cannot be
 * fetched, or a name two hosts hold, is reported on stderr and counted in *skipped.
 * Returns 0 with *dir set (free it with s3_fetch__remove), or an exit code (reported). */
int s3_fetch__to_dir(const char *url, char **dir, size_t *skipped);
/* Removes DIR (what s3_fetch__to_dir made) and frees the string. NULL is a no-op. */
void s3_fetch__remove(char *dir);

#endif
