// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// A stand-in libcupti.so.13 for the GPU-time tests without a GPU: the CUPTI entry points the
// companion library (companion/) calls, behaving as CUPTI's documentation says: one
// subscriber (a second gets CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED), callbacks at the
// entry and exit of the enabled API calls with a correlation id per outermost call, activity
// records in CUPTI's own layouts (CUpti_ActivityKernel10, CUpti_ActivityMemcpy6 and
// CUpti_ActivityMemset4 from CUPTI 13.0's headers) handed back through the registered buffer
// callbacks at a flush once the work has ended, and timestamps on CUPTI's default clock,
// CLOCK_REALTIME. What ran comes from the stand-in driver (libcuda_standin.c), which keeps
// the fake GPU: it calls standin_cupti_enter/exit around each call and standin_cupti_work for
// what the call ran. Not CUPTI: nothing here measures anything.
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cupti.h>

#define API __attribute__((visibility("default")))
#define MAX_PENDING 65536

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_CallbackFunc callback;
static void *callback_ud;
static bool subscribed;
static unsigned char enabled_rt[CUPTI_RUNTIME_TRACE_CBID_SIZE];
static unsigned char enabled_drv[CUPTI_DRIVER_TRACE_CBID_SIZE];
static bool kind_on[CUPTI_ACTIVITY_KIND_COUNT];
static CUpti_BuffersCallbackRequestFunc buf_request;
static CUpti_BuffersCallbackCompleteFunc buf_complete;
static uint32_t next_corr;

/* What the fake GPU ran, waiting for its end and a flush. */
static union record {
	CUpti_Activity a;
	CUpti_ActivityKernel10 k;
	CUpti_ActivityMemcpy6 m;
	CUpti_ActivityMemset4 s;
} pending[MAX_PENDING];
static size_t npending;

static __thread uint32_t outer_corr;
static __thread int depth;

/* The calls the stand-in driver and runtime make, by name, to their callback ids. */
static const struct { const char *name; CUpti_CallbackDomain dom; CUpti_CallbackId cbid; }
apis[] = {
	{ "cudaLaunchKernel", CUPTI_CB_DOMAIN_RUNTIME_API,
	  CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000 },
	{ "cudaMemcpy", CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020 },
	{ "cudaMemcpyAsync", CUPTI_CB_DOMAIN_RUNTIME_API,
	  CUPTI_RUNTIME_TRACE_CBID_cudaMemcpyAsync_v3020 },
	{ "cudaGraphLaunch", CUPTI_CB_DOMAIN_RUNTIME_API,
	  CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000 },
	{ "cuLaunchKernel", CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel },
	{ "cuLaunchKernelEx", CUPTI_CB_DOMAIN_DRIVER_API,
	  CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx },
	{ "cuGraphLaunch", CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch },
	{ "cuMemcpyHtoD_v2", CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2 },
	{ "cuMemcpyDtoH_v2", CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2 },
	{ "cuMemcpyDtoD_v2", CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2 },
	{ "cuMemcpyDtoDAsync_v2", CUPTI_CB_DOMAIN_DRIVER_API,
	  CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoDAsync_v2 },
	{ "cuMemcpy", CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemcpy },
	{ "cuMemsetD8_v2", CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2 },
};

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool enabled(CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	if (!subscribed)
		return false;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API)
		return cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE && enabled_rt[cbid];
	return cbid < CUPTI_DRIVER_TRACE_CBID_SIZE && enabled_drv[cbid];
}

static void call_back(const char *api, CUpti_ApiCallbackSite site, uint32_t corr)
{
	for (size_t i = 0; i < sizeof(apis) / sizeof(apis[0]); i++) {
		CUpti_CallbackData d = { .callbackSite = site, .functionName = api,
					 .correlationId = corr };

		if (strcmp(apis[i].name, api))
			continue;
		if (enabled(apis[i].dom, apis[i].cbid))
			callback(callback_ud, apis[i].dom, apis[i].cbid, &d);
		return;
	}
}

/* The stand-in driver and runtime around each call they make: a correlation id per
 * outermost call of a thread, as CUPTI gives. */
API void standin_cupti_enter(const char *api)
{
	uint32_t corr;

	pthread_mutex_lock(&lock);
	corr = ++next_corr;
	pthread_mutex_unlock(&lock);
	if (!depth++)
		outer_corr = corr;
	call_back(api, CUPTI_API_ENTER, corr);
}

API void standin_cupti_exit(const char *api)
{
	call_back(api, CUPTI_API_EXIT, outer_corr);
	if (depth > 0)
		depth--;
}

