// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// OTLP/protobuf (otlp_encode.h), written by hand: five small message types, field numbers
// from opentelemetry-proto's trace/v1, common/v1 and resource/v1 (checked by the tests, which
// decode what is sent with the official opentelemetry-proto package). A message's length is
// known only once its fields are written: its bytes are moved up behind the length then.
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "ship/otlp_encode.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2 };

static void varint(struct sbuf *b, uint64_t v)
{
	uint8_t buf[10];
	size_t n = 0;

	do {
		buf[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			buf[n] |= 0x80;
		n++;
	} while (v);
	sbuf__add(b, (const char *)buf, n);
}

static void tag(struct sbuf *b, unsigned int field, unsigned int wt)
{
	varint(b, (uint64_t)field << 3 | wt);
}

static void field_bytes(struct sbuf *b, unsigned int field, const void *p, size_t n)
{
	tag(b, field, WT_LEN);
	varint(b, n);
	sbuf__add(b, (const char *)p, n);
}

static void field_str(struct sbuf *b, unsigned int field, const char *s)
{
	field_bytes(b, field, s, strlen(s));
}

static void field_fixed64(struct sbuf *b, unsigned int field, uint64_t v)
{
	uint8_t le[8];

	for (int i = 0; i < 8; i++)
		le[i] = (uint8_t)(v >> (8 * i));
	tag(b, field, WT_I64);
	sbuf__add(b, (const char *)le, 8);
}

static void field_varint(struct sbuf *b, unsigned int field, uint64_t v)
{
	tag(b, field, WT_VARINT);
	varint(b, v);
}

/* A nested message: begin returns where its body starts; end puts the length before it. */
static size_t begin(struct sbuf *b, unsigned int field)
{
	tag(b, field, WT_LEN);
	return b->n;
}

static void end(struct sbuf *b, size_t start)
{
	uint8_t len[10];
	size_t body = b->n - start, n = 0;
	uint64_t v = body;

	do {
		len[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			len[n] |= 0x80;
		n++;
	} while (v);
	sbuf__add(b, (const char *)len, n);	/* room for it at the end ... */
	if (b->oom)
		return;
	memmove(b->p + start + n, b->p + start, body);	/* ... then moved in front */
	memcpy(b->p + start, len, n);
}

/* KeyValue { key = 1; AnyValue value = 2 } with AnyValue's string 1, bool 2, int 3,
 * double 4. */
static void kv_str(struct sbuf *b, unsigned int field, const char *k, const char *v)
{
	size_t kvs, any;

	if (!v)
		return;
	kvs = begin(b, field);
	field_str(b, 1, k);
	any = begin(b, 2);
	field_str(b, 1, v);
	end(b, any);
	end(b, kvs);
}

static void kv_int(struct sbuf *b, unsigned int field, const char *k, int64_t v)
{
	size_t kvs = begin(b, field), any;

	field_str(b, 1, k);
	any = begin(b, 2);
	field_varint(b, 3, (uint64_t)v);
	end(b, any);
	end(b, kvs);
}

static void kv_json(struct sbuf *b, unsigned int field, const char *k, const cJSON *v)
{
	size_t kvs, any;
	char *s;

	if (cJSON_IsNull(v) || cJSON_IsInvalid(v) || !k)
		return;
	if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
	    fabs(v->valuedouble) < 9e15) {
		kv_int(b, field, k, (int64_t)v->valuedouble);
		return;
	}
	kvs = begin(b, field);
	field_str(b, 1, k);
	any = begin(b, 2);
	if (cJSON_IsBool(v)) {
		field_varint(b, 2, cJSON_IsTrue(v));
	} else if (cJSON_IsNumber(v)) {
		uint64_t bits;

		memcpy(&bits, &v->valuedouble, sizeof(bits));
		field_fixed64(b, 4, bits);
	} else if (cJSON_IsRaw(v) && v->valuestring && strtoull(v->valuestring, NULL, 10) <
		   (1ull << 63) && strspn(v->valuestring, "0123456789") == strlen(v->valuestring)) {
		field_varint(b, 3, strtoull(v->valuestring, NULL, 10));
	} else {
		s = otel__attr_string(v);
		field_str(b, 1, s ? s : "");
		free(s);
	}
	end(b, any);
	end(b, kvs);
}

static void resource(struct sbuf *b, const struct otel_resource *r)
{
	size_t res = begin(b, 1);	/* ResourceSpans.resource */

	kv_str(b, 1, "service.name", r->job);
	kv_str(b, 1, "host.name", r->host);
	kv_int(b, 1, "process.pid", r->pid);
	kv_str(b, 1, "cirron.job", r->job);
	kv_str(b, 1, "cirron.job_source", r->job_source);
	kv_int(b, 1, "cirron.rank", r->rank);
	kv_int(b, 1, "cirron.local_rank", r->local_rank);
	kv_int(b, 1, "cirron.world_size", r->world_size);
	kv_str(b, 1, "cirron.session", r->session);
	kv_str(b, 1, "cirron.role", r->role);
	end(b, res);
}

static void event(struct sbuf *b, const cJSON *m)
{
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "ts_ns");
	const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "name"), *f;
	size_t ev = begin(b, 11);	/* Span.events */

	field_fixed64(b, 1, cJSON_IsRaw(t) && t->valuestring ? strtoull(t->valuestring, NULL, 10) :
			    cJSON_IsNumber(t) ? (uint64_t)t->valuedouble : 0);
	field_str(b, 2, cJSON_IsString(n) ? n->valuestring : "");
	cJSON_ArrayForEach(f, m) {
		if (f->string && strcmp(f->string, "name") != 0 && strcmp(f->string, "ts_ns") != 0)
			kv_json(b, 3, f->string, f);
	}
	end(b, ev);
}

