/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* The CUPTI companion's records (bpf/gpu_batch.h) of one process, joined: each kernel, copy
 * and memset that ran with the call that made it, by CUPTI's correlation id, its GPU times
 * mapped to CLOCK_MONOTONIC (gputime/gpu_clock.h). What comes out is a stream of items, each
 * with the call's time and thread, ready to be put on the spans that were open when the call
 * was made (gputime/gpu_spans.h). Also the watermark: every call made before it has all its
 * items out, so a span that ended before it is complete.
 *
 * Calls whose work never shows (a failed launch, a copy CUPTI does not record) are given up
 * GPU_JOIN_GIVE_UP_NS after they were made, as an item with no GPU time; a graph launch's
 * kernels share its id, so it is complete once a round brings none of its kernels after one
 * did. Work whose call was made before the companion was on (no API record) is counted and
 * left out: it cannot be placed. Pure: no I/O. */
#ifndef __CIRRON_GPU_JOIN_H
#define __CIRRON_GPU_JOIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "gpu_batch.h"
#include "gputime/gpu_clock.h"

#define GPU_JOIN_GIVE_UP_NS	5000000000ull	/* a call's work waited for this long at most */

enum gpu_item_kind { GPU_ITEM_KERNEL = 1, GPU_ITEM_MEMCPY, GPU_ITEM_MEMSET, GPU_ITEM_NONE };

struct gpu_item {
	uint64_t launch;	/* the call's entry, CLOCK_MONOTONIC ns */
	uint64_t start, end;	/* what it ran, CLOCK_MONOTONIC ns (GPU_ITEM_NONE: 0, 0) */
	uint32_t corr;
	uint32_t name_id;	/* kernels: the companion's name id (gpu_join__name) */
	uint32_t tid;
	uint8_t kind;		/* enum gpu_item_kind */
	uint8_t api;		/* enum gpu_api_kind of the call */
	bool first;		/* the call's first item: a call counts once */
};

struct gpu_api {
	uint64_t launch;
	uint32_t corr, tid;
	uint8_t kind;		/* enum gpu_api_kind */
	uint8_t items;		/* items out so far, capped at 255 */
	bool done;		/* nothing more is waited for */
	uint32_t last_round;	/* the round that brought its last item */
};

struct gpu_join {
	struct gpu_clock clock;
	struct gpu_api *calls;	/* by correlation id, the oldest first */
	size_t ncalls, capcalls;
	struct gpu_early {	/* activity records whose call's record is not in yet */
		struct cirron_gpu_rec r;
		uint32_t round;	/* when it came */
	} *early;
	size_t nearly, capearly;
	struct gpu_item *held;	/* joined, waiting for a clock sample after their end */
	size_t nheld, capheld;
	struct gpu_item *out;	/* ready, for gpu_join__take */
	size_t nout, capout;
	char **names;		/* by name id */
	size_t capnames;
	uint32_t name_id;	/* the name being put together (GPU_REC_NAME) */
	char name_buf[CIRRON_GPU_NAME_MAX + 1];
	size_t name_len;
	uint64_t api_upto;	/* the companion's last watermark: every call before it is in */
	uint32_t round;		/* watermarks so far */
	int state;		/* enum gpu_state last told (0: nothing heard yet) */
	uint32_t state_result;	/* its CUptiResult */
	uint64_t cupti_version;
	uint64_t active_since;	/* mono ns of the last GPU_STATE_ACTIVE */
	uint64_t max_clock_err;	/* the largest mapping error of an item out */
	/* counts, for health */
	uint64_t records, api_records, activity_records, unplaced, given_up, companion_dropped,
		 cupti_dropped, bad;
};

/* One record, in the order the companion handed them over. */
void gpu_join__record(struct gpu_join *j, const struct cirron_gpu_rec *r);
/* The items ready (their calls' order is not kept), moved to *out (malloc'd; NULL: none).
 * final: the companion is gone (detach, exit): what is held goes out as the clock maps it
 * now, and every call still waited for is given up. Returns how many, or -ENOMEM. */
long gpu_join__take(struct gpu_join *j, struct gpu_item **out, bool final);
/* Every call made before it has its items out (0: nothing known yet). */
uint64_t gpu_join__watermark(const struct gpu_join *j);
/* A kernel's name (mangled, as CUPTI has it) by its id; NULL if not (yet) known. */
const char *gpu_join__name(const struct gpu_join *j, uint32_t id);
void gpu_join__free(struct gpu_join *j);

#endif
