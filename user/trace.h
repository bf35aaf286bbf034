/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TRACE_H
#define __CIRRON_TRACE_H

#include <stdio.h>
#include "cli.h"
#include "spool_reader.h"

#define TRACE_ELIDE_RUN 20	/* longer runs of same-name siblings are elided */
#define TRACE_MAX_DEPTH 1024	/* the writer caps depth at 64; deeper is a corrupt spool */

/* `trace` and `health`: read <path>/spool, print to stdout, write nothing. Exit codes:
 * 0, EXIT_CORRUPT_INPUT when files were skipped, EXIT_NO_SPOOL, EXIT_FAILURE_RUNTIME. */
int trace__main(const struct options *o);
int health__main(const struct options *o);

/* Loads and builds the spool under o->path. Returns 0 or an exit code (reported). */
int trace__load(const struct options *o, struct spool_view *v);
/* Whether --session / --rank keep this session. */
bool trace__wanted(const struct options *o, const struct rsession *s);
/* "session ID: host H, pid P, rank R (local L, world W), final" */
void trace__print_header(FILE *f, const struct rsession *s);
/* Prints the view in o->format, filters applied. */
void trace__print(FILE *f, const struct spool_view *v, const struct options *o);
/* health.c: each wanted session's health from its newest batch. */
void health__print(FILE *f, const struct spool_view *v, const struct options *o);
/* One CSV field, quoted (RFC 4180) when it holds a comma, quote or line break. */
void csv__field(FILE *f, const char *s);

/* trace_ranks.c: --ranks, the ranks of a distributed job side by side. */
int trace__print_ranks(FILE *f, const struct spool_view *v, const struct options *o);

/* trace_export.c: --format json and csv. */
void export__csv_header(FILE *f);
void export__csv_row(FILE *f, const struct rsession *s, const struct rspan *r);
/* A span as in the spool, with "children" (depth left > 0) or session_id and rank (flat). */
cJSON *export__span_json(const struct rsession *s, const struct rspan *r, int depth_left);
/* A session with its metadata and "spans": its top spans, nested. */
cJSON *export__session_json(const struct rsession *s);

#endif