static void span(struct sbuf *b, const struct otel_span *s)
{
	size_t sp = begin(b, 2), st;	/* ScopeSpans.spans */
	const cJSON *a, *m;

	field_bytes(b, 1, s->trace_id, 16);
	field_bytes(b, 2, s->span_id, 8);
	if (s->has_parent)
		field_bytes(b, 4, s->parent_id, 8);
	field_str(b, 5, s->name);
	field_varint(b, 6, 1);	/* SPAN_KIND_INTERNAL */
	field_fixed64(b, 7, s->start_ns);
	field_fixed64(b, 8, s->end_ns);
	cJSON_ArrayForEach(a, s->attrs) {
		kv_json(b, 9, a->string, a);
	}
	if (s->index >= 0)
		kv_int(b, 9, "cirron.index", s->index);
	kv_str(b, 9, "cirron.status", s->state);
	cJSON_ArrayForEach(m, s->marks) {
		event(b, m);
	}
	st = begin(b, 15);	/* Status { message = 2; code = 3 } */
	if (s->status != OTEL_STATUS_OK)
		field_str(b, 2, s->state);
	if (s->status != OTEL_STATUS_UNSET)
		field_varint(b, 3, s->status);
	end(b, st);
	end(b, sp);
}

int otlp__encode_protobuf(const struct otel_batch *bts, size_t n, struct sbuf *b)
{
	for (size_t k = 0; k < n; k++) {
		const struct otel_batch *bt = &bts[k];
		size_t rs, ss, scope;

		if (!bt->n)
			continue;
		rs = begin(b, 1);	/* ExportTraceServiceRequest.resource_spans */
		resource(b, &bt->res);
		ss = begin(b, 2);	/* ResourceSpans.scope_spans */
		scope = begin(b, 1);	/* InstrumentationScope { name, version } */
		field_str(b, 1, "cirron-probe");
		field_str(b, 2, CIRRON_VERSION);
		end(b, scope);
		for (size_t i = 0; i < bt->n; i++)
			span(b, &bt->spans[i]);
		end(b, ss);
		end(b, rs);
	}
	return b->oom ? -ENOMEM : 0;
}
