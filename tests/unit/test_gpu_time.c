// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// GPU time on spans, without a GPU: CUPTI's clock mapped to CLOCK_MONOTONIC (gputime/gpu_clock.h),
// the union of intervals (gputime/gpu_union.h), the companion's records joined to their calls
// (gputime/gpu_join.h) and placed on spans with their labels (gputime/gpu_spans.h), against
// activity streams made from CUPTI's documented record layout (tests/unit/data/gpu/README.md).
#include <cjson/cJSON.h>
#include "gputime/gpu_clock.h"
#include "gputime/gpu_join.h"
#include "gputime/gpu_spans.h"
#include "gputime/gpu_union.h"
#include "unit.h"

#define DATA "tests/unit/data/gpu/"

static void test_clock_interpolates(void)
{
	struct gpu_clock c = { 0 };
	uint64_t m, err;

	ASSERT_FALSE(gpu_clock__to_mono(&c, 5, &m, NULL), "no sample: no mapping");
	ASSERT_TRUE(gpu_clock__add(&c, 900, 100000, 1100), "sample 1");
	ASSERT_TRUE(gpu_clock__add(&c, 10900, 110000, 11100), "sample 2");
	ASSERT_FALSE(gpu_clock__add(&c, 20900, 110000, 21100), "a sample not after the last");
	ASSERT_FALSE(gpu_clock__add(&c, 21100, 120000, 20900), "after before before");
	ASSERT_TRUE(gpu_clock__to_mono(&c, 105000, &m, &err), "between");
	ASSERT_EQ(m, 6000, "offset -99000 throughout");
	ASSERT_EQ(err, 100, "half the sample's width");
	/* the wall clock stepped 1 us back between two samples: interpolated, error said */
	ASSERT_TRUE(gpu_clock__add(&c, 20900, 119000, 21100), "sample 3");
	ASSERT_TRUE(gpu_clock__to_mono(&c, 114500, &m, &err), "across the step");
	ASSERT_EQ(m, 16000, "halfway: half the step");
	ASSERT_EQ(err, 1100, "the step and the width");
	ASSERT_TRUE(gpu_clock__to_mono(&c, 130000, &m, NULL), "after the last");
	ASSERT_EQ(m, 32000, "the last sample's offset");
	ASSERT_TRUE(gpu_clock__to_mono(&c, 50000, &m, NULL), "before the first");
	ASSERT_EQ(m, 50000 - 99000 + 0ull, "the first sample's offset");
}

static void test_union(void)
{
	struct gpu_union u = { 0 };

	gpu_union__add(&u, 100, 200);
	gpu_union__add(&u, 300, 400);
	gpu_union__add(&u, 150, 250);	/* overlaps the first */
	gpu_union__add(&u, 500, 600);
	gpu_union__add(&u, 50, 60);	/* before all */
	gpu_union__add(&u, 390, 510);	/* joins two */
	ASSERT_EQ(u.n, 3, "intervals kept: [50,60) [100,250) [300,600)");
	ASSERT_EQ(gpu_union__busy(&u), 10 + 150 + 300, "busy");
	ASSERT_EQ(u.first_start, 50, "first start");
	ASSERT_EQ(u.last_end, 600, "last end");
	gpu_union__add(&u, 120, 130);	/* inside: nothing new */
	gpu_union__add(&u, 700, 700);	/* empty */
	ASSERT_EQ(gpu_union__busy(&u), 460, "busy unchanged");
	ASSERT_EQ(u.last_end, 700, "an empty interval still ends there");
	gpu_union__fold(&u, 300);
	ASSERT_EQ(u.n, 1, "what ends by 300 folded");
	ASSERT_EQ(u.folded_ns, 160, "folded time");
	ASSERT_EQ(gpu_union__busy(&u), 460, "busy the same after a fold");
	gpu_union__add(&u, 550, 800);
	ASSERT_EQ(gpu_union__busy(&u), 160 + 500, "after the fold, merged on");
	gpu_union__free(&u);
}

