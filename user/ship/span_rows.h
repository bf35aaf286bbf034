/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SPAN_ROWS_H
#define __CIRRON_SPAN_ROWS_H

#include <stddef.h>
#include "common/sbuf.h"
#include "ship/otel_spans.h"

/* A batch's spans as rows of the OpenTelemetry Collector ClickHouse exporter's otel_traces
 * table, one JSON object per line (NDJSON), one part per UTC date of the spans' start: the
 * same column names (Timestamp, TraceId, SpanId, ParentSpanId, TraceState, SpanName,
 * SpanKind, ServiceName, ResourceAttributes, ScopeName, ScopeVersion, SpanAttributes,
 * Duration, StatusCode, StatusMessage, Events.Timestamp, Events.Name, Events.Attributes,
 * Links.*), so one SQL serves the collector's ClickHouse and the store. Columns that would
 * be empty (TraceState, StatusMessage of an OK span, Events.* without marks, Links.*) are
 * left out: engines read their defaults. Timestamp as
 * "YYYY-MM-DD hh:mm:ss.nnnnnnnnn" UTC, Duration in ns, attribute maps of strings
 * (otel__attr_string); ServiceName and ResourceAttributes['service.name'] are the job. */
struct span_rows_part {
	char job[128];		/* the batches' job (ServiceName) */
	char date[16];		/* YYYY-MM-DD */
	struct sbuf buf;
	size_t rows;
};

struct span_rows {
	struct span_rows_part *parts;
	size_t n, rows;
};

/* Appends b's rows to out (zeroed before the first call: several batches go in the same
 * parts, one per job and date). Returns 0 or -ENOMEM (out freed). */
int span_rows__encode(const struct otel_batch *b, struct span_rows *out);
void span_rows__free(struct span_rows *r);

#endif
