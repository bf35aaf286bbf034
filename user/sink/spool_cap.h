/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPOOL_CAP_H
#define __CIRRON_SPOOL_CAP_H

#include <stddef.h>
#include <stdint.h>

/* --max-spool-mb: the batch files in the spool directory stay under a size, oldest removed
 * first. A session's newest batch is never removed: with the open spans re-sent in every
 * batch (session.resend_open), it holds the newest state of each span still open. */

struct spool_file {
	char *name;		/* under the spool directory */
	uint64_t bytes;
	uint64_t order;		/* when written (or found, for earlier runs'): lower is older */
};

/* A session's newest batch. */
struct spool_newest {
	char *session_id;
	struct spool_file file;
};

struct spool_cap {
	const char *dir;		/* the spool directory (the spool's) */
	int dirfd;			/* it, open (the spool's); -1: dir by path */
	uint64_t max_bytes;		/* 0: no cap, nothing counted */
	uint64_t bytes;			/* of the batch files counted in dir */
	uint64_t removed_files, removed_bytes;
	struct spool_file *old;		/* removable, oldest first, from old[head] */
	size_t head, nold, old_cap;
	struct spool_newest *newest;	/* one per session: never removed */
	size_t nnewest, newest_cap;
	uint64_t next_order;
};

/* Counts the batch files already in dir (earlier runs): they are the oldest. Returns 0
 * or -errno. */
int spool_cap__scan(struct spool_cap *sp);
/* Removes the oldest removable batches until `bytes` more fit under the cap (or none is
 * left to remove). */
void spool_cap__make_room(struct spool_cap *sp, uint64_t bytes);
/* A batch of session_id was written as name: it is that session's newest; the one it
 * replaces becomes removable. Out of memory, a file is left uncounted. */
void spool_cap__add(struct spool_cap *sp, const char *session_id, const char *name, uint64_t bytes);
/* name is about to be replaced: stop counting the file it was. */
void spool_cap__forget(struct spool_cap *sp, const char *name);
void spool_cap__free(struct spool_cap *sp);

#endif
