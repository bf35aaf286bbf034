// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What one probed call costs the job, per kind, on a real GPU: N launches of an empty kernel
// through the runtime (cudaLaunchKernel, what <<<>>> calls) and through the driver
// (cuLaunchKernel on the same kernel's CUfunction, as cuBLAS and Triton launch), N
// cudaStreamSynchronize calls (entry + return probe), each timed as a whole; prints
// "runtime_ns=... driver_ns=... sync_ns=..." per call. bench/gpu/check.py runs it bare and
// under cirron-probe, interleaved: the difference is the cost of a hit of that kind.
//   launch_cost N
#include <cuda.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

__global__ void empty_kernel(int *p) { if (p) *p = 1; }

typedef CUresult (*launch_fn)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned,
			      unsigned, unsigned, CUstream, void **, void **);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20000;
	void *cuda = dlopen("libcuda.so.1", RTLD_NOW);
	launch_fn launch = cuda ? (launch_fn)dlsym(cuda, "cuLaunchKernel") : NULL;
	cudaFunction_t f;
	int *null = NULL;
	void *params[] = { &null };
	double t0, rt, drv, sync;

	if (!launch || cudaGetFuncBySymbol(&f, (const void *)empty_kernel) != cudaSuccess) {
		fprintf(stderr, "launch_cost: no driver or kernel\n");
		return 1;
	}
	for (int i = 0; i < 100; i++)	/* warm up both paths */
		empty_kernel<<<1, 1>>>(NULL);
	cudaDeviceSynchronize();
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		empty_kernel<<<1, 1>>>(NULL);
	rt = (now_ns() - t0) / n;
	cudaDeviceSynchronize();
	t0 = now_ns();
	for (long i = 0; i < n; i++)
		launch((CUfunction)f, 1, 1, 1, 1, 1, 1, 0, 0, params, NULL);
	drv = (now_ns() - t0) / n;
	cudaDeviceSynchronize();
	t0 = now_ns();
	for (long i = 0; i < n / 10; i++)
		cudaStreamSynchronize(0);
	sync = (now_ns() - t0) / (n / 10);
	printf("runtime_ns=%.1f driver_ns=%.1f sync_ns=%.1f\n", rt, drv, sync);
	return 0;
}
