/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* CUPTI's clock to CLOCK_MONOTONIC. CUPTI stamps GPU work with its own timestamps (on Linux
 * CLOCK_REALTIME, unless a client registered another clock); the companion samples the two
 * together (a CUPTI timestamp between two CLOCK_MONOTONIC reads, bpf/gpu_batch.h
 * GPU_REC_CLOCK) every round. A time is mapped by linear interpolation between the samples
 * around it, so a step or slew of the wall clock between two samples moves nothing outside
 * them; the error is said: half the wider sample, plus how far the offset moved between
 * them. Pure: no I/O. */
#ifndef __CIRRON_GPU_CLOCK_H
#define __CIRRON_GPU_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GPU_CLOCK_SAMPLES 128	/* ~13 s of samples at the companion's 100 ms rounds */

struct gpu_clock {
	struct gpu_clock_sample {
		uint64_t gpu;		/* CUPTI's timestamp */
		uint64_t mono;		/* the middle of the two CLOCK_MONOTONIC reads */
		uint64_t half_width;	/* half their distance: the sample's own error */
	} s[GPU_CLOCK_SAMPLES];	/* in order of gpu, the oldest first */
	size_t n;
};

/* A sample: mono_before <= the moment CUPTI read gpu <= mono_after. A sample out of order
 * (gpu not after the last one's) or with mono_after < mono_before is refused: false. */
bool gpu_clock__add(struct gpu_clock *c, uint64_t mono_before, uint64_t gpu,
		    uint64_t mono_after);
/* gpu in CLOCK_MONOTONIC ns, into *mono, and the error bound into *err_ns (either may be
 * NULL). Before the first sample or after the last, the nearest sample's offset is used.
 * False when there is no sample yet. */
bool gpu_clock__to_mono(const struct gpu_clock *c, uint64_t gpu, uint64_t *mono,
			uint64_t *err_ns);
/* The latest sample's CUPTI time (0: none): work that ended before it maps by interpolation. */
uint64_t gpu_clock__latest_gpu(const struct gpu_clock *c);

#endif
