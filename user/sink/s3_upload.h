/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_S3_UPLOAD_H
#define __CIRRON_S3_UPLOAD_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include "common/s3.h"

/* --output ...,s3://BUCKET/PREFIX: each spool batch, once written, is also sent to
 * PREFIX/<host>/<batch file name>, by a thread of its own (requests never wait on the event
 * loop, nor it on them). The spool stays the buffer: a batch the store did not take is retried,
 * oldest first, with backoff, for as long as the spool (--max-spool-mb) keeps it.
 * What was sent is appended to <root>/s3-sent.log ("s3://BUCKET/KEY BYTES"): a later start
 * with the same root sends what is left, and nothing twice. */
struct s3_upload;

/* Reads the state log, queues the spool's batches the log does not name. spool_dirfd: the
 * spool directory (dup'd). Returns NULL with why filled. */
struct s3_upload *s3_upload__start(const struct s3_url *url, const struct s3_config *cfg,
				   const char *host, const char *root, int spool_dirfd,
				   char *why, size_t why_size);
/* A batch file was written under the spool (spool__write's hook). */
void s3_upload__written(void *u, const char *name, uint64_t bytes);
/* The health block's "upload" object: sent, failed, retries, backlog. */
cJSON *s3_upload__health(struct s3_upload *u);
/* Sends what is queued for up to drain_s more seconds, then stops the thread and frees u;
 * what is left is said on stderr (the next start sends it). NULL is a no-op. */
void s3_upload__stop(struct s3_upload *u, double drain_s);

#endif
