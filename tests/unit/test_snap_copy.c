// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// --snapshots, BPF's copy at a loop's end (user/snap/snap_copy.c): the plan the loader makes
// from a model's tensors, a copy made from it as BPF makes one (its segments, each grad found
// where it is at the copy), and the tensors' elements taken back out of the copy.
#include <stdlib.h>
#include "snap/snap_copy.h"
#include "unit.h"

static struct tensor_desc desc(void *data, int64_t rows, int64_t cols, bool transposed)
{
	struct tensor_desc d = { .impl = (uint64_t)(uintptr_t)data ^ 0x5a5a0,
				 .data = (uint64_t)(uintptr_t)data, .numel = rows * cols,
				 .dim = 2, .sizes = { rows, cols }, .td = TD_FLOAT32,
				 .elem_size = 4, .device_type = 0 };

	d.strides[0] = transposed ? 1 : cols;
	d.strides[1] = transposed ? rows : 1;
	d.storage_nbytes = d.numel * 4;
	return d;
}

/* What BPF does with a plan (bpf/snap_copy.bpf.h), the grads given (BPF finds them through
 * the TensorImpl chain). */
static void copy_as_bpf(const struct snap_copy_plan *pl, struct snap_copy *c, float **grads,
			const int64_t *grad_numel)
{
	for (uint32_t i = 0; i < pl->ntensors; i++) {
		c->grad_data[i] = (uint64_t)(uintptr_t)grads[i];
		c->grad_numel[i] = grads[i] ? (uint64_t)grad_numel[i] : 0;
	}
	for (uint32_t i = 0; i < pl->nsegs; i++) {
		const struct snap_copy_seg *s = &pl->seg[i];
		uint64_t src = s->grad ? c->grad_data[s->tensor] : pl->t[s->tensor].data;

		ASSERT_TRUE(s->len <= SNAP_COPY_CHUNK && s->dst_off + s->len <= SNAP_COPY_BYTES,
			    "a segment within the copy");
		if (src)
			memcpy(&c->data[s->dst_off], (const void *)(uintptr_t)(src + s->src_off),
			       s->len);
	}
}

static void plan_and_copy_back(void)
{
	static float w1[3 * 5], g1[3 * 5], w2[8 * 1500], g2[8 * 1500], bias[7];
	float *grads[3] = { g1, g2, NULL };	/* bias has no grad */
	int64_t numel[3] = { 15, 12000, 7 };
	struct torch_layout l = { .autograd_meta = 8, .grad = 40 };
	struct tensor_desc d1 = desc(w1, 3, 5, true), d2 = desc(w2, 8, 1500, false);
	struct tensor_desc db = desc(bias, 1, 7, false), g1d = d1, g2d = d2, g, gb;
	struct snap_copy_src src = {};
	struct snap_copy_plan pl;
	const uint8_t *cw, *cg;
	float out[12000];
	uint64_t n = 0;
	bool has;

	for (int i = 0; i < 15; i++) {
		w1[i] = (float)i;
		g1[i] = (float)-i;
	}
	for (int i = 0; i < 12000; i++) {
		w2[i] = (float)i * 0.5f;
		g2[i] = (float)i * 2.0f;
	}
	g1d.data = (uint64_t)(uintptr_t)g1;
	g2d.data = (uint64_t)(uintptr_t)g2;
	snap_copy__plan_begin(&pl, &l);
	ASSERT_EQ(pl.grad, 40, "the grad's place in AutogradMeta");
	ASSERT_TRUE(snap_copy__plan_add(&pl, &d1, &g1d), "a transposed view: dense");
	ASSERT_TRUE(snap_copy__plan_add(&pl, &d2, &g2d), "48000 bytes: 12 pieces each");
	ASSERT_TRUE(snap_copy__plan_add(&pl, &db, NULL), "no grad yet");
	ASSERT_EQ(pl.ntensors, 3, "tensors");
	ASSERT_EQ(pl.nsegs, 2 + 24 + 2, "pieces of up to 4 KiB, weights and grads");
	ASSERT_EQ(pl.t[1].off % 8, 0, "aligned");
	ASSERT_TRUE(pl.t[1].off >= pl.t[0].off + 2 * pl.t[0].bytes, "no overlap");

	src.plan = pl;
	src.copy = calloc(1, sizeof(*src.copy));
	if (!ASSERT_OK_PTR(src.copy, "calloc"))
		return;
	copy_as_bpf(&pl, src.copy, grads, numel);

	cw = snap_copy__bytes(&src, &d1, &g, &has, &cg);
	if (!ASSERT_OK_PTR(cw, "the transposed weight is in the copy") ||
	    !ASSERT_TRUE(has && cg, "and its grad"))
		goto out;
	torch_tensor__gather_local(&d1, cw, 1, 1, out, &n);
	ASSERT_EQ(n, 15, "all its elements");
	ASSERT_EQ(out[1], 3.0f, "row-major: [0][1] is storage element 3 (strides 1, 3)");
	torch_tensor__gather_local(&g, cg, 1, 1, out, &n);
	ASSERT_EQ(out[1], -3.0f, "the grad laid out as its parameter");
	cw = snap_copy__bytes(&src, &d2, &g, &has, &cg);
	torch_tensor__gather_local(&d2, cw, 1, 1, out, &n);
	ASSERT_EQ(out[11999], 5999.5f, "the last element, past eleven pieces");
	torch_tensor__gather_local(&g, cg, 1024, 2, out, &n);
	ASSERT_EQ(n, 12, "sampled: blocks of 2 at 0, 2048, ... 10240");
	ASSERT_EQ(out[2], 4096.0f, "the second block begins at element 2048");
	cw = snap_copy__bytes(&src, &db, &gb, &has, &cg);
	ASSERT_TRUE(cw && !has && !cg, "a parameter without grad: none in the copy");
	numel[0] = 14;	/* a grad of another shape (made again since): not this parameter's */
	copy_as_bpf(&pl, src.copy, grads, numel);
	ASSERT_TRUE(snap_copy__bytes(&src, &d1, &g, &has, &cg) && !has, "not taken as its grad");
	d1.impl++;	/* another tensor: the model changed since the plan */
	ASSERT_TRUE(!snap_copy__bytes(&src, &d1, &g, &has, &cg), "not in the copy");
out:
	free(src.copy);
}

