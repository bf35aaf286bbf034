/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_S3_ROWS_H
#define __CIRRON_S3_ROWS_H

#include <stddef.h>
#include "common/s3.h"
#include "ship/shipper.h"

/* --output ...,s3://BUCKET/PREFIX, the store's table: the batches' final spans (otel_spans.h)
 * as otel_traces rows (span_rows.h), gzip'd NDJSON, under Hive-style partitions that start
 * with the job and the date:
 *     PREFIX/spans/job=<job>/date=<YYYY-MM-DD>/<session id>.<seq>.<YYYY-MM-DD>.ndjson.gz
 * one object per group of batches (every session of the agent, up to 30 s of them) and job
 * and date, named after the group's first batch. A group sent again (an observer killed
 * between the store's answer and its state log's lines) starts with the same batch, so it
 * replaces its own objects: the store does not hold a span twice. State log:
 * <root>/s3-rows-sent.log. */
#define S3_ROWS_SENT_LOG "s3-rows-sent.log"

struct shipper *s3_rows__start(const struct s3_url *url, const struct s3_config *cfg,
			       const char *root, int spool_dirfd, char *why, size_t why_size);
/* "PREFIX/spans/job=JOB/date=DATE/NAME.DATE.ndjson.gz" for the group's first batch file
 * name (".json" dropped).
 * Caller frees; NULL when out of memory. */
char *s3_rows__key(const char *prefix, const char *job, const char *date, const char *name);

#endif
