/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_LAYOUT_H
#define __CIRRON_SNAP_LAYOUT_H

#include <stdbool.h>

struct snap_worker;

/* Makes w->layout the layout to read w->models' tensors with: the table's entry if it fits
 * the target, else the one kept for this libtorch build if it fits, else one searched for in
 * the target (and kept once a .grad confirmed it; reading: a read, where grads exist, rather
 * than a look for the models). Returns 0, or -ENOENT with w->layout_why. */
int snap_layout__ensure(struct snap_worker *w, bool reading);

#endif
