/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TRACE_H
#define __CIRRON_TRACE_H

#include <stdio.h>
#include "common/options.h"
#include "read/spool_view.h"

/* `trace`: read <path>/spool, print to stdout, write nothing. Exit codes: 0,
 * EXIT_CORRUPT_INPUT when files were skipped, EXIT_NO_SPOOL, EXIT_FAILURE_RUNTIME. */
int trace__main(const struct options *o);
/* Prints the view in o->format, filters applied, each session's batches streamed. Returns 0
 * or -ENOMEM. */
int trace__print(FILE *f, struct spool_view *v, const struct options *o);

#endif
