/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* Marks: one event per write of a traced process to fd 1 or 2, with a bounded copy; shared by
 * the hooks on the write path (writes.bpf.c, ondemand/write_fentry.bpf.c). */
#ifndef __CIRRON_WRITES_BPF_H
#define __CIRRON_WRITES_BPF_H

#include "maps.bpf.h"
#include "emit.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct write_event);
} write_buf SEC(".maps") __weak;

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

#endif /* __CIRRON_WRITES_BPF_H */
