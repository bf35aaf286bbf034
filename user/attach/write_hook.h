/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_ATTACH_WRITE_HOOK_H
#define __CIRRON_ATTACH_WRITE_HOOK_H

#include "traced/target.h"

struct observer;

/* Marks. Gives t a hook on the write path (the first target attaches a shared one), or takes
 * it away (the last target detaches a shared one). */
int write_hook__attach(struct observer *o, struct target *t);
void write_hook__detach(struct observer *o, struct target *t);
/* The shared hooks, at the observer's end. */
void write_hook__free(struct observer *o);
const char *write_hook__name(enum write_hook_kind k);

#endif
