/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_RESULTS_H
#define __CIRRON_SNAP_RESULTS_H

struct snap_env;
struct target;

/* The worker's result (t->snap->w.done), taken in: the worker is idle again. */
void snap_results__collect(const struct snap_env *e, struct target *t);

#endif
