// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <stdio.h>
#include "cli.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "doctor.h"
#include "observe/observe.h"
#include "read/health.h"
#include "read/report.h"
#include "read/trace.h"

int main(int argc, char **argv)
{
	struct options opts;
	int err = cli__parse(argc, argv, &opts);

	if (err < 0)
		return EXIT_OK;	/* --help or --version */
	if (err)
		return err;
	setvbuf(stdout, NULL, _IOLBF, 0);
	switch (opts.cmd) {
	case CMD_ATTACH:
	case CMD_RUN:
	case CMD_WATCH:
		return observer__main(&opts);
	case CMD_DOCTOR:
		return doctor__main(&opts);
	case CMD_TRACE:
		return trace__main(&opts);
	case CMD_HEALTH:
		return health__main(&opts);
	case CMD_REPORT:
		return report__main(&opts);
	default:
		return EXIT_USAGE;
	}
}
