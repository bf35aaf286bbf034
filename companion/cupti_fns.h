/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * The CUPTI entry points the companion calls, taken with dlsym from the libcupti the process
 * already maps (torch's CUDA wheels load theirs at import): the companion links no libcupti,
 * so a process that never maps one pays nothing for it. Built against CUPTI 13.0's headers;
 * the record layouts it reads are the same in 12.8's (checked at build: cupti_offsets.c).
 */
#ifndef __CIRRON_CUPTI_FNS_H
#define __CIRRON_CUPTI_FNS_H

#include <cupti.h>

struct cupti_fns {
	CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*enable_callback)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain,
				       CUpti_CallbackId);
	CUptiResult (*activity_enable)(CUpti_ActivityKind);
	CUptiResult (*activity_disable)(CUpti_ActivityKind);
	CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
					  CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*flush_all)(uint32_t);
	CUptiResult (*next_record)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
	CUptiResult (*timestamp)(uint64_t *);
	CUptiResult (*version)(uint32_t *);
};

/* The table, once cupti__activate found libcupti (NULL before). */
extern const struct cupti_fns *cupti_fns;

#endif /* __CIRRON_CUPTI_FNS_H */
