/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPOOL_CAP_H
#define __CIRRON_SPOOL_CAP_H

#include <stdint.h>

/* --max-spool-mb: the batch files in the spool directory stay under a size, oldest removed
 * first. A session's newest batch is never removed: with the open spans re-sent in every
 * batch (session.resend_open), it holds the newest state of each span still open. */

struct spool;

/* Counts the batch files already in sp->dir (earlier runs): they are the oldest. Returns 0
 * or -errno. */
int spool_cap__scan(struct spool *sp);
/* Removes the oldest removable batches until `bytes` more fit under the cap (or none is
 * left to remove). */
void spool_cap__make_room(struct spool *sp, uint64_t bytes);
/* A batch of session_id was written as name: it is that session's newest; the one it
 * replaces becomes removable. Out of memory, a file is left uncounted. */
void spool_cap__add(struct spool *sp, const char *session_id, const char *name, uint64_t bytes);
/* name is about to be replaced: stop counting the file it was. */
void spool_cap__forget(struct spool *sp, const char *name);
void spool_cap__free(struct spool *sp);

#endif
