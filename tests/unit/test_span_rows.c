// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A spool batch as OpenTelemetry spans (ship/otel_spans.c), as otel_traces rows
// (ship/span_rows.c), and the rows back as a batch (fetch/rows_read.c).
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "fetch/rows_read.h"
#include "ship/otel_spans.h"
#include "ship/span_rows.h"
#include "unit.h"

/* A session's batch: root open, an epoch open, a step closed ok with a child closed
 * incomplete; the step's data_load (span 5) starts a second after midnight, the step before. */
static const char *batch_json(bool final)
{
	static char buf[4096];

	snprintf(buf, sizeof(buf),
		"{\"format\":\"cirron-spool/1\",\"session_id\":\"node-a-42-777\",\"pid\":42,"
		"\"rank\":3,\"local_rank\":1,\"world_size\":4,\"host\":\"node-a\",\"job\":\"j-7\","
		"\"job_source\":\"TORCHELASTIC_RUN_ID\",\"role\":\"rank\",\"seq\":2,"
		"\"written_ns\":1796256005000000000,\"final\":%s,\"spans\":["
		"{\"span_id\":1,\"parent_id\":null,\"name\":\"cirron.session\",\"index\":null,"
		"\"start_ns\":1796255990000000000,\"end_ns\":null,\"status\":\"open\",\"attrs\":"
		"{\"role\":\"rank\"},\"marks\":[]},"
		"{\"span_id\":2,\"parent_id\":1,\"name\":\"epoch\",\"index\":0,"
		"\"start_ns\":1796255995000000000,\"end_ns\":null,\"status\":\"open\",\"attrs\":{},"
		"\"marks\":[]},"
		"{\"span_id\":4,\"parent_id\":2,\"name\":\"step\",\"index\":7,"
		"\"start_ns\":1796255999500000000,\"end_ns\":1796256001500000000,"
		"\"duration_ns\":2000000000,\"status\":\"ok\",\"attrs\":{\"cuda.launches\":12,"
		"\"cuda.kernels\":{\"gemm\":10,\"other\":2},\"loss\":0.25,\"ok\":true,"
		"\"name\":\"a\\\"b\\u0001c\\u00e9\"},\"marks\":[{\"name\":\"loss\",\"ts_ns\":"
		"1796256000000000000,\"value\":0.5,\"kind\":\"point\",\"source\":\"stdout\"}]},"
		"{\"span_id\":5,\"parent_id\":4,\"name\":\"data_load\",\"index\":null,"
		"\"start_ns\":1796256001000000000,\"end_ns\":1796256001200000000,"
		"\"duration_ns\":200000000,\"status\":\"incomplete\",\"attrs\":{},\"marks\":[]}"
		"],\"health\":{}}", final ? "true" : "false");
	return buf;
}

static void spans_of_a_batch(void)
{
	cJSON *j = cJSON_Parse(batch_json(false));
	struct otel_batch b;
	uint8_t other[16];
	char why[128], hex[40];

	if (!ASSERT_OK(otel_batch__from_json(&b, j, why, sizeof(why)), "from_json"))
		goto out;
	ASSERT_EQ(b.n, 2, "closed spans only: the open ones come again");
	ASSERT_STREQ(b.spans[0].name, "step", "step");
	ASSERT_EQ(b.spans[0].status, OTEL_STATUS_OK, "ok: OK");
	ASSERT_EQ(b.spans[1].status, OTEL_STATUS_ERROR, "incomplete: ERROR");
	otel__hex(b.spans[0].span_id, 8, hex);
	ASSERT_STREQ(hex, "0000000000000004", "SpanId: the spool's id");
	otel__hex(b.spans[0].parent_id, 8, hex);
	ASSERT_STREQ(hex, "0000000000000002", "ParentSpanId");
	ASSERT_STREQ(b.res.job, "j-7", "the job");
	ASSERT_EQ(b.res.rank, 3, "rank");
	otel__trace_id("node-a-42-777", other);
	ASSERT_OK(memcmp(b.trace_id, other, 16), "TraceId: the session's, stable");
	otel__trace_id("node-a-42-777.2", other);
	ASSERT_NEQ(memcmp(b.trace_id, other, 16), 0, "another observation, another trace");
	otel_batch__free(&b);
	cJSON_Delete(j);
	j = cJSON_Parse(batch_json(true));
	if (ASSERT_OK(otel_batch__from_json(&b, j, why, sizeof(why)), "final")) {
		ASSERT_EQ(b.n, 4, "a final batch: the spans left open too");
		ASSERT_EQ(b.spans[0].status, OTEL_STATUS_UNSET, "open: UNSET");
		ASSERT_STREQ(b.spans[0].state, "open", "said so");
		ASSERT_U64_EQ(b.spans[0].end_ns, 1796256005000000000ull, "ended at the batch");
		ASSERT_FALSE(b.spans[0].has_parent, "the root has no parent");
	}
	otel_batch__free(&b);
	cJSON_Delete(j);
	j = cJSON_Parse("{\"spans\":[]}");
	ASSERT_ERR(otel_batch__from_json(&b, j, why, sizeof(why)), "not a batch");
out:
	cJSON_Delete(j);
}

