// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A launch-bound libcudart client in "steps": each step launches N kernels, copies once
// (cudaMemcpyAsync, 256 bytes) and synchronizes once, until SIGUSR1; then it prints its
// exact totals, which --cuda-calls sampled estimates. Without a GPU the calls fail fast.
//
//   cuda_steps N [LAUNCH_NS [SECONDS]]
//                    prints "ready" after its first step, "steps=S launches=L rate=R" at
//                    the end (R: launches per second over the whole run). LAUNCH_NS: busy
//                    CPU time after each launch, standing in for what a launch costs the
//                    host on a GPU (~2-5 us in the driver); 0 (default): a failing launch
//                    alone (~30 ns). SECONDS: stop by itself after that long (a step
//                    ends first), not only at SIGUSR1
#include <cuda_runtime_api.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__attribute__((noinline)) void cirron_step_kernel(float *x) { __asm__ volatile("" ::"r"(x)); }

static volatile sig_atomic_t stop;

static void on_usr1(int sig)
{
	(void)sig;
	stop = 1;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void spin(double s)
{
	double until = now_s() + s;

	while (now_s() < until)
		;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };
	long n = argc > 1 ? atol(argv[1]) : 1000, steps = 0, launches = 0;
	double launch_s = argc > 2 ? atof(argv[2]) / 1e9 : 0;
	double run_s = argc > 3 ? atof(argv[3]) : 0;
	dim3 grid = { 1, 1, 1 }, block = { 32, 1, 1 };
	static char host[256], host2[256];
	void *args[1] = { NULL };
	double t0;

	sigaction(SIGUSR1, &sa, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	t0 = now_s();
	while (!stop) {
		for (long i = 0; i < n; i++) {
			cudaLaunchKernel((const void *)cirron_step_kernel, grid, block, args, 0, 0);
			if (launch_s > 0)
				spin(launch_s);
		}
		launches += n;
		cudaMemcpyAsync(host2, host, sizeof(host), cudaMemcpyHostToDevice, 0);
		cudaStreamSynchronize(0);
		if (!steps++)
			printf("ready\n");
		if (run_s > 0 && now_s() - t0 >= run_s)
			break;
	}
	printf("steps=%ld launches=%ld rate=%.0f\n", steps, launches, launches / (now_s() - t0));
	return 0;
}
