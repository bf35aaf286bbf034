/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_REPORT_H
#define __CIRRON_REPORT_H

#include <stdio.h>
#include "common/options.h"
#include "read/spool_reader.h"

/* `report [DIR] [-o FILE]`: the spool as one self-contained HTML page (default
 * ./report.html). Returns an exit code. */
int report__main(const struct options *o);
/* The page of a loaded view, filtered by --session / --rank. */
void report__write(FILE *f, const struct spool_view *v, const struct options *o);

#endif
