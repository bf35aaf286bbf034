/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_CLI_H
#define __CIRRON_CLI_H

#include <stdbool.h>

enum command { CMD_NONE, CMD_ATTACH, CMD_RUN, CMD_DOCTOR };

#define SINK_SPOOL	(1u << 0)
#define SINK_STDOUT	(1u << 1)

struct options {
	enum command cmd;
	int pid;
	unsigned int sinks;		/* SINK_*; 0 means --output none */
	const char *path;		/* spool root; batches go to <path>/spool */
	double flush_interval_s;
	double duration_s;		/* 0: until the target exits or a signal */
	bool cuda_detail;		/* one event per CUDA call */
	long epoch_steps;		/* fallback epoch length in optimizer steps */
	const char *cache_dir;		/* symbol cache; NULL picks a default */
	char **run_argv;		/* CMD_RUN: the command */
	int verbose;
};

/* Fills opts from argv. Returns 0 to go on, -1 after printing --help or --version
 * (exit 0), or an exit code (EXIT_USAGE). */
int cli__parse(int argc, char **argv, struct options *opts);

/* Parses "spool,stdout" / "none" into SINK_* bits. Returns 0 or -EINVAL. */
int cli__parse_sinks(const char *arg, unsigned int *sinks);

#endif
