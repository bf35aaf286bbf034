// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A CUDA runtime built on the driver API, as the real one is: each runtime call the cudart
// probes name calls the matching libcuda entry point from this library's code. It is
// matched as the cudart group (it defines cudaLaunchKernel), so a session sees every call
// twice, at the runtime and at the driver probe: the test checks it is counted once.
// (libcudart.so.13 dlopens libcuda.so.1 and takes its entry points from cuGetProcAddress,
// which needs a real driver: with the stand-in it stops at initialization.) Its launches,
// copies and synchronize calls are told to a stand-in CUPTI as the runtime's calls
// (standin_api: libcuda_standin.c), and synchronize waits for the stand-in's fake GPU.
#include <stddef.h>
#include <stdint.h>

typedef int CUresult;
typedef uint64_t CUdeviceptr;
CUresult cuLaunchKernel(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx,
			unsigned by, unsigned bz, unsigned shmem, void *s, void **params,
			void **extra);
CUresult cuMemcpyHtoD_v2(CUdeviceptr dst, const void *src, size_t n);
CUresult cuMemcpyDtoH_v2(void *dst, CUdeviceptr src, size_t n);
CUresult cuMemcpyDtoD_v2(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemcpy(CUdeviceptr dst, CUdeviceptr src, size_t n);
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t n);
CUresult cuMemFree_v2(CUdeviceptr p);
CUresult cuDeviceGetCount(int *n);
CUresult cuGraphLaunch(void *g, void *s);
CUresult cuStreamSynchronize(void *s);
void standin_api(const char *api, int enter);

typedef struct { unsigned x, y, z; } dim3;

#define API __attribute__((visibility("default"), noinline))

API int cudaLaunchKernel(const void *f, dim3 g, dim3 b, void **args, size_t shmem, void *s)
{
	int err;

	standin_api("cudaLaunchKernel", 1);
	err = cuLaunchKernel((void *)f, g.x, g.y, g.z, b.x, b.y, b.z, (unsigned)shmem, s, args,
			     NULL);
	standin_api("cudaLaunchKernel", 0);
	return err;
}

static int memcpy_any(void *dst, const void *src, size_t n, int kind)
{
	switch (kind) {
	case 1: return cuMemcpyHtoD_v2((CUdeviceptr)dst, src, n);
	case 2: return cuMemcpyDtoH_v2(dst, (CUdeviceptr)src, n);
	case 3: return cuMemcpyDtoD_v2((CUdeviceptr)dst, (CUdeviceptr)src, n);
	default: return cuMemcpy((CUdeviceptr)dst, (CUdeviceptr)src, n);
	}
}

API int cudaMemcpy(void *dst, const void *src, size_t n, int kind)
{
	int err;

	standin_api("cudaMemcpy", 1);
	err = memcpy_any(dst, src, n, kind);
	standin_api("cudaMemcpy", 0);
	return err;
}

API int cudaMemcpyAsync(void *dst, const void *src, size_t n, int kind, void *s)
{
	(void)s;
	return memcpy_any(dst, src, n, kind);
}

API int cudaMalloc(void **p, size_t n) { return cuMemAlloc_v2((CUdeviceptr *)p, n); }
API int cudaFree(void *p) { return cuMemFree_v2((CUdeviceptr)p); }
API int cudaGraphLaunch(void *g, void *s) { return cuGraphLaunch(g, s); }
API int cudaStreamSynchronize(void *s) { cuStreamSynchronize(s); return 100; }
API int cudaDeviceSynchronize(void) { cuStreamSynchronize(NULL); return 100; }
API int cudaEventSynchronize(void *e) { (void)e; return 100; }
API int cudaGetDeviceCount(int *n) { return cuDeviceGetCount(n); }

/* What nvcc's code calls: each kernel registered at load (host stub, its mangled name), and
 * (CUDA 13) a handle made for a stub at its first launch, which the launches then pass. */
CUresult cuLibraryGetKernel(void **k, void *lib, const char *name);
CUresult cuKernelGetFunction(void **f, void *k);
#define MAX_KERNELS 16
static struct { const void *stub; const char *name; void *handle; } kernels[MAX_KERNELS];
static int nkernels;

API void __cudaRegisterFunction(void **fatbin, const char *stub, char *fun, const char *name,
				int limit, void *tid, void *bid, void *bdim, void *gdim, int *wsize)
{
	(void)fatbin; (void)name; (void)limit; (void)tid; (void)bid; (void)bdim; (void)gdim;
	(void)wsize;
	if (nkernels < MAX_KERNELS) {
		kernels[nkernels].stub = stub;
		kernels[nkernels++].name = fun;
	}
}

/* The handle is a CUkernel the runtime gets from the driver by the kernel's name, as the
 * real runtime does; launches then go through its CUfunction. */
API int __cudaGetKernel(void **handle, const void *stub)
{
	for (int i = 0; i < nkernels; i++)
		if (kernels[i].stub == stub) {
			if (!kernels[i].handle &&
			    cuLibraryGetKernel(&kernels[i].handle, NULL, kernels[i].name))
				return 100;
			*handle = kernels[i].handle;
			return 0;
		}
	return 98;	/* cudaErrorInvalidDeviceFunction */
}