static void what_is_not_copied(void)
{
	static float big[40000], w[16], wt[16];
	struct torch_layout l = {};
	struct snap_copy_plan pl;
	struct tensor_desc cuda = desc(w, 4, 4, false), strided = desc(w, 4, 2, false);
	struct tensor_desc d = desc(w, 4, 4, false), other = desc(wt, 4, 4, true);
	struct tensor_desc large = desc(big, 200, 200, false), ints = desc(w, 4, 4, false);
	struct tensor_desc fits = desc(big, 100, 100, false);

	snap_copy__plan_begin(&pl, &l);
	cuda.device_type = 1;
	ASSERT_TRUE(snap_copy__plan_add(&pl, &cuda, NULL), "a CUDA tensor: listed, not copied");
	ints.td = TD_OTHER;
	ASSERT_TRUE(snap_copy__plan_add(&pl, &ints, NULL), "int64: no stats, not copied");
	ASSERT_EQ(pl.ntensors, 0, "neither is in the plan");
	strided.strides[0] = 4;	/* every other column of a 4x4: gaps */
	ASSERT_FALSE(snap_copy__plan_add(&pl, &strided, NULL), "a view with gaps: no plan");
	ASSERT_FALSE(snap_copy__plan_add(&pl, &d, &other), "a grad laid out otherwise: no plan");
	snap_copy__plan_begin(&pl, &l);
	ASSERT_TRUE(snap_copy__plan_add(&pl, &fits, &fits), "2 x 40 KB: fits");
	ASSERT_EQ(pl.nsegs, 2 * 10, "in 4 KiB pieces");
	snap_copy__plan_begin(&pl, &l);
	ASSERT_FALSE(snap_copy__plan_add(&pl, &large, &large), "2 x 160 KB: over 128 KiB");
	snap_copy__plan_begin(&pl, &l);
	for (int i = 0; i < SNAP_COPY_TENSORS; i++) {
		d.impl = (uint64_t)i + 1;
		ASSERT_TRUE(snap_copy__plan_add(&pl, &d, NULL), "64 small tensors");
	}
	ASSERT_FALSE(snap_copy__plan_add(&pl, &d, NULL), "a 65th");
}

int main(void)
{
	RUN_TEST(plan_and_copy_back);
	RUN_TEST(what_is_not_copied);
	return unit__done();
}
