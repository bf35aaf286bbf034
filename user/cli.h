/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_CLI_H
#define __CIRRON_CLI_H

#include "common/options.h"

/* Fills opts from argv. Returns 0 to go on, -1 after printing --help or --version
 * (exit 0), or an exit code (EXIT_USAGE). */
int cli__parse(int argc, char **argv, struct options *opts);

/* Parses "spool,stdout" / "none" into SINK_* bits. Returns 0 or -EINVAL. */
int cli__parse_sinks(const char *arg, unsigned int *sinks);

#endif
