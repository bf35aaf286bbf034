// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Snapshot stats (sink/tensor_stats.c) per dtype, with NaN and infinities, at the histogram's
// edges; and the reads they are computed from (pyobj/torch_tensor.c's gather): strided views
// and the sample taken beyond --snapshot-max-mb, read from this process's own memory.
#include <math.h>
#include <unistd.h>
#include "sink/tensor_stats.h"
#include "pyobj/torch_tensor.h"
#include "unit.h"

static bool near(double a, double b)
{
	return fabs(a - b) <= 1e-12 * (fabs(b) > 1 ? fabs(b) : 1);
}

#define ASSERT_NEAR(a, e, name) ({						\
	double ___a = (a), ___e = (e);						\
	bool ___ok = near(___a, ___e);						\
	if (!___ok)								\
		UNIT_FAIL("unexpected %s: actual %.17g != expected %.17g", (name), ___a, ___e); \
	___ok;									\
})

static void float32_stats(void)
{
	float v[] = { 1, 2, 3, 4 };
	struct tensor_stats s;
	uint64_t want[TENSOR_STATS_BINS] = { [0] = 1, [5] = 1, [10] = 1, [15] = 1 };

	tensor_stats__compute(v, 4, SD_FLOAT32, &s);
	ASSERT_EQ(s.count, 4, "count");
	ASSERT_EQ(s.nonfinite, 0, "nonfinite");
	ASSERT_NEAR(s.mean, 2.5, "mean");
	ASSERT_NEAR(s.std, sqrt(5.0 / 3), "std, unbiased as torch.std");
	ASSERT_NEAR(s.min, 1, "min");
	ASSERT_NEAR(s.max, 4, "max");
	ASSERT_NEAR(s.norm, sqrt(30), "L2 norm");
	/* width (4 - 1) / 16: 2 falls in bin 5.33 -> 5, 3 in 10.67 -> 10, max in the last */
	for (int i = 0; i < TENSOR_STATS_BINS; i++)
		ASSERT_EQ(s.hist[i], want[i], "histogram bin");
}

static void float64_stats(void)
{
	double v[] = { -1e300, 1e300, 0.5 };
	struct tensor_stats s;

	tensor_stats__compute(v, 3, SD_FLOAT64, &s);
	ASSERT_EQ(s.count, 3, "count");
	ASSERT_NEAR(s.mean, 0.5 / 3, "mean of huge opposites: summed as double");
	ASSERT_NEAR(s.min, -1e300, "min");
	ASSERT_NEAR(s.max, 1e300, "max");
	ASSERT_TRUE(isinf(s.norm), "norm overflows as torch's does in float64");
	ASSERT_EQ(s.hist[0] + s.hist[8] + s.hist[15], 3, "-max, 0.5 and max");
	ASSERT_EQ(s.hist[8], 1, "0.5 just above the middle edge: bin 8");
}

static void bfloat16_values(void)
{
	/* bfloat16 is float32's upper half */
	uint16_t v[] = { 0x3f80, 0xc000, 0x3f00, 0x3f81, 0x7f80, 0xffc0, 0x0001 };

	ASSERT_DBL_EQ(tensor_stats__value(v, SD_BFLOAT16, 0), 1.0, "1");
	ASSERT_DBL_EQ(tensor_stats__value(v, SD_BFLOAT16, 1), -2.0, "-2");
	ASSERT_DBL_EQ(tensor_stats__value(v, SD_BFLOAT16, 2), 0.5, "0.5");
	ASSERT_DBL_EQ(tensor_stats__value(v, SD_BFLOAT16, 3), 1.0078125, "1 + 2^-7");
	ASSERT_TRUE(isinf(tensor_stats__value(v, SD_BFLOAT16, 4)), "inf");
	ASSERT_TRUE(isnan(tensor_stats__value(v, SD_BFLOAT16, 5)), "NaN");
	ASSERT_DBL_EQ(tensor_stats__value(v, SD_BFLOAT16, 6), ldexp(1, -133), "subnormal");
}

