/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* Where a process's kernel launches are counted: one uprobe hit per launch. A runtime launch
 * (cudaLaunchKernel) calls the driver's (cuLaunchKernel); both were probed, so it trapped
 * twice. Once the driver's launch probes are in, the process moves to the driver layer: BPF
 * counts every launch at the driver (the runtime's too, told apart by their caller), and
 * the runtime's launch probes are taken out. Until then (a runtime that has not loaded the
 * driver yet, or never does: no GPU), the runtime's probes count. Kernels stay named: the
 * key at the driver is the handle the runtime got from the driver's probed calls
 * (cuLibraryGetKernel, cuModuleGetFunction, cuKernelGetFunction). */
#ifndef __CIRRON_LAUNCH_LAYER_H
#define __CIRRON_LAUNCH_LAYER_H

#include <stdbool.h>
#include "attach/observer.h"

/* Whether resolve leaves d out in t: a runtime launch probe of a process whose launches count
 * at the driver. */
bool launch_layer__skips(const struct target *t, const struct probe_def *d);
/* Before a group's probes go in: a process image that has not moved to the driver layer has
 * no layer in BPF (an exec keeps the pid). */
void launch_layer__before_group(struct observer *o, struct target *t);
/* After: the driver's launch probes are in, so the process moves to the driver layer and
 * the runtime's launch probes go (on the link reaper). */
void launch_layer__after_group(struct observer *o, struct target *t);

#endif
