/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SHIP_H
#define __CIRRON_SHIP_H

#include "common/options.h"

/* `ship`: the spool's batches not yet sent go to the --output destinations; returns the
 * exit code. */
int ship__main(const struct options *opts);

#endif
