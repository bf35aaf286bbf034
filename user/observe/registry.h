/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_REGISTRY_H
#define __CIRRON_OBSERVE_REGISTRY_H

#include <stdbool.h>

struct observer;
struct target;

/* The traced processes: the list, and what BPF knows of each. */
struct target *registry__find(struct observer *o, int pid);
struct target *registry__add(struct observer *o, int pid);
/* Forgets the target in BPF and here, detaches its probes, frees it. */
void registry__remove(struct observer *o, struct target *t);
/* The only signal the loader sends a traced process: SIGCONT after `run`'s holds. */
void registry__resume(struct observer *o, int pid);
/* Tells BPF how to treat the target; armed: all its probes are in, let its events flow
 * (set once after attaching, so a scope's enter and exit start together). Returns 0 or
 * -errno. */
int registry__track(struct observer *o, struct target *t, bool armed);
/* Alive, and still the process we found (not its pid reused). */
bool registry__alive(const struct target *t);

#endif
