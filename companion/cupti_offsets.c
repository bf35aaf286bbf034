// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// Where the fields the companion reads lie in CUPTI's records (activity.c, cupti.c), as one
// set of CUPTI headers has them: built against CUDA 13.0's and 12.8's, the two outputs must
// be the same (the Makefile compares them), so that one companion reads the records of the
// libcupti a cu12 or a cu13 torch maps. KERNEL: the kernel record of those headers.
#include <stddef.h>
#include <stdio.h>
#include <cupti.h>

#define AT(s, f) printf("%s.%s %zu\n", #s, #f, offsetof(s, f))

int main(void)
{
	AT(KERNEL, kind);
	AT(KERNEL, start);
	AT(KERNEL, end);
	AT(KERNEL, deviceId);
	AT(KERNEL, streamId);
	AT(KERNEL, correlationId);
	AT(KERNEL, name);
	AT(CUpti_ActivityMemcpy6, copyKind);
	AT(CUpti_ActivityMemcpy6, bytes);
	AT(CUpti_ActivityMemcpy6, start);
	AT(CUpti_ActivityMemcpy6, end);
	AT(CUpti_ActivityMemcpy6, correlationId);
	AT(CUpti_ActivityMemset4, bytes);
	AT(CUpti_ActivityMemset4, start);
	AT(CUpti_ActivityMemset4, end);
	AT(CUpti_ActivityMemset4, deviceId);
	AT(CUpti_ActivityMemset4, correlationId);
	AT(CUpti_CallbackData, callbackSite);
	AT(CUpti_CallbackData, correlationId);
	printf("kinds %d %d %d %d\n", CUPTI_ACTIVITY_KIND_KERNEL,
	       CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	       CUPTI_ACTIVITY_KIND_MEMSET);
	return 0;
}
