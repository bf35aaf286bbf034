/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TRACE_H
#define __CIRRON_TRACE_H

#include <stdio.h>
#include "common/options.h"
#include "read/spool_reader.h"

#define TRACE_ELIDE_RUN 20	/* longer runs of same-name siblings are elided */

/* `trace`: read <path>/spool, print to stdout, write nothing. Exit codes: 0,
 * EXIT_CORRUPT_INPUT when files were skipped, EXIT_NO_SPOOL, EXIT_FAILURE_RUNTIME. */
int trace__main(const struct options *o);
/* Prints the view in o->format, filters applied. */
void trace__print(FILE *f, const struct spool_view *v, const struct options *o);

#endif