static void float16_values(void)
{
	uint16_t v[] = { 0x3c00, 0xc000, 0x7bff, 0x0001, 0x03ff, 0x0400, 0x7c00, 0xfc00, 0x7e00,
			 0x8000, 0x3555 };

	ASSERT_DBL_EQ(tensor_stats__value(v, SD_FLOAT16, 0), 1.0, "1");
	ASSERT_DBL_EQ(tensor_stats__value(v, SD_FLOAT16, 1), -2.0, "-2");
	ASSERT_DBL_EQ(tensor_stats__value(v, SD_FLOAT16, 2), 65504.0, "largest finite");
	ASSERT_DBL_EQ(tensor_stats__value(v, SD_FLOAT16, 3), ldexp(1, -24), "smallest subnormal");
	ASSERT_DBL_EQ(tensor_stats__value(v, SD_FLOAT16, 4), ldexp(1023, -24), "largest subnormal");
	ASSERT_DBL_EQ(tensor_stats__value(v, SD_FLOAT16, 5), ldexp(1, -14), "smallest normal");
	ASSERT_TRUE(isinf(tensor_stats__value(v, SD_FLOAT16, 6)) &&
		    tensor_stats__value(v, SD_FLOAT16, 6) > 0, "+inf");
	ASSERT_TRUE(isinf(tensor_stats__value(v, SD_FLOAT16, 7)) &&
		    tensor_stats__value(v, SD_FLOAT16, 7) < 0, "-inf");
	ASSERT_TRUE(isnan(tensor_stats__value(v, SD_FLOAT16, 8)), "NaN");
	ASSERT_TRUE(tensor_stats__value(v, SD_FLOAT16, 9) == 0 &&
		    signbit(tensor_stats__value(v, SD_FLOAT16, 9)), "-0");
	ASSERT_DBL_EQ(tensor_stats__value(v, SD_FLOAT16, 10), 0.333251953125, "1/3 rounded");
}

static void half_stats(void)
{
	uint16_t h[] = { 0x3c00, 0x4000, 0x4200 };	/* 1, 2, 3 */
	struct tensor_stats s;

	tensor_stats__compute(h, 3, SD_FLOAT16, &s);
	ASSERT_NEAR(s.mean, 2, "float16 mean");
	ASSERT_NEAR(s.std, 1, "float16 std");
	ASSERT_NEAR(s.norm, sqrt(14), "float16 norm");
	h[0] = 0x3f80;
	h[1] = 0x4000;
	h[2] = 0x4040;	/* bfloat16 1, 2, 3 */
	tensor_stats__compute(h, 3, SD_BFLOAT16, &s);
	ASSERT_NEAR(s.mean, 2, "bfloat16 mean");
	ASSERT_NEAR(s.max, 3, "bfloat16 max");
}

static void nonfinite_left_out(void)
{
	float v[] = { 1, NAN, INFINITY, 3, -INFINITY };
	struct tensor_stats s;

	tensor_stats__compute(v, 5, SD_FLOAT32, &s);
	ASSERT_EQ(s.count, 2, "finite");
	ASSERT_EQ(s.nonfinite, 3, "NaN and both infinities");
	ASSERT_NEAR(s.mean, 2, "mean of the finite");
	ASSERT_NEAR(s.std, sqrt(2), "std of the finite");
	ASSERT_NEAR(s.norm, sqrt(10), "norm of the finite");
	ASSERT_EQ(s.hist[0] + s.hist[15], 2, "only the finite in the histogram");

	v[0] = v[3] = NAN;
	tensor_stats__compute(v, 5, SD_FLOAT32, &s);
	ASSERT_EQ(s.count, 0, "none finite");
	ASSERT_TRUE(isnan(s.mean) && isnan(s.std) && isnan(s.min) && isnan(s.max), "NaN stats");
	ASSERT_DBL_EQ(s.norm, 0, "norm of nothing");
	tensor_stats__compute(v, 0, SD_FLOAT32, &s);
	ASSERT_EQ(s.count + s.nonfinite, 0, "empty tensor");
}

static void histogram_edges(void)
{
	float v[17], same[5] = { 7, 7, 7, 7, 7 }, one = 2;
	struct tensor_stats s;

	for (int i = 0; i < 17; i++)
		v[i] = (float)i;	/* 0..16: width 1, k on the lower edge of bin k */
	tensor_stats__compute(v, 17, SD_FLOAT32, &s);
	for (int i = 0; i < 15; i++)
		ASSERT_EQ(s.hist[i], 1, "one per bin, lower edge included");
	ASSERT_EQ(s.hist[15], 2, "the last bin holds 15 and max (closed on the right)");

	tensor_stats__compute(same, 5, SD_FLOAT32, &s);
	ASSERT_EQ(s.hist[8], 5, "min == max: all in the middle bin, as torch.histc");
	ASSERT_NEAR(s.std, 0, "constant: std 0");

	tensor_stats__compute(&one, 1, SD_FLOAT32, &s);
	ASSERT_EQ(s.hist[8], 1, "one element: the middle bin, as torch.histc");
	ASSERT_TRUE(isnan(s.std), "std of one element: NaN, as torch.std");
}

