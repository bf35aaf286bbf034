/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_PY_SAMPLE_H
#define __CIRRON_PY_SAMPLE_H

#include <stdbool.h>
#include <stdint.h>

struct observer;
struct target;

/* After each tree input: attaches the probes when a sample is due, detaches them once
 * the sampled step has ended. */
void py_sample__after_event(struct observer *o, struct target *t);
/* Whether a Python call event at wall time ts is used: inside a sample's window. */
bool py_sample__accepts(const struct observer *o, const struct target *t, uint64_t ts_ns);
/* A sample is in progress in some target: the loader then drains events every few ms
 * instead of every 100, so the probes go about a step after they came, not ~100 ms later. */
bool py_sample__active(const struct observer *o);


#endif
