/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_EXPORT_STREAM_H
#define __CIRRON_EXPORT_STREAM_H

#include <stdbool.h>
#include <stdio.h>
#include "read/tree_stream.h"

/*
 * Every span of a session, streamed (tree_stream.h), as trace prints them: --format json's
 * nested objects, --format csv's rows, or --name's flat list (lines, rows or JSON items).
 * Spans come in tree order: a span, then its kids by start time. A span is printed when it
 * and what is under it ended; one still open that holds more than EXPORT_EARLY_BYTES of
 * finished kids is begun before it ends, and then it comes after its kids: a JSON object
 * with "children" before its other keys, a CSV row after its kids' rows. So memory holds
 * at most about that much of an open span (a long epoch) whatever the job's length.
 */
#define EXPORT_EARLY_BYTES (4u << 20)

enum export_mode { EXPORT_JSON, EXPORT_CSV, EXPORT_FLAT_TEXT, EXPORT_FLAT_CSV, EXPORT_FLAT_JSON };

struct export_stream {
	FILE *out;
	enum export_mode mode;
	const char *name;	/* the flat modes: only spans of this name */
	const char *sid;	/* the session's */
	long rank;
	bool *flat_first;	/* flat JSON: no item written yet (across sessions) */
	size_t spans_out;	/* JSON: items written into the session's "spans" */
};

extern const struct tstream_ops export_stream__ops;
/* What comes before the root's kids, the root being the stream's started one. */
void export_stream__begin_root(struct export_stream *x, struct tstream *t);
/* What comes after them. */
void export_stream__end_root(struct export_stream *x, struct tstream *t);

#endif