/* The companion's name records for one name (companion/queue.c). */
static void feed_name(struct gpu_join *j, uint32_t id, const char *name)
{
	size_t len = strlen(name);

	for (size_t off = 0;; off += CIRRON_GPU_NAME_CHUNK) {
		struct cirron_gpu_rec r = { .type = GPU_REC_NAME, .corr = id };
		size_t n = len - off < CIRRON_GPU_NAME_CHUNK ? len - off : CIRRON_GPU_NAME_CHUNK;

		r.sub = (uint8_t)n;
		memcpy(&r.a, name + off, n);
		gpu_join__record(j, &r);
		if (n < CIRRON_GPU_NAME_CHUNK)
			break;
	}
}

static void feed(struct gpu_join *j, uint8_t type, uint8_t sub, uint32_t corr, uint64_t a,
		 uint64_t b, uint64_t c)
{
	struct cirron_gpu_rec r = { .type = type, .sub = sub, .corr = corr, .a = a, .b = b, .c = c };

	gpu_join__record(j, &r);
}

static void test_join(void)
{
	static const char long_name[] = "_ZN2at6native29vectorized_elementwise_kernelILi4EEvi";
	struct gpu_join j = { 0 };
	struct gpu_item *it;
	long n;

	feed(&j, GPU_REC_STATE, GPU_STATE_ACTIVE, 0, 10, 130001, 0);
	feed(&j, GPU_REC_CLOCK, 0, 0, 0, 1000000, 100);	/* cupti = mono + 1000000 - 50 */
	feed_name(&j, 1, long_name);
	feed(&j, GPU_REC_API, 0, 5, 1000, 77ull << 32 | GPU_API_LAUNCH, 0);
	feed(&j, GPU_REC_API, 0, 6, 2000, 77ull << 32 | GPU_API_GRAPH, 0);
	feed(&j, GPU_REC_API, 0, 8, 2500, 77ull << 32 | GPU_API_LAUNCH, 0);	/* no record */
	/* the kernel of a call whose record comes later (its call was made after the drain) */
	feed(&j, GPU_REC_KERNEL, 0, 9, 1003000, 1003100, 1);
	feed(&j, GPU_REC_KERNEL, 0, 5, 1001100, 1001500, 7ull << 32 | 1);
	feed(&j, GPU_REC_KERNEL, 0, 6, 1002100, 1002200, 1);	/* a graph's kernels */
	feed(&j, GPU_REC_KERNEL, 0, 6, 1002200, 1002400, 1);
	feed(&j, GPU_REC_KERNEL, 0, 4, 1000100, 1000200, 1);	/* made before: no call */
	feed(&j, GPU_REC_WATERMARK, 0, 0, 2900, 0, 0);
	ASSERT_EQ(gpu_join__watermark(&j), 1000, "held items wait for a later clock sample");
	n = gpu_join__take(&j, &it, false);
	ASSERT_EQ(n, 0, "nothing out before the clock has a sample after their end");
	free(it);
	feed(&j, GPU_REC_CLOCK, 0, 0, 4000, 1004000, 4100);	/* the same offset */
	feed(&j, GPU_REC_API, 0, 9, 3000, 78ull << 32 | GPU_API_LAUNCH, 0);
	feed(&j, GPU_REC_WATERMARK, 0, 0, 3900, 0, 0);
	n = gpu_join__take(&j, &it, false);
	ASSERT_EQ(n, 4, "the launch, the graph's two, the early one");
	for (long i = 0; i < n; i++) {
		if (it[i].corr == 5) {
			ASSERT_EQ(it[i].launch, 1000, "its call's time");
			ASSERT_EQ(it[i].start, 1150, "start in mono");
			ASSERT_EQ(it[i].end, 1550, "end in mono");
			ASSERT_EQ(it[i].tid, 77, "its call's thread");
			ASSERT_TRUE(it[i].first, "a call's first item");
		}
		if (it[i].corr == 9)
			ASSERT_EQ(it[i].tid, 78, "joined once its call came");
	}
	free(it);
	ASSERT_EQ(j.unplaced, 1, "corr 4 (made before the companion was on), not corr 9");
	ASSERT_STREQ(gpu_join__name(&j, 1), long_name, "a name over several records");
	ASSERT_EQ(gpu_join__watermark(&j), 2500, "the graph done after a quiet round; 8 waits");
	feed(&j, GPU_REC_API, 0, 10, 4200, 77ull << 32 | GPU_API_GRAPH, 0);
	feed(&j, GPU_REC_KERNEL, 0, 10, 1004300, 1004400, 1);
	feed(&j, GPU_REC_CLOCK, 0, 0, 4900, 1004900, 5000);
	feed(&j, GPU_REC_WATERMARK, 0, 0, 4500, 0, 0);
	n = gpu_join__take(&j, &it, false);
	ASSERT_EQ(n, 1, "the new graph's first kernel");
	free(it);
	ASSERT_EQ(gpu_join__watermark(&j), 2500, "8 still waited for");
	feed(&j, GPU_REC_KERNEL, 0, 10, 1004400, 1004450, 1);	/* more of the graph, later */
	feed(&j, GPU_REC_CLOCK, 0, 0, 5900, 1005900, 6000);
	feed(&j, GPU_REC_WATERMARK, 0, 0, 5500, 0, 0);
	n = gpu_join__take(&j, &it, false);
	ASSERT_EQ(n, 1, "a graph's kernel a round later still joins");
	ASSERT_FALSE(n == 1 && it[0].first, "and is not its call's first");
	free(it);
	/* 8's work never shows: given up 5 s on, as an item with no GPU time */
	feed(&j, GPU_REC_WATERMARK, 0, 0, 2500 + GPU_JOIN_GIVE_UP_NS + 1, 0, 0);
	n = gpu_join__take(&j, &it, false);
	ASSERT_EQ(n, 1, "the given-up call");
	ASSERT_EQ(it[0].kind, GPU_ITEM_NONE, "no GPU time");
	ASSERT_EQ(it[0].corr, 8, "which call");
	free(it);
	ASSERT_EQ(j.given_up, 1, "counted");
	ASSERT_EQ(gpu_join__watermark(&j), 2500 + GPU_JOIN_GIVE_UP_NS + 1, "nothing waited for");
	gpu_join__free(&j);
}

