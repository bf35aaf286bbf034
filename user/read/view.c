// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "common/exit_codes.h"
#include "common/log.h"
#include "read/view.h"
#include "tree/clock.h"

int view__load(const struct options *o, struct spool_view *v)
{
	char *dir;
	int err;

	if (asprintf(&dir, "%s/spool", o->path) < 0)
		return EXIT_FAILURE_RUNTIME;
	err = spool_view__load_dir(v, dir);
	if (err == -ENOMEM || (!err && spool_view__build(v))) {
		elog("out of memory reading %s", dir);
		free(dir);
		return EXIT_FAILURE_RUNTIME;
	}
	if (err)
		elog("no spool to read at %s: %s", dir, strerror(-err));
	else if (!v->nsessions)
		elog("no sessions in %s", dir);
	free(dir);
	return err ? EXIT_NO_SPOOL : 0;
}

bool view__wanted(const struct options *o, const struct rsession *s)
{
	return (!o->session || !strcmp(o->session, s->id)) && (o->rank < 0 || o->rank == s->rank);
}

void view__print_header(FILE *f, const struct rsession *s)
{
	fprintf(f, "session %s: host %s, pid %ld, rank %ld (local %ld, world %ld), %s\n", s->id,
		s->host, s->pid, s->rank, s->local_rank, s->world_size,
		s->final ? "final" : "no final batch (still running, or the observer died)");
}
