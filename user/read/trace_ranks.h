/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TRACE_RANKS_H
#define __CIRRON_TRACE_RANKS_H

#include <stdio.h>
#include "common/options.h"
#include "read/spool_reader.h"

/* `trace --ranks`: the ranks of a distributed job side by side. Returns 0 or an exit code. */
int trace_ranks__print(FILE *f, const struct spool_view *v, const struct options *o);

#endif