/* A span as the session makes it: name, attrs. */
static struct span *mkspan(const char *name, uint64_t counted)
{
	struct span *sp = calloc(1, sizeof(*sp));

	sp->name = strdup(name);
	sp->attrs = cJSON_CreateObject();
	if (counted)
		cJSON_AddNumberToObject(sp->attrs, "cuda.launches", (double)counted);
	return sp;
}

static void freespan(struct span *sp)
{
	cJSON_Delete(sp->attrs);
	free(sp->name);
	free(sp);
}

static int released;

static void on_release(void *ctx, struct span *sp)
{
	(void)ctx;
	(void)sp;
	released++;
}

static double num(const struct span *sp, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(sp->attrs, k);

	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const char *str(const struct span *sp, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(sp->attrs, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

/* CUPTI's callback id name to the companion's kind (companion/cbids.awk) */
static uint8_t api_kind(const char *cbid)
{
	if (strstr(cbid, "GraphLaunch"))
		return GPU_API_GRAPH;
	if (strstr(cbid, "Memset"))
		return GPU_API_MEMSET;
	if (strstr(cbid, "Memcpy"))
		return GPU_API_MEMCPY;
	return GPU_API_LAUNCH;
}

struct named {
	char *name[64];
	int n;
};

static uint32_t name_id(struct named *nm, struct gpu_join *j, const char *name)
{
	for (int i = 0; i < nm->n; i++)
		if (!strcmp(nm->name[i], name))
			return (uint32_t)i + 1;
	nm->name[nm->n] = strdup(name);
	feed_name(j, (uint32_t)nm->n + 1, name);
	return (uint32_t)++nm->n;
}

/* Numbers in the stream files; CUPTI's wall-clock timestamps (above 2^53) are strings of
 * digits there, JSON numbers being doubles. */
static uint64_t field(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);

	if (cJSON_IsString(v))
		return strtoull(v->valuestring, NULL, 10);
	return cJSON_IsNumber(v) ? (uint64_t)v->valuedouble : 0;
}

/* One CUPTI record as the companion hands it over (companion/activity.c, cupti.c). */
static void feed_cupti(struct gpu_join *j, struct named *nm, const cJSON *o)
{
	const char *what = cJSON_GetObjectItemCaseSensitive(o, "cupti")->valuestring;
	uint32_t corr = (uint32_t)field(o, "correlationId");
	uint64_t s = field(o, "start"), e = field(o, "end");

	if (!strcmp(what, "CUpti_CallbackData"))
		feed(j, GPU_REC_API, 0, corr, field(o, "mono_ns"),
		     field(o, "tid") << 32 |
		     api_kind(cJSON_GetObjectItemCaseSensitive(o, "cbid")->valuestring), 0);
	else if (!strcmp(what, "CUpti_ActivityKernel10"))
		feed(j, GPU_REC_KERNEL, (uint8_t)field(o, "deviceId"), corr, s, e,
		     field(o, "streamId") << 32 |
		     name_id(nm, j, cJSON_GetObjectItemCaseSensitive(o, "name")->valuestring));
	else if (!strcmp(what, "CUpti_ActivityMemcpy6"))
		feed(j, GPU_REC_MEMCPY, (uint8_t)field(o, "copyKind"), corr, s, e,
		     field(o, "bytes"));
	else if (!strcmp(what, "CUpti_ActivityMemset4"))
		feed(j, GPU_REC_MEMSET, 0, corr, s, e, field(o, "bytes"));
	else if (!strcmp(what, "cuptiGetTimestamp"))
		feed(j, GPU_REC_CLOCK, 0, 0, field(o, "mono_before"),
		     field(o, "timestamp"), field(o, "mono_after"));
}

/* A stream file: its spans opened first (so the records land as they come), the records
 * fed, the spans closed at their ends and settled; then each against its "expect". */
static void test_stream(const char *file)
{
	FILE *f = fopen(file, "r");
	char line[4096];
	cJSON *lines[256];
	struct span *spans[32];
	int nl = 0, ns = 0;
	struct gpu_join j = { 0 };
	struct gpu_spans g = { 0 };
	struct named nm = { 0 };
	struct gpu_source src = { .join = &j, .cupti = true };
	struct gpu_item *it;
	long n;

	if (!ASSERT_OK_PTR(f, file))
		return;
	while (nl < 256 && fgets(line, sizeof(line), f))
		lines[nl++] = cJSON_Parse(line);
	fclose(f);
	feed(&j, GPU_REC_STATE, GPU_STATE_ACTIVE, 0, 0, 130001, 0);
	for (int i = 0; i < nl; i++) {
		const cJSON *sp = cJSON_GetObjectItemCaseSensitive(lines[i], "span");

		if (!sp)
			continue;
		spans[ns] = mkspan(sp->valuestring, field(lines[i], "counted"));
		gpu_spans__open(&g, spans[ns++], field(lines[i], "start"));
	}
	for (int i = 0; i < nl; i++) {
		if (cJSON_GetObjectItemCaseSensitive(lines[i], "cupti"))
			feed_cupti(&j, &nm, lines[i]);
		else if (cJSON_GetObjectItemCaseSensitive(lines[i], "rec"))	/* as it came */
			feed(&j, (uint8_t)field(lines[i], "rec"), (uint8_t)field(lines[i], "sub"),
			     (uint32_t)field(lines[i], "corr"), field(lines[i], "a"),
			     field(lines[i], "b"), field(lines[i], "c"));
		else if (cJSON_GetObjectItemCaseSensitive(lines[i], "round"))
			feed(&j, GPU_REC_WATERMARK, 0, 0, field(lines[i], "round"), 0, 0);
		n = gpu_join__take(&j, &it, false);
		gpu_spans__items(&g, it, (size_t)(n > 0 ? n : 0));
		free(it);
	}
	released = 0;
	for (int i = 0, k = 0; i < nl; i++)
		if (cJSON_GetObjectItemCaseSensitive(lines[i], "span"))
			ASSERT_TRUE(gpu_spans__close(&g, spans[k++], field(lines[i], "end"),
						     NULL, &src, 0), "held at its close");
	gpu_spans__settle(&g, &src, gpu_join__watermark(&j), 1, false, on_release, NULL);
	ASSERT_EQ(released, ns, "every span complete by the watermark");
	for (int i = 0, k = 0; i < nl; i++) {
		const cJSON *exp = cJSON_GetObjectItemCaseSensitive(lines[i], "expect"), *e;
		struct span *sp;

		if (!cJSON_GetObjectItemCaseSensitive(lines[i], "span"))
			continue;
		sp = spans[k++];
		ASSERT_STREQ(str(sp, "gpu_time_source"), "cupti", sp->name);
		cJSON_ArrayForEach(e, exp) {
			const cJSON *got = cJSON_GetObjectItemCaseSensitive(sp->attrs, e->string);

			if (cJSON_IsObject(e))
				ASSERT_TRUE(got && cJSON_Compare(got, e, true), e->string);
			else if (!ASSERT_TRUE(cJSON_IsNumber(got) &&
					      got->valuedouble == e->valuedouble, e->string))
				fprintf(stderr, "  %s.%s: %f, wanted %f\n", sp->name, e->string,
					num(sp, e->string), e->valuedouble);
		}
		freespan(sp);
	}
	for (int i = 0; i < nl; i++)
		cJSON_Delete(lines[i]);
	for (int i = 0; i < nm.n; i++)
		free(nm.name[i]);
	gpu_spans__free(&g);
	gpu_join__free(&j);
}

static void test_stream_two_streams(void)
{
	test_stream(DATA "step_two_streams.jsonl");
}

/* A span made after the fact (opened and closed with times in the past): what was launched
 * in it, from the items kept, not what came after its end. */
static void test_after_the_fact(void)
{
	struct gpu_spans g = { 0 };
	struct gpu_join j = { 0 };
	struct gpu_source src = { .join = &j, .cupti = true };
	struct gpu_item items[] = {
		{ .launch = 100, .start = 110, .end = 150, .kind = GPU_ITEM_KERNEL,
		  .api = GPU_API_LAUNCH, .first = true, .corr = 1 },
		{ .launch = 200, .start = 210, .end = 260, .kind = GPU_ITEM_KERNEL,
		  .api = GPU_API_LAUNCH, .first = true, .corr = 2 },
		{ .launch = 300, .start = 310, .end = 330, .kind = GPU_ITEM_KERNEL,
		  .api = GPU_API_LAUNCH, .first = true, .corr = 3 },
	};
	struct span *open = mkspan("epoch", 3), *late = mkspan("forward", 2);

	gpu_spans__open(&g, open, 50);
	gpu_spans__items(&g, items, 3);
	gpu_spans__open(&g, late, 90);		/* forward, inferred at backward time */
	released = 0;
	ASSERT_TRUE(gpu_spans__close(&g, late, 250, NULL, &src, 0), "held");
	gpu_spans__settle(&g, &src, 400, 1, false, on_release, NULL);
	ASSERT_EQ(released, 1, "released at the watermark");
	ASSERT_EQ(num(late, "gpu_busy_ns"), 40 + 50, "its two kernels, not the third");
	ASSERT_EQ(num(late, "gpu_ns"), 260 - 110, "first start to last end");
	ASSERT_EQ(num(open, "gpu_busy_ns"), 40 + 50 + 20, "the open span so far");
	ASSERT_EQ(num(open, "gpu_busy_share"), -1, "no share without a duration so far");
	gpu_spans__free(&g);
	freespan(open);
	freespan(late);
}

/* Without the companion: a bound from launch and synchronize, or nothing; never a zero. */
static void test_bound(void)
{
	struct gpu_spans g = { 0 };
	struct gpu_source none = { 0 };
	uint64_t c[CIRRON_NCOUNTERS] = { 0 };
	struct span *step = mkspan("step", 9), *cpu = mkspan("zero_grad", 0),
		    *nosync = mkspan("forward", 3);

	gpu_spans__open(&g, step, 1000);
	gpu_spans__open(&g, cpu, 1100);
	gpu_spans__open(&g, nosync, 5000);
	c[CC_LAST_LAUNCH_NS] = 1500;
	ASSERT_FALSE(gpu_spans__close(&g, cpu, 1200, c, &none, 0), "no launches: not held");
	ASSERT_TRUE(gpu_spans__close(&g, step, 2000, c, &none, 0), "held for a synchronize");
	gpu_spans__sync(&g, 1400, 1700);	/* began before the last launch: bounds nothing */
	released = 0;
	gpu_spans__settle(&g, &none, 0, 1, false, on_release, NULL);
	ASSERT_EQ(released, 0, "still waiting");
	gpu_spans__sync(&g, 1600, 2300);
	gpu_spans__settle(&g, &none, 0, 2, false, on_release, NULL);
	ASSERT_EQ(released, 1, "released");
	ASSERT_EQ(num(step, "gpu_ns_upper"), 2300 - 1000, "start to that synchronize's return");
	ASSERT_STREQ(str(step, "gpu_time_source"), "launch_to_sync", "labelled a bound");
	ASSERT_EQ(num(step, "gpu_busy_ns"), -1, "nothing that reads as measured");
	ASSERT_EQ(num(cpu, "gpu_ns_upper"), -1, "nothing on a span that launched nothing");
	c[CC_LAST_LAUNCH_NS] = 5500;
	ASSERT_TRUE(gpu_spans__close(&g, nosync, 6000, c, &none, 3), "held");
	gpu_spans__settle(&g, &none, 0, 3 + GPU_SPANS_BOUND_WAIT_NS + 1, false, on_release, NULL);
	ASSERT_EQ(num(nosync, "gpu_ns_upper"), -1, "no synchronize came: no bound, no zero");
	ASSERT_TRUE(strstr(str(nosync, "gpu_time_note"), "no synchronize") != NULL, "says why");
	gpu_spans__free(&g);
	freespan(step);
	freespan(cpu);
	freespan(nosync);
}

/* The companion on, but the span's launches have no records (made before it switched on):
 * coverage 0 and why, never a gpu_busy_ns of 0. */
static void test_no_records_no_zero(void)
{
	struct gpu_spans g = { 0 };
	struct gpu_join j = { 0 };
	struct gpu_source src = { .join = &j, .cupti = true };
	struct span *step = mkspan("step", 5);

	gpu_spans__open(&g, step, 100);
	ASSERT_TRUE(gpu_spans__close(&g, step, 200, NULL, &src, 0), "held");
	gpu_spans__settle(&g, &src, 300, 1, false, on_release, NULL);
	ASSERT_EQ(num(step, "gpu_busy_ns"), -1, "no zero");
	ASSERT_EQ(num(step, "gpu_time_coverage"), 0, "coverage 0");
	ASSERT_TRUE(*str(step, "gpu_time_note") != 0, "and why");
	gpu_spans__free(&g);
	freespan(step);
}

int main(void)
{
	RUN_TEST(test_clock_interpolates);
	RUN_TEST(test_union);
	RUN_TEST(test_join);
	RUN_TEST(test_stream_two_streams);
	RUN_TEST(test_after_the_fact);
	RUN_TEST(test_bound);
	RUN_TEST(test_no_records_no_zero);
	return unit__done();
}
