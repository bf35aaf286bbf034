/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* GPU time from the CUPTI companion (companion/, bpf/gpu_batch.h): at each hand-off, on the
 * companion's own thread, the batch is copied onto the events ring as one record, only as long
 * as its records. The uprobe that runs this is what raises the companion's semaphore. */
#ifndef __CIRRON_GPU_BPF_H
#define __CIRRON_GPU_BPF_H

#include "maps.bpf.h"
#include "gpu_batch.h"

/* The batch is read into per-CPU scratch first: bpf_ringbuf_output then sends the part that
 * holds records (a ring reservation's size must be a constant). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gpu_batch_event);
} gpu_scratch SEC(".maps") __weak;

static __always_inline void gpu_batch_copy(__u32 tgid, __u64 batch)
{
	__u32 zero = 0;
	struct gpu_batch_event *e = bpf_map_lookup_elem(&gpu_scratch, &zero);
	__u64 n, len;

	if (!e || bpf_probe_read_user(&e->batch, sizeof(e->batch), (void *)batch))
		return;
	if (e->batch.magic != CIRRON_GPU_MAGIC || e->batch.version != CIRRON_GPU_VERSION)
		return;
	e->type = EV_GPU_BATCH;
	e->pid = tgid;
	e->ts_ns = bpf_ktime_get_ns();
	n = e->batch.n;
	if (n > CIRRON_GPU_BATCH_RECS)
		n = CIRRON_GPU_BATCH_RECS;
	len = sizeof(*e) - sizeof(e->batch.recs) + n * sizeof(struct cirron_gpu_rec);
	if (len > sizeof(*e))
		len = sizeof(*e);
	if (bpf_ringbuf_output(&events, e, len, 0))
		count(&stats, STAT_GPU_BATCH_DROPS);
}

#endif /* __CIRRON_GPU_BPF_H */
