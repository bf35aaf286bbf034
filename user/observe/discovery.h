/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_DISCOVERY_H
#define __CIRRON_OBSERVE_DISCOVERY_H

#include <stdbool.h>

struct event;
struct observer;

/* The node agent (watch). */
void discovery__process(struct observer *o, int pid, bool mid_run);
void discovery__new_ldso(struct observer *o, const struct event *e);
/* The scan of /proc at start. Returns 0 or an exit code. */
int discovery__start(struct observer *o);
/* Each round of the loop: the processes noted since the last (after lost control events:
 * every process). */
void discovery__round(struct observer *o);

#endif
