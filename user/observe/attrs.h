/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_ATTRS_H
#define __CIRRON_OBSERVE_ATTRS_H

#include <cjson/cJSON.h>

struct observer;
struct target;

/* The root span's attributes and each batch's health. */
void attrs__device(struct target *t);		/* device, cuda_count */
void attrs__libraries(const struct observer *o, struct target *t);	/* + python_frames */
void attrs__cuda(struct observer *o, struct target *t);	/* CUDA totals, launches per kernel */
cJSON *attrs__health(struct observer *o, struct target *t);

#endif
