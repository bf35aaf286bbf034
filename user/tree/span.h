/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPAN_H
#define __CIRRON_SPAN_H

#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include "cirron.h"
#include "common/json.h"

enum span_status { SPAN_OK, SPAN_OPEN, SPAN_INCOMPLETE };

#define SPAN_MAX_MARKS 256	/* per span; more are counted in attrs.marks_dropped */

struct span {
	uint64_t id;
	uint64_t parent_id;	/* 0: the session root */
	char *name;
	long index;		/* -1: none */
	uint64_t start_ns;	/* wall clock */
	uint64_t end_ns;	/* 0 while open */
	enum span_status status;
	cJSON *attrs;		/* object */
	cJSON *marks;		/* array */
	bool dirty;		/* changed since the last spool batch */
	bool held;		/* closed, its GPU time still to come (session.gpu): not written,
				 * not given to on_close, until session__release */
	bool has_counters;
	uint64_t counters_at_open[CIRRON_NCOUNTERS];
	struct span *prev, *next;	/* the session's live list */
};

const char *span_status__name(enum span_status s);
/* JSON of the spool format (schemas/spool-batch.schema.json). */
cJSON *span__to_json(const struct span *s);
#define SPAN_LINE_PREFIX "[cirron] "
/* One stdout line: "[cirron] epoch[0] - 142us {epoch_loss=0.5234}". Returns buf. */
const char *span__format_line(const struct span *s, char *buf, int size);
/* "epoch[0]", or the bare name without an index. Returns buf. */
const char *span__format_name(const struct span *s, char *buf, int size);
/* Adds a mark, or counts it in attrs.marks_dropped past SPAN_MAX_MARKS. Takes mark. */
void span__add_mark(struct span *s, cJSON *mark);

#endif
