// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A stand-in libcuda.so.1 for the driver-API probes (probes/cuda_driver.json): this machine
// has no NVIDIA driver, its CUDA toolkit no stubs/libcuda.so, and neither Debian (main) nor
// PyPI ships libcuda. It exports the driver entry points the probes name, with the driver's
// signatures, and each fails as a driver without a GPU would (CUDA_ERROR_NO_DEVICE), so
// their uprobes fire as on the real library; but allocations succeed, each with an address
// of its own (never mapped), so that what a process holds can be followed (its frees).
// Not a driver: nothing here launches or allocates anything.
//
// For the GPU-time tests it also does what the real driver does for a CUPTI client: cuInit
// loads the library CUDA_INJECTION64_PATH names and calls its InitializeInjection. With
// CIRRON_STANDIN_GPU_US=N it keeps a fake GPU: each launch "runs" N us (copies N/2) in
// order after the previous one, cuStreamSynchronize waits for the last, and what ran is told
// to a stand-in CUPTI if the process maps one (cupti_standin.c: its standin_cupti_* calls,
// found with dlsym), and written to CIRRON_STANDIN_GPU_LOG (one line per kernel or copy:
// kind, launch, start, end in CLOCK_MONOTONIC ns, and its name) for the tests to hold the
// observer's figures against.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CUDA_ERROR_NO_DEVICE 100

typedef int CUresult;
typedef uint64_t CUdeviceptr;
typedef void *CUfunction, *CUstream, *CUgraphExec;

/* Each entry point does a little work, so that it has a real prologue to probe. */
static volatile unsigned long calls;

#define ENTRY(name, ...) \
	__attribute__((visibility("default"), noinline)) CUresult name(__VA_ARGS__) \
	{ calls++; return CUDA_ERROR_NO_DEVICE; }

