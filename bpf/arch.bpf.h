/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * What differs between architectures, for the BPF programs: where a probed function's
 * arguments and return address are at its first instruction, and syscall numbers.
 * Built with -D__TARGET_ARCH_x86 or -D__TARGET_ARCH_arm64 (Makefile ARCH).
 */
#ifndef __CIRRON_ARCH_BPF_H
#define __CIRRON_ARCH_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_tracing.h>


#if defined(__TARGET_ARCH_x86)
/* x86-64 SysV: rdi rsi rdx rcx r8 r9, then the stack; the call pushed the return address */
#define ARCH_ARG6(ctx)		((ctx)->r9)	/* no PT_REGS_PARM6 in libbpf 1.1 */
#define ARCH_ARG7(ctx)		0		/* the 7th and 8th are on the stack: the */
#define ARCH_ARG8(ctx)		0		/* loader never asks for reg6, reg7 here */
#define ARCH_STACK_ARG0		8		/* [sp + 8] at entry: the first stack argument */
#define ARCH_NR_WRITE		1
#elif defined(__TARGET_ARCH_arm64)
/* AAPCS64: x0-x7, then the stack; the return address is in x30 (lr), not on the stack */
#define ARCH_ARG6(ctx)		(((const struct user_pt_regs *)(ctx))->regs[5])
#define ARCH_ARG7(ctx)		(((const struct user_pt_regs *)(ctx))->regs[6])
#define ARCH_ARG8(ctx)		(((const struct user_pt_regs *)(ctx))->regs[7])
#define ARCH_STACK_ARG0		0		/* [sp] at entry: the first stack argument */
#define ARCH_NR_WRITE		64
#else
#error "cirron-probe's BPF programs support __TARGET_ARCH_x86 and __TARGET_ARCH_arm64"
#endif

/* The return address of a function at its first instruction (a uprobe at its entry). */
static __always_inline __u64 arch_entry_return_address(struct pt_regs *ctx)
{
	__u64 ra = 0;

#if defined(__TARGET_ARCH_x86)
	bpf_probe_read_user(&ra, sizeof(ra), (void *)PT_REGS_SP(ctx));
#else
	ra = PT_REGS_RET(ctx);	/* x30 */
#endif
	return ra;
}

/* How much higher the stack pointer is at the instruction a call returns to than at the
 * called function's entry: x86-64's ret pops the return address, arm64's leaves sp as is. */
#if defined(__TARGET_ARCH_x86)
#define ARCH_RETURN_SP_DELTA	8
#else
#define ARCH_RETURN_SP_DELTA	0
#endif

#endif /* __CIRRON_ARCH_BPF_H */
