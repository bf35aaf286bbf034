/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* GPU time on a target's spans (docs/gpu-time.md): the CUPTI companion's batches in (the
 * events ring's EV_GPU_BATCH records), through gputime/gpu_join.h and gputime/gpu_spans.h, and the
 * spans they hold released onto the session; without the companion, the bound. */
#ifndef __CIRRON_OBSERVE_GPU_TIME_H
#define __CIRRON_OBSERVE_GPU_TIME_H

#include <stdbool.h>
#include <stddef.h>
#include <cjson/cJSON.h>
#include "attach/observer.h"

/* Its session started: every span from now on is followed (the root too). */
void gpu_time__start(struct observer *o, struct target *t);
/* The process an EV_GPU_BATCH record is of, or -1 (too short). */
int gpu_time__pid(const void *data, size_t size);
/* An EV_GPU_BATCH record of t (NULL: not traced; libbpf's ring_buffer_sample_fn contract:
 * 0). */
int gpu_time__event(struct target *t, const void *data, size_t size);
/* At every flush, before the batch: the last synchronize read, held spans that are complete
 * released (final: all of them). */
void gpu_time__flush(struct observer *o, struct target *t, bool final);
/* The batch's health: gpu_* figures (nothing when the process never had a companion). */
void gpu_time__health(const struct target *t, cJSON *health);
void gpu_time__free(struct target *t);

#endif
