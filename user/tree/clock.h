/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_CLOCK_H
#define __CIRRON_CLOCK_H

#include <stdint.h>

/* BPF stamps events with CLOCK_MONOTONIC; output uses wall-clock ns since the epoch.
 * The offset is sampled once per session, so durations stay exact even if NTP steps. */
struct clock_map {
	int64_t wall_minus_mono_ns;
};

uint64_t clock__mono_ns(void);
uint64_t clock__wall_ns(void);
void clock_map__init(struct clock_map *c);
uint64_t clock_map__to_wall(const struct clock_map *c, uint64_t mono_ns);
/* Human duration: 850ns, 142us, 12.3ms, 3.21s, 4m05s. Returns buf. */
const char *clock__fmt_duration(uint64_t ns, char *buf, int size);

#endif
