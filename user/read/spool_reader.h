/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPOOL_READER_H
#define __CIRRON_SPOOL_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "tree/span.h"

/* Read-back of a spool: batches merged into one tree per session. Files are read one at a
 * time; only the merged spans are kept. */

struct rspan {
	struct span sp;		/* what span__format_line and span__to_json take */
	uint64_t seq;		/* the batch it came from: a later batch replaces it */
	struct rspan *parent;	/* NULL: a root, its parent is in no batch read, or a
				 * corrupt link (to itself, or around a loop) was cut */
	struct rspan **kids;	/* by start time, after spool_view__build */
	size_t nkids, kids_cap;
	size_t walk;		/* spool_view__build's loop check */
};

struct rsession {
	char *id;
	char *host;
	long pid, rank, local_rank, world_size;
	bool final;		/* a final batch was read */
	uint64_t last_seq;	/* of the batch health came from */
	uint64_t written_ns;	/* of the newest batch */
	uint64_t start_ns;	/* earliest span start: sessions sort by it */
	cJSON *health;		/* of the newest batch */
	cJSON *hangs;		/* hang records of every batch, or NULL */
	cJSON *snapshots;	/* --snapshots records of every batch, or NULL */
	cJSON *sys_first, *sys_last;	/* --sys-interval: oldest and newest sample, or NULL */
	size_t nsys;			/* samples read */
	double sys_rss_max, sys_threads_max;
	size_t nfiles;
	struct rspan **spans;	/* merged, in arrival order */
	size_t nspans, spans_cap;
	struct rspan **table;	/* open addressing by span id */
	size_t table_cap;
	struct rspan **tops;	/* roots and orphans, by start time */
	size_t ntops;
};

struct spool_view {
	struct rsession **sessions;	/* newest first after spool_view__build */
	size_t nsessions;
	size_t skipped;			/* files reported and left out */
	size_t removed;			/* listed, then gone before read (--max-spool-mb) */
};

/* Merges one batch file's text. name is the file's base name (it must match its content).
 * Returns 0, or -EINVAL with why filled and nothing merged. */
int spool_view__add_batch(struct spool_view *v, const char *name, const char *text,
			  char *why, size_t why_size);
/* Reads every batch under dir, reporting each bad file on stderr ("skipping FILE: REASON")
 * and counting it in v->skipped; in-progress temp files (.*.tmp) and files removed after
 * the listing (counted in v->removed) are passed over silently.
 * Returns 0 or -errno if dir cannot be read. */
int spool_view__load_dir(struct spool_view *v, const char *dir);
/* "<session_id>.<8 digits>.json": the id's length and the seq the batch's content must
 * repeat. False for any other name. */
bool spool_view__batch_name(const char *name, size_t *id_len, uint64_t *seq);
/* Links children to parents, sorts children and sessions. Call once, after loading. */
int spool_view__build(struct spool_view *v);
void spool_view__free(struct spool_view *v);

#endif
