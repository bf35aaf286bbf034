/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_EXPORT_H
#define __CIRRON_EXPORT_H

#include <stdio.h>
#include <cjson/cJSON.h>
#include "common/sbuf.h"
#include "tree/span.h"

/* --format csv: the header line. */
void export__csv_header(FILE *f);
/* One row: the span of session sid (rank), attrs as key=value;... */
void export__csv_row(struct sbuf *b, const char *sid, long rank, const struct span *sp);
/* One CSV field, quoted (RFC 4180) when it holds a comma, quote or line break. */
void export__csv_field(struct sbuf *b, const char *s);
/* A span as in the spool, as JSON text without its closing brace (more keys may follow),
 * with session_id and rank when sid is not NULL (a flat list's item). */
void export__span_json_open(struct sbuf *b, const struct span *sp, const char *sid, long rank);

#endif
