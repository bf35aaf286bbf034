// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// `ship` (ship.h): the fleet outputs' shippers on an existing spool, until they are idle.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "common/exit_codes.h"
#include "common/fsutil.h"
#include "common/log.h"
#include "ship.h"
#include "ship/ship_outputs.h"
#include "sink/spool.h"

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	stop = sig;
}

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int ship__main(const struct options *opts)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec tick = { .tv_nsec = 50 * 1000000 };
	struct ship_outputs *outs;
	struct spool sp;
	char dir[4096], why[600], host[256] = "";
	const char *test_host;
	struct stat st;
	double start = mono_s();
	int err;

	snprintf(dir, sizeof(dir), "%s/spool", opts->path);
	if (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		elog("no spool at %s", dir);
		return EXIT_NO_SPOOL;
	}
	err = spool__open(&sp, opts->path, 0);
	if (err) {
		elog("cannot open the spool under %s: %s%s%s", opts->path, sp.refused,
		     *sp.refused ? ": " : "", fs__strerror(err));
		return EXIT_SPOOL_UNWRITABLE;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* the batch files go under this host's name, as an agent's do (CIRRON_TEST_HOSTNAME: a
	 * test's node); their sessions keep their own */
	if (gethostname(host, sizeof(host) - 1))
		strcpy(host, "unknown");
	test_host = getenv("CIRRON_TEST_HOSTNAME");
	if (test_host && *test_host)
		snprintf(host, sizeof(host), "%s", test_host);
	outs = ship_outputs__start(opts, host, sp.dirfd, why, sizeof(why));
	if (!outs) {
		elog("--output: %s", why);
		spool__close(&sp);
		return EXIT_FAILURE_RUNTIME;
	}
	while (!stop && !ship_outputs__idle(outs) &&
	       (!opts->duration_s || mono_s() - start < opts->duration_s))
		nanosleep(&tick, NULL);
	err = ship_outputs__idle(outs) ? EXIT_OK : EXIT_FAILURE_RUNTIME;
	ship_outputs__stop(outs, 0);
	spool__close(&sp);
	return err;
}
