// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What the long-job views compute in bounded memory: percentiles (exact, then within 0.05%),
// a chart's series downsampled over the whole job, an epoch's summary line, and a span's JSON
// as cJSON prints it.
#include <math.h>
#include "read/batch_json.h"
#include "trace/downsample.h"
#include "trace/export.h"
#include "trace/pctl.h"
#include "trace/step_sum.h"
#include "unit.h"

static int cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Exact while the values fit; past PCTL_EXACT_MAX, each percentile within 0.05% of the true
 * one (nearest rank), min and max exact. */
static void percentiles(void)
{
	enum { N = 3 * PCTL_EXACT_MAX };
	uint64_t *v = malloc(N * sizeof(*v)), x = 88172645463325252ull;
	struct pctl p = {};

	if (!ASSERT_OK_PTR(v, "malloc"))
		return;
	for (size_t i = 0; i < N; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;	/* xorshift: spread over 1us..10s */
		v[i] = 1000 + x % 10000000000ull / (1 + x % 1000);
		ASSERT_OK(pctl__add(&p, v[i]), "add");
		if (i == PCTL_EXACT_MAX - 1) {
			uint64_t *s = malloc(PCTL_EXACT_MAX * sizeof(*s));

			memcpy(s, v, PCTL_EXACT_MAX * sizeof(*s));
			qsort(s, PCTL_EXACT_MAX, sizeof(*s), cmp);
			ASSERT_FALSE(pctl__approx(&p), "exact so far");
			ASSERT_U64_EQ(pctl__pct(&p, 50), s[PCTL_EXACT_MAX / 2 - 1], "p50 exact");
			ASSERT_U64_EQ(pctl__median(&p), s[PCTL_EXACT_MAX / 2], "upper median exact");
			ASSERT_U64_EQ(pctl__pct(&p, 99), s[(size_t)(0.99 * PCTL_EXACT_MAX + 0.999999) - 1],
				      "p99 exact");
			free(s);
		}
	}
	qsort(v, N, sizeof(*v), cmp);
	ASSERT_TRUE(pctl__approx(&p), "a histogram past PCTL_EXACT_MAX");
	for (double q = 1; q <= 100; q += 7.5) {
		uint64_t want = v[(size_t)(q / 100 * N + 0.999999) - 1], got = pctl__pct(&p, q);

		ASSERT_TRUE(fabs((double)got - (double)want) <= 0.0005 * (double)want, "within 0.05%");
	}
	ASSERT_U64_EQ(pctl__pct(&p, 100), v[N - 1], "max exact");
	ASSERT_U64_EQ(pctl__kth(&p, 0), v[0], "min exact");
	ASSERT_EQ(p.count, N, "count");
	pctl__free(&p);
	free(v);
}

/* Up to DOWNSAMPLE_FINE values, point b is the mean of values [b*n/m, (b+1)*n/m), as report
 * drew them before; past it, m points still, each the mean of a run, all values counted. */
static void downsampled(void)
{
	struct downsample d;
	double pts[600], sum = 0;
	size_t m;

	ASSERT_OK(downsample__init(&d), "init");
	for (int i = 0; i < 1500; i++)
		downsample__add(&d, i % 7);
	m = downsample__points(&d, 600, pts);
	ASSERT_EQ(m, 600, "600 points");
	for (size_t b = 0; b < m; b++) {
		size_t from = b * 1500 / 600, to = (b + 1) * 1500 / 600;
		double s = 0;

		for (size_t i = from; i < to; i++)
			s += (double)(i % 7);
		ASSERT_DBL_EQ(pts[b], s / (double)(to - from), "the old means");
	}
	ASSERT_DBL_EQ(d.max, 6, "max of the values");
	downsample__free(&d);

	ASSERT_OK(downsample__init(&d), "init");
	for (long i = 0; i < 1000000; i++)
		downsample__add(&d, (double)i);
	m = downsample__points(&d, 600, pts);
	ASSERT_EQ(m, 600, "600 points over a million values");
	for (size_t b = 1; b < m; b++)
		ASSERT_TRUE(pts[b] > pts[b - 1], "in order");
	for (size_t i = 0; i < d.nb; i++)
		sum += (double)d.n[i];
	ASSERT_DBL_EQ(sum, 1000000, "every value in a bucket");
	ASSERT_LE(d.nb, DOWNSAMPLE_FINE, "bounded");
	downsample__free(&d);
}

static void summary_line(void)
{
	struct step_sum s = {};
	cJSON *marks = cJSON_Parse("[{\"name\":\"loss\",\"value\":2.5},{\"name\":\"lr\",\"value\":1}]");
	cJSON *later = cJSON_Parse("[{\"name\":\"loss\",\"value\":0.125}]");
	char buf[512];

	for (int i = 1; i <= 10; i++)
		step_sum__add(&s, (uint64_t)i * 1000000, 250000, i == 1 ? marks : i == 10 ? later : NULL);
	ASSERT_STREQ(step_sum__format(&s, buf, sizeof(buf)),
		     "steps: 10, time p50 5.0ms p90 9.0ms p99 10.0ms max 10.0ms; data_load 4.5% of "
		     "step time; loss 2.5 -> 0.125 (2); lr 1 -> 1 (1)", "the line");
	step_sum__free(&s);
	cJSON_Delete(marks);
	cJSON_Delete(later);
}