ENTRY(cuDriverGetVersion, int *v)
ENTRY(cuDeviceGetCount, int *n)
ENTRY(cuLaunchKernel_ptsz, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
      unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
ENTRY(cuLaunchKernelEx, const void *config, CUfunction f, void **params, void **extra)
ENTRY(cuLaunchKernelEx_ptsz, const void *config, CUfunction f, void **params, void **extra)
ENTRY(cuGraphLaunch, CUgraphExec g, CUstream s)
ENTRY(cuGraphLaunch_ptsz, CUgraphExec g, CUstream s)
ENTRY(cuMemcpy, CUdeviceptr dst, CUdeviceptr src, size_t n)
ENTRY(cuMemcpyAsync, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
ENTRY(cuMemcpyDtoH_v2, void *dst, CUdeviceptr src, size_t n)
ENTRY(cuMemcpyDtoD_v2, CUdeviceptr dst, CUdeviceptr src, size_t n)
ENTRY(cuMemcpyHtoDAsync_v2, CUdeviceptr dst, const void *src, size_t n, CUstream s)
ENTRY(cuMemcpyDtoHAsync_v2, void *dst, CUdeviceptr src, size_t n, CUstream s)
ENTRY(cuMemcpyDtoDAsync_v2, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
/* A distinct, never mapped device address per allocation; CUDA_SUCCESS. */
#define ALLOC(name, ...) \
	__attribute__((visibility("default"), noinline)) CUresult name(CUdeviceptr *p, size_t n, \
								       ##__VA_ARGS__) \
	{ calls++; *p = 0x7a0000000000ull + (calls << 24); (void)n; return 0; }

ALLOC(cuMemAlloc_v2)
ALLOC(cuMemAllocAsync, CUstream s)
ALLOC(cuMemAllocManaged, unsigned int flags)
ENTRY(cuMemFree_v2, CUdeviceptr p)
ENTRY(cuMemFreeAsync, CUdeviceptr p, CUstream s)
/* The calls that make a kernel's handle succeed, each with a handle of its own (never a
 * pointer to anything): what names a launch (probes/cuda_driver.json, cuda_kernel_name). */
#define HANDLE(name, out_t, ...) \
	__attribute__((visibility("default"), noinline)) CUresult name(out_t *out, __VA_ARGS__) \
	{ calls++; *out = (out_t)(uintptr_t)(0x6b0000000000ull + (calls << 12)); \
	  gpu_name(*out, NAME_OF); return 0; }

/* the fake GPU's names of the handles made (below) */
static void gpu_name(const void *handle, const char *name);
#define NAME_OF name
HANDLE(cuModuleGetFunction, CUfunction, void *module, const char *name)
HANDLE(cuLibraryGetKernel, void *, void *library, const char *name)
#undef NAME_OF
#define NAME_OF gpu_name_of(kernel)
static const char *gpu_name_of(const void *handle);
HANDLE(cuKernelGetFunction, CUfunction, void *kernel)

ENTRY(cuGetProcAddress_v2, const char *sym, void **pfn, int version, uint64_t flags, int *status)

/* The fake GPU (CIRRON_STANDIN_GPU_US), the injection at cuInit, and what a stand-in CUPTI
 * is told. */
#define GPU_NAMES 256
static struct { const void *handle; const char *name; } gpu_names[GPU_NAMES];
static int gpu_nnames;
static pthread_mutex_t gpu_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t gpu_busy_until;		/* CLOCK_MONOTONIC ns */
static int64_t real_minus_mono;
static long gpu_us = -1;		/* -1: not read yet; 0: no fake GPU */
static FILE *gpu_log;
static void (*cupti_enter)(const char *);
static void (*cupti_exit)(const char *);
static void (*cupti_work)(int, const char *, uint64_t, uint64_t, int, uint64_t);

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void gpu_name(const void *handle, const char *name)
{
	if (!name)
		return;
	pthread_mutex_lock(&gpu_lock);
	if (gpu_nnames < GPU_NAMES) {
		gpu_names[gpu_nnames].handle = handle;
		gpu_names[gpu_nnames++].name = strdup(name);
	}
	pthread_mutex_unlock(&gpu_lock);
}

static const char *gpu_name_of(const void *handle)
{
	const char *name = "standin_kernel";

	pthread_mutex_lock(&gpu_lock);
	for (int i = 0; i < gpu_nnames; i++)
		if (gpu_names[i].handle == handle)
			name = gpu_names[i].name;
	pthread_mutex_unlock(&gpu_lock);
	return name;
}

static void gpu_setup(void)
{
	const char *v = getenv("CIRRON_STANDIN_GPU_US"), *log = getenv("CIRRON_STANDIN_GPU_LOG");

	if (gpu_us >= 0)
		return;
	real_minus_mono = (int64_t)(clock_ns(CLOCK_REALTIME) - clock_ns(CLOCK_MONOTONIC));
	*(void **)&cupti_enter = dlsym(RTLD_DEFAULT, "standin_cupti_enter");
	*(void **)&cupti_exit = dlsym(RTLD_DEFAULT, "standin_cupti_exit");
	*(void **)&cupti_work = dlsym(RTLD_DEFAULT, "standin_cupti_work");
	if (log && *log) {
		gpu_log = fopen(log, "a");
		if (gpu_log)
			setvbuf(gpu_log, NULL, _IOLBF, 0);
	}
	gpu_us = v ? atol(v) : 0;
}

/* A call of api that runs work of kind (1 kernel, 2 copy) for us: in order on the fake GPU,
 * told to CUPTI inside the call's entry and exit, logged. */
static void gpu_run(const char *api, int kind, const char *name, long div, int copy_kind,
		    uint64_t bytes)
{
	uint64_t launch, start, end, us;

	if (gpu_us < 0)
		gpu_setup();
	us = (uint64_t)gpu_us / (uint64_t)div;
	if (cupti_enter)
		cupti_enter(api);
	if (gpu_us > 0) {
		pthread_mutex_lock(&gpu_lock);
		launch = clock_ns(CLOCK_MONOTONIC);
		start = launch + 2000 > gpu_busy_until ? launch + 2000 : gpu_busy_until;
		end = start + us * 1000;
		gpu_busy_until = end;
		pthread_mutex_unlock(&gpu_lock);
		if (cupti_work)
			cupti_work(kind, name, start + real_minus_mono, end + real_minus_mono,
				   copy_kind, bytes);
		if (gpu_log)
			fprintf(gpu_log, "%s %llu %llu %llu %s\n", kind == 1 ? "kernel" : "memcpy",
				(unsigned long long)launch, (unsigned long long)start,
				(unsigned long long)end, name);
	}
	if (cupti_exit)
		cupti_exit(api);
}

__attribute__((visibility("default"), noinline)) CUresult cuLaunchKernel(CUfunction f,
	unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
	unsigned shmem, CUstream s, void **params, void **extra)
{
	calls++;
	gpu_run("cuLaunchKernel", 1, gpu_name_of(f), 1, 0, 0);
	return CUDA_ERROR_NO_DEVICE;
}

__attribute__((visibility("default"), noinline)) CUresult cuMemcpyHtoD_v2(CUdeviceptr dst,
	const void *src, size_t n)
{
	calls++;
	gpu_run("cuMemcpyHtoD_v2", 2, "memcpy", 2, 1, n);
	return CUDA_ERROR_NO_DEVICE;
}

/* A runtime call's entry (enter 1) and exit, for the stand-in runtime (fake_cudart.c). */
__attribute__((visibility("default"))) void standin_api(const char *api, int enter)
{
	if (gpu_us < 0)
		gpu_setup();
	if (enter && cupti_enter)
		cupti_enter(api);
	else if (!enter && cupti_exit)
		cupti_exit(api);
}

/* Waits for the fake GPU (not probed: the runtime's synchronize calls are) */
__attribute__((visibility("default"), noinline)) CUresult cuStreamSynchronize(CUstream s)
{
	uint64_t until;
	struct timespec ts = { 0, 100000 };

	calls++;
	pthread_mutex_lock(&gpu_lock);
	until = gpu_busy_until;
	pthread_mutex_unlock(&gpu_lock);
	while (clock_ns(CLOCK_MONOTONIC) < until)
		nanosleep(&ts, NULL);
	return CUDA_ERROR_NO_DEVICE;
}

/* As the real driver: the library CUDA_INJECTION64_PATH names, loaded and initialized once. */
__attribute__((visibility("default"), noinline)) CUresult cuInit(unsigned int flags)
{
	static int done;
	const char *path = getenv("CUDA_INJECTION64_PATH");

	calls++;
	gpu_setup();
	if (!done && path && *path) {
		void *h = dlopen(path, RTLD_NOW);
		int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;

		done = 1;
		if (init)
			init();
		else
			fprintf(stderr, "libcuda stand-in: CUDA_INJECTION64_PATH %s: %s\n", path,
				dlerror());
	}
	return CUDA_ERROR_NO_DEVICE;
}
