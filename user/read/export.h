/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_EXPORT_H
#define __CIRRON_EXPORT_H

#include <stdio.h>
#include <cjson/cJSON.h>
#include "read/spool_reader.h"

/* --format csv: the header line, then one row per span. */
void export__csv_header(FILE *f);
void export__csv_row(FILE *f, const struct rsession *s, const struct rspan *r);
/* One CSV field, quoted (RFC 4180) when it holds a comma, quote or line break. */
void export__csv_field(FILE *f, const char *s);
/* --format json: a span as in the spool, with "children" (depth left > 0) or session_id and
 * rank (flat). */
cJSON *export__span_json(const struct rsession *s, const struct rspan *r, int depth_left);
/* A session with its metadata and "spans": its top spans, nested. */
cJSON *export__session_json(const struct rsession *s);

#endif
