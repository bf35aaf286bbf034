// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A stand-in libnccl.so.2 for the NCCL probes (probes/nccl.json): NCCL comes with CUDA
// builds of torch only, and no GPU is here. It exports the collectives the probes name, with
// NCCL's signatures; each returns ncclSuccess without doing anything, so that their uprobes
// fire as on the real library.
#include <stddef.h>

typedef int ncclResult_t;
typedef int ncclDataType_t;
typedef int ncclRedOp_t;
typedef void *ncclComm_t, *cudaStream_t;

static volatile unsigned long calls;	/* a real prologue to probe */

#define API __attribute__((visibility("default"), noinline))

API ncclResult_t ncclAllReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
			       ncclComm_t c, cudaStream_t st) { calls++; return 0; }
API ncclResult_t ncclReduceScatter(const void *s, void *r, size_t n, ncclDataType_t t,
				   ncclRedOp_t op, ncclComm_t c, cudaStream_t st) { calls++; return 0; }
API ncclResult_t ncclAllGather(const void *s, void *r, size_t n, ncclDataType_t t, ncclComm_t c,
			       cudaStream_t st) { calls++; return 0; }
API ncclResult_t ncclBroadcast(const void *s, void *r, size_t n, ncclDataType_t t, int root,
			       ncclComm_t c, cudaStream_t st) { calls++; return 0; }
API ncclResult_t ncclReduce(const void *s, void *r, size_t n, ncclDataType_t t, ncclRedOp_t op,
			    int root, ncclComm_t c, cudaStream_t st) { calls++; return 0; }
API ncclResult_t ncclSend(const void *s, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
			  cudaStream_t st) { calls++; return 0; }
API ncclResult_t ncclRecv(void *r, size_t n, ncclDataType_t t, int peer, ncclComm_t c,
			  cudaStream_t st) { calls++; return 0; }
