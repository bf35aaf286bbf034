// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Per-tensor statistics of a weight or gradient snapshot, computed in the loader from the
// elements read out of the target (two passes: the histogram needs min and max first).
#include <math.h>
#include <string.h>
#include "sink/tensor_stats.h"

static float from_bits(uint32_t bits)
{
	float f;

	memcpy(&f, &bits, sizeof(f));
	return f;
}

/* IEEE half to float: subnormals, infinities and NaN included. */
static float half_to_float(uint16_t h)
{
	uint32_t sign = (uint32_t)(h >> 15) << 31, exp = (h >> 10) & 0x1f, mant = h & 0x3ff;

	if (exp == 0x1f)
		return from_bits(sign | 0x7f800000u | (mant << 13));
	if (exp == 0) {
		float v = ldexpf((float)mant, -24);

		return sign ? -v : v;
	}
	return from_bits(sign | ((exp + 112) << 23) | (mant << 13));
}

double tensor_stats__value(const void *elems, enum stats_dtype dt, size_t i)
{
	switch (dt) {
	case SD_FLOAT32: {
		float f;

		memcpy(&f, (const char *)elems + 4 * i, 4);
		return f;
	}
	case SD_FLOAT64: {
		double d;

		memcpy(&d, (const char *)elems + 8 * i, 8);
		return d;
	}
	case SD_BFLOAT16: {
		uint16_t b;

		memcpy(&b, (const char *)elems + 2 * i, 2);
		return from_bits((uint32_t)b << 16);
	}
	case SD_FLOAT16: {
		uint16_t h;

		memcpy(&h, (const char *)elems + 2 * i, 2);
		return half_to_float(h);
	}
	}
	return NAN;
}

void tensor_stats__compute(const void *elems, size_t n, enum stats_dtype dt,
			   struct tensor_stats *s)
{
	double sum = 0, sumsq = 0, m2 = 0, width;

	memset(s, 0, sizeof(*s));
	s->min = INFINITY;
	s->max = -INFINITY;
	for (size_t i = 0; i < n; i++) {
		double v = tensor_stats__value(elems, dt, i);

		if (!isfinite(v)) {
			s->nonfinite++;
			continue;
		}
		s->count++;
		sum += v;
		sumsq += v * v;
		s->min = v < s->min ? v : s->min;
		s->max = v > s->max ? v : s->max;
	}
	if (!s->count) {
		s->min = s->max = s->mean = s->std = NAN;
		return;
	}
	s->mean = sum / (double)s->count;
	s->norm = sqrt(sumsq);
	width = (s->max - s->min) / TENSOR_STATS_BINS;
	for (size_t i = 0; i < n; i++) {
		double v = tensor_stats__value(elems, dt, i), d;
		long bin;

		if (!isfinite(v))
			continue;
		d = v - s->mean;
		m2 += d * d;	/* second pass: no cancellation of sumsq - n * mean^2 */
		/* all equal: torch.histc widens the range to [min - 1, max + 1], so they
		 * land in the middle bin */
		bin = width > 0 ? (long)((v - s->min) / width) : TENSOR_STATS_BINS / 2;
		if (bin >= TENSOR_STATS_BINS)
			bin = TENSOR_STATS_BINS - 1;
		s->hist[bin < 0 ? 0 : bin]++;
	}
	s->std = s->count > 1 ? sqrt(m2 / (double)(s->count - 1)) : NAN;
}
