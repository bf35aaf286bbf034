/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPOOL_SRC_H
#define __CIRRON_SPOOL_SRC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "read/batch.h"

/*
 * A spool's batch files, listed once and grouped by session, each session's by seq: what
 * every reader walks, one file at a time, in the order it needs (oldest first for the tree,
 * newest first for what is newest). Nothing of a file is kept after it is read but what its
 * reader takes. A file that cannot be used is reported once ("skipping FILE: REASON") and
 * counted in skipped, however many readers come to it; one removed after the listing
 * (--max-spool-mb) is counted in removed, silently.
 */

enum sfile_state { SFILE_UNREAD, SFILE_OK, SFILE_BAD, SFILE_GONE };

struct sfile {
	char *name;
	uint64_t seq;
	enum sfile_state state;
	const char *text;	/* in-memory source: the file's text */
};

struct ssession {
	char *id;
	struct sfile *files;	/* by seq */
	size_t nfiles;
};

struct spool_src {
	char *dir;			/* NULL: an in-memory source (tests, the fuzzer) */
	struct ssession *sessions;
	size_t nsessions;
	size_t skipped, removed;
	bool sorted;
	char *buf;			/* the file being read */
	size_t buf_cap;
};

/* Lists dir: batch names grouped by session; other names reported (skipped), files being
 * written (.*.tmp) passed over. Returns 0, or -errno if dir cannot be read. */
int spool_src__open_dir(struct spool_src *s, const char *dir);
/* An in-memory source: files added one by one (name, text; both copied). Returns 0, -EINVAL
 * for a name that is not a batch's (reported as open_dir does), or -ENOMEM. */
int spool_src__add_text(struct spool_src *s, const char *name, const char *text);
/* Reads and checks file k of session ss into b. Returns 0, -ENOENT when it is gone (counted,
 * silent), -EINVAL when it is bad (reported and counted, the first time only). */
int spool_src__read(struct spool_src *s, struct ssession *ss, size_t k, struct batch *b);
void spool_src__free(struct spool_src *s);

#endif
