/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_WALL_CLOCK_H
#define __CIRRON_WALL_CLOCK_H

#include <stdint.h>

struct clock_map;
struct observer;

/* The wall clock's offset from BPF's (CLOCK_MONOTONIC) now; returns its uncertainty, ns. */
uint64_t wall_clock__sample(struct clock_map *c);
/* Once a second at most: a step of the wall clock (NTP's first sync after boot, an admin's
 * date, a VM restored) found and said; new sessions take the clock as it is now, sessions
 * under way keep theirs and count the step (health: wall_clock_step_ns). */
void wall_clock__check(struct observer *o, uint64_t now_mono_ns);

#endif
