/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_OBSERVE_TARGETS_H
#define __CIRRON_OBSERVE_TARGETS_H

struct observer;
struct target;

/* A traced process's life: its libraries probed, armed, ended. */
/* Probes the libraries the target maps now; a session starts at the first one that gives
 * it (probes/ groups with a signal source). */
void targets__scan(struct observer *o, struct target *t);
/* All its probes are in: its events flow, its marks hook is on, its session is said. */
void targets__arm(struct observer *o, struct target *t);
/* Ends its session (cause: exit, signal, exec, detach) and removes it. */
void targets__end(struct observer *o, struct target *t, const char *cause);
/* It is gone (status as wait(2)): what it sent is drained, then it ends. */
void targets__exited(struct observer *o, struct target *t, int status);
/* Gone without its exit event (lost): the status BPF kept, else none. */
void targets__vanished(struct observer *o, struct target *t);

#endif
