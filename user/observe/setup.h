/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_SETUP_H
#define __CIRRON_OBSERVE_SETUP_H

struct observer;
struct options;

/* What every command that looks at targets needs (doctor too): the probe definitions, the
 * symbol cache, the host name. Returns 0 or an exit code. */
int setup__init(struct observer *o, const struct options *opts);
void setup__free(struct observer *o);

#endif
