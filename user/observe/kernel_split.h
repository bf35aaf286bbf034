/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_KERNEL_SPLIT_H
#define __CIRRON_OBSERVE_KERNEL_SPLIT_H

#include <stdint.h>

struct span;
struct target;

/* Launches per kernel on steps and requests. Reads BPF's split into the target's store (at
 * every flush, and when a span closes on an event newer than the last read). */
void kernel_split__read(struct target *t);
/* session.h's kernels_fn (ctx: the target) */
void kernel_split__attrs(void *ctx, struct span *sp, uint64_t from_seq, uint64_t to_seq);

#endif
