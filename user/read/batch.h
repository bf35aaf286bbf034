/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_BATCH_H
#define __CIRRON_BATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "tree/span.h"

/* One spool batch file's text, checked whole: the envelope, every span, health. A file is
 * taken whole or not at all. */
struct batch {
	cJSON *json;		/* NULL: none */
	bool in_arena;		/* json lives in batch_arena (one batch at a time) */
	/* the envelope; strings point into json */
	const char *id, *host;
	long pid, rank, local_rank, world_size;
	uint64_t seq, written_ns;
	bool final;
	bool all_open;		/* carries every span still open (the newest alone holds the
				 * open path) */
	const cJSON *spans, *health, *hangs, *sys, *snapshots;
	const cJSON *hang_batches;	/* seqs of the session's batches with hang records */
	struct span *sp;	/* spans, checked and read (name, attrs, marks point into json) */
	size_t nsp;
};

/* Checks text (the file name's base name, its content). Returns 0, or -EINVAL with why filled
 * and b empty. Free with batch__free. */
int batch__parse(struct batch *b, const char *name, const char *text, char *why,
		 size_t why_size);
void batch__free(struct batch *b);
/* Fills sp from one span object of a parsed batch (name, attrs, marks point into js).
 * Returns the first bad field's name, or NULL. */
const char *batch__span(const cJSON *js, struct span *sp);
/* "<session_id>.<8 digits>.json": the id's length and the seq the batch's content must
 * repeat. False for any other name. */
bool batch__name(const char *name, size_t *id_len, uint64_t *seq);
/* A number of a parsed object as u64 (cJSON keeps doubles: ns timestamps come back rounded
 * to 256 ns; durations are exact). */
bool batch__u64(const cJSON *o, const char *key, uint64_t *out);

#endif
