/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_LAUNCH_H
#define __CIRRON_OBSERVE_LAUNCH_H

#include <signal.h>

struct observer;

/* The first targets. */
/* run: starts the command (it gets inherited_sa back for SIGINT, SIGTERM, SIGPIPE). Returns
 * 0, or an exit code (126/127 when it cannot be run). */
int launch__run(struct observer *o, const struct sigaction inherited_sa[3]);
/* run: the command's exit, once, with its exact wait status. */
void launch__reap(struct observer *o);
/* attach -p PID. Returns 0 or an exit code. */
int launch__attach(struct observer *o);

#endif
