/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPOOL_H
#define __CIRRON_SPOOL_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include "sink/spool_cap.h"

/* A session's batches that hold hang records, the newest SPOOL_HANG_BATCHES: every batch
 * after the first of them lists them (hang_batches), so a reader of the newest batch alone
 * finds its hang records. */
#define SPOOL_HANG_BATCHES 64
struct spool_hangs {
	char *session_id;
	uint64_t seqs[SPOOL_HANG_BATCHES];	/* oldest first */
	size_t n;
};

/* The spool sink: one JSON file per batch under <root>/spool, written atomically
 * (temp file, then rename), named <session_id>.<seq>.json so names sort by time. */
struct spool {
	char *dir;
	int dirfd;			/* dir, opened level by level (fs__open_dir) */
	char refused[4096];		/* spool__open failed: the level refused, if one was */
	uint64_t bytes_written;
	uint64_t files_written;
	struct spool_cap cap;		/* --max-spool-mb */
	/* batches the disk did not take (full, an I/O error): their spans are lost */
	uint64_t lost_files, lost_bytes, lost_spans;
	int lost_err;			/* the error last said (0: writes work), said once an outage */
	uint64_t lost_last_ns;		/* CLOCK_MONOTONIC of the last failed write */
	/* told of each batch file once it is in place (the shippers, ship_outputs__written) */
	void (*on_written)(void *ctx, const char *name, uint64_t bytes);
	void *on_written_ctx;
	struct spool_hangs *hangs;	/* sessions with hang records, until their final batch */
	size_t nhangs;
};

/* Creates <root>/spool and checks it is writable, every level on the way checked before
 * anything is made there (fs__open_dir); root and spool must be ours or root's. With max_bytes (not 0), batch files
 * beyond it are removed, oldest first (spool_cap.h), those of earlier runs included.
 * Returns 0 or -errno. */
int spool__open(struct spool *sp, const char *root, uint64_t max_bytes);
int spool__write(struct spool *sp, const char *session_id, uint64_t seq, const cJSON *batch);
void spool__close(struct spool *sp);
/* How many sessions of the same process (id, then id.2, id.3 ...) the spool holds: the
 * highest observation number found, 0 for none. */
int spool__sessions_like(const struct spool *sp, const char *id);

#endif
