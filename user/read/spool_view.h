/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPOOL_VIEW_H
#define __CIRRON_SPOOL_VIEW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "read/spool_src.h"
#include "tree/span.h"

/*
 * What each session of a spool is, from its newest batch: who (host, pid, rank), whether it
 * ended (final), the observer's newest health, the root span's newest copy, and the spans
 * still open or incomplete with their parents (the open path). The writer puts every span
 * still open in every batch (all_open), so the newest batch alone holds that state; a spool of
 * an older writer (no all_open) is read through once for it instead. Nothing else of the
 * spans is kept: readers stream a session's batches themselves (tree_stream.h).
 */

struct rsession {
	struct ssession *files;	/* its batch files, in the source */
	char *id, *host;
	long pid, rank, local_rank, world_size;
	bool final;		/* the newest batch read is final */
	uint64_t last_seq;	/* of the newest batch read: health's */
	uint64_t written_ns;	/* of that batch */
	uint64_t start_ns;	/* the root's start (sessions sort by it) */
	cJSON *health;		/* of the newest batch */
	bool has_root;
	struct span root;	/* its newest copy (name, attrs, marks owned) */
	struct span *state;	/* spans not ok at the newest batch, and their parents in it */
	size_t nstate;
	bool state_known;	/* state (and the hang batches) are read: spool_view__state */
	uint64_t *hang_seqs;	/* batches holding hang records */
	size_t nhang_seqs;
	cJSON *hangs;		/* spool_view__hangs: the records, oldest first */
	cJSON *sys_last;	/* spool_view__sys_last: the newest --sys-interval sample */
	bool sys_looked;
};

struct spool_view {
	struct spool_src src;
	struct rsession **sessions;	/* newest first (by start_ns, then id) */
	size_t nsessions;
};

/* Indexes every session of src (taken over by v). Returns 0 or -ENOMEM. */
int spool_view__index(struct spool_view *v, struct spool_src *src);
/* Makes s->state known: at once from a batch that holds every open span; for an older
 * writer's spool, by a pass over the session's batches. Returns 0 or -ENOMEM. */
int spool_view__state(struct spool_view *v, struct rsession *s);
/* The session's hang records (s->hangs), read from the batches that hold them. */
const cJSON *spool_view__hangs(struct spool_view *v, struct rsession *s);
/* The session's newest --sys-interval sample (s->sys_last), or NULL. */
const cJSON *spool_view__sys_last(struct spool_view *v, struct rsession *s);
void spool_view__free(struct spool_view *v);

/* A span copied out of a batch: name, attrs and marks owned. */
int rspan__copy(struct span *dst, const struct span *src);
void rspan__free(struct span *sp);

#endif
