// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A process with no library that probes/ knows (no CUDA, no Python, no torch): the
// "no known library" target of tests/e2e.
//
//   spin [MS]
//     prints "ready", then sleeps until killed (or exits 0 after MS milliseconds).
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : -1;
	struct timespec tick = { 0, 10 * 1000 * 1000 };	/* 10 ms */

	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	for (long slept = 0; ms < 0 || slept < ms; slept += 10)
		nanosleep(&tick, NULL);
	return 0;
}
