/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPOOL_H
#define __CIRRON_SPOOL_H

#include <cjson/cJSON.h>
#include <stdint.h>

/* The spool sink: one JSON file per batch under <root>/spool, written atomically
 * (temp file, then rename), named <session_id>.<seq>.json so names sort by time. */
struct spool {
	char *dir;
	uint64_t bytes_written;
	uint64_t files_written;
};

/* Creates <root>/spool and checks it is writable. Returns 0 or -errno. */
int spool__open(struct spool *sp, const char *root);
int spool__write(struct spool *sp, const char *session_id, uint64_t seq, const cJSON *batch);
void spool__close(struct spool *sp);

#endif