/* What the current call ran on the fake GPU, CLOCK_REALTIME ns: kind 1 a kernel named name,
 * 2 a copy (copy_kind, bytes), 3 a memset (bytes). */
API void standin_cupti_work(int kind, const char *name, uint64_t start, uint64_t end,
			    int copy_kind, uint64_t bytes)
{
	union record *r;
	CUpti_ActivityKind ak = kind == 1 ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL :
				kind == 2 ? CUPTI_ACTIVITY_KIND_MEMCPY : CUPTI_ACTIVITY_KIND_MEMSET;

	pthread_mutex_lock(&lock);
	if (!kind_on[ak] || npending == MAX_PENDING) {
		pthread_mutex_unlock(&lock);
		return;
	}
	r = &pending[npending++];
	memset(r, 0, sizeof(*r));
	if (kind == 1) {
		r->k.kind = ak;
		r->k.start = start;
		r->k.end = end;
		r->k.correlationId = outer_corr;
		r->k.name = name;	/* shared by every record of the kernel, as CUPTI's */
		r->k.streamId = 7;
	} else if (kind == 2) {
		r->m.kind = ak;
		r->m.start = start;
		r->m.end = end;
		r->m.correlationId = outer_corr;
		r->m.copyKind = (uint8_t)copy_kind;
		r->m.bytes = bytes;
	} else {
		r->s.kind = ak;
		r->s.start = start;
		r->s.end = end;
		r->s.correlationId = outer_corr;
		r->s.bytes = bytes;
	}
	pthread_mutex_unlock(&lock);
}

static size_t record_size(const CUpti_Activity *a)
{
	return a->kind == CUPTI_ACTIVITY_KIND_MEMCPY ? sizeof(CUpti_ActivityMemcpy6) :
	       a->kind == CUPTI_ACTIVITY_KIND_MEMSET ? sizeof(CUpti_ActivityMemset4) :
						       sizeof(CUpti_ActivityKernel10);
}

static uint64_t end_of(const union record *r)
{
	return r->a.kind == CUPTI_ACTIVITY_KIND_MEMCPY ? r->m.end :
	       r->a.kind == CUPTI_ACTIVITY_KIND_MEMSET ? r->s.end : r->k.end;
}

API CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	uint64_t now = realtime_ns();
	uint8_t *buf = NULL;
	size_t size = 0, max = 0, used = 0, kept = 0;

	pthread_mutex_lock(&lock);
	if (!npending || !buf_request) {
		pthread_mutex_unlock(&lock);
		return CUPTI_SUCCESS;
	}
	buf_request(&buf, &size, &max);
	for (size_t i = 0; i < npending; i++) {
		size_t n = record_size(&pending[i].a);

		/* what has not ended stays, unless forced; what does not fit waits too */
		if ((!(flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED) && end_of(&pending[i]) > now) ||
		    !buf || used + n > size) {
			pending[kept++] = pending[i];
			continue;
		}
		memcpy(buf + used, &pending[i], n);
		used += n;
	}
	npending = kept;
	pthread_mutex_unlock(&lock);
	if (buf)
		buf_complete(NULL, 0, buf, size, used);
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **rec)
{
	uint8_t *p = *rec ? (uint8_t *)*rec + record_size(*rec) : buffer;

	if (p + sizeof(CUpti_Activity) > buffer + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc fn, void *ud)
{
	if (subscribed)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	subscribed = true;
	callback = fn;
	callback_ud = ud;
	*sub = (CUpti_SubscriberHandle)&subscribed;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
	(void)sub;
	subscribed = false;
	memset(enabled_rt, 0, sizeof(enabled_rt));
	memset(enabled_drv, 0, sizeof(enabled_drv));
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub,
				    CUpti_CallbackDomain dom, CUpti_CallbackId cbid)
{
	(void)sub;
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API && cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE)
		enabled_rt[cbid] = (unsigned char)enable;
	else if (dom == CUPTI_CB_DOMAIN_DRIVER_API && cbid < CUPTI_DRIVER_TRACE_CBID_SIZE)
		enabled_drv[cbid] = (unsigned char)enable;
	else
		return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	kind_on[kind] = true;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	kind_on[kind] = false;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
					       CUpti_BuffersCallbackCompleteFunc done)
{
	buf_request = req;
	buf_complete = done;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
	(void)ctx;
	(void)stream;
	*n = 0;
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
	*ts = realtime_ns();
	return CUPTI_SUCCESS;
}

API CUptiResult cuptiGetVersion(uint32_t *v)
{
	*v = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

/* For a test that plays another subscriber (a torch.profiler already holding CUPTI). */
API int standin_cupti_subscribed(void)
{
	return subscribed;
}
