// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Loader throughput target: THREADS threads call cudaLaunchKernel at RATE calls per second
// in all (0: as fast as they can) for SECONDS. Under `cirron-probe --cuda-detail` every call
// is one ring-buffer event. Prints "ready", waits for SIGUSR1 (so an observer can attach
// first), runs, and prints "calls N seconds S rate R".
//   launch_storm THREADS RATE SECONDS
#include <cuda_runtime_api.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void storm_kernel(float *x) { __asm__ volatile("" ::"r"(x)); }

static double rate_per_thread, seconds;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void *worker(void *arg)
{
	dim3 grid = { 1, 1, 1 }, block = { 1, 1, 1 };
	void *args[1] = { NULL };
	unsigned long n = 0;
	double t0 = now_s(), t = t0;

	while (t - t0 < seconds) {
		for (int i = 0; i < 64; i++)
			cudaLaunchKernel((const void *)storm_kernel, grid, block, args, 0, 0);
		n += 64;
		t = now_s();
		if (rate_per_thread > 0) {
			double ahead = n / rate_per_thread - (t - t0);	/* seconds ahead of schedule */

			if (ahead > 0) {
				struct timespec d = { (time_t)ahead, (long)((ahead - (time_t)ahead) * 1e9) };

				nanosleep(&d, NULL);
				t = now_s();
			}
		}
	}
	*(unsigned long *)arg = n;
	return NULL;
}

int main(int argc, char **argv)
{
	int threads, sig;
	double rate, t0, t1;
	unsigned long total = 0, *counts;
	pthread_t *tids;
	sigset_t usr1;

	if (argc != 4 || (threads = atoi(argv[1])) <= 0 || (rate = atof(argv[2])) < 0 ||
	    (seconds = atof(argv[3])) <= 0) {
		fprintf(stderr, "usage: launch_storm THREADS RATE SECONDS\n");
		return 64;
	}
	rate_per_thread = rate / threads;
	tids = calloc(threads, sizeof(*tids));
	counts = calloc(threads, sizeof(*counts));
	if (!tids || !counts)
		return 1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready\n");
	sigwait(&usr1, &sig);
	t0 = now_s();
	for (int i = 0; i < threads; i++)
		pthread_create(&tids[i], NULL, worker, &counts[i]);
	for (int i = 0; i < threads; i++) {
		pthread_join(tids[i], NULL);
		total += counts[i];
	}
	t1 = now_s();
	printf("calls %lu seconds %.3f rate %.0f\n", total, t1 - t0, total / (t1 - t0));
	return 0;
}
