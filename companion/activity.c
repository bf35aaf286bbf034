// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// CUPTI's activity buffers: given to CUPTI when it asks, read when it hands them back
// (a flush, or a full buffer, on the flushing thread or one of CUPTI's), each kernel, copy and
// memset record turned into a record of bpf/gpu_batch.h. Kernel names go over once each
// (queue__name); the rest of CUPTI's record stays here.
#include <stdlib.h>
#include "companion.h"
#include "cupti_fns.h"

#define BUFFER_SIZE	(1u << 20)	/* a buffer CUPTI fills: ~4500 kernel records */

static const CUpti_ActivityKind kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,
};

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUFFER_SIZE);
	*size = *buffer ? BUFFER_SIZE : 0;
	*max_records = 0;
}

/* One CUPTI record as a batch record; false: not one of ours. */
static bool convert(const CUpti_Activity *a, struct cirron_gpu_rec *r)
{
	switch (a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)a;

		*r = (struct cirron_gpu_rec){ .type = GPU_REC_KERNEL, .corr = k->correlationId,
					      .sub = (uint8_t)k->deviceId, .a = k->start,
					      .b = k->end };
		r->c = (uint64_t)k->streamId << 32 | queue__name(k->name);
		return true;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;

		*r = (struct cirron_gpu_rec){ .type = GPU_REC_MEMCPY, .corr = m->correlationId,
					      .sub = m->copyKind, .a = m->start, .b = m->end,
					      .c = m->bytes };
		return true;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;

		*r = (struct cirron_gpu_rec){ .type = GPU_REC_MEMSET, .corr = m->correlationId,
					      .sub = (uint8_t)m->deviceId, .a = m->start,
					      .b = m->end, .c = m->bytes };
		return true;
	}
	default:
		return false;
	}
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *a = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (cupti_fns && cupti_fns->next_record(buffer, valid, &a) == CUPTI_SUCCESS) {
		struct cirron_gpu_rec r;

		if (convert(a, &r))
			queue__push(&r);
	}
	free(buffer);
}

int activity__enable(const struct cupti_fns *f)
{
	CUptiResult res = f->register_callbacks(buffer_requested, buffer_completed);

	for (size_t i = 0; res == CUPTI_SUCCESS && i < sizeof(kinds) / sizeof(kinds[0]); i++)
		res = f->activity_enable(kinds[i]);
	return (int)res;
}

void activity__disable(const struct cupti_fns *f)
{
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		f->activity_disable(kinds[i]);
}
