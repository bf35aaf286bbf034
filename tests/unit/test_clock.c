// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <stdint.h>
#include <time.h>
#include "tree/clock.h"
#include "unit.h"

#define MS 1000000ull
#define SEC 1000000000ull

static void check_fmt(uint64_t ns, const char *want)
{
	char buf[32], what[64];

	memset(buf, 'x', sizeof(buf));
	snprintf(what, sizeof(what), "fmt(%llu)", (unsigned long long)ns);
	ASSERT_TRUE(clock__fmt_duration(ns, buf, sizeof(buf)) == buf, "returns buf");
	ASSERT_STREQ(buf, want, what);
}

static void fmt_duration(void)
{
	check_fmt(0, "0ns");
	check_fmt(850, "850ns");
	check_fmt(999, "999ns");
	check_fmt(1000, "1us");
	check_fmt(142000, "142us");
	check_fmt(142999, "142us");
	check_fmt(999999, "999us");
	check_fmt(1 * MS, "1.0ms");
	check_fmt(12300 * 1000, "12.3ms");
	check_fmt(999 * MS, "999.0ms");
	check_fmt(1 * SEC, "1.00s");
	check_fmt(3210 * MS, "3.21s");
	check_fmt(59 * SEC, "59.00s");
	check_fmt(60 * SEC, "1m00s");
	check_fmt(245 * SEC, "4m05s");
	check_fmt(3600 * SEC, "60m00s");
}

/* Rounding must not print a value that belongs to the next unit ("1000.0ms", "60.00s"). */
static void fmt_duration_rounding_boundaries(void)
{
	check_fmt(999949999, "999.9ms");
	check_fmt(999950000, "1.00s");
	check_fmt(999999999, "1.00s");
	check_fmt(59994999999ull, "59.99s");
	check_fmt(59995000000ull, "1m00s");
	check_fmt(60 * SEC - 1, "1m00s");
	check_fmt(119 * SEC + 600 * MS, "2m00s");
}

static void fmt_duration_extremes(void)
{
	char small[6], big[64];

	clock__fmt_duration(12300 * 1000, small, sizeof(small));
	ASSERT_STREQ(small, "12.3m", "truncated to the buffer");
	clock__fmt_duration(UINT64_MAX, big, sizeof(big));
	/* 2^64-1 ns = 307445734 min 33.7 s */
	ASSERT_STREQ(big, "307445734m34s", "UINT64_MAX");
}

static void to_wall_arithmetic(void)
{
	struct clock_map c = { .wall_minus_mono_ns = 1795423440000000000ll };

	ASSERT_U64_EQ(clock_map__to_wall(&c, 131994182), 1795423440131994182ull, "offset added");
	ASSERT_U64_EQ(clock_map__to_wall(&c, 0), 1795423440000000000ull, "mono 0");
	c.wall_minus_mono_ns = -5000;
	ASSERT_U64_EQ(clock_map__to_wall(&c, 12000), 7000, "negative offset");
}

static void to_wall_matches_realtime(void)
{
	struct clock_map c;
	int64_t best = INT64_MAX;

	clock_map__init(&c);
	for (int i = 0; i < 20; i++) {
		struct timespec ts;
		uint64_t mono = clock__mono_ns(), wall;
		int64_t d;

		clock_gettime(CLOCK_REALTIME, &ts);
		wall = (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
		d = (int64_t)(wall - clock_map__to_wall(&c, mono));
		if (d < 0)
			d = -d;
		if (d < best)
			best = d;
	}
	ASSERT_LT(best, 5 * MS, "mapped monotonic within 5ms of CLOCK_REALTIME");
	ASSERT_GT(clock_map__to_wall(&c, clock__mono_ns()), 1600000000ull * SEC,
		  "a wall time after 2020");
}

static void clocks_advance(void)
{
	struct timespec ts = { .tv_nsec = 2 * MS };
	uint64_t m0 = clock__mono_ns(), w0 = clock__wall_ns(), m1, w1, prev = m0;
	time_t now = time(NULL);

	for (int i = 0; i < 1000; i++) {
		uint64_t m = clock__mono_ns();

		if (!ASSERT_GE(m, prev, "monotonic never goes back"))
			break;
		prev = m;
	}
	nanosleep(&ts, NULL);
	m1 = clock__mono_ns();
	w1 = clock__wall_ns();
	ASSERT_GE(m1 - m0, 2 * MS, "monotonic advanced by the 2ms sleep");
	ASSERT_LT(m1 - m0, 5 * SEC, "monotonic advanced by a sane amount");
	ASSERT_GT(w1, w0, "wall advanced");
	ASSERT_LT(w0 / SEC - (uint64_t)now + 1, 3, "wall ns agree with time()");
}

int main(void)
{
	RUN_TEST(fmt_duration);
	RUN_TEST(fmt_duration_rounding_boundaries);
	RUN_TEST(fmt_duration_extremes);
	RUN_TEST(to_wall_arithmetic);
	RUN_TEST(to_wall_matches_realtime);
	RUN_TEST(clocks_advance);
	return unit__done();
}
