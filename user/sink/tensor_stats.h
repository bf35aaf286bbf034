/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TENSOR_STATS_H
#define __CIRRON_TENSOR_STATS_H

#include <stddef.h>
#include <stdint.h>

#define TENSOR_STATS_BINS 16

/* Element types the stats read (the same order as pyobj/torch_tensor.h's tensor_dtype). */
enum stats_dtype { SD_FLOAT32, SD_FLOAT64, SD_BFLOAT16, SD_FLOAT16 };

/* The SDK's per-tensor stats. Over the finite elements: mean; std, unbiased (n - 1) as
 * torch.std; min, max; norm, the L2 norm as torch.linalg.norm of the flattened tensor;
 * hist, 16 equal bins from min to max as torch.histc(bins=16, min=min, max=max) (the last
 * bin holds max). nonfinite counts NaN and infinities, left out of all the others. */
struct tensor_stats {
	uint64_t count, nonfinite;
	double mean, std, min, max, norm;
	uint64_t hist[TENSOR_STATS_BINS];
};

/* One element as a double. */
double tensor_stats__value(const void *elems, enum stats_dtype dt, size_t i);
/* Stats of n packed elements of type dt. */
void tensor_stats__compute(const void *elems, size_t n, enum stats_dtype dt,
			   struct tensor_stats *s);

#endif
