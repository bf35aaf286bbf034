/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TRACE_RANKS_H
#define __CIRRON_TRACE_RANKS_H

#include <stdio.h>
#include "common/options.h"
#include "read/spool_view.h"

/* `trace --ranks`: the ranks of a distributed job side by side. Each rank's batches are read
 * in step with the others' (a step's row is printed once every rank is past it), so memory
 * holds a batch's steps per rank, not the job's. Returns 0 or -ENOMEM. */
int trace_ranks__print(FILE *f, struct spool_view *v, const struct options *o);

#endif