/* A span's JSON written directly is what cJSON prints of span__to_json's object. */
static void span_json_as_cjson(void)
{
	static const char *const names[] = { "step", "a \"q\" \\ b", "tab\tnl\ncr\r\x01\x1f end",
					     "caf\xc3\xa9 \xe2\x82\xac", "/slash" };
	static const long indexes[] = { -1, 0, 7, 2147483647L, 2147483648L, 90071992547409 };

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (size_t k = 0; k < sizeof(indexes) / sizeof(indexes[0]); k++) {
			struct span sp = { .id = 12345678901234ull, .parent_id = k ? 7 : 0,
					   .name = (char *)names[i], .index = indexes[k],
					   .start_ns = 1796000000000000001ull,
					   .end_ns = k % 2 ? 1796000000000999999ull : 0,
					   .status = k % 2 ? SPAN_OK : SPAN_OPEN };
			struct sbuf b = {};
			cJSON *o;
			char *want;

			sp.attrs = cJSON_Parse("{\"mode\":\"tr\\\"ain\",\"n\":1.5,\"x\":[1,null]}");
			sp.marks = cJSON_Parse("[{\"name\":\"loss\",\"value\":0.1}]");
			o = span__to_json(&sp);
			cJSON_AddStringToObject(o, "session_id", "h-1-2");
			cJSON_AddNumberToObject(o, "rank", (double)indexes[k]);
			want = cJSON_PrintUnformatted(o);
			export__span_json_open(&b, &sp, "h-1-2", indexes[k]);
			sbuf__add(&b, "}", 1);
			ASSERT_STREQ(b.p, want, names[i]);
			sbuf__free(&b);
			cJSON_free(want);
			cJSON_Delete(o);
			cJSON_Delete(sp.attrs);
			cJSON_Delete(sp.marks);
		}
	}
}

/* batch_json's allocations, freed together, as the batch arena drops them */
static void *made[4096];
static size_t nmade;

static void *plain_alloc(size_t n)
{
	void *p = nmade < 4096 ? malloc(n) : NULL;

	if (p)
		made[nmade++] = p;
	return p;
}

/* Texts the batch parser reads (the same tree and end as cJSON's) and texts it leaves to
 * cJSON (gave_up), whatever cJSON makes of them. */
static void batch_json_as_cjson(void)
{
	static const struct {
		const char *text;
		bool taken;
	} cases[] = {
		{ "{\"a\":1,\"b\":-0,\"c\":1796000000000999999,\"d\":9999999999999999999,"
		  "\"e\":12345678901234567890,\"f\":1.5e-3,\"g\":-2.5E+2,\"h\":0.1}", true },
		{ "{\"s\":\"tab\\there \\\"q\\\" \\\\ \\/ \\b\\f\\n\\r\",\"k\":[true,false,null,"
		  "[],{},[{\"x\":[1,[2]]}]]} trailing", true },
		{ " \n\t{\"dup\":1,\"dup\":2}", true },
		{ "{\"u\":\"\\u00e9\"}", false },		/* \u: cJSON's */
		{ "{\"n\":01}", false },			/* a leading zero: cJSON's */
		{ "{\"n\":1.}", false },
		{ "{\"c\":\"a\x01b\"}", false },		/* a control character in a string */
		{ "{\"a\":1,}", false },			/* not JSON */
		{ "\x01{\"a\":1}", false },			/* cJSON's whitespace, not JSON's */
		{ "{\"a\":tru}", false },
		{ "[1,2", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *end = NULL, *cend = NULL;
		bool gave_up;
		cJSON *fast = batch_json__parse(cases[i].text, &end, plain_alloc, &gave_up);
		cJSON *slow = cJSON_ParseWithOpts(cases[i].text, &cend, 0);
		char *a = fast ? cJSON_PrintUnformatted(fast) : NULL;
		char *b = slow ? cJSON_PrintUnformatted(slow) : NULL;

		ASSERT_EQ(!gave_up, cases[i].taken, cases[i].text);
		if (!gave_up) {
			ASSERT_STREQ(a, b, "the same tree");
			ASSERT_EQ(end - cases[i].text, cend - cases[i].text, "the same end");
			ASSERT_TRUE(fast->child->prev != NULL, "a list's first points at its last");
		}
		cJSON_free(a);
		cJSON_free(b);
		cJSON_Delete(slow);
		while (nmade)
			free(made[--nmade]);
	}
}

int main(void)
{
	RUN_TEST(batch_json_as_cjson);
	RUN_TEST(percentiles);
	RUN_TEST(downsampled);
	RUN_TEST(summary_line);
	RUN_TEST(span_json_as_cjson);
	return unit__done();
}
