// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Calls one CUDA runtime API N times in a tight loop and prints the mean ns per call.
// Run it bare and under cirron-probe: the difference is the cost of the probe hits.
//   cuda_loop launch|memcpy|sync|free N
#include <cuda_runtime_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

__attribute__((noinline)) void bench_kernel(float *x) { __asm__ volatile("" ::"r"(x)); }

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	static char a[64], b[64];
	dim3 grid = { 1, 1, 1 }, block = { 1, 1, 1 };
	void *args[1] = { NULL };
	long n, i;
	double t0;

	if (argc != 3 || (n = atol(argv[2])) <= 0) {
		fprintf(stderr, "usage: cuda_loop launch|memcpy|sync|free N\n");
		return 64;
	}
	t0 = now_ns();
	for (i = 0; i < n; i++) {
		if (!strcmp(argv[1], "launch"))
			cudaLaunchKernel((const void *)bench_kernel, grid, block, args, 0, 0);
		else if (!strcmp(argv[1], "memcpy"))
			cudaMemcpy(a, b, sizeof(a), cudaMemcpyHostToHost);
		else if (!strcmp(argv[1], "sync"))
			cudaStreamSynchronize(0);
		else
			cudaFree(NULL);
	}
	printf("%s %.1f ns/call\n", argv[1], (now_ns() - t0) / n);
	return 0;
}
