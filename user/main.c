// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <stdio.h>
#include "cli.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "common/s3.h"
#include "doctor.h"
#include "observe/loop.h"
#include "trace/health.h"
#include "report/report.h"
#include "fetch/rows_read.h"
#include "fetch/s3_fetch.h"
#include "trace/trace.h"
#include "ship.h"

/* trace, health, report on s3://BUCKET/PREFIX: the store's batches fetched into a temporary
 * spool, read there, then removed. Objects skipped at the fetch make the exit 7, as bad
 * files in a local spool do. */
static int read_from_store(struct options *opts, int (*read)(const struct options *))
{
	const char *url = opts->path;
	size_t skipped;
	char *dir;
	/* trace --ranks --job: the job's span rows only, not the whole prefix */
	int rc = opts->job && opts->ranks ? rows_read__to_dir(url, opts->job, &dir, &skipped) :
		 s3_fetch__to_dir(url, &dir, &skipped);

	if (rc)
		return rc;
	opts->path = dir;
	opts->source = url;	/* what a report names */
	rc = read(opts);
	opts->path = url;
	opts->source = NULL;
	s3_fetch__remove(dir);
	if (skipped && (rc == EXIT_OK || rc == EXIT_CORRUPT_INPUT)) {
		elog("%zu objects under %s skipped", skipped, url);
		rc = EXIT_CORRUPT_INPUT;
	}
	return rc;
}

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
		return loop__main(&opts);
	case CMD_DOCTOR:
		return doctor__main(&opts);
	case CMD_TRACE:
		return s3__is_url(opts.path) ? read_from_store(&opts, trace__main) : trace__main(&opts);
	case CMD_HEALTH:
		return s3__is_url(opts.path) ? read_from_store(&opts, health__main) :
		       health__main(&opts);
	case CMD_SHIP:
		return ship__main(&opts);
	case CMD_REPORT:
		return s3__is_url(opts.path) ? read_from_store(&opts, report__main) :
		       report__main(&opts);
	default:
		return EXIT_USAGE;
	}
}
