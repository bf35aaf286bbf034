/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_EVENTS_H
#define __CIRRON_OBSERVE_EVENTS_H

struct event;
struct kname_event;
struct observer;
struct probe_result;
struct target;

/* A probe's event in a target with a session. */
void events__device_count(struct target *t, const struct event *e);
void events__kernel_name(struct target *t, const struct kname_event *k);
void events__cuda_detail(struct observer *o, struct target *t, const struct probe_result *r,
			 const struct event *e);
void events__anchor(struct observer *o, struct target *t, const struct probe_result *r,
		    const struct event *e);

#endif
