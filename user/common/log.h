/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_LOG_H
#define __CIRRON_LOG_H

#include <stdio.h>

/* Log lines go to stderr; stdout belongs to the stdout sink and to read-back output. */
extern int log_verbosity;	/* 0 errors and warnings, 1 info (-v), 2 debug (-vv) */

#define elog(fmt, ...) fprintf(stderr, "cirron-probe: " fmt "\n", ##__VA_ARGS__)
#define wlog(fmt, ...) fprintf(stderr, "cirron-probe: warning: " fmt "\n", ##__VA_ARGS__)
#define ilog(fmt, ...) do { if (log_verbosity >= 1) elog(fmt, ##__VA_ARGS__); } while (0)
#define dlog(fmt, ...) do { if (log_verbosity >= 2) elog(fmt, ##__VA_ARGS__); } while (0)

#endif
