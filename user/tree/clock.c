// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <stdio.h>
#include <time.h>
#include "tree/clock.h"

static uint64_t read_clock(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t clock__mono_ns(void)
{
	return read_clock(CLOCK_MONOTONIC);
}

static int64_t test_step_ns;

void clock__test_step(int64_t ns)
{
	test_step_ns = ns;
}

uint64_t clock__wall_ns(void)
{
	return (uint64_t)((int64_t)read_clock(CLOCK_REALTIME) + test_step_ns);
}

uint64_t clock_map__init(struct clock_map *c)
{
	uint64_t best_width = UINT64_MAX;

	/* Take the tightest of a few mono/wall/mono sandwiches. */
	for (int i = 0; i < 5; i++) {
		uint64_t m0 = clock__mono_ns(), w = clock__wall_ns(), m1 = clock__mono_ns();

		if (m1 - m0 < best_width) {
			best_width = m1 - m0;
			c->wall_minus_mono_ns = (int64_t)(w - (m0 + (m1 - m0) / 2));
		}
	}
	return best_width / 2;
}

uint64_t clock_map__to_wall(const struct clock_map *c, uint64_t mono_ns)
{
	return (uint64_t)((int64_t)mono_ns + c->wall_minus_mono_ns);
}

uint64_t clock_map__now(const struct clock_map *c)
{
	return clock_map__to_wall(c, clock__mono_ns());
}

const char *clock__fmt_duration(uint64_t ns, char *buf, int size)
{
	unsigned long long s = ns / 1000000000ull + (ns % 1000000000ull >= 500000000); /* rounded */

	if (ns < 1000)
		snprintf(buf, size, "%lluns", (unsigned long long)ns);
	else if (ns < 1000000)
		snprintf(buf, size, "%lluus", (unsigned long long)(ns / 1000));
	else if (ns < 999950000)	/* what rounds to 1000.0ms is 1.00s */
		snprintf(buf, size, "%.1fms", ns / 1e6);
	else if (ns < 59995000000ull)	/* and 60.00s is 1m00s */
		snprintf(buf, size, "%.2fs", ns / 1e9);
	else
		snprintf(buf, size, "%llum%02llus", s / 60, s % 60);
	return buf;
}
