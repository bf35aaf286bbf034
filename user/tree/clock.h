/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_CLOCK_H
#define __CIRRON_CLOCK_H

#include <stdint.h>

/* BPF stamps events with CLOCK_MONOTONIC; output uses wall-clock ns since the epoch.
 * A session keeps the offset of its start (the observer's, sampled again each second), so
 * its durations stay exact, and its spans inside their parents, if the wall clock steps
 * (NTP's slewing moves both clocks alike: only a step changes the offset). */
struct clock_map {
	int64_t wall_minus_mono_ns;
};

uint64_t clock__mono_ns(void);
uint64_t clock__wall_ns(void);
/* Tests only (CIRRON_TEST_WALL_STEP_FILE): the wall clock as if set this far ahead. */
void clock__test_step(int64_t ns);
/* Samples the offset; returns the uncertainty (half the tightest sandwich), ns. */
uint64_t clock_map__init(struct clock_map *c);
uint64_t clock_map__to_wall(const struct clock_map *c, uint64_t mono_ns);
/* Now, on c's clock. */
uint64_t clock_map__now(const struct clock_map *c);
/* Human duration: 850ns, 142us, 12.3ms, 3.21s, 4m05s. Returns buf. */
const char *clock__fmt_duration(uint64_t ns, char *buf, int size);

#endif
