// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Marks (issue 18): the traced processes' writes to fds 1 and 2, one event per write with a
// bounded copy. Two ways in, measured in bench/mark_cost.sh: the raw syscall-entry
// tracepoint, filtered here to armed traced processes and the write syscall (the default:
// the cheapest for the traced process, and no tracefs needed), and a uprobe on the C
// library's write() attached per traced pid (--marks uprobe). No reservation: the copy is
// built in a per-CPU buffer and sent with bpf_ringbuf_output, as long as it is.
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "cirron.h"
#include "arch.bpf.h"
#include "maps.bpf.h"
#include "emit.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct write_event);
} write_buf SEC(".maps");

static __always_inline void emit_write(__u64 fd, __u64 buf, __u64 len)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0, n;
	struct write_event *w;

	if ((fd != 1 && fd != 2) || !armed(tgid))
		return;
	w = bpf_map_lookup_elem(&write_buf, &zero);
	if (!w)
		return;
	n = len < CIRRON_WRITE_COPY ? (__u32)len : CIRRON_WRITE_COPY;
	w->type = EV_WRITE;
	w->pid = tgid;
	w->tid = (__u32)id;
	w->fd = (__u32)fd;
	w->ts_ns = bpf_ktime_get_ns();
	w->len = len;
	w->pad = 0;
	if (n > CIRRON_WRITE_COPY)	/* for the verifier */
		return;
	if (bpf_probe_read_user(w->data, n, (const void *)buf))
		n = 0;
	w->copied = n;
	if (bpf_ringbuf_output(&events, w, offsetof(struct write_event, data) + n,
			       wakeup_flags()))
		count(&stats, STAT_WRITE_DROPS);
}

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