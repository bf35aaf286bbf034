/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TEST_HOOKS_H
#define __CIRRON_TEST_HOOKS_H

/* The CIRRON_TEST_* variables, for tests only (docs/usage.md, "Environment"): read from the
 * environment in this one place, each one used said once on stderr. None is an option: no
 * one should run an agent that loses events or waits on purpose. */
#include <stdbool.h>

struct test_hooks {
	long control_ring_kb;	/* CIRRON_TEST_CONTROL_RING_KB: a control ring that small; 0 */
	long hold_ms;		/* CIRRON_TEST_HOLD_MS: `run` holds at a library load longer */
	long find_delay_ms;	/* CIRRON_TEST_FIND_DELAY_MS: the look for the models waits */
	bool no_layout_table;	/* CIRRON_TEST_NO_LAYOUT_TABLE: torch_layouts.json's entries unused */
	bool snap_copy_only;	/* CIRRON_TEST_SNAP_COPY_ONLY: no snapshot read once BPF copies */
	long verdict_after;	/* CIRRON_TEST_VERDICT_AFTER: no class judged before forward N */
	char hostname[64];	/* CIRRON_TEST_HOSTNAME: the host name sessions carry; "" */
	const char *wall_step_file;	/* CIRRON_TEST_WALL_STEP_FILE: see below; NULL */
};

/* The hooks, read once (thread-safe after the first call, which main makes). */
const struct test_hooks *test_hooks__get(void);
/* CIRRON_TEST_WALL_STEP_FILE: the seconds (a signed integer) its file says, in ns: the loader
 * reads its wall clock that far ahead, from its next look at the clock (a test steps the clock
 * by writing the file: stepping the machine's own would upset every other test); 0 without
 * it. */
long long test_hooks__wall_step_ns(void);

#endif
