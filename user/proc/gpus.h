/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Copyright (c) 2026 cirron-probe authors */
/* The NVIDIA GPUs a process uses, as the node tells them, without calling into the process
 * or into the driver: the device files it holds open (/proc/PID/fd -> /dev/nvidiaN, N the
 * GPU's device minor), the driver's description of each GPU
 * (/proc/driver/nvidia/gpus/<bus>/information: model, UUID, bus, minor) and the process's
 * CUDA_VISIBLE_DEVICES. Read at attach too, when its cudaGetDeviceCount is long past. */
#ifndef __CIRRON_GPUS_H
#define __CIRRON_GPUS_H

#include <stdbool.h>

#define GPUS_MAX 16

struct gpu_info {
	int minor;		/* /dev/nvidia<minor> */
	char model[64];		/* "" where the driver does not say */
	char uuid[64];
	char bus[32];
};

struct gpus {
	int n;			/* GPUs open, in minor order */
	struct gpu_info g[GPUS_MAX];
	bool ctl;		/* /dev/nvidiactl open: the process initialized the driver */
	bool visible_set;	/* CUDA_VISIBLE_DEVICES is in its environment */
	char visible[128];
};

/* Fills *out for pid; proc and driver are the roots to read ("/proc",
 * "/proc/driver/nvidia"), other directories in tests. Returns 0, or -errno when pid's fds
 * cannot be read (gone, not ours). */
int gpus__of_pid(const char *proc, int pid, const char *driver, struct gpus *out);

#endif /* __CIRRON_GPUS_H */
