/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_REPORT_SNAP_H
#define __CIRRON_REPORT_SNAP_H

#include <stdio.h>
#include "read/spool_view.h"
#include "read/view.h"

/* --snapshots in report: the L2 norm of each layer's weights (its parameters' norms
 * combined) at each epoch's end; the first 10 layers in the models' order, each named with
 * its model where an epoch has several (a GAN's generator and discriminator). The records
 * are read twice from the batches that hold them (ex), not kept. */
void report_snap__chart(FILE *f, struct spool_view *v, struct rsession *s,
			const struct pass_extras *ex, size_t idx);

#endif
