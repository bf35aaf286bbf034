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

static void kv(struct sbuf *b, bool *first, const char *k, const char *v)
{
	if (!v)
		return;
	if (!*first)
		sbuf__add(b, ",", 1);
	*first = false;
	sbuf__json_str(b, k);
	sbuf__add(b, ":", 1);
	sbuf__json_str(b, v);
}

static void kv_long(struct sbuf *b, bool *first, const char *k, long v)
{
	char num[24];

	snprintf(num, sizeof(num), "%ld", v);
	kv(b, first, k, num);
}

/* The resource part, the same on every row of a batch: made once. */
static void resource(struct sbuf *b, const struct otel_resource *r)
{
	bool first = true;

	sbuf__puts(b, "\"ServiceName\":");
	sbuf__json_str(b, r->job);
	sbuf__puts(b, ",\"ResourceAttributes\":{");
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
	sbuf__puts(b, "},\"ScopeName\":\"cirron-probe\",\"ScopeVersion\":\"" CIRRON_VERSION "\"");
}

static void attrs_map(struct sbuf *b, const cJSON *attrs, bool *first)
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
static void events(struct sbuf *b, const cJSON *marks)
{
	const cJSON *m, *f;
	char ts[40];
	bool first;

	if (!cJSON_GetArraySize(marks))
		return;
	sbuf__puts(b, ",\"Events.Timestamp\":[");
	first = true;
	cJSON_ArrayForEach(m, marks) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(m, "ts_ns");
		uint64_t ns = cJSON_IsRaw(t) && t->valuestring ? strtoull(t->valuestring, NULL, 10) :
			      cJSON_IsNumber(t) ? (uint64_t)t->valuedouble : 0;

		otel__timestamp(ns, ts, sizeof(ts));
		sbuf__puts(b, first ? "" : ",");
		sbuf__json_str(b, ts);
		first = false;
	}
	sbuf__puts(b, "],\"Events.Name\":[");
	first = true;
	cJSON_ArrayForEach(m, marks) {
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(m, "name");

		sbuf__puts(b, first ? "" : ",");
		sbuf__json_str(b, cJSON_IsString(n) ? n->valuestring : "");
		first = false;
	}
	sbuf__puts(b, "],\"Events.Attributes\":[");
	first = true;
	cJSON_ArrayForEach(m, marks) {
		bool f1 = true;

		sbuf__puts(b, first ? "{" : ",{");
		cJSON_ArrayForEach(f, m) {
			char *v;

			if (!f->string || !strcmp(f->string, "name") || !strcmp(f->string, "ts_ns"))
				continue;
			v = otel__attr_string(f);
			kv(b, &f1, f->string, v);
			free(v);
		}
		sbuf__add(b, "}", 1);
		first = false;
	}
	sbuf__add(b, "]", 1);
}

static void row(struct sbuf *b, const struct otel_span *s, const struct sbuf *res)
{
	char ts[40], hex[40];
	bool first = true;

	otel__timestamp(s->start_ns, ts, sizeof(ts));
	sbuf__puts(b, "{\"Timestamp\":");
	sbuf__json_str(b, ts);
	otel__hex(s->trace_id, 16, hex);
	sbuf__printf(b, ",\"TraceId\":\"%s\"", hex);
	otel__hex(s->span_id, 8, hex);
	sbuf__printf(b, ",\"SpanId\":\"%s\"", hex);
	if (s->has_parent)
		otel__hex(s->parent_id, 8, hex);
	else
		*hex = 0;
	sbuf__printf(b, ",\"ParentSpanId\":\"%s\",\"SpanName\":", hex);
	sbuf__json_str(b, s->name);
	sbuf__puts(b, ",\"SpanKind\":\"SPAN_KIND_INTERNAL\",");
	sbuf__add(b, res->p, res->n);
	sbuf__puts(b, ",\"SpanAttributes\":{");
	attrs_map(b, s->attrs, &first);
	if (s->index >= 0)
		kv_long(b, &first, "cirron.index", s->index);
	kv(b, &first, "cirron.status", s->state);
	sbuf__printf(b, "},\"Duration\":%" PRIu64 ",\"StatusCode\":\"%s\"",
			s->end_ns - s->start_ns, status_names[s->status]);
	if (s->status != OTEL_STATUS_OK) {
		sbuf__puts(b, ",\"StatusMessage\":");
		sbuf__json_str(b, s->state);
	}
	events(b, s->marks);
	sbuf__puts(b, "}\n");
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
	struct sbuf res = { 0 };
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
	sbuf__free(&res);
	if (err)
		span_rows__free(out);
	return err;
}

void span_rows__free(struct span_rows *r)
{
	for (size_t i = 0; i < r->n; i++)
		sbuf__free(&r->parts[i].buf);
	free(r->parts);
	memset(r, 0, sizeof(*r));
}
