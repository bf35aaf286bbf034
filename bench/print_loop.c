// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Prints N metric lines, one write(2) each, to stdout (or, with `other`, to a file
// descriptor that is not 1 or 2; with `syscall`, makes N getppid() calls instead; `sleep`
// sleeps N seconds) and prints
// the mean ns per line on stderr. Linked against libcudart (never called) so that
// cirron-probe traces it; run bare, under `cirron-probe run --marks off|on|uprobe`, and bare
// beside a tracing observer, the differences are the cost of mark capture per printed line
// and what the write tracepoint costs processes it does not trace.
//   print_loop lines|other|syscall|sleep N
#include <cuda_runtime_api.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	char line[96];
	long n, i;
	int fd = 1, len;
	double t0;

	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: print_loop lines|other|syscall|sleep N\n");
		return 64;
	}
	if (!strcmp(argv[1], "sleep")) {	/* a traced process that does nothing for N s */
		sleep((unsigned int)n);
		return 0;
	}
	if (!strcmp(argv[1], "other"))
		fd = open("/dev/null", O_WRONLY);
	if (fd < 0)
		return 1;
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (!strcmp(argv[1], "syscall")) {
			getppid();
			continue;
		}
		len = snprintf(line, sizeof(line), "step %ld - loss: 0.%04ld - accuracy: 0.5000\n",
			       i, i % 10000);
		if (write(fd, line, (size_t)len) != len)
			return 1;
	}
	fprintf(stderr, "ns_per_line %.1f\n", (now_ns() - t0) / (double)n);
	/* keep libcudart needed: the observer attaches to what probes/ knows */
	if (getenv("PRINT_LOOP_CUDA"))
		cudaDeviceSynchronize();
	return 0;
}
