/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_WRITES_H
#define __CIRRON_OBSERVE_WRITES_H

#include <stddef.h>

struct observer;

/* EV_WRITE, a traced process's write to its stdout or stderr, into marks. */
int writes__event(struct observer *o, const void *data, size_t size);

#endif
