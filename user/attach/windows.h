/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_ATTACH_WINDOWS_H
#define __CIRRON_ATTACH_WINDOWS_H

#include <stdbool.h>

struct observer;
struct target;

/* --python-frames sampled: links (on) or unlinks the target's Python-tier probes; their ids
 * stay reserved. Returns the number linked, or -errno. */
int windows__python_sample(struct observer *o, struct target *t, bool on);

#endif
