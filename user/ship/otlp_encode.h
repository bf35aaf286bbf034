/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OTLP_ENCODE_H
#define __CIRRON_OTLP_ENCODE_H

#include "common/sbuf.h"
#include "ship/otel_spans.h"

/* Batches' spans as one OTLP ExportTraceServiceRequest (opentelemetry-proto
 * collector/trace/v1): one ResourceSpans per batch (service.name = the job, host.name, process.pid,
 * cirron.job, cirron.job_source, cirron.rank, cirron.local_rank, cirron.world_size,
 * cirron.session, cirron.role), one ScopeSpans (scope cirron-probe), the spans with the ids
 * of otel_spans.h, kind INTERNAL, wall-clock Unix ns, the spool's attributes (strings,
 * booleans, integers, doubles; objects and arrays as JSON text) plus cirron.index and
 * cirron.status, marks as events, status OK (ok), ERROR (incomplete) or UNSET (open).
 * Returns 0 or -ENOMEM. */
int otlp__encode_protobuf(const struct otel_batch *bts, size_t n, struct sbuf *b);
/* The same in OTLP/JSON: lowerCamelCase fields, ids in hex, 64-bit integers as strings. */
int otlp__encode_json(const struct otel_batch *bts, size_t n, struct sbuf *b);

#endif