static void rows(void)
{
	cJSON *j = cJSON_Parse(batch_json(false)), *row, *ra, *sa, *ev;
	struct span_rows r = { 0 };
	struct otel_batch b;
	char why[128], *nl;

	if (!ASSERT_OK(otel_batch__from_json(&b, j, why, sizeof(why)), "from_json") ||
	    !ASSERT_OK(span_rows__encode(&b, &r), "encode"))
		goto out;
	ASSERT_EQ(r.rows, 2, "two rows");
	/* the step starts the day before the data_load: two parts */
	if (!ASSERT_EQ(r.n, 2, "a part per date"))
		goto out;
	ASSERT_STREQ(r.parts[0].date, "2026-12-02", "the step's date");
	ASSERT_STREQ(r.parts[1].date, "2026-12-03", "the data_load's");
	ASSERT_STREQ(r.parts[0].job, "j-7", "the job");
	nl = strchr(r.parts[0].buf.p, '\n');
	ASSERT_TRUE(nl && nl[1] == 0, "one line, newline-terminated");
	row = cJSON_Parse(r.parts[0].buf.p);
	if (!ASSERT_OK_PTR(row, "a JSON row"))
		goto out;
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(row, "Timestamp")),
		     "2026-12-02 23:59:59.500000000", "Timestamp: UTC, ns");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(row, "SpanId")),
		     "0000000000000004", "SpanId");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(row, "ServiceName")), "j-7",
		     "ServiceName: the job");
	ASSERT_DBL_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(row, "Duration")), 2e9,
		      "Duration in ns");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(row, "StatusCode")),
		     "STATUS_CODE_OK", "the exporter's status names");
	ra = cJSON_GetObjectItem(row, "ResourceAttributes");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(ra, "cirron.rank")), "3",
		     "resource: strings");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(ra, "service.name")), "j-7",
		     "service.name");
	sa = cJSON_GetObjectItem(row, "SpanAttributes");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(sa, "cuda.launches")), "12",
		     "an integer without a point");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(sa, "loss")), "0.25", "a double");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(sa, "ok")), "true", "a boolean");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(sa, "cuda.kernels")),
		     "{\"gemm\":10,\"other\":2}", "an object as JSON text");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(sa, "name")), "a\"b\001c\xc3\xa9",
		     "escaped and back");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(sa, "cirron.index")), "7", "index");
	ev = cJSON_GetObjectItem(row, "Events.Name");
	ASSERT_EQ(cJSON_GetArraySize(ev), 1, "a mark, an event");
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetArrayItem(cJSON_GetObjectItem(row,
		     "Events.Attributes"), 0)->child), "0.5", "its value");
	cJSON_Delete(row);
out:
	span_rows__free(&r);
	otel_batch__free(&b);
	cJSON_Delete(j);
}

static void not_utf8(void)
{
	struct sbuf b = { 0 };

	sbuf__json_str(&b, "ok\xff\xc3(\xe2\x82\xac");
	ASSERT_STREQ(b.p, "\"ok\xef\xbf\xbd\xef\xbf\xbd(\xe2\x82\xac\"",
		     "bytes that are no UTF-8 as U+FFFD, the rest kept");
	sbuf__free(&b);
}

/* Rows written to a spool directory come back as one batch per session. */
static void rows_back(void)
{
	cJSON *j = cJSON_Parse(batch_json(false)), *back = NULL;
	struct span_rows r = { 0 };
	struct otel_batch b;
	char dir[256], path[512], why[128], text[8192];
	size_t skipped = 0;
	ssize_t n;
	int fd;

	if (!unit__mkdtemp(dir, sizeof(dir)) ||
	    !ASSERT_OK(otel_batch__from_json(&b, j, why, sizeof(why)), "from_json") ||
	    !ASSERT_OK(span_rows__encode(&b, &r), "encode"))
		goto out;
	snprintf(path, sizeof(path), "%s/spool", dir);
	mkdir(path, 0700);
	for (size_t i = 0; i < r.n; i++) {
		snprintf(path, sizeof(path), "%s/spool/part%zu.ndjson", dir, i);
		fd = open(path, O_WRONLY | O_CREAT, 0600);
		ASSERT_EQ(write(fd, r.parts[i].buf.p, r.parts[i].buf.n),
			  (ssize_t)r.parts[i].buf.n, "write");
		close(fd);
	}
	ASSERT_OK(rows_read__convert(dir, &skipped), "convert");
	ASSERT_EQ(skipped, 0, "nothing skipped");
	snprintf(path, sizeof(path), "%s/spool/node-a-42-777.00000000.json", dir);
	fd = open(path, O_RDONLY);
	n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (!ASSERT_GT(n, 0, "a batch of the session"))
		goto out;
	text[n] = 0;
	back = cJSON_Parse(text);
	ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(back, "job")), "j-7", "its job");
	ASSERT_FALSE(cJSON_IsTrue(cJSON_GetObjectItem(back, "final")), "no root row: not final");
	/* a made-up open root, then the two spans */
	ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(back, "spans")), 3, "root + 2");
	{
		cJSON *step = cJSON_GetArrayItem(cJSON_GetObjectItem(back, "spans"), 1);
		cJSON *attrs = cJSON_GetObjectItem(step, "attrs");

		ASSERT_STREQ(cJSON_GetStringValue(cJSON_GetObjectItem(step, "name")), "step", "name");
		ASSERT_DBL_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(step, "index")), 7, "index");
		ASSERT_DBL_EQ(cJSON_GetNumberValue(cJSON_GetObjectItem(attrs, "cuda.launches")), 12,
			      "typed again");
		ASSERT_TRUE(cJSON_IsObject(cJSON_GetObjectItem(attrs, "cuda.kernels")), "object");
		ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(step, "marks")), 1, "the mark");
	}
out:
	cJSON_Delete(back);
	span_rows__free(&r);
	otel_batch__free(&b);
	cJSON_Delete(j);
	unit__rm_rf(dir);
}

int main(void)
{
	RUN_TEST(spans_of_a_batch);
	RUN_TEST(rows);
	RUN_TEST(not_utf8);
	RUN_TEST(rows_back);
	return unit__done();
}
