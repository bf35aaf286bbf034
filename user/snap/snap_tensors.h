/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAP_TENSORS_H
#define __CIRRON_SNAP_TENSORS_H

struct snap_worker;

/* The read of w->req (a READ): the models' parameters, their stats and files, into w->res
 * (records, the model inventory, exact or not). */
void snap_tensors__read(struct snap_worker *w);

#endif
