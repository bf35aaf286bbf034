// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include "traced/span_kernels.h"
#include "unit.h"

static struct span_kernel_count *copy(const struct span_kernel_count *v, size_t n)
{
	struct span_kernel_count *c = malloc(n * sizeof(*c));

	memcpy(c, v, n * sizeof(*c));
	return c;
}

/* A span's launches per kernel: final intervals and live ones added up by kernel, over
 * exactly its seqs, the most launched first. */
static void sums_over_a_span(void)
{
	struct span_kernels k;
	struct span_kernel_count read1[] = {	/* a read's finals come in any order */
		{ 3, 0xb, 7 }, { 1, 0xa, 40 }, { 2, 0xa, 5 }, { 1, 0xc, 1 }, { 3, 0xa, 2 },
	}, live[] = { { 4, 0xa, 9 }, { 5, 0xb, 100 } }, *v;
	long n;

	span_kernels__init(&k, -1, -1);
	ASSERT_OK(span_kernels__add_done(&k, read1, 5), "add");
	span_kernels__set_live(&k, copy(live, 2), 2);
	n = span_kernels__sum(&k, 1, 4, &v);	/* seqs 1, 2, 3 */
	if (ASSERT_EQ(n, 3, "three kernels")) {
		ASSERT_EQ(v[0].func, 0xa, "most launched first");
		ASSERT_EQ(v[0].count, 40 + 5 + 2, "a's launches in 1..3");
		ASSERT_EQ(v[1].func, 0xb, "then b");
		ASSERT_EQ(v[1].count, 7, "b's");
		ASSERT_EQ(v[2].count, 1, "c's");
	}
	free(v);
	n = span_kernels__sum(&k, 3, 6, &v);	/* seqs 3, 4 (live), 5 (live) */
	if (ASSERT_EQ(n, 2, "a and b")) {
		ASSERT_EQ(v[0].func, 0xb, "b first");
		ASSERT_EQ(v[0].count, 107, "final and live add up");
		ASSERT_EQ(v[1].count, 11, "a: 2 + 9");
	}
	free(v);
	ASSERT_EQ(span_kernels__sum(&k, 6, 9, &v), 0, "nothing launched");
	ASSERT_TRUE(v == NULL, "no list");
	ASSERT_EQ(span_kernels__sum(&k, 4, 4, &v), 0, "an empty range");
	/* a later read finalizes the live ones; they leave the live list */
	struct span_kernel_count read2[] = { { 5, 0xb, 120 }, { 4, 0xa, 9 } };

	ASSERT_OK(span_kernels__add_done(&k, read2, 2), "add");
	span_kernels__set_live(&k, NULL, 0);
	n = span_kernels__sum(&k, 4, 6, &v);
	if (ASSERT_EQ(n, 2, "a and b")) {
		ASSERT_EQ(v[0].count, 120, "b's final count, counted once");
		ASSERT_EQ(v[1].count, 9, "a's");
	}
	free(v);
	span_kernels__free(&k);
}

/* Intervals older than the window go, whole; a span over them says so (-1). */
static void window(void)
{
	struct span_kernels k;
	struct span_kernel_count one[2], *v;
	uint64_t last = SPAN_KERNELS_WINDOW + 50;

	span_kernels__init(&k, -1, -1);
	for (uint64_t s = 0; s <= last; s++) {
		one[0] = (struct span_kernel_count){ s, 0xa, 1 };
		one[1] = (struct span_kernel_count){ s, 0xb, 2 };
		if (!ASSERT_OK(span_kernels__add_done(&k, one, 2), "add"))
			break;
	}
	ASSERT_EQ(k.kept_from, last - SPAN_KERNELS_WINDOW, "the window's start");
	ASSERT_EQ(k.ndone, 2 * (SPAN_KERNELS_WINDOW + 1), "whole intervals kept");
	ASSERT_EQ(span_kernels__sum(&k, 10, last, &v), -1, "a span over dropped intervals");
	ASSERT_EQ(span_kernels__sum(&k, last - 10, last + 1, &v), 2, "a recent one");
	if (v)
		ASSERT_EQ(v[0].count, 22, "b: 11 intervals of 2");
	free(v);
	span_kernels__free(&k);
}

/* A late launch of an older interval, read after newer ones were kept: still summed. */
static void late_entry(void)
{
	struct span_kernels k;
	struct span_kernel_count a[] = { { 5, 0xa, 3 }, { 6, 0xa, 4 } }, b[] = { { 5, 0xa, 1 } }, *v;

	span_kernels__init(&k, -1, -1);
	ASSERT_OK(span_kernels__add_done(&k, a, 2), "add");
	ASSERT_OK(span_kernels__add_done(&k, b, 1), "a late one");
	ASSERT_EQ(span_kernels__sum(&k, 5, 6, &v), 1, "one kernel");
	if (v)
		ASSERT_EQ(v[0].count, 4, "3 + 1 late");
	free(v);
	span_kernels__free(&k);
}

int main(void)
{
	RUN_TEST(sums_over_a_span);
	RUN_TEST(window);
	RUN_TEST(late_entry);
	return unit__done();
}
