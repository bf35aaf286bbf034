// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Launch-bound steps on the stand-in driver and the runtime built on it (no GPU): each step
// makes N runtime launches (cudaLaunchKernel, which calls cuLaunchKernel), then spins STEP_US
// of CPU, standing in for a torch step that is CPU-bound on its launches. Every step is timed inside the loop and written with its end time
// (CLOCK_MONOTONIC), so that bench/launch_layer.py can hold the steps of the windows an
// observer was attached against those around them.
//
//   launch_steps N STEP_US SECONDS OUT    prints "ready" after 200 steps, writes
//                                          "end_ns dur_ns" lines to OUT at the end
//                                          (after SECONDS, or at SIGTERM)
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct { unsigned x, y, z; } dim3;
int cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem, void *s);
int cuLibraryGetKernel(void **k, void *lib, const char *name);

static volatile sig_atomic_t stopped;

static void on_term(int sig)
{
	(void)sig;
	stopped = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 76, step_us = argc > 2 ? atol(argv[2]) : 2000;
	double seconds = argc > 3 ? atof(argv[3]) : 30;
	const char *out = argc > 4 ? argv[4] : "/dev/null";
	size_t cap = (size_t)(seconds * 1e6 / (double)step_us * 2) + 1000, k = 0;
	uint64_t *end = malloc(cap * sizeof(*end)), *dur = malloc(cap * sizeof(*dur));
	uint64_t stop = now_ns() + (uint64_t)(seconds * 1e9);
	dim3 one = { 1, 1, 1 };
	void *kern = NULL;
	FILE *f;

	if (!end || !dur)
		return 1;
	signal(SIGTERM, on_term);	/* stop, and write the steps */
	cuLibraryGetKernel(&kern, NULL, "_Z9step_gemmPf");
	setvbuf(stdout, NULL, _IOLBF, 0);
	while (k < cap) {
		uint64_t t0 = now_ns(), t, t1;

		for (long i = 0; i < n; i++)
			cudaLaunchKernel(kern, one, one, NULL, 0, NULL);
		/* the step's own work, after its launches: what they cost adds to the step */
		for (t = now_ns(); now_ns() - t < (uint64_t)step_us * 1000;)
			;
		t1 = now_ns();
		end[k] = t1;
		dur[k++] = t1 - t0;
		if (k == 200)
			printf("ready\n");
		if (t1 >= stop || stopped)
			break;
	}
	f = fopen(out, "w");
	if (!f)
		return 1;
	for (size_t i = 0; i < k; i++)
		fprintf(f, "%llu %llu\n", (unsigned long long)end[i], (unsigned long long)dur[i]);
	fclose(f);
	return 0;
}
