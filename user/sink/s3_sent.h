/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_S3_SENT_H
#define __CIRRON_S3_SENT_H

#include <stdint.h>

/* <root>/s3-sent.log, the S3 upload's state: one line "BUCKET/KEY BYTES" per batch file the
 * store took, appended as it takes them. A later start (the observer killed, or its end's
 * drain too short) sends only what the log does not name. */
#define S3_SENT_LOG "s3-sent.log"

/* The line of a batch file: key_prefix ("BUCKET/PREFIX/HOST/"), name, its size. Caller frees;
 * NULL when out of memory. */
char *s3_sent__line(const char *key_prefix, const char *name, uint64_t bytes);
/* Calls unsent() for each batch file in the spool (dirfd) that the log (in rootfd) does not
 * name with its size, oldest first; then rewrites the log with only the lines of batches
 * still in the spool, so it stays as small as the spool. */
void s3_sent__scan(int rootfd, int dirfd, const char *key_prefix,
		   void (*unsent)(void *ctx, const char *name, uint64_t bytes), void *ctx);

#endif
