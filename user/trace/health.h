/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_HEALTH_H
#define __CIRRON_HEALTH_H

#include <stdio.h>
#include "common/options.h"
#include "read/spool_view.h"

/* `health`: each wanted session's observer health from its newest batch, the only one read
 * (an older one when it cannot be). Exit codes as trace__main's. */
int health__main(const struct options *o);
void health__print(FILE *f, const struct spool_view *v, const struct options *o);

#endif
