/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TRACE_LAST_H
#define __CIRRON_TRACE_LAST_H

#include <stdio.h>
#include "common/options.h"
#include "read/spool_view.h"

/*
 * `trace --last N` (with --name: of that name): the N spans that ended last, oldest first,
 * flat, in o->format. Read from each session's newest batch backwards: a batch holds spans
 * that ended before it was written, so once a batch has none that ended after the N-th
 * newest found so far, the older ones have none either, and reading stops. Returns 0 or
 * -ENOMEM.
 */
int trace_last__print(FILE *f, struct spool_view *v, const struct options *o);

#endif
