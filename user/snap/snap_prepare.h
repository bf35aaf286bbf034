/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_PREPARE_H
#define __CIRRON_SNAP_PREPARE_H

#include <stdbool.h>

struct snap_env;
struct snap_req;
struct target;

/* What the worker needs from the loader's caches (the symbol cache, the probe set: the event
 * thread's), looked up here into q. Returns false when it cannot be had (yet); a target whose
 * torch or CPython has no layout is refused for good. */
bool snap_prepare__request(const struct snap_env *e, struct target *t, struct snap_req *q);

#endif
