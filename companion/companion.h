/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * Inside the CUPTI companion library (libcirron_cupti.so): the parts its files share. It runs
 * in the job's process (loaded by the CUDA driver at cuInit through CUDA_INJECTION64_PATH),
 * so it keeps to what is needed: dormant until an observer attaches (no CUPTI subscription,
 * no buffers, one thread that looks at a semaphore 20 times a second), then CUPTI's activity
 * records and launch callbacks, handed over in batches (bpf/gpu_batch.h).
 */
#ifndef __CIRRON_COMPANION_H
#define __CIRRON_COMPANION_H

#include <stdbool.h>
#include <stdint.h>
#include "gpu_batch.h"

#define COMPANION_POLL_MS	50	/* how often the dormant thread looks at the semaphore */
#define COMPANION_FLUSH_MS	100	/* while active: records handed over this often */

/* The USDT semaphore the observer's uprobe raises (bpf/gpu_batch.h). */
extern volatile unsigned short cirron_gpu_batch_semaphore;
void cirron_gpu_batch(const struct cirron_gpu_batch *b);

/* queue.c: records on their way out. API records come from CUPTI's callbacks on the job's
 * threads (a lock-free ring); the rest from the flushing thread and CUPTI's buffer callbacks
 * (a queue under a mutex). */
int queue__start(void);		/* allocates the ring and queue: 0 or -ENOMEM */
void queue__stop(void);		/* frees them (callbacks must be off for a poll period) */
void queue__api(uint32_t corr, uint32_t kind);	/* from a callback: the call's entry, now */
void queue__push(const struct cirron_gpu_rec *r);
/* A kernel's name id (new names are queued as GPU_REC_NAME records first); 0: none. */
uint32_t queue__name(const char *name);
/* Moves the API ring's records into the queue: returns the time before which every API
 * call's record is in it (CLOCK_MONOTONIC ns), or 0 when some were still being written. */
uint64_t queue__drain_api(void);
/* Hands the queued records over in batches (cirron_gpu_batch), while the semaphore is up. */
void queue__send(void);
uint64_t queue__dropped(void);	/* records lost to a full ring or queue */
uint64_t mono_ns(void);

/* cupti.c: the libcupti the process maps, and the companion's use of it. */
int cupti__activate(void);	/* 0, or an enum gpu_state telling why not (state sent) */
void cupti__flush(void);	/* completed activity records into the queue */
void cupti__deactivate(void);	/* CUPTI given back (state sent) */
void cupti__clock_sample(void);	/* a GPU_REC_CLOCK into the queue */
void companion__state(enum gpu_state st, uint32_t result, uint64_t version);

/* activity.c: CUPTI's activity buffers (compiled against CUPTI's headers). */
struct cupti_fns;
int activity__enable(const struct cupti_fns *f);	/* 0 or a CUptiResult */
void activity__disable(const struct cupti_fns *f);

#endif /* __CIRRON_COMPANION_H */
