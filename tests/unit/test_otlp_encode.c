// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// ship/otlp_pb.c and ship/otlp_json.c: an ExportTraceServiceRequest, walked field by field
// here (protobuf's wire format) and read as JSON; the receivers' own decoding of it is
// tests/e2e/test_fleet.py's (MLflow, opentelemetry-proto).
#include <string.h>
#include "ship/otlp_encode.h"
#include "unit.h"

static const char *const batch =
	"{\"session_id\":\"h-1-2\",\"pid\":9,\"rank\":1,\"local_rank\":0,\"world_size\":2,"
	"\"host\":\"h\",\"job\":\"j\",\"job_source\":\"--job\",\"role\":\"rank\",\"seq\":0,"
	"\"written_ns\":300,\"final\":false,\"spans\":["
	"{\"span_id\":3,\"parent_id\":2,\"name\":\"step\",\"index\":4,\"start_ns\":100,"
	"\"end_ns\":250,\"status\":\"ok\",\"attrs\":{\"n\":5,\"x\":1.5,\"b\":false,"
	"\"s\":\"t\",\"o\":{\"k\":1},\"big\":18446744073709551615},"
	"\"marks\":[{\"name\":\"loss\",\"ts_ns\":120,\"value\":0.5}]}],\"health\":{}}";

struct pb {
	const uint8_t *p, *end;
};

static bool varint(struct pb *r, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	while (r->p < r->end && shift < 64) {
		uint8_t c = *r->p++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		shift += 7;
		if (!(c & 0x80))
			return true;
	}
	return false;
}

/* The next field: number, wire type, and its value or bytes. */
static bool field(struct pb *r, unsigned int *num, unsigned int *wt, uint64_t *v,
		  struct pb *sub)
{
	uint64_t key;

	if (r->p >= r->end || !varint(r, &key))
		return false;
	*num = (unsigned int)(key >> 3);
	*wt = (unsigned int)(key & 7);
	if (*wt == 0)
		return varint(r, v);
	if (*wt == 1) {
		if (r->end - r->p < 8)
			return false;
		memcpy(v, r->p, 8);
		r->p += 8;
		return true;
	}
	if (*wt == 2 && varint(r, v) && (uint64_t)(r->end - r->p) >= *v) {
		*sub = (struct pb){ r->p, r->p + *v };
		r->p += *v;
		return true;
	}
	return false;
}

/* The first field num (of wire type LEN) of a message. */
static bool find(struct pb msg, unsigned int want, struct pb *out)
{
	unsigned int num, wt;
	uint64_t v;
	struct pb sub;

	while (field(&msg, &num, &wt, &v, &sub))
		if (num == want && wt == 2) {
			*out = sub;
			return true;
		}
	return false;
}

static void protobuf(void)
{
	cJSON *j = cJSON_Parse(batch);
	struct otel_batch b;
	struct sbuf out = { 0 };
	struct pb req, rs, ss, span, st, f;
	unsigned int num, wt, attrs = 0, events = 0;
	uint64_t v, start = 0, end = 0, kind = 0;
	char why[64];

	if (!ASSERT_OK(otel_batch__from_json(&b, j, why, sizeof(why)), "batch") ||
	    !ASSERT_OK(otlp__encode_protobuf(&b, 1, &out), "encode"))
		goto out;
	req = (struct pb){ (uint8_t *)out.p, (uint8_t *)out.p + out.n };
	ASSERT_TRUE(find(req, 1, &rs), "resource_spans");
	ASSERT_TRUE(find(rs, 2, &ss), "scope_spans");
	ASSERT_TRUE(find(ss, 2, &span), "a span");
	while (field(&span, &num, &wt, &v, &f)) {
		if (num == 1)
			ASSERT_EQ(f.end - f.p, 16, "trace_id: 16 bytes");
		if (num == 2)
			ASSERT_TRUE(f.end - f.p == 8 && f.p[7] == 3, "span_id: 3, big-endian");
		if (num == 4)
			ASSERT_TRUE(f.end - f.p == 8 && f.p[7] == 2, "parent_span_id: 2");
		if (num == 5)
			ASSERT_TRUE(f.end - f.p == 4 && !memcmp(f.p, "step", 4), "name");
		kind = num == 6 ? v : kind;
		start = num == 7 ? v : start;
		end = num == 8 ? v : end;
		attrs += num == 9;
		events += num == 11;
		if (num == 15) {
			st = f;
			ASSERT_TRUE(field(&st, &num, &wt, &v, &f) && num == 3 && v == 1,
				    "status code OK");
		}
	}
	ASSERT_EQ(kind, 1, "SPAN_KIND_INTERNAL");
	ASSERT_EQ(start, 100, "start, fixed64");
	ASSERT_EQ(end, 250, "end");
	ASSERT_EQ(attrs, 8, "6 attributes, cirron.index, cirron.status");
	ASSERT_EQ(events, 1, "the mark");
out:
	sbuf__free(&out);
	otel_batch__free(&b);
	cJSON_Delete(j);
}

static void json(void)
{
	cJSON *j = cJSON_Parse(batch), *req = NULL, *sp, *a;
	struct otel_batch b;
	struct sbuf out = { 0 };
	char why[64];

	if (!ASSERT_OK(otel_batch__from_json(&b, j, why, sizeof(why)), "batch") ||
	    !ASSERT_OK(otlp__encode_json(&b, 1, &out), "encode"))
		goto out;
	req = cJSON_Parse(out.p);
	sp = cJSON_GetArrayItem(cJSON_GetObjectItem(cJSON_GetArrayItem(cJSON_GetObjectItem(
		cJSON_GetArrayItem(cJSON_GetObjectItem(req, "resourceSpans"), 0), "scopeSpans"), 0),
		"spans"), 0);
	if (!ASSERT_OK_PTR(sp, "a span"))
		goto out;
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(sp, "spanId")), "0000000000000003",
		     "ids in hex");
	ASSERT_EQ(strlen(cJSON_GetStringValue(cJSON_GetObjectItem(sp, "traceId"))), 32, "trace");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(sp, "startTimeUnixNano")), "100",
		     "64-bit integers as strings");
	cJSON_ArrayForEach(a, cJSON_GetObjectItem(sp, "attributes")) {
		const char *k = cJSON_GetStringValue(cJSON_GetObjectItem(a, "key"));
		cJSON *v = cJSON_GetObjectItem(a, "value");

		if (!strcmp(k, "n"))
			ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(v, "intValue")), "5", k);
		if (!strcmp(k, "x"))
			ASSERT_DBL_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(v, "doubleValue")), 1.5,
				      k);
		if (!strcmp(k, "b"))
			ASSERT_TRUE(cJSON_IsFalse(cJSON_GetObjectItem(v, "boolValue")), k);
		if (!strcmp(k, "o"))
			ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(v, "stringValue")),
				     "{\"k\":1}", k);
		if (!strcmp(k, "big"))	/* past int64: the digits, as a string */
			ASSERT_OK_PTR(cJSON_GetObjectItem(v, "stringValue") ?:
				      cJSON_GetObjectItem(v, "doubleValue"), k);
	}
	ASSERT_DBL_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(sp, "status"),
						"code")), 1, "status");
out:
	cJSON_Delete(req);
	sbuf__free(&out);
	otel_batch__free(&b);
	cJSON_Delete(j);
}

int main(void)
{
	RUN_TEST(protobuf);
	RUN_TEST(json);
	return unit__done();
}
