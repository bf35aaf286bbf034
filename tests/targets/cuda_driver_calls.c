// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A client of the CUDA driver API (libcuda.so.1: the stand-in, libcuda_standin.c) that also
// calls a runtime built on that driver (fake_cudart.c), a known number of times each: the
// driver calls are what cuBLAS, cuDNN and NCCL make, the runtime's own driver calls must
// not be counted twice. The counts below are what tests/e2e/test_cuda_counts.py expects.
//
//   cuda_driver_calls [--wait]   --wait: print "ready", call nothing before SIGUSR1
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define N_DRV_LAUNCH	40
#define N_DRV_LAUNCH_EX	3
#define N_DRV_GRAPH	2
#define N_DRV_H2D	3	/* 4096 bytes each */
#define N_DRV_D2H	2	/* 1000 bytes each */
#define N_DRV_D2D_ASYNC	1	/* 512 bytes */
#define N_DRV_ALLOC	4	/* 1 MiB each (the stand-in gives each an address) */
#define N_DRV_FREE	4	/* the first 3 of them, then an address never allocated */
#define N_RT_LAUNCH	10
#define N_RT_H2D	2	/* 100 bytes each */
#define N_RT_MALLOC	1	/* 64 KiB */
#define N_RT_FREE	1
#define N_RT_GRAPH	1

typedef int CUresult;
typedef uint64_t CUdeviceptr;
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned shmem, void *s, void **params,
			void **extra);
CUresult cuLaunchKernelEx(const void *config, void *f, void **params, void **extra);
CUresult cuGraphLaunch(void *g, void *s);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyDtoDAsync_v2(CUdeviceptr dst, CUdeviceptr src, size_t n, void *s);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult cuMemFree_v2(CUdeviceptr p);

typedef struct { unsigned x, y, z; } dim3;
int cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem, void *s);
int cudaMemcpy(void *dst, const void *src, size_t n, int kind);
int cudaMalloc(void **p, size_t n);
int cudaFree(void *p);
int cudaGraphLaunch(void *g, void *s);

typedef void *CUkernel;
void __cudaRegisterFunction(void **fatbin, const char *stub, char *fun, const char *name,
			    int limit, void *tid, void *bid, void *bdim, void *gdim, int *wsize);
int __cudaGetKernel(void **handle, const void *stub);
CUresult cuModuleGetFunction(void **f, void *module, const char *name);
CUresult cuLibraryGetKernel(CUkernel *k, void *library, const char *name);
CUresult cuKernelGetFunction(void **f, CUkernel k);

/* Host stubs, as nvcc makes one per kernel (it registers them at load) */
__attribute__((noinline)) void stub_a(void) { __asm__ volatile(""); }
__attribute__((noinline)) void stub_b(void) { __asm__ volatile(""); }

static volatile sig_atomic_t go;

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static void wait_for_usr1(void)
{
	sigset_t none;

	printf("ready\n");
	sigemptyset(&none);
	while (!go)
		sigsuspend(&none);
}

/* --names [--wait]: kernels named the ways real code makes them (tests/e2e/test_cuda_counts.py):
 * two registered at load and launched by handle through the runtime (5 and 3 launches), one
 * CUfunction from a module (4) and one from a library's CUkernel (2) through the driver.
 * --wait: the registrations and the module's function come before the SIGUSR1 an observer
 * attaches before sending. */
static int names(bool wait)
{
	dim3 one = { 1, 1, 1 };
	void *ha = NULL, *hb = NULL, *fm = NULL, *fl = NULL;
	CUkernel k = NULL;
	int i;

	__cudaRegisterFunction(NULL, (const char *)stub_a, "_Z8kernel_aPf", "_Z8kernel_aPf", -1,
			       NULL, NULL, NULL, NULL, NULL);
	__cudaRegisterFunction(NULL, (const char *)stub_b, "_Z8kernel_bii", "_Z8kernel_bii", -1,
			       NULL, NULL, NULL, NULL, NULL);
	cuModuleGetFunction(&fm, NULL, "_Z13driver_kernelv");
	if (wait)
		wait_for_usr1();
	__cudaGetKernel(&ha, (const void *)stub_a);	/* once a kernel, as nvcc's code does */
	for (i = 0; i < 5; i++)
		cudaLaunchKernel(ha, one, one, NULL, 0, NULL);
	__cudaGetKernel(&hb, (const void *)stub_b);
	for (i = 0; i < 3; i++)
		cudaLaunchKernel(hb, one, one, NULL, 0, NULL);
	for (i = 0; i < 4; i++)
		cuLaunchKernel(fm, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	cuLibraryGetKernel(&k, NULL, "_Z10lib_kernelf");
	cuKernelGetFunction(&fl, k);
	for (i = 0; i < 2; i++)
		cuLaunchKernel(fl, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	printf("done\n");
	return 0;
}

int main(int argc, char **argv)
{
	static char host[4096];
	struct sigaction sa = { .sa_handler = on_usr1 };
	dim3 one = { 1, 1, 1 };
	CUdeviceptr d[N_DRV_ALLOC] = { 0 };
	void *p = NULL;
	sigset_t usr1, none;
	int i;

	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc > 1 && !strcmp(argv[1], "--names"))
		return names(argc > 2 && !strcmp(argv[2], "--wait"));
	if (argc > 1 && !strcmp(argv[1], "--wait")) {
		printf("ready\n");
		sigemptyset(&none);
		while (!go)
			sigsuspend(&none);
	}
	for (i = 0; i < N_DRV_LAUNCH; i++)
		cuLaunchKernel((void *)0x1000, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	for (i = 0; i < N_DRV_LAUNCH_EX; i++)
		cuLaunchKernelEx(NULL, (void *)0x2000, NULL, NULL);
	for (i = 0; i < N_DRV_GRAPH; i++)
		cuGraphLaunch((void *)0x3000, NULL);
	for (i = 0; i < N_DRV_H2D; i++)
		cuMemcpyHtoD_v2(0x10000, host, 4096);
	for (i = 0; i < N_DRV_D2H; i++)
		cuMemcpyDtoH_v2(host, 0x10000, 1000);
	for (i = 0; i < N_DRV_D2D_ASYNC; i++)
		cuMemcpyDtoDAsync_v2(0x10000, 0x20000, 512, NULL);
	for (i = 0; i < N_DRV_ALLOC; i++)
		cuMemAlloc_v2(&d[i], 1 << 20);
	for (i = 0; i < N_DRV_FREE; i++)
		cuMemFree_v2(i < N_DRV_ALLOC - 1 ? d[i] : 0xdead0000);
	for (i = 0; i < N_RT_LAUNCH; i++)
		cudaLaunchKernel((const void *)0x4000, one, one, NULL, 0, NULL);
	for (i = 0; i < N_RT_H2D; i++)
		cudaMemcpy(host, host, 100, 1);
	for (i = 0; i < N_RT_MALLOC; i++)
		cudaMalloc(&p, 64 << 10);
	for (i = 0; i < N_RT_FREE; i++)
		cudaFree(p);
	for (i = 0; i < N_RT_GRAPH; i++)
		cudaGraphLaunch((void *)0x5000, NULL);
	printf("done\n");
	return 0;
}
