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
/* Whether a target's TensorFlow tree waits on a read of the job's Python stack (then the
 * loop polls often, and reads it each round: a read must fall inside a call to tell). */
bool tf_events__reading(const struct observer *o);
/* One round of the loop: the stack read for each target whose tree asks (rate-limited). */
void tf_events__round(struct observer *o);

#endif
