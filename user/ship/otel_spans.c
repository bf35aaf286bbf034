// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A spool batch as OpenTelemetry spans (otel_spans.h): which spans, their ids and status.
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "ship/otel_spans.h"

/* An unsigned integer of the spool (raw digits or a number), else def. */
static uint64_t get_u64(const cJSON *o, const char *key, uint64_t def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (cJSON_IsRaw(v) && v->valuestring)
		return strtoull(v->valuestring, NULL, 10);
	if (cJSON_IsNumber(v) && v->valuedouble >= 0)
		return (uint64_t)v->valuedouble;
	return def;
}

static long get_long(const cJSON *o, const char *key, long def)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsNumber(v) ? (long)v->valuedouble : def;
}

static const char *get_str(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) && v->valuestring ? v->valuestring : NULL;
}

/* FNV-1a, then a murmur3 finalizer: well spread bits from a short string. */
static uint64_t hash64(const char *s, uint64_t seed)
{
	uint64_t h = 0xcbf29ce484222325ull ^ seed;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 0x100000001b3ull;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdull;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ull;
	h ^= h >> 33;
	return h;
}

void otel__trace_id(const char *session_id, uint8_t out[16])
{
	uint64_t a = hash64(session_id, 0), b = hash64(session_id, 0x9e3779b97f4a7c15ull);

	for (int i = 0; i < 8; i++) {
		out[i] = (uint8_t)(a >> (56 - 8 * i));
		out[8 + i] = (uint8_t)(b >> (56 - 8 * i));
	}
	if (!a && !b)	/* all-zero is no TraceId */
		out[15] = 1;
}

void otel__hex(const uint8_t *b, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = 0;
}

static void span_id(uint64_t id, uint8_t out[8])
{
	for (int i = 0; i < 8; i++)
		out[i] = (uint8_t)(id >> (56 - 8 * i));
}

char *otel__attr_string(const cJSON *v)
{
	char buf[64];

	if (cJSON_IsString(v))
		return strdup(v->valuestring ? v->valuestring : "");
	if (cJSON_IsRaw(v))
		return strdup(v->valuestring ? v->valuestring : "");
	if (cJSON_IsBool(v))
		return strdup(cJSON_IsTrue(v) ? "true" : "false");
	if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;

		if (d == floor(d) && fabs(d) < 9e15) {
			snprintf(buf, sizeof(buf), "%" PRId64, (int64_t)d);
		} else {
			for (int prec = 15; prec <= 17; prec++) {
				snprintf(buf, sizeof(buf), "%.*g", prec, d);
				if (strtod(buf, NULL) == d)
					break;
			}
		}
		return strdup(buf);
	}
	if (cJSON_IsNull(v) || cJSON_IsInvalid(v))
		return NULL;
	return cJSON_PrintUnformatted(v);	/* objects, arrays */
}

void otel__timestamp(uint64_t ns, char *out, size_t size)
{
	time_t s = (time_t)(ns / 1000000000ull);
	struct tm tm;
	char date[24];

	gmtime_r(&s, &tm);
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(out, size, "%s.%09" PRIu64, date, (uint64_t)(ns % 1000000000ull));
}

int otel_batch__from_json(struct otel_batch *b, const cJSON *batch, char *why, size_t size)
{
	const cJSON *spans = cJSON_GetObjectItemCaseSensitive(batch, "spans"), *sp;
	const cJSON *fin = cJSON_GetObjectItemCaseSensitive(batch, "final");
	bool final = cJSON_IsTrue(fin);
	uint64_t written = get_u64(batch, "written_ns", 0);

	memset(b, 0, sizeof(*b));
	b->res.session = get_str(batch, "session_id");
	b->res.host = get_str(batch, "host");
	if (!b->res.session || !b->res.host || !cJSON_IsArray(spans)) {
		snprintf(why, size, "not a spool batch (no session_id, host or spans)");
		return -EINVAL;
	}
	b->res.job = get_str(batch, "job");
	b->res.job_source = get_str(batch, "job_source");
	b->res.role = get_str(batch, "role");
	if (!b->res.job) {	/* a batch of an older writer: the session is its own job */
		b->res.job = b->res.session;
		b->res.job_source = "session";
	}
	b->res.pid = get_long(batch, "pid", 0);
	b->res.rank = get_long(batch, "rank", 0);
	b->res.local_rank = get_long(batch, "local_rank", 0);
	b->res.world_size = get_long(batch, "world_size", 1);
	otel__trace_id(b->res.session, b->trace_id);
	b->spans = calloc((size_t)cJSON_GetArraySize(spans) + 1, sizeof(*b->spans));
	if (!b->spans) {
		snprintf(why, size, "out of memory");
		return -ENOMEM;
	}
	cJSON_ArrayForEach(sp, spans) {
		const char *state = get_str(sp, "status"), *name = get_str(sp, "name");
		uint64_t id = get_u64(sp, "span_id", 0), parent = get_u64(sp, "parent_id", 0);
		struct otel_span *o = &b->spans[b->n];

		if (!state || !name || !id)
			continue;
		if (!strcmp(state, "open") && !final)
			continue;	/* it comes again, closed or in the final batch */
		memcpy(o->trace_id, b->trace_id, sizeof(o->trace_id));
		span_id(id, o->span_id);
		o->has_parent = parent != 0;
		if (parent)
			span_id(parent, o->parent_id);
		o->name = name;
		o->index = get_long(sp, "index", -1);
		o->start_ns = get_u64(sp, "start_ns", 0);
		o->end_ns = get_u64(sp, "end_ns", 0);
		if (!strcmp(state, "open") || o->end_ns < o->start_ns)
			o->end_ns = written > o->start_ns ? written : o->start_ns;
		o->state = state;
		o->status = !strcmp(state, "ok") ? OTEL_STATUS_OK :
			    !strcmp(state, "incomplete") ? OTEL_STATUS_ERROR : OTEL_STATUS_UNSET;
		o->attrs = cJSON_GetObjectItemCaseSensitive(sp, "attrs");
		o->marks = cJSON_GetObjectItemCaseSensitive(sp, "marks");
		b->n++;
	}
	return 0;
}

void otel_batch__free(struct otel_batch *b)
{
	free(b->spans);
	b->spans = NULL;
	b->n = 0;
}
