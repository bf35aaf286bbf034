/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/*
 * The command line as users read it: every command, its options and their help texts
 * (cli_options.c), shared with the parser (cli.c). man/cirron-probe.1 and docs/usage.md list
 * the same options (tests/e2e/test_manpage.py).
 */
#ifndef __CIRRON_CLI_OPTIONS_H
#define __CIRRON_CLI_OPTIONS_H

#include <argp.h>
#include <stddef.h>
#include "common/options.h"

/* Long-only options: argp keys above the characters */
enum {
	OPT_FLUSH = 1000,
	OPT_DURATION,
	OPT_CUDA_DETAIL,
	OPT_CACHE_DIR,
	OPT_EPOCH_STEPS,
	OPT_PYTHON_FRAMES,
	OPT_SAMPLE_EVERY,
	OPT_HANG_FACTOR,
	OPT_HANG_MIN,
	OPT_RINGBUF_KB,
	OPT_FORMAT,
	OPT_NAME,
	OPT_LAST,
	OPT_SESSION,
	OPT_RANK,
	OPT_ALL,
	OPT_RANKS,
	OPT_MAX_SPOOL_MB,
	OPT_MATCH,
	OPT_MARKS,
	OPT_MARKS_REGEX,
	OPT_METRICS,
	OPT_METRICS_GRACE,
	OPT_SYSLOG_SOCKET,
	OPT_RUN_USER,
	OPT_SYS_INTERVAL,
	OPT_CUDA_CALLS,
	OPT_SNAPSHOTS,
	OPT_SAMPLE_RATE,
	OPT_SNAPSHOT_MAX_MB,
	OPT_JOB,
};

struct cli_command {
	const char *name;
	enum command cmd;
	const char *doc;
	const struct argp_option *options;
};

extern const char cli_top_doc[];
extern const struct cli_command cli_commands[];
extern const size_t cli_ncommands;

#endif /* __CIRRON_CLI_OPTIONS_H */
