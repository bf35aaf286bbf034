// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <string.h>
#include "gputime/gpu_clock.h"

bool gpu_clock__add(struct gpu_clock *c, uint64_t mono_before, uint64_t gpu,
		    uint64_t mono_after)
{
	struct gpu_clock_sample s = { .gpu = gpu };

	if (mono_after < mono_before || (c->n && gpu <= c->s[c->n - 1].gpu))
		return false;
	s.half_width = (mono_after - mono_before) / 2;
	s.mono = mono_before + s.half_width;
	if (c->n == GPU_CLOCK_SAMPLES) {	/* the oldest goes */
		memmove(c->s, c->s + 1, (GPU_CLOCK_SAMPLES - 1) * sizeof(c->s[0]));
		c->n--;
	}
	c->s[c->n++] = s;
	return true;
}

/* mono - gpu, as a signed offset (CUPTI's wall-clock time is far above the monotonic one) */
static int64_t offset(const struct gpu_clock_sample *s)
{
	return (int64_t)(s->mono - s->gpu);
}

bool gpu_clock__to_mono(const struct gpu_clock *c, uint64_t gpu, uint64_t *mono,
			uint64_t *err_ns)
{
	const struct gpu_clock_sample *a, *b;
	size_t lo = 0, hi;
	int64_t off, moved;
	uint64_t err;

	if (!c->n)
		return false;
	if (gpu <= c->s[0].gpu || c->n == 1) {
		a = b = &c->s[0];
		if (c->n > 1 && gpu > c->s[0].gpu)
			a = b = &c->s[c->n - 1];
	} else if (gpu >= c->s[c->n - 1].gpu) {
		a = b = &c->s[c->n - 1];
	} else {
		hi = c->n - 1;	/* s[lo].gpu < gpu < s[hi].gpu */
		while (hi - lo > 1) {
			size_t mid = (lo + hi) / 2;

			if (c->s[mid].gpu <= gpu)
				lo = mid;
			else
				hi = mid;
		}
		a = &c->s[lo];
		b = &c->s[hi];
	}
	off = offset(a);
	moved = offset(b) - offset(a);
	if (a != b)
		off += (int64_t)((double)moved * (double)(gpu - a->gpu) / (double)(b->gpu - a->gpu));
	err = (a->half_width > b->half_width ? a->half_width : b->half_width) +
	      (uint64_t)(moved < 0 ? -moved : moved);
	if (mono)
		*mono = (uint64_t)((int64_t)gpu + off);
	if (err_ns)
		*err_ns = err;
	return true;
}

uint64_t gpu_clock__latest_gpu(const struct gpu_clock *c)
{
	return c->n ? c->s[c->n - 1].gpu : 0;
}
