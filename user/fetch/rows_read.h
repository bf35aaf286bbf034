/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_ROWS_READ_H
#define __CIRRON_ROWS_READ_H

#include <stddef.h>

/* `trace --ranks s3://BUCKET/PREFIX --job JOB`: the job's partition of the store's span rows
 * (PREFIX/spans/job=JOB/, every date; ship/s3_rows.h) fetched into a temporary spool and
 * turned back into one batch per session, so the spool readers read them: spans by their
 * SpanId and ParentSpanId, names, index, start and end, status, attributes (strings that read
 * as JSON numbers, booleans, objects or arrays come back as such) and events as marks; the
 * session's host, pid, rank and job from the resource attributes. The store holds closed
 * spans only: a session still running has a root made up here (open, role from cirron.role).
 * Returns 0 with *dir set (free it with s3_fetch__remove), or an exit code (reported). */
int rows_read__to_dir(const char *url, const char *job, char **dir, size_t *skipped);
/* The rows files (*.ndjson.gz, *.ndjson) under dir/spool become batch files there. Returns
 * 0 or an exit code; rows that are not otel_traces rows are reported and counted. Exposed
 * for tests. */
int rows_read__convert(const char *dir, size_t *skipped);

#endif