static void sampled_count(void)
{
	ASSERT_EQ(torch_tensor__sampled_count(10, 1, 1024), 10, "every 1: all");
	ASSERT_EQ(torch_tensor__sampled_count(10, 3, 2), 4, "0 1 . . . . 6 7 . .");
	ASSERT_EQ(torch_tensor__sampled_count(7, 3, 2), 3, "0 1 . . . . 6");
	ASSERT_EQ(torch_tensor__sampled_count(5, 10, 1024), 5, "less than one block");
	ASSERT_EQ(torch_tensor__sampled_count(0, 4, 1024), 0, "empty");
	ASSERT_EQ(torch_tensor__sampled_count(1000000, 100, 1), 10000, "1%, block 1");
	ASSERT_EQ(torch_tensor__sampled_count(3 * 1024 * 8 + 5, 8, 1024), 3 * 1024 + 5,
		  "blocks of 1024, one in 8, and a partial first block at the end");
}

/* A tensor_desc over this process's own buffer. */
static struct tensor_desc view_of(const float *storage, int64_t offset, int dim,
				  const int64_t *sizes, const int64_t *strides)
{
	struct tensor_desc d = { .data = (uint64_t)(uintptr_t)storage, .storage_offset = offset,
				 .dim = dim, .td = TD_FLOAT32, .elem_size = 4, .numel = 1 };

	for (int i = 0; i < dim; i++) {
		d.sizes[i] = sizes[i];
		d.strides[i] = strides[i];
		d.numel *= sizes[i];
	}
	return d;
}

static void gather_views(void)
{
	float storage[24], out[24];
	int64_t sizes[] = { 4, 3 }, tstrides[] = { 1, 4 }, cstrides[] = { 3, 1 };
	uint64_t n = 0, bytes = 0;
	struct tensor_desc d;

	for (int i = 0; i < 24; i++)
		storage[i] = (float)i;
	/* a [3, 4] tensor from element 2, transposed: [4, 3] with strides (1, 4) */
	d = view_of(storage, 2, 2, sizes, tstrides);
	if (!ASSERT_OK(torch_tensor__gather(getpid(), &d, 1, 1, out, &n, &bytes), "transposed"))
		return;
	ASSERT_EQ(n, 12, "all elements");
	ASSERT_EQ(bytes, 48, "bytes read");
	for (int r = 0; r < 4; r++)
		for (int c = 0; c < 3; c++)
			ASSERT_DBL_EQ(out[r * 3 + c], storage[2 + r + 4 * c], "row-major order");

	d = view_of(storage, 1, 2, sizes, cstrides);	/* contiguous: one read */
	ASSERT_OK(torch_tensor__gather(getpid(), &d, 1, 1, out, &n, &bytes), "contiguous");
	for (int i = 0; i < 12; i++)
		ASSERT_DBL_EQ(out[i], storage[1 + i], "contiguous element");

	/* sampled, blocks of 2, one in 3: row-major indices 0 1 6 7 */
	d = view_of(storage, 2, 2, sizes, tstrides);
	ASSERT_OK(torch_tensor__gather(getpid(), &d, 3, 2, out, &n, &bytes), "sampled view");
	ASSERT_EQ(n, torch_tensor__sampled_count(12, 3, 2), "as many as sampled_count says");
	ASSERT_DBL_EQ(out[0], storage[2], "index 0: (0, 0)");
	ASSERT_DBL_EQ(out[1], storage[2 + 4], "index 1: (0, 1)");
	ASSERT_DBL_EQ(out[2], storage[2 + 2 + 0], "index 6: (2, 0)");
	ASSERT_DBL_EQ(out[3], storage[2 + 2 + 4], "index 7: (2, 1)");
	d = view_of(storage, 0, 2, sizes, cstrides);
	ASSERT_OK(torch_tensor__gather(getpid(), &d, 5, 1, out, &n, &bytes), "sampled flat");
	ASSERT_EQ(n, 3, "indices 0 5 10");
	ASSERT_DBL_EQ(out[2], 10, "index 10");

	d.data = 8;	/* unmapped */
	ASSERT_EQ(torch_tensor__gather(getpid(), &d, 1, 1, out, &n, &bytes), -EIO, "unreadable");
}

int main(void)
{
	RUN_TEST(float32_stats);
	RUN_TEST(float64_stats);
	RUN_TEST(bfloat16_values);
	RUN_TEST(float16_values);
	RUN_TEST(half_stats);
	RUN_TEST(nonfinite_left_out);
	RUN_TEST(histogram_edges);
	RUN_TEST(sampled_count);
	RUN_TEST(gather_views);
	return unit__done();
}
