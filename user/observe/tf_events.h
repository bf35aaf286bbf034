/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_TF_EVENTS_H
#define __CIRRON_TF_EVENTS_H

#include <stdbool.h>
#include "probedefs/probe_set.h"

struct event;
struct observer;
struct probe_result;
struct target;

/* Whether a probe's meaning is TensorFlow's (probes/tensorflow*.json). */
bool tf_events__handles(enum probe_meaning m);
/* A TensorFlow anchor: translated into an input of the target's TensorFlow tree (name: the
 * string the probe read, NUL-terminated). */
void tf_events__anchor(struct observer *o, struct target *t, const struct probe_result *r,
		       const struct event *e, const char *name);

#endif
