/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_SESSIONS_H
#define __CIRRON_OBSERVE_SESSIONS_H

#include <stdbool.h>
#include <stdint.h>

struct observer;
struct target;

/* A target's session, begun at start_mono_ns (CLOCK_MONOTONIC): on the wall clock of now,
 * which it keeps (t->clock). */
int sessions__start(struct observer *o, struct target *t, uint64_t start_mono_ns);
/* Ranks attached before their launcher's session existed: tag it now. */
void sessions__tag_launchers(struct observer *o);
/* The next batch to the spool (final: the session's last). */
void sessions__flush(struct observer *o, struct target *t, bool final);
void sessions__end(struct observer *o, struct target *t, const char *cause);

#endif
