// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// What every command that looks at targets sets up and frees (setup.h): `attach`, `run`,
// `watch` and `doctor`.
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "attach/ldso_watch.h"
#include "attach/link_reaper.h"
#include "attach/observer.h"
#include "attach/skel.h"
#include "attach/write_hook.h"
#include "common/exit_codes.h"
#include "common/log.h"
#include "common/test_hooks.h"
#include "observe/registry.h"
#include "observe/setup.h"
#include "observe/wall_clock.h"
#include "ship/ship_outputs.h"

/* At the end, the upload thread has this long to send what is left (the final batches);
 * the rest stays in the spool for the next start. */
#define UPLOAD_DRAIN_S 15.0

int setup__init(struct observer *o, const struct options *opts)
{
	char dir[4096];

	memset(o, 0, sizeof(*o));
	o->opts = opts;
	o->child = -1;
	o->watchdog.fd = -1;
	if (gethostname(o->host, sizeof(o->host) - 1))
		strcpy(o->host, "unknown");
	/* For tests only (a two-node job on one machine): the host name sessions and S3 keys
	 * carry. */
	if (test_hooks__get()->hostname[0])
		snprintf(o->host, sizeof(o->host), "%s", test_hooks__get()->hostname);
	if (probe_set__load(&o->probes))
		return EXIT_FAILURE_RUNTIME;
	dlog("probes: %s", o->probes.dir[0] ? o->probes.dir : "built in");
	o->syms = sym_cache__new(opts->cache_dir ? opts->cache_dir :
				 sym_cache__default_dir(dir, sizeof(dir)));
	if (!o->syms)
		return EXIT_FAILURE_RUNTIME;
	wall_clock__sample(&o->clock);
	return 0;
}

void setup__free(struct observer *o)
{
	while (o->targets)
		registry__remove(o, o->targets);
	ldso_watch__remove_all(o);
	link_reaper__wait();
	write_hook__free(o);
	skel__unload(o);
	marks_regex__free(&o->marks_rx);
	probe_set__free(&o->probes);
	sym_cache__free(o->syms);
	/* after the final batches: they go too, if the store takes them in time */
	ship_outputs__stop(o->ship, UPLOAD_DRAIN_S);
	o->ship = NULL;
	if (o->spool.lost_files)
		elog("%llu spool batches (%llu spans) could not be written to %s and are lost",
		     (unsigned long long)o->spool.lost_files,
		     (unsigned long long)o->spool.lost_spans, o->spool.dir ? o->spool.dir : "?");
	spool__close(&o->spool);
}
