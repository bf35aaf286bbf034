/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_WORKER_H
#define __CIRRON_SNAP_WORKER_H

/* --snapshots: the worker thread of one target (its protocol: snap_req.h). */
#include "snap/snap_req.h"

/* Starts the worker's thread. Returns 0 or an errno. */
int snap_worker__start(struct snap_worker *w);
/* Hands it w->req (filled by the caller); the result comes with w->done. */
void snap_worker__submit(struct snap_worker *w);
/* Runs w->req on the calling thread (the worker idle): a small model's read, without the
 * worker thread's wakeup in the way. The result comes with w->done as well. */
void snap_worker__run_here(struct snap_worker *w);
/* dst (never started: a reader on the calling thread) takes src's models and tensor layout,
 * its own copy, and its target: src idle. Returns 0 or -ENOMEM. */
int snap_worker__mirror(struct snap_worker *dst, const struct snap_worker *src);
/* Stops it (a read under way stops at its next tensor) and joins it. */
void snap_worker__stop(struct snap_worker *w);

#endif
