/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OTEL_SPANS_H
#define __CIRRON_OTEL_SPANS_H

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A spool batch as OpenTelemetry spans: what --output otlp and the store's span rows send.
 * Only spans final in this batch: closed ones (ok, incomplete: a batch carries a span closed
 * once, in the batch after its close) and, in a session's final batch, those left open (a
 * detach), ended at the batch's time and marked cirron.status=open. So each span is sent
 * once, whichever batch a shipper reads first.
 * Ids: TraceId is a 128-bit hash of the session id (one trace per session, i.e. per rank and
 * observation; the job is a resource attribute), SpanId the spool's span id as 8 big-endian
 * bytes, ParentSpanId its parent's (none for cirron.session): the spool, OTLP and the store
 * name a span the same way, and a batch sent again names the same spans. */

enum otel_status { OTEL_STATUS_UNSET = 0, OTEL_STATUS_OK = 1, OTEL_STATUS_ERROR = 2 };

struct otel_resource {
	const char *job, *job_source, *host, *session, *role;	/* in the batch's JSON */
	long pid, rank, local_rank, world_size;
};

struct otel_span {
	uint8_t trace_id[16], span_id[8], parent_id[8];
	bool has_parent;
	const char *name;
	long index;			/* -1: none */
	uint64_t start_ns, end_ns;	/* wall clock, Unix ns */
	enum otel_status status;
	const char *state;		/* the spool's status: ok, incomplete, open */
	const cJSON *attrs, *marks;	/* the spool's object and array */
};

struct otel_batch {
	struct otel_resource res;
	struct otel_span *spans;
	size_t n;
	uint8_t trace_id[16];
};

/* b points into batch, which must outlive it. Returns 0, or -EINVAL with why (not a spool
 * batch). */
int otel_batch__from_json(struct otel_batch *b, const cJSON *batch, char *why, size_t size);
void otel_batch__free(struct otel_batch *b);
/* The TraceId of a session id. */
void otel__trace_id(const char *session_id, uint8_t out[16]);
/* Lowercase hex of n bytes into out (2n + 1 bytes). */
void otel__hex(const uint8_t *b, size_t n, char *out);
/* An attribute value as a string map holds it: strings as they are, numbers as the
 * shortest digits that read back (integers without a point), true/false, objects and arrays
 * as JSON text. Caller frees; NULL for null values (left out). */
char *otel__attr_string(const cJSON *v);
/* "2026-12-02 10:11:12.123456789" (UTC), as ClickHouse prints a DateTime64(9); 30 bytes. */
void otel__timestamp(uint64_t ns, char *out, size_t size);

#endif
