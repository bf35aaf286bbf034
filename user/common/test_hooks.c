// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The CIRRON_TEST_* variables (test_hooks.h), read once.
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include "common/log.h"
#include "common/test_hooks.h"

static long number(const char *name, long min, long max)
{
	const char *v = getenv(name);
	char *end;
	long n;

	if (!v || !*v)
		return 0;
	errno = 0;
	n = strtol(v, &end, 10);
	if (errno || *end || n < min || n > max) {
		wlog("%s=%s ignored: not a number from %ld to %ld", name, v, min, max);
		return 0;
	}
	return n;
}

/* A power of two of at least the page size in KiB, as a ring buffer's size must be. */
static long ring_kb(void)
{
	long page_kb = sysconf(_SC_PAGESIZE) >> 10, kb;

	kb = number("CIRRON_TEST_CONTROL_RING_KB", 1, 1 << 20);
	if (kb && (kb < page_kb || (kb & (kb - 1)))) {
		wlog("CIRRON_TEST_CONTROL_RING_KB=%ld ignored: not a power of two of at least %ld",
		     kb, page_kb);
		return 0;
	}
	return kb;
}

const struct test_hooks *test_hooks__get(void)
{
	static struct test_hooks h;
	static bool read;
	const char *host;

	if (read)
		return &h;
	read = true;
	h.control_ring_kb = ring_kb();
	h.hold_ms = number("CIRRON_TEST_HOLD_MS", 1, 3600 * 1000);
	h.find_delay_ms = number("CIRRON_TEST_FIND_DELAY_MS", 1, 3600 * 1000);
	h.no_layout_table = getenv("CIRRON_TEST_NO_LAYOUT_TABLE") != NULL;
	h.snap_copy_only = getenv("CIRRON_TEST_SNAP_COPY_ONLY") != NULL;
	h.verdict_after = number("CIRRON_TEST_VERDICT_AFTER", 1, 1L << 40);
	h.wall_step_file = getenv("CIRRON_TEST_WALL_STEP_FILE");
	if (h.wall_step_file && !*h.wall_step_file)
		h.wall_step_file = NULL;
	host = getenv("CIRRON_TEST_HOSTNAME");
	if (host && *host)
		snprintf(h.hostname, sizeof(h.hostname), "%s", host);
	if (h.control_ring_kb)
		wlog("control ring of %ld KiB (CIRRON_TEST_CONTROL_RING_KB): for tests only",
		     h.control_ring_kb);
	if (h.snap_copy_only)
		wlog("no snapshot read once BPF copies at loops' ends (CIRRON_TEST_SNAP_COPY_ONLY): "
		     "for tests only");
	if (h.verdict_after)
		wlog("no class judged before forward %ld (CIRRON_TEST_VERDICT_AFTER): for tests only",
		     h.verdict_after);
	if (h.wall_step_file)
		wlog("the wall clock moved by what %s says (CIRRON_TEST_WALL_STEP_FILE): for tests "
		     "only", h.wall_step_file);
	return &h;
}

long long test_hooks__wall_step_ns(void)
{
	const char *path = test_hooks__get()->wall_step_file;
	long long s = 0;
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return 0;
	if (fscanf(f, "%lld", &s) != 1 || s < -(1LL << 32) || s > (1LL << 32))
		s = 0;
	fclose(f);
	return s * 1000000000LL;
}
