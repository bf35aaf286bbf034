// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Marks (issue 18): the traced processes' writes to fds 1 and 2 (writes.bpf.h). The hooks, each
// attached only while some process is traced (user/attach/write_hook.c), cheapest for the
// node first: fentry on ksys_write (ondemand/write_fentry.bpf.c: no cost to other system
// calls), else a uprobe on the C library's write() per traced process (on_write_uprobe: none
// to other processes), else the raw syscall-entry tracepoint (on_write_tp: every system call
// of every process pays its check, ~75 ns). bench/mark_cost.sh and bench/syscall_cost.sh.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cirron.h"
#include "arch.bpf.h"
#include "maps.bpf.h"
#include "emit.bpf.h"
#include "writes.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

SEC("tp_btf/sys_enter")
int BPF_PROG(on_write_tp, struct pt_regs *regs, long id)
{
	if (id != ARCH_NR_WRITE)
		return 0;
	emit_write(PT_REGS_PARM1_CORE(regs), PT_REGS_PARM2_CORE(regs),
		   PT_REGS_PARM3_CORE(regs));
	return 0;
}

SEC("uprobe")
int on_write_uprobe(struct pt_regs *ctx)
{
	emit_write(PT_REGS_PARM1(ctx), PT_REGS_PARM2(ctx), PT_REGS_PARM3(ctx));
	return 0;
}