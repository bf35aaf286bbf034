/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_LIFECYCLE_H
#define __CIRRON_OBSERVE_LIFECYCLE_H

struct event;
struct observer;

/* EV_EXEC and EV_FORK of traced processes */
void lifecycle__exec(struct observer *o, const struct event *e);
void lifecycle__fork(struct observer *o, const struct event *e);

#endif
