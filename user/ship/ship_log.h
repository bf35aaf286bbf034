/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SHIP_LOG_H
#define __CIRRON_SHIP_LOG_H

#include <stdint.h>

/* A shipper's state (shipper.h): <root>/<log_name>, one line "<prefix><batch name> <bytes>"
 * per batch file the destination took, appended as it takes them. The prefix names the
 * destination ("BUCKET/PREFIX/HOST/" for S3), so a start with another one sends everything. */

/* The line of a batch file. Caller frees; NULL when out of memory. */
char *ship_log__line(const char *prefix, const char *name, uint64_t bytes);
/* Calls unsent() for each batch file in the spool (dirfd) that the log (log_name in rootfd)
 * does not name with its size, oldest first; then rewrites the log with only the lines of
 * batches still in the spool, so it stays as small as the spool. */
void ship_log__scan(int rootfd, int dirfd, const char *log_name, const char *prefix,
		    void (*unsent)(void *ctx, const char *name, uint64_t bytes), void *ctx);

#endif
