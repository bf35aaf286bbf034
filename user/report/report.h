/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_REPORT_H
#define __CIRRON_REPORT_H

#include <stdio.h>
#include "common/options.h"
#include "read/spool_view.h"

/* `report [DIR] [-o FILE]`: the spool as one self-contained HTML page (default
 * ./report.html). Returns an exit code. */
int report__main(const struct options *o);
/* The page of an indexed spool, filtered by --session / --rank, each session streamed.
 * Returns 0 or -ENOMEM. */
int report__write(FILE *f, struct spool_view *v, const struct options *o);

#endif
