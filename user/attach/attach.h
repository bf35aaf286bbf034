/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_ATTACH_ATTACH_H
#define __CIRRON_ATTACH_ATTACH_H

#include <stdbool.h>

struct observer;
struct target;

/* Scans the target's maps and attaches the probes of files not seen before.
 * Returns the number of probes attached, or -ESRCH if the target is gone. */
int attach__scan(struct observer *o, struct target *t);
void attach__detach(struct observer *o, struct target *t);

#endif
