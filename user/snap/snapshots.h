/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
#ifndef __CIRRON_SNAPSHOTS_H
#define __CIRRON_SNAPSHOTS_H

/* --snapshots: each epoch's parameters as they were after its last optimizer step, read out
 * of a target's memory without stopping it. The observe stage calls these on its event
 * thread; the state is the target's own (struct snap_ctl, private to this stage). */
#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>

#include "snap/snap_env.h"

struct target;

/* BPF is told which of t's probes mark updates and asked for wakeups (after each library
 * scan, before its events flow). */
void snapshots__arm(const struct snap_env *e, struct target *t);
/* The update count an anchor event of t carried (bpf/snap.h): updates begun up to it. */
void snapshots__seen(struct target *t, uint32_t updates);
/* After each anchor event the tree took (loop_ended: it saw a training loop end). */
void snapshots__after_event(const struct snap_env *e, struct target *t, bool loop_ended);
/* Every round of the loop: results in, reads and looks out. */
void snapshots__poll(const struct snap_env *e, struct target *t);
/* A read is under way or an epoch waits for one (the loop should turn faster). */
bool snapshots__active(const struct target *t);
/* The session ends: the last epoch's record, the worker stopped. Its counts and records
 * stay for the last batch. */
void snapshots__end(const struct snap_env *e, struct target *t);
/* The records made since the last batch (the caller owns them), or NULL. */
cJSON *snapshots__take_records(struct target *t);
/* The snapshots' counts into a batch's health object, where any was taken or read. */
void snapshots__health(const struct target *t, cJSON *health);
void snapshots__free(struct target *t);

#endif
