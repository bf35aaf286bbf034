// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// OTLP/JSON (otlp_encode.h): the protobuf messages in the OTLP spec's JSON mapping (ids in
// hex, enums as numbers, 64-bit integers as decimal strings).
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ship/otlp_encode.h"

static void key(struct sbuf *b, bool *first, const char *k)
{
	sbuf__puts(b, *first ? "{\"key\":" : ",{\"key\":");
	*first = false;
	sbuf__json_str(b, k);
}

static void kv_str(struct sbuf *b, bool *first, const char *k, const char *v)
{
	if (!v)
		return;
	key(b, first, k);
	sbuf__puts(b, ",\"value\":{\"stringValue\":");
	sbuf__json_str(b, v);
	sbuf__puts(b, "}}");
}

static void kv_int(struct sbuf *b, bool *first, const char *k, int64_t v)
{
	key(b, first, k);
	sbuf__printf(b, ",\"value\":{\"intValue\":\"%" PRId64 "\"}}", v);
}

static void kv_json(struct sbuf *b, bool *first, const char *k, const cJSON *v)
{
	char *s;

	if (cJSON_IsNull(v) || cJSON_IsInvalid(v) || !k)
		return;
	if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
	    fabs(v->valuedouble) < 9e15) {
		kv_int(b, first, k, (int64_t)v->valuedouble);
	} else if (cJSON_IsBool(v)) {
		key(b, first, k);
		sbuf__printf(b, ",\"value\":{\"boolValue\":%s}}", cJSON_IsTrue(v) ? "true" : "false");
	} else if (cJSON_IsNumber(v) && isfinite(v->valuedouble)) {
		s = otel__attr_string(v);
		key(b, first, k);
		sbuf__printf(b, ",\"value\":{\"doubleValue\":%s}}", s ? s : "0");
		free(s);
	} else if (cJSON_IsRaw(v) && v->valuestring &&
		   strspn(v->valuestring, "0123456789") == strlen(v->valuestring) &&
		   strtoull(v->valuestring, NULL, 10) < (1ull << 63)) {
		key(b, first, k);
		sbuf__printf(b, ",\"value\":{\"intValue\":\"%s\"}}", v->valuestring);
	} else {
		s = otel__attr_string(v);
		kv_str(b, first, k, s ? s : "");
		free(s);
	}
}

static void resource(struct sbuf *b, const struct otel_resource *r)
{
	bool first = true;

	sbuf__puts(b, "{\"resource\":{\"attributes\":[");
	kv_str(b, &first, "service.name", r->job);
	kv_str(b, &first, "host.name", r->host);
	kv_int(b, &first, "process.pid", r->pid);
	kv_str(b, &first, "cirron.job", r->job);
	kv_str(b, &first, "cirron.job_source", r->job_source);
	kv_int(b, &first, "cirron.rank", r->rank);
	kv_int(b, &first, "cirron.local_rank", r->local_rank);
	kv_int(b, &first, "cirron.world_size", r->world_size);
	kv_str(b, &first, "cirron.session", r->session);
	kv_str(b, &first, "cirron.role", r->role);
	sbuf__puts(b, "]}");
}

static void events(struct sbuf *b, const cJSON *marks)
{
	const cJSON *m, *f;
	bool first = true;

	sbuf__puts(b, ",\"events\":[");
	cJSON_ArrayForEach(m, marks) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "ts_ns");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "name");
		uint64_t ns = cJSON_IsRaw(t) && t->valuestring ? strtoull(t->valuestring, NULL, 10) :
			      cJSON_IsNumber(t) ? (uint64_t)t->valuedouble : 0;
		bool f1 = true;

		sbuf__printf(b, "%s{\"timeUnixNano\":\"%" PRIu64 "\",\"name\":", first ? "" : ",",
				ns);
		sbuf__json_str(b, cJSON_IsString(n) ? n->valuestring : "");
		sbuf__puts(b, ",\"attributes\":[");
		cJSON_ArrayForEach(f, m) {
			if (f->string && strcmp(f->string, "name") != 0 &&
			    strcmp(f->string, "ts_ns") != 0)
				kv_json(b, &f1, f->string, f);
		}
		sbuf__puts(b, "]}");
		first = false;
	}
	sbuf__puts(b, "]");
}

static void span(struct sbuf *b, const struct otel_span *s, bool first)
{
	char hex[40];
	const cJSON *a;
	bool f1 = true;

	otel__hex(s->trace_id, 16, hex);
	sbuf__printf(b, "%s{\"traceId\":\"%s\"", first ? "" : ",", hex);
	otel__hex(s->span_id, 8, hex);
	sbuf__printf(b, ",\"spanId\":\"%s\"", hex);
	if (s->has_parent) {
		otel__hex(s->parent_id, 8, hex);
		sbuf__printf(b, ",\"parentSpanId\":\"%s\"", hex);
	}
	sbuf__puts(b, ",\"name\":");
	sbuf__json_str(b, s->name);
	sbuf__printf(b, ",\"kind\":1,\"startTimeUnixNano\":\"%" PRIu64 "\","
			"\"endTimeUnixNano\":\"%" PRIu64 "\",\"attributes\":[", s->start_ns,
			s->end_ns);
	cJSON_ArrayForEach(a, s->attrs) {
		kv_json(b, &f1, a->string, a);
	}
	if (s->index >= 0)
		kv_int(b, &f1, "cirron.index", s->index);
	kv_str(b, &f1, "cirron.status", s->state);
	sbuf__puts(b, "]");
	events(b, s->marks);
	sbuf__printf(b, ",\"status\":{\"code\":%d", (int)s->status);
	if (s->status != OTEL_STATUS_OK) {
		sbuf__puts(b, ",\"message\":");
		sbuf__json_str(b, s->state);
	}
	sbuf__puts(b, "}}");
}

int otlp__encode_json(const struct otel_batch *bts, size_t n, struct sbuf *b)
{
	bool first = true;

	sbuf__puts(b, "{\"resourceSpans\":[");
	for (size_t k = 0; k < n; k++) {
		if (!bts[k].n)
			continue;
		sbuf__puts(b, first ? "" : ",");
		first = false;
		resource(b, &bts[k].res);
		sbuf__puts(b, ",\"scopeSpans\":[{\"scope\":{\"name\":\"cirron-probe\","
			      "\"version\":\"" CIRRON_VERSION "\"},\"spans\":[");
		for (size_t i = 0; i < bts[k].n; i++)
			span(b, &bts[k].spans[i], i == 0);
		sbuf__puts(b, "]}]}");
	}
	sbuf__puts(b, "]}");
	return b->oom ? -ENOMEM : 0;
}
