// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The companion's use of CUPTI: the libcupti the process maps (never one of its own), taken
// at an observer's attach and given back at its detach. Activation subscribes (the one
// subscriber CUPTI before 13.2 allows: a torch.profiler or Nsight already holding it makes
// the companion stand aside and say so), enables the callbacks of launches, copies and
// memsets (API records: when and on which thread each call was made) and the activity of
// kernels, copies and memsets (what ran on the GPU, when). Deactivation disables both,
// flushes CUPTI's buffers and unsubscribes, so that a later profiler finds CUPTI free.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "companion.h"
#include "cupti_fns.h"

struct cbid_kind {
	CUpti_CallbackDomain domain;
	CUpti_CallbackId cbid;
	enum gpu_api_kind kind;
};

static const struct cbid_kind cbids[] = {
#include "cbids.h"
};

const struct cupti_fns *cupti_fns;
static struct cupti_fns fns;
static CUpti_SubscriberHandle sub;
static uint8_t rt_kind[CUPTI_RUNTIME_TRACE_CBID_SIZE], drv_kind[CUPTI_DRIVER_TRACE_CBID_SIZE];
static uint32_t version;

void companion__state(enum gpu_state st, uint32_t result, uint64_t ver)
{
	size_t drops = 0;
	struct cirron_gpu_rec r = { .type = GPU_REC_STATE, .sub = (uint8_t)st, .corr = result,
				    .a = mono_ns(), .b = ver };

	if (cupti_fns && st == GPU_STATE_ACTIVE)
		cupti_fns->dropped(NULL, 0, &drops);
	r.c = drops;
	queue__push(&r);
}

/* The first mapped file whose name holds "libcupti.so" (torch: nvidia/cu13/lib/libcupti.so.13,
 * nvidia/cuda_cupti/lib/libcupti.so.12). */
static int find_cupti(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *base = info->dlpi_name ? strrchr(info->dlpi_name, '/') : NULL;

	(void)size;
	if (base && strstr(base, "libcupti.so")) {
		snprintf(data, 4096, "%s", info->dlpi_name);
		return 1;
	}
	return 0;
}

static void *open_cupti(void)
{
	char path[4096] = "";

	dl_iterate_phdr(find_cupti, path);
	/* RTLD_NOLOAD: a handle on what is mapped, never a load of another copy */
	return *path ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : NULL;
}

#define SYM(field, name) (*(void **)&fns.field = dlsym(h, name))

static bool load_fns(void *h)
{
	return SYM(subscribe, "cuptiSubscribe") && SYM(unsubscribe, "cuptiUnsubscribe") &&
	       SYM(enable_callback, "cuptiEnableCallback") &&
	       SYM(activity_enable, "cuptiActivityEnable") &&
	       SYM(activity_disable, "cuptiActivityDisable") &&
	       SYM(register_callbacks, "cuptiActivityRegisterCallbacks") &&
	       SYM(flush_all, "cuptiActivityFlushAll") &&
	       SYM(next_record, "cuptiActivityGetNextRecord") &&
	       SYM(dropped, "cuptiActivityGetNumDroppedRecords") &&
	       SYM(timestamp, "cuptiGetTimestamp") && SYM(version, "cuptiGetVersion");
}

/* At a call's entry: its API record, for the outermost call of this thread only (a runtime
 * call that makes driver calls is one call). */
static void CUPTIAPI on_api(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			    const void *data)
{
	static __thread int depth;
	const CUpti_CallbackData *d = data;
	uint8_t kind = 0;

	(void)ud;
	if (d->callbackSite != CUPTI_API_ENTER) {
		if (depth > 0)
			depth--;
		return;
	}
	if (depth++)
		return;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
		kind = rt_kind[cbid];
	else if (dom == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
		kind = drv_kind[cbid];
	if (kind)
		queue__api(d->correlationId, kind);
}

void cupti__clock_sample(void)
{
	struct cirron_gpu_rec r = { .type = GPU_REC_CLOCK };
	uint64_t ts;

	if (!cupti_fns)
		return;
	r.a = mono_ns();
	if (cupti_fns->timestamp(&ts) != CUPTI_SUCCESS)
		return;
	r.c = mono_ns();
	r.b = ts;
	queue__push(&r);
}

int cupti__activate(void)
{
	void *h = cupti_fns ? NULL : open_cupti();
	CUptiResult res;

	if (!cupti_fns) {
		if (!h || !load_fns(h)) {
			companion__state(GPU_STATE_NO_CUPTI, 0, 0);
			return GPU_STATE_NO_CUPTI;
		}
		cupti_fns = &fns;	/* the handle stays open: CUPTI stays mapped */
		fns.version(&version);
		for (size_t i = 0; i < sizeof(cbids) / sizeof(cbids[0]); i++) {
			if (cbids[i].domain == CUPTI_CB_DOMAIN_RUNTIME_API)
				rt_kind[cbids[i].cbid] = (uint8_t)cbids[i].kind;
			else
				drv_kind[cbids[i].cbid] = (uint8_t)cbids[i].kind;
		}
	}
	res = fns.subscribe(&sub, on_api, NULL);
	if (res != CUPTI_SUCCESS) {
		enum gpu_state st = res == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ?
				    GPU_STATE_OTHER_SUBSCRIBER : GPU_STATE_ERROR;

		companion__state(st, res, version);
		return st;
	}
	for (size_t i = 0; i < sizeof(cbids) / sizeof(cbids[0]); i++)
		fns.enable_callback(1, sub, cbids[i].domain, cbids[i].cbid);	/* a cbid this
							 * CUPTI does not know fails alone */
	res = activity__enable(&fns);
	if (res != CUPTI_SUCCESS) {
		activity__disable(&fns);
		fns.unsubscribe(sub);
		companion__state(GPU_STATE_ERROR, res, version);
		return GPU_STATE_ERROR;
	}
	companion__state(GPU_STATE_ACTIVE, 0, version);
	cupti__clock_sample();
	return 0;
}

void cupti__flush(void)
{
	if (cupti_fns)
		fns.flush_all(0);	/* completed buffers: activity.c's callback queues them */
}

void cupti__deactivate(void)
{
	if (!cupti_fns)
		return;
	activity__disable(&fns);
	fns.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);	/* its buffers back, dropped */
	fns.unsubscribe(sub);	/* callbacks off; CUPTI free for another subscriber */
}
