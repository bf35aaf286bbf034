/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_DISPATCH_H
#define __CIRRON_OBSERVE_DISPATCH_H

#include <stddef.h>

/* A ring-buffer record to its handler (libbpf's ring_buffer_sample_fn; ctx: the observer). */
int dispatch__event(void *ctx, void *data, size_t size);

#endif
