/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_ATTACH_SKEL_H
#define __CIRRON_ATTACH_SKEL_H

#include <stddef.h>

struct observer;

/* Loads the BPF object (its rodata and programs set for this kernel's features and the
 * options), attaches its tracepoints, sets up the ring buffers whose records go to
 * handle_event (observe/dispatch.c), and hands the maps and programs to the observer.
 * Returns 0 or an exit code (said). */
typedef int (*ring_buffer_event_fn)(void *ctx, void *data, size_t size);
int skel__load(struct observer *o, ring_buffer_event_fn handle_event);
void skel__unload(struct observer *o);

#endif
