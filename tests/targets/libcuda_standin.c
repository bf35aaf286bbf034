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
#include <stddef.h>
#include <stdint.h>

#define CUDA_ERROR_NO_DEVICE 100

typedef int CUresult;
typedef uint64_t CUdeviceptr;
typedef void *CUfunction, *CUstream, *CUgraphExec;

/* Each entry point does a little work, so that it has a real prologue to probe. */
static volatile unsigned long calls;

#define ENTRY(name, ...) \
	__attribute__((visibility("default"), noinline)) CUresult name(__VA_ARGS__) \
	{ calls++; return CUDA_ERROR_NO_DEVICE; }

ENTRY(cuInit, unsigned int flags)
ENTRY(cuDriverGetVersion, int *v)
ENTRY(cuDeviceGetCount, int *n)
ENTRY(cuLaunchKernel, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
      unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
ENTRY(cuLaunchKernel_ptsz, CUfunction f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
      unsigned by, unsigned bz, unsigned shmem, CUstream s, void **params, void **extra)
ENTRY(cuLaunchKernelEx, const void *config, CUfunction f, void **params, void **extra)
ENTRY(cuLaunchKernelEx_ptsz, const void *config, CUfunction f, void **params, void **extra)
ENTRY(cuGraphLaunch, CUgraphExec g, CUstream s)
ENTRY(cuGraphLaunch_ptsz, CUgraphExec g, CUstream s)
ENTRY(cuMemcpy, CUdeviceptr dst, CUdeviceptr src, size_t n)
ENTRY(cuMemcpyAsync, CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
ENTRY(cuMemcpyHtoD_v2, CUdeviceptr dst, const void *src, size_t n)
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
	{ calls++; *out = (out_t)(uintptr_t)(0x6b0000000000ull + (calls << 12)); return 0; }

HANDLE(cuModuleGetFunction, CUfunction, void *module, const char *name)
HANDLE(cuLibraryGetKernel, void *, void *library, const char *name)
HANDLE(cuKernelGetFunction, CUfunction, void *kernel)

ENTRY(cuGetProcAddress_v2, const char *sym, void **pfn, int version, uint64_t flags, int *status)
