/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_REPORT_DATA_H
#define __CIRRON_REPORT_DATA_H

#include <stddef.h>
#include "trace/downsample.h"
#include "read/phases.h"
#include "common/sbuf.h"
#include "read/spool_view.h"
#include "read/view.h"

/* What report draws of a session, gathered in one pass over its batches (tree_stream.h),
 * in memory that does not grow with the job: each series downsampled as it comes, one
 * summary row per epoch. */
#define MARK_SERIES_MAX 8

struct report_data {
	size_t steps;				/* closed steps */
	struct downsample total, phase[PH__COUNT], stall;	/* per step: s, s, share */
	struct {
		char name[128];
		struct downsample d;
	} marks[MARK_SERIES_MAX];		/* each numeric field of a mark name, as written */
	size_t nmarks;
	struct sbuf epochs;			/* <tr> rows: spans with steps under them */
	size_t nepochs;
	struct pass_extras ex;			/* hangs, snapshots' batches */
};

/* The pass. Returns 0 or -ENOMEM. */
int report_data__read(struct report_data *d, struct spool_view *v, struct rsession *s);
void report_data__free(struct report_data *d);

#endif
