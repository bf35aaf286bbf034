/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_WAKES_H
#define __CIRRON_SNAP_WAKES_H

#include <stdbool.h>
#include <stdint.h>

struct snap_env;
struct target;

/* BPF wakes the loader at the end of optimizer step n when (n - base) % every == 0 (0: never),
 * and where a loop seems to end. */
void snap_wakes__set(const struct snap_env *e, struct target *t, uint64_t every, uint64_t base);
/* Tells BPF what t's probes are to the snapshots (every one: ids are reused); clear: none. */
void snap_wakes__roles(const struct snap_env *e, struct target *t, bool clear);
/* The wakeups for the coming epoch ends, from the one seen after end_step steps
 * (snap_plan__wakeups). */
void snap_wakes__plan(const struct snap_env *e, struct target *t, long end_step);

#endif
