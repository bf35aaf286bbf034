/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPOOL_H
#define __CIRRON_SPOOL_H

#include <cjson/cJSON.h>
#include <stdint.h>

struct spool_file {
	char *name;		/* under the spool directory */
	uint64_t bytes;
	uint64_t order;		/* when written (or found, for earlier runs'): lower is older */
};

/* A session's newest batch (spool_cap.c). */
struct spool_newest {
	char *session_id;
	struct spool_file file;
};

/* The spool sink: one JSON file per batch under <root>/spool, written atomically
 * (temp file, then rename), named <session_id>.<seq>.json so names sort by time. */
struct spool {
	char *dir;
	uint64_t bytes_written;
	uint64_t files_written;
	/* --max-spool-mb, 0 for none; the rest is spool_cap.c's */
	uint64_t max_bytes;
	uint64_t bytes;			/* of the batch files counted in dir */
	uint64_t removed_files, removed_bytes;
	struct spool_file *old;		/* removable, oldest first, from old[head] */
	size_t head, nold, old_cap;
	struct spool_newest *newest;	/* one per session: never removed */
	size_t nnewest, newest_cap;
	uint64_t next_order;
};

/* Creates <root>/spool and checks it is writable. With max_bytes (not 0), batch files
 * beyond it are removed, oldest first (spool_cap.h), those of earlier runs included.
 * Returns 0 or -errno. */
int spool__open(struct spool *sp, const char *root, uint64_t max_bytes);
int spool__write(struct spool *sp, const char *session_id, uint64_t seq, const cJSON *batch);
void spool__close(struct spool *sp);
/* "<session_id>.<seq>.json", seq of 8 or more digits: the session id's length, or 0. */
size_t spool__batch_id_len(const char *name);
/* How many sessions of the same process (id, then id.2, id.3 ...) the spool holds: the
 * highest observation number found, 0 for none. */
int spool__sessions_like(const struct spool *sp, const char *id);

#endif
