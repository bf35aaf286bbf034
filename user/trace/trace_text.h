/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TRACE_TEXT_H
#define __CIRRON_TRACE_TEXT_H

#include <stdio.h>
#include "common/options.h"
#include "read/spool_view.h"

/* trace's text of one session: its header, hang records, open path (from its newest batch),
 * the tree (streamed: text_tree.h), then kernels, requests, snapshots and the sys line.
 * Returns 0 or -ENOMEM. */
int trace_text__session(FILE *f, struct spool_view *v, struct rsession *s,
			const struct options *o);

#endif
