// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Spans as otel_traces rows (span_rows.h).
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ship/span_rows.h"

static const char *const status_names[] = {
	[OTEL_STATUS_UNSET] = "STATUS_CODE_UNSET",
	[OTEL_STATUS_OK] = "STATUS_CODE_OK",
	[OTEL_STATUS_ERROR] = "STATUS_CODE_ERROR",
};

static void kv(struct out_buf *b, bool *first, const char *k, const char *v)
{
	if (!v)
		return;
	if (!*first)
		out_buf__put(b, ",", 1);
	*first = false;
	out_buf__json_str(b, k);
	out_buf__put(b, ":", 1);
	out_buf__json_str(b, v);
}

static void kv_long(struct out_buf *b, bool *first, const char *k, long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%ld", v);
	kv(b, first, k, num);
}

/* The resource part, the same on every row of a batch: made once. */
static void resource(struct out_buf *b, const struct otel_resource *r)
{
	bool first = true;

	out_buf__puts(b, "\"ServiceName\":");
	out_buf__json_str(b, r->job);
	out_buf__puts(b, ",\"ResourceAttributes\":{");
	kv(b, &first, "service.name", r->job);
	kv(b, &first, "host.name", r->host);
	kv_long(b, &first, "process.pid", r->pid);
	kv(b, &first, "cirron.job", r->job);
	kv(b, &first, "cirron.job_source", r->job_source);
	kv_long(b, &first, "cirron.rank", r->rank);
	kv_long(b, &first, "cirron.local_rank", r->local_rank);
	kv_long(b, &first, "cirron.world_size", r->world_size);
	kv(b, &first, "cirron.session", r->session);
	kv(b, &first, "cirron.role", r->role);
	out_buf__puts(b, "},\"ScopeName\":\"cirron-probe\",\"ScopeVersion\":\"" CIRRON_VERSION "\"");
}

static void attrs_map(struct out_buf *b, const cJSON *attrs, bool *first)
{
	const cJSON *a;

	cJSON_ArrayForEach(a, attrs) {
		char *v = a->string ? otel__attr_string(a) : NULL;

		kv(b, first, a->string, v);
		free(v);
	}
}

/* Events.*: left out when there are none (most spans), as TraceState, StatusMessage and
 * Links.* are when empty: engines read a missing column as its default, and a row is a
 * third shorter to parse. */
static void events(struct out_buf *b, const cJSON *marks)
{
	const cJSON *m, *f;
	char ts[40];
	bool first;

	if (!cJSON_GetArraySize(marks))
		return;
	out_buf__puts(b, ",\"Events.Timestamp\":[");
	first = true;
	cJSON_ArrayForEach(m, marks) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "ts_ns");
		uint64_t ns = cJSON_IsRaw(t) && t->valuestring ? strtoull(t->valuestring, NULL, 10) :
			      cJSON_IsNumber(t) ? (uint64_t)t->valuedouble : 0;

		otel__timestamp(ns, ts, sizeof(ts));
		out_buf__puts(b, first ? "" : ",");
		out_buf__json_str(b, ts);
		first = false;
	}
	out_buf__puts(b, "],\"Events.Name\":[");
	first = true;
	cJSON_ArrayForEach(m, marks) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "name");

		out_buf__puts(b, first ? "" : ",");
		out_buf__json_str(b, cJSON_IsString(n) ? n->valuestring : "");
		first = false;
	}
	out_buf__puts(b, "],\"Events.Attributes\":[");
	first = true;
	cJSON_ArrayForEach(m, marks) {
		bool f1 = true;

		out_buf__puts(b, first ? "{" : ",{");
		cJSON_ArrayForEach(f, m) {
			char *v;

			if (!f->string || !strcmp(f->string, "name") || !strcmp(f->string, "ts_ns"))
				continue;
			v = otel__attr_string(f);
			kv(b, &f1, f->string, v);
			free(v);
		}
		out_buf__put(b, "}", 1);
		first = false;
	}
	out_buf__put(b, "]", 1);
}

static void row(struct out_buf *b, const struct otel_span *s, const struct out_buf *res)
{
	char ts[40], hex[40];
	bool first = true;

	otel__timestamp(s->start_ns, ts, sizeof(ts));
	out_buf__puts(b, "{\"Timestamp\":");
	out_buf__json_str(b, ts);
	otel__hex(s->trace_id, 16, hex);
	out_buf__printf(b, ",\"TraceId\":\"%s\"", hex);
	otel__hex(s->span_id, 8, hex);
	out_buf__printf(b, ",\"SpanId\":\"%s\"", hex);
	if (s->has_parent)
		otel__hex(s->parent_id, 8, hex);
	else
		*hex = 0;
	out_buf__printf(b, ",\"ParentSpanId\":\"%s\",\"SpanName\":", hex);
	out_buf__json_str(b, s->name);
	out_buf__puts(b, ",\"SpanKind\":\"SPAN_KIND_INTERNAL\",");
	out_buf__put(b, res->data, res->len);
	out_buf__puts(b, ",\"SpanAttributes\":{");
	attrs_map(b, s->attrs, &first);
	if (s->index >= 0)
		kv_long(b, &first, "cirron.index", s->index);
	kv(b, &first, "cirron.status", s->state);
	out_buf__printf(b, "},\"Duration\":%" PRIu64 ",\"StatusCode\":\"%s\"",
			s->end_ns - s->start_ns, status_names[s->status]);
	if (s->status != OTEL_STATUS_OK) {
		out_buf__puts(b, ",\"StatusMessage\":");
		out_buf__json_str(b, s->state);
	}
	events(b, s->marks);
	out_buf__puts(b, "}\n");
}

static struct span_rows_part *part_of(struct span_rows *r, const char *job, const char date[11])
{
	struct span_rows_part *p;

	for (size_t i = 0; i < r->n; i++)
		if (!strcmp(r->parts[i].date, date) && !strcmp(r->parts[i].job, job))
			return &r->parts[i];
	p = reallocarray(r->parts, r->n + 1, sizeof(*p));
	if (!p)
		return NULL;
	r->parts = p;
	p = &r->parts[r->n++];
	memset(p, 0, sizeof(*p));
	memcpy(p->date, date, 11);
	snprintf(p->job, sizeof(p->job), "%s", job);
	return p;
}

int span_rows__encode(const struct otel_batch *b, struct span_rows *out)
{
	struct out_buf res = { 0 };
	int err = 0;

	resource(&res, &b->res);
	for (size_t i = 0; i < b->n && !err; i++) {
		char ts[40];
		struct span_rows_part *p;

		otel__timestamp(b->spans[i].start_ns, ts, sizeof(ts));
		ts[10] = 0;	/* the date */
		p = part_of(out, b->res.job, ts);
		if (!p) {
			err = -ENOMEM;
			break;
		}
		row(&p->buf, &b->spans[i], &res);
		p->rows++;
		out->rows++;
		if (p->buf.oom)
			err = -ENOMEM;
	}
	if (res.oom)
		err = -ENOMEM;
	out_buf__free(&res);
	if (err)
		span_rows__free(out);
	return err;
}

void span_rows__free(struct span_rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		out_buf__free(&r->parts[i].buf);
	free(r->parts);
	memset(r, 0, sizeof(*r));
}
