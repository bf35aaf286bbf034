// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A stand-in CUDA runtime for the benchmarks: it exports the libcudart symbols that
// probes/cudart.json names (cirron-probe recognises the library by cudaLaunchKernel), and
// every function begins with the 5-byte nop `nopl 0x0(%rax,%rax,1)` (0f 1f 44 00 00), the
// instruction -pg -mfentry -mnop-mcount puts at a function's entry. The real libcudart's
// functions begin with `push %rbp`. The kernel handles a uprobe on each differently (it
// emulates the push; it can turn a probed nop5 into a call), so the two libraries give the
// cost of a hit at each kind of entry. The functions do nothing and return cudaSuccess.
#define NOP5_FN(name, body)						\
	__asm__(".text\n\t.globl " #name "\n\t.type " #name ",@function\n\t.p2align 4\n"	\
		#name ":\n\t.byte 0x0f,0x1f,0x44,0x00,0x00\n\t" body "\n\t"	\
		".size " #name ",.-" #name "\n");

#define RET0 "xorl %eax,%eax\n\tret"

NOP5_FN(cudaLaunchKernel, RET0)
NOP5_FN(cudaMemcpy, RET0)
NOP5_FN(cudaMemcpyAsync, RET0)
NOP5_FN(cudaMalloc, "movq $0,(%rdi)\n\t" RET0)
NOP5_FN(cudaFree, RET0)
NOP5_FN(cudaStreamSynchronize, RET0)
NOP5_FN(cudaDeviceSynchronize, RET0)
NOP5_FN(cudaEventSynchronize, RET0)
NOP5_FN(cudaGetDeviceCount, "movl $0,(%rdi)\n\t" RET0)
