/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * GPU time from inside the process: what the CUPTI companion library (companion/, loaded by
 * CUDA_INJECTION64_PATH) hands the observer, in batches. Shared by the companion, the BPF
 * program that copies a batch (bpf/gpu.bpf.h) and the loader (user/tree/gpu_*.h,
 * user/observe/gpu_batches.c). Types and constants only; __u32/__u64.
 *
 * The hand-off: the companion calls cirron_gpu_batch(batch) with a batch of at most
 * CIRRON_GPU_BATCH_RECS records, only while its USDT semaphore (cirron_gpu_batch_semaphore,
 * in .probes; the function also holds the USDT probe cirron:gpu_batch) is not 0. The observer's uprobe on that function is attached with the semaphore
 * as its reference counter: the kernel raises it when the uprobe goes in and lowers it when
 * it goes out, which is what turns CUPTI on and off in the process.
 */
#ifndef __CIRRON_GPU_BATCH_H
#define __CIRRON_GPU_BATCH_H

#if !defined(__VMLINUX_H__)
#include <linux/types.h>
#endif

#define CIRRON_GPU_MAGIC	0x43475042u	/* "BPGC" little-endian: a batch of this layout */
#define CIRRON_GPU_VERSION	1
#define CIRRON_GPU_BATCH_RECS	127		/* records a batch: 4 KiB with its header */
#define CIRRON_GPU_NAME_CHUNK	24		/* name bytes one GPU_REC_NAME record holds */
#define CIRRON_GPU_NAME_MAX	1024		/* longer kernel names are cut */
#define CIRRON_GPU_SYMBOL	"cirron_gpu_batch"
#define CIRRON_GPU_SEMAPHORE	"cirron_gpu_batch_semaphore"

/* What a record is (cirron_gpu_rec.type). Times: API records in CLOCK_MONOTONIC (taken in
 * the CUPTI callback at the call's entry), activity records in CUPTI's clock (mapped to
 * CLOCK_MONOTONIC by the GPU_REC_CLOCK samples: user/gputime/gpu_clock.h). */
enum gpu_rec_type {
	GPU_REC_API = 1,	/* a launch, copy or memset call: corr; a = its entry (mono ns);
				 * b = tid << 32 | enum gpu_api_kind */
	GPU_REC_KERNEL,		/* a kernel ran: corr; a = start, b = end (CUPTI clock);
				 * c = stream << 32 | name id; sub = device */
	GPU_REC_MEMCPY,		/* a copy ran: corr; a, b as above; c = bytes; sub = copy kind */
	GPU_REC_MEMSET,		/* a memset ran: corr; a, b as above; c = bytes; sub = device */
	GPU_REC_NAME,		/* part of a kernel's name: corr = name id; sub = bytes here
				 * (CIRRON_GPU_NAME_CHUNK: more follow); the bytes in a, b, c */
	GPU_REC_CLOCK,		/* a clock sample: a = mono before, b = CUPTI's timestamp,
				 * c = mono after */
	GPU_REC_STATE,		/* the companion's state changed: sub = enum gpu_state;
				 * corr = a CUptiResult (0) ; a = mono ns; b = CUPTI's version;
				 * c = records CUPTI dropped so far */
	GPU_REC_WATERMARK,	/* the API record of every call made before a (mono ns) was
				 * handed over (their activity records follow as they end);
				 * c = records this companion dropped so far (ring or queue full) */
	GPU_REC__COUNT,
};

/* What an API record's call was (low 32 bits of b). */
enum gpu_api_kind {
	GPU_API_LAUNCH = 1,	/* a kernel launch (runtime or driver) */
	GPU_API_GRAPH,		/* a graph launch: its kernels share its correlation id */
	GPU_API_MEMCPY,
	GPU_API_MEMSET,
};

/* The companion's state (GPU_REC_STATE). */
enum gpu_state {
	GPU_STATE_ACTIVE = 1,	/* subscribed, activity on: records follow */
	GPU_STATE_OFF,		/* the observer left: CUPTI given back */
	GPU_STATE_NO_CUPTI,	/* the process maps no libcupti: nothing to use */
	GPU_STATE_OTHER_SUBSCRIBER,	/* another subscriber holds CUPTI (a torch.profiler,
					 * Nsight, ...): the companion stands aside */
	GPU_STATE_ERROR,	/* a CUPTI call failed (corr: its CUptiResult) */
};

struct cirron_gpu_rec {
	__u8 type;		/* enum gpu_rec_type */
	__u8 sub;
	__u16 pad;
	__u32 corr;		/* CUPTI's correlation id: an API call and what it ran share it */
	__u64 a, b, c;
};

struct cirron_gpu_batch {
	__u32 magic;		/* CIRRON_GPU_MAGIC */
	__u16 version;		/* CIRRON_GPU_VERSION */
	__u16 n;		/* records in recs[] */
	__u64 seq;		/* batches handed over so far by this companion */
	__u64 pad[2];
	struct cirron_gpu_rec recs[CIRRON_GPU_BATCH_RECS];
};

/* What the BPF program puts on the events ring: the batch as copied, after a tag the loader
 * tells records apart by (struct event's first field). Sent only as long as its records. */
struct gpu_batch_event {
	__u32 type;		/* EV_GPU_BATCH */
	__u32 pid;		/* tgid, as the host sees it */
	__u64 ts_ns;		/* CLOCK_MONOTONIC at the hand-off */
	struct cirron_gpu_batch batch;
};

#endif /* __CIRRON_GPU_BATCH_H */
